//! The command line: `render`, `explain`, `validate` and `crds` offline; `run` the controller.

use std::io::Write as _;
use std::path::PathBuf;

use clap::{Parser, Subcommand, ValueEnum};
use serde::Serialize;

use crate::engine::layers::{Contribution, Layer};
use crate::engine::sensitive::REDACTED;
use crate::engine::{Evaluation, Request, evaluate};
use crate::manifest::{ToolConfigManifest, Workspace};
#[cfg(feature = "operator")]
use crate::operator::RunOptions;
use crate::output::{self, Owner};
use crate::status::{self, KafkaToolConfigStatus, Live};

#[derive(Debug, Parser)]
#[command(
    name = "kafka-config-operator",
    version,
    about = "Layered Kafka configuration, rendered by one documented precedence"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the controller (in-cluster config, or KUBECONFIG).
    #[cfg(feature = "operator")]
    Run(RunOptions),
    /// Print the objects the operator would write for the given manifests.
    Render {
        /// Files or folders of manifests (multi-document YAML).
        #[arg(short = 'f', long = "filename", required = true)]
        paths: Vec<PathBuf>,
        #[arg(short = 'o', long = "output", value_enum, default_value_t = RenderFormat::Yaml)]
        format: RenderFormat,
    },
    /// Show, for every key, the winning value, its layer and source, and what it overrode.
    Explain {
        /// Files or folders of manifests; without them, NAME is read from the cluster.
        #[arg(short = 'f', long = "filename")]
        paths: Vec<PathBuf>,
        /// Namespace of a live KafkaToolConfig.
        #[arg(short = 'n', long = "namespace")]
        namespace: Option<String>,
        /// Name of a KafkaToolConfig (required for a live one; filters the files otherwise).
        name: Option<String>,
        /// Only this key.
        #[arg(long)]
        key: Option<String>,
        #[arg(short = 'o', long = "output", value_enum, default_value_t = TextFormat::Table)]
        format: TextFormat,
    },
    /// Print the status conditions the operator would write; exit 1 when any config is not Valid.
    Validate {
        #[arg(short = 'f', long = "filename", required = true)]
        paths: Vec<PathBuf>,
        #[arg(short = 'o', long = "output", value_enum, default_value_t = TextFormat::Table)]
        format: TextFormat,
    },
    /// Print the CustomResourceDefinitions (what crds/ holds).
    #[cfg(feature = "operator")]
    Crds {
        #[arg(short = 'o', long = "output", value_enum, default_value_t = CrdsFormat::Yaml)]
        format: CrdsFormat,
    },
}

/// `crds -o`: the YAML documents of crds/, or the same objects as one JSON array.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum CrdsFormat {
    Yaml,
    Json,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum RenderFormat {
    Yaml,
    Json,
    Properties,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum TextFormat {
    Table,
    Json,
}

#[derive(Debug, thiserror::Error)]
pub enum CliError {
    #[error(transparent)]
    Manifest(#[from] crate::manifest::ManifestError),
    #[error("cannot write output: {0}")]
    Io(#[from] std::io::Error),
    #[error("{0}")]
    Usage(String),
    #[cfg(feature = "operator")]
    #[error(transparent)]
    Operator(#[from] crate::operator::OperatorError),
}

/// Exit code 1: some config is invalid (the reasons are on stderr).
pub struct Invalid;

pub fn evaluate_manifest(workspace: &Workspace, config: &ToolConfigManifest) -> Evaluation {
    let sources = workspace.sources_of(&config.namespace);
    let labels = workspace.labels_of(&config.namespace);
    evaluate(&Request {
        name: &config.metadata.name,
        namespace: &config.namespace,
        spec: &config.spec,
        namespace_labels: &labels,
        globals: &workspace.globals,
        sources: &sources,
    })
}

fn report_problems(config: &ToolConfigManifest, ev: &Evaluation) {
    let mut stderr = std::io::stderr().lock();
    for problem in ev.source_problems.iter().chain(&ev.problems) {
        let _ = writeln!(
            stderr,
            "KafkaToolConfig {}/{} ({}): {problem}",
            config.namespace, config.metadata.name, config.origin
        );
    }
}

pub fn render(paths: &[PathBuf], format: RenderFormat) -> Result<Result<(), Invalid>, CliError> {
    let workspace = Workspace::load(paths)?;
    let (text, all_valid) = render_text(&workspace, format, true);
    std::io::stdout().lock().write_all(text.as_bytes())?;
    Ok(if all_valid { Ok(()) } else { Err(Invalid) })
}

/// What `render` prints, and whether every config was valid; problems go to stderr when `report`.
pub fn render_text(workspace: &Workspace, format: RenderFormat, report: bool) -> (String, bool) {
    let mut objects = Vec::new();
    let mut property_files = String::new();
    let mut all_valid = true;
    let mut written: std::collections::BTreeMap<(String, String), String> = Default::default();
    for config in &workspace.configs {
        let ev = evaluate_manifest(workspace, config);
        if let Some(rendered) = &ev.rendered {
            // Two configs writing one object: the operator gives the second OutputConflict.
            let target = (
                config.namespace.clone(),
                output::output_name(&config.spec, rendered),
            );
            if let Some(owner) = written.get(&target) {
                all_valid = false;
                if report {
                    eprintln!(
                        "KafkaToolConfig {}/{} ({}): OutputConflict: {} {}/{} is already written by KafkaToolConfig {owner}",
                        config.namespace,
                        config.metadata.name,
                        config.origin,
                        rendered.kind_str(),
                        target.0,
                        target.1
                    );
                }
                continue;
            }
            written.insert(target, config.metadata.name.clone());
        }
        let Some(rendered) = &ev.rendered else {
            all_valid = false;
            if report {
                report_problems(config, &ev);
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

fn to_json_pretty<T: Serialize>(value: &T) -> String {
    serde_json::to_string_pretty(value).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
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

/// One line of `explain`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ExplainEntry {
    pub namespace: String,
    pub name: String,
    pub role: String,
    pub key: String,
    pub value: String,
    pub layer: Layer,
    pub source: String,
    pub overridden: Vec<ExplainOverride>,
}

#[derive(Debug, Serialize)]
pub struct ExplainOverride {
    pub layer: Layer,
    pub source: String,
    pub value: String,
}

/// The provenance of every key of an evaluation, redacted.
pub fn explain_entries(
    namespace: &str,
    name: &str,
    ev: &Evaluation,
    only_key: Option<&str>,
) -> Vec<ExplainEntry> {
    let mut entries = Vec::new();
    for (role, view) in &ev.views {
        let first = entries.len();
        for provenance in view.keys.values() {
            if only_key.is_some_and(|k| k != provenance.key) {
                continue;
            }
            let shown = |c: &Contribution| {
                if ev.is_sensitive(*role, &provenance.key, c) {
                    REDACTED.to_string()
                } else {
                    c.value.clone()
                }
            };
            let winner = provenance.winner();
            if winner.layer == Layer::KafkaDefaults {
                continue;
            }
            entries.push(ExplainEntry {
                namespace: namespace.to_string(),
                name: name.to_string(),
                role: role.to_string(),
                key: provenance.key.to_string(),
                value: shown(winner),
                layer: winner.layer,
                source: winner.source.to_string(),
                overridden: provenance
                    .overridden()
                    .iter()
                    .map(|c| ExplainOverride {
                        layer: c.layer,
                        source: c.source.to_string(),
                        value: shown(c),
                    })
                    .collect(),
            });
        }
        // `output.renderDefaults` writes Kafka's default of every unset key: those lines are in
        // the file, so they are explained too.
        if ev.defaults_rendered {
            for (key, default) in crate::engine::render::rendered_defaults(*role) {
                let unset = view
                    .keys
                    .get(key)
                    .is_none_or(|p| p.winner().layer == Layer::KafkaDefaults);
                if unset && only_key.is_none_or(|k| k == key) {
                    entries.push(ExplainEntry {
                        namespace: namespace.to_string(),
                        name: name.to_string(),
                        role: role.to_string(),
                        key: key.to_string(),
                        value: default.to_string(),
                        layer: Layer::KafkaDefaults,
                        source: "Kafka default (output.renderDefaults)".to_string(),
                        overridden: Vec::new(),
                    });
                }
            }
            entries[first..].sort_by(|a, b| a.key.cmp(&b.key));
        }
    }
    entries
}

pub fn print_explain(entries: &[ExplainEntry], format: TextFormat) -> Result<(), CliError> {
    let mut stdout = std::io::stdout().lock();
    match format {
        TextFormat::Json => writeln!(stdout, "{}", to_json_pretty(&entries))?,
        TextFormat::Table => {
            let mut current = String::new();
            for entry in entries {
                let heading = format!("{}/{} ({})", entry.namespace, entry.name, entry.role);
                if heading != current {
                    writeln!(stdout, "{heading}")?;
                    current = heading;
                }
                writeln!(
                    stdout,
                    "  {} = {}    [{}: {}]",
                    entry.key, entry.value, entry.layer, entry.source
                )?;
                for o in &entry.overridden {
                    writeln!(
                        stdout,
                        "      overrides {} = {}    [{}: {}]",
                        entry.key, o.value, o.layer, o.source
                    )?;
                }
            }
        }
    }
    Ok(())
}

pub fn explain_files(
    paths: &[PathBuf],
    name: Option<&str>,
    key: Option<&str>,
    format: TextFormat,
) -> Result<Result<(), Invalid>, CliError> {
    let workspace = Workspace::load(paths)?;
    let mut entries = Vec::new();
    let mut all_valid = true;
    for config in workspace
        .configs
        .iter()
        .filter(|c| name.is_none_or(|n| n == c.metadata.name))
    {
        let ev = evaluate_manifest(&workspace, config);
        if !ev.is_valid() {
            all_valid = false;
            report_problems(config, &ev);
        }
        entries.extend(explain_entries(
            &config.namespace,
            &config.metadata.name,
            &ev,
            key,
        ));
    }
    print_explain(&entries, format)?;
    Ok(if all_valid { Ok(()) } else { Err(Invalid) })
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct ValidateEntry {
    api_version: &'static str,
    kind: &'static str,
    metadata: ValidateMetadata,
    status: KafkaToolConfigStatus,
}

#[derive(Debug, Serialize)]
struct ValidateMetadata {
    name: String,
    namespace: String,
}

pub fn validate(paths: &[PathBuf], format: TextFormat) -> Result<Result<(), Invalid>, CliError> {
    let workspace = Workspace::load(paths)?;
    let now = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    let (text, all_valid) = validate_text(&workspace, format, &now);
    std::io::stdout().lock().write_all(text.as_bytes())?;
    Ok(if all_valid { Ok(()) } else { Err(Invalid) })
}

/// What `validate` prints, with `now` as the time of every condition change, and whether every
/// config is valid.
pub fn validate_text(workspace: &Workspace, format: TextFormat, now: &str) -> (String, bool) {
    let mut entries = Vec::new();
    let mut all_valid = true;
    for config in &workspace.configs {
        let ev = evaluate_manifest(workspace, config);
        all_valid &= ev.is_valid();
        let live = Live {
            hash: ev.rendered.as_ref().map(|r| r.hash.clone()),
            write_failure: None,
        };
        let status = status::build(&ev, config.metadata.generation, None, &live, now);
        entries.push(ValidateEntry {
            api_version: output::API_VERSION,
            kind: "KafkaToolConfig",
            metadata: ValidateMetadata {
                name: config.metadata.name.clone(),
                namespace: config.namespace.clone(),
            },
            status,
        });
    }
    let mut out = String::new();
    match format {
        TextFormat::Json => {
            out.push_str(&to_json_pretty(&entries));
            out.push('\n');
        }
        TextFormat::Table => {
            for entry in &entries {
                out.push_str(&format!(
                    "KafkaToolConfig {}/{}\n",
                    entry.metadata.namespace, entry.metadata.name
                ));
                for c in &entry.status.conditions {
                    out.push_str(&format!(
                        "  {}={} {}: {}\n",
                        c.type_, c.status, c.reason, c.message
                    ));
                }
                for w in &entry.status.warnings {
                    out.push_str(&format!(
                        "  warning {} {}: {}\n",
                        w.reason, w.key, w.message
                    ));
                }
            }
        }
    }
    (out, all_valid)
}

/// What `crds` prints: the CRDs as YAML documents (what crds/ holds), or as one JSON array of the
/// same objects (read back from that YAML, so the two outputs cannot disagree).
#[cfg(feature = "operator")]
pub fn crds_text(format: CrdsFormat) -> Result<String, CliError> {
    let yaml = crate::operator::crd::crds_yaml().map_err(CliError::Usage)?;
    match format {
        CrdsFormat::Yaml => Ok(yaml),
        CrdsFormat::Json => {
            let objects: Vec<serde_json::Value> = serde_saphyr::from_multiple(&yaml)
                .map_err(|e| CliError::Usage(format!("cannot read the CRDs back: {e}")))?;
            Ok(format!("{}\n", to_json_pretty(&objects)))
        }
    }
}

#[cfg(feature = "operator")]
pub fn crds(format: CrdsFormat) -> Result<Result<(), Invalid>, CliError> {
    let text = crds_text(format)?;
    std::io::stdout().lock().write_all(text.as_bytes())?;
    Ok(Ok(()))
}

#[cfg(all(test, feature = "operator"))]
mod tests {
    use super::*;

    #[test]
    fn crds_json_is_an_array_of_the_objects_the_yaml_output_holds() {
        let yaml = crds_text(CrdsFormat::Yaml).expect("yaml");
        let json = crds_text(CrdsFormat::Json).expect("json");
        let from_yaml: Vec<serde_json::Value> =
            serde_saphyr::from_multiple(&yaml).expect("the YAML output parses");
        let from_json: serde_json::Value =
            serde_json::from_str(&json).expect("the JSON output parses");
        let array = from_json.as_array().expect("a JSON array");
        assert_eq!(array, &from_yaml);
        let kinds: Vec<&str> = array
            .iter()
            .map(|crd| crd["spec"]["names"]["kind"].as_str().unwrap_or_default())
            .collect();
        assert_eq!(kinds, ["KafkaToolConfig", "GlobalClientDefaults"]);
        assert!(
            array
                .iter()
                .all(|crd| crd["kind"] == "CustomResourceDefinition")
        );
    }
}
