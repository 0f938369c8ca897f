//! `explain`: for every key, the winning value, its layer and source, and what it overrode.

use std::io::Write as _;
use std::path::PathBuf;

use serde::Serialize;

use super::{CliError, Invalid, TextFormat, evaluate_manifest, report_problems, to_json_pretty};
use crate::engine::Evaluation;
use crate::engine::layers::{Contribution, Layer};
use crate::engine::mirror_maker;
use crate::engine::safe_text::printable;
use crate::engine::sensitive::{self, REDACTED};
use crate::engine::spec::Role;
use crate::manifest::Workspace;

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
        for (key, provenance) in &view.keys {
            if only_key.is_some_and(|k| !key.inspect(|key| key == k)) {
                continue;
            }
            let shown =
                |c: &Contribution| sensitive::shown_value_of(key, provenance, c).into_owned();
            let winner = provenance.winner();
            if winner.layer == Layer::KafkaDefaults {
                continue;
            }
            entries.push(ExplainEntry {
                namespace: namespace.to_string(),
                name: name.to_string(),
                role: role.to_string(),
                key: key.shown().into_owned(),
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
        // By the key as shown (the key order when every key is shown): in key order, a key read
        // from a Secret file would tell where its text sorts.
        entries[first..].sort_by(|a, b| a.key.cmp(&b.key));
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
        // MirrorMaker 2: what each cluster's producer, consumer and admin end up with, under
        // the role `mirror-maker/<cluster>/<client>`.
        if *role == Role::MirrorMaker {
            for client in mirror_maker::cluster_clients(view) {
                if only_key.is_some_and(|k| k != client.key && k != client.spelling) {
                    continue;
                }
                let c = client.contribution;
                let value = if !c.is_secret_sourced()
                    && sensitive::is_password_key(*role, &client.spelling)
                {
                    REDACTED.to_string()
                } else {
                    ev.shown_value(*role, &client.key, c).into_owned()
                };
                entries.push(ExplainEntry {
                    namespace: namespace.to_string(),
                    name: name.to_string(),
                    role: format!("{role}/{}/{}", client.cluster, client.client),
                    key: client.key,
                    value,
                    layer: c.layer,
                    source: format!("{} as {}", c.source, client.spelling),
                    overridden: Vec::new(),
                });
            }
        }
    }
    entries
}

pub fn print_explain(entries: &[ExplainEntry], format: TextFormat) -> Result<(), CliError> {
    let mut stdout = std::io::stdout().lock();
    match format {
        TextFormat::Json => writeln!(stdout, "{}", to_json_pretty(&entries))?,
        TextFormat::Table => {
            // Keys, values and source names are the manifest's: shown escaped (`printable`).
            let mut current = String::new();
            for entry in entries {
                let heading = format!("{}/{} ({})", entry.namespace, entry.name, entry.role);
                if heading != current {
                    writeln!(stdout, "{}", printable(&heading))?;
                    current = heading;
                }
                let key = printable(&entry.key);
                writeln!(
                    stdout,
                    "  {key} = {}    [{}: {}]",
                    printable(&entry.value),
                    entry.layer,
                    printable(&entry.source)
                )?;
                for o in &entry.overridden {
                    writeln!(
                        stdout,
                        "      overrides {key} = {}    [{}: {}]",
                        printable(&o.value),
                        o.layer,
                        printable(&o.source)
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
        // The provenance table of one config: its output's fate is `render`'s and `validate`'s.
        let outcome = super::Outcome {
            config,
            ev: evaluate_manifest(&workspace, config),
            write_failure: None,
        };
        if !outcome.ev.is_valid() {
            all_valid = false;
            report_problems(&outcome);
        }
        entries.extend(explain_entries(
            &config.namespace,
            &config.metadata.name,
            &outcome.ev,
            key,
        ));
    }
    print_explain(&entries, format)?;
    Ok(if all_valid { Ok(()) } else { Err(Invalid) })
}
