//! `validate`: the status conditions the operator would write.

use std::io::Write as _;
use std::path::PathBuf;

use serde::Serialize;

use super::{
    CliError, HashKeyArg, Invalid, TextFormat, UNKEYED_NOTE, evaluate_manifest, to_json_pretty,
};
use crate::engine::safe_text::printable;
use crate::manifest::Workspace;
use crate::output;
use crate::status::{self, Condition, KafkaToolConfigStatus, Live};

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct ValidateEntry {
    api_version: &'static str,
    kind: &'static str,
    metadata: ValidateMetadata,
    status: EntryStatus,
}

#[derive(Debug, Serialize)]
#[serde(untagged)]
enum EntryStatus {
    Config(Box<KafkaToolConfigStatus>),
    /// A GlobalClientDefaults: its `Valid` condition, as the operator writes it.
    Global {
        conditions: Vec<Condition>,
    },
}

impl EntryStatus {
    fn conditions(&self) -> &[Condition] {
        match self {
            EntryStatus::Config(status) => &status.conditions,
            EntryStatus::Global { conditions } => conditions,
        }
    }
}

#[derive(Debug, Serialize)]
struct ValidateMetadata {
    name: String,
    /// Absent for the cluster-scoped GlobalClientDefaults.
    #[serde(skip_serializing_if = "Option::is_none")]
    namespace: Option<String>,
}

pub fn validate(
    paths: &[PathBuf],
    format: TextFormat,
    hash_key: &HashKeyArg,
    strict: bool,
    missing_sources: super::MissingSources,
) -> Result<Result<(), Invalid>, CliError> {
    let mut workspace = hash_key.load(paths)?;
    if missing_sources == super::MissingSources::Placeholder {
        let stubbed = super::stub_missing(&mut workspace);
        let mut stderr = std::io::stderr().lock();
        for line in &stubbed {
            writeln!(
                stderr,
                "validate: placeholder for missing {}",
                printable(line)
            )?;
        }
        if stubbed.is_empty() {
            writeln!(stderr, "validate: no missing source needed a placeholder")?;
        }
    }
    if workspace.hash_key.is_none() && matches!(format, TextFormat::Json) {
        // Only the JSON output carries `configHash`.
        eprintln!("{UNKEYED_NOTE}");
    }
    let (text, all_valid) = validate_text(&workspace, format, super::OFFLINE_TIME);
    std::io::stdout().lock().write_all(text.as_bytes())?;
    // `--strict`: a warning fails the gate too (the configs are evaluated again; offline, cheap).
    let warned = strict
        && workspace
            .configs
            .iter()
            .any(|c| !evaluate_manifest(&workspace, c).warnings.is_empty());
    if warned {
        eprintln!("validate --strict: a config has warnings");
    }
    Ok(if all_valid && !warned {
        Ok(())
    } else {
        Err(Invalid)
    })
}

/// What `validate` prints, with `now` as the time of every condition change, and whether every
/// config and every GlobalClientDefaults is valid.
pub fn validate_text(workspace: &Workspace, format: TextFormat, now: &str) -> (String, bool) {
    let mut entries = Vec::new();
    let mut all_valid = true;
    for global in &workspace.globals {
        let problems = global.problems();
        all_valid &= problems.is_empty();
        entries.push(ValidateEntry {
            api_version: output::API_VERSION,
            kind: "GlobalClientDefaults",
            metadata: ValidateMetadata {
                name: global.name.clone(),
                namespace: None,
            },
            status: EntryStatus::Global {
                conditions: status::global_conditions(&problems, &[], None, now),
            },
        });
    }
    for outcome in super::outcomes(workspace) {
        let (config, ev) = (outcome.config, &outcome.ev);
        all_valid &= outcome.is_ok();
        let live = Live {
            hash: ev
                .rendered
                .as_ref()
                .filter(|_| outcome.write_failure.is_none())
                .map(|r| r.hash.clone()),
            // As the operator reports them: a conflict is retried (garbage collection may
            // clear it: Reconciling), a name or label the API server refuses is not (Stalled).
            write_failure: outcome.write_failure.clone().map(|(reason, message)| {
                status::WriteFailure {
                    retried: reason == "OutputConflict",
                    reason,
                    message,
                }
            }),
        };
        let status = status::build(ev, config.metadata.generation, None, &live, now);
        entries.push(ValidateEntry {
            api_version: output::API_VERSION,
            kind: "KafkaToolConfig",
            metadata: ValidateMetadata {
                name: config.metadata.name.clone(),
                namespace: Some(config.namespace.clone()),
            },
            status: EntryStatus::Config(Box::new(status)),
        });
    }
    let mut out = String::new();
    match format {
        TextFormat::Json => {
            out.push_str(&to_json_pretty(&entries));
            out.push('\n');
        }
        TextFormat::Table => {
            // Messages quote the manifest's keys, values and names: shown escaped (`printable`).
            for entry in &entries {
                let name = match &entry.metadata.namespace {
                    Some(namespace) => format!("{namespace}/{}", entry.metadata.name),
                    None => entry.metadata.name.clone(),
                };
                out.push_str(&format!("{} {}\n", entry.kind, printable(&name)));
                for c in entry.status.conditions() {
                    out.push_str(&format!(
                        "  {}={} {}: {}\n",
                        c.type_,
                        c.status,
                        c.reason,
                        printable(&c.message)
                    ));
                }
                let warnings = match &entry.status {
                    EntryStatus::Config(status) => status.warnings.as_slice(),
                    EntryStatus::Global { .. } => &[],
                };
                for w in warnings {
                    out.push_str(&format!(
                        "  warning {} {}: {}\n",
                        w.reason,
                        printable(&w.key),
                        printable(&w.message)
                    ));
                }
            }
        }
    }
    (out, all_valid)
}
