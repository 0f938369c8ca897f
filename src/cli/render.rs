//! `render`: the objects the operator would write, as YAML, JSON or the bare property files.

use std::io::Write as _;
use std::path::PathBuf;

use super::{
    CliError, HashKeyArg, Invalid, RenderFormat, UNKEYED_NOTE, report_problems, to_json_pretty,
};
use crate::manifest::Workspace;
use crate::output::{self, Owner};

pub fn render(
    paths: &[PathBuf],
    format: RenderFormat,
    hash_key: &HashKeyArg,
) -> Result<Result<(), Invalid>, CliError> {
    let workspace = hash_key.load(paths)?;
    let (text, all_valid) = render_text(&workspace, format, true);
    std::io::stdout().lock().write_all(text.as_bytes())?;
    // `-o properties` prints files only, no hash.
    if workspace.hash_key.is_none() && !matches!(format, RenderFormat::Properties) {
        eprintln!("{UNKEYED_NOTE}");
    }
    Ok(if all_valid { Ok(()) } else { Err(Invalid) })
}

/// What `render` prints, and whether every config was valid; problems go to stderr when `report`.
pub fn render_text(workspace: &Workspace, format: RenderFormat, report: bool) -> (String, bool) {
    let mut objects = Vec::new();
    let mut property_files = String::new();
    let mut all_valid = true;
    for outcome in super::outcomes(workspace) {
        let (config, ev) = (outcome.config, &outcome.ev);
        let Some(rendered) = ev.rendered.as_ref().filter(|_| outcome.is_ok()) else {
            all_valid = false;
            if report {
                report_problems(&outcome);
            }
            continue;
        };
        let owner = Owner {
            name: &config.metadata.name,
            namespace: &config.namespace,
            uid: config.metadata.uid.as_deref(),
        };
        objects.push(output::build(&owner, &config.spec, rendered).to_json());
        for (file, content) in &rendered.files {
            if rendered.kind == crate::engine::spec::OutputKind::Secret {
                property_files.push_str(&format!(
                    "# {}/{} {file}: written to a Secret, not shown\n\n",
                    config.namespace, config.metadata.name
                ));
                continue;
            }
            property_files.push_str(&format!(
                "# {}/{} {file}\n{content}\n",
                config.namespace, config.metadata.name
            ));
        }
    }
    let text = match format {
        RenderFormat::Json => format!("{}\n", to_json_pretty(&objects)),
        RenderFormat::Yaml => to_yaml_documents(&objects),
        RenderFormat::Properties => property_files,
    };
    (text, all_valid)
}

fn to_yaml_documents(objects: &[serde_json::Value]) -> String {
    let mut out = String::new();
    for object in objects {
        out.push_str("---\n");
        match serde_saphyr::to_string(object) {
            Ok(yaml) => out.push_str(&yaml),
            Err(e) => out.push_str(&format!("# cannot print object: {e}\n")),
        }
    }
    out
}
