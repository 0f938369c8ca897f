//! The command line: `render`, `explain`, `validate` and `crds` offline; `run` the controller;
//! `explain -n` and `history` of a live object. The CLI sits on top: it uses the operator, the engine and the
//! shared layers, and nothing below it imports it (`tests/module_graph.rs`).

// The CLI prints a manifest's text (a pull request's): a byte-offset slice of it panics inside a
// character. Cut with `safe_text`; print with `safe_text::printable`.
#![deny(clippy::string_slice)]

mod explain;
#[cfg(feature = "operator")]
mod history;
#[cfg(feature = "operator")]
mod live;
mod placeholder;
mod render;
mod validate;
mod workload;

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::PathBuf;

use clap::{Parser, Subcommand, ValueEnum};
use serde::Serialize;

use crate::engine::render::HashKey;
use crate::engine::safe_text::{self, printable};
use crate::engine::{Evaluation, Request, evaluate};
use crate::manifest::{ToolConfigManifest, Workspace};
#[cfg(feature = "operator")]
use crate::operator::RunOptions;

pub use explain::{ExplainEntry, ExplainOverride, explain_entries, explain_files, print_explain};
#[cfg(feature = "operator")]
pub use history::{history_live, history_table};
#[cfg(feature = "operator")]
pub use live::explain_live;
pub use placeholder::{MissingSources, PLACEHOLDER_VALUE, stub_missing};
pub use render::{render, render_text};
pub use validate::{validate, validate_text};
pub use workload::{fragment, launch_line, render_workload, workload_text};

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
        #[command(flatten)]
        hash_key: HashKeyArg,
        /// Print, for each config, the fragment of the workload that runs it (opt-in annotation;
        /// pod template with volumes, mounts, launch line and hash; docs/workloads.md) instead
        /// of the objects.
        #[arg(long)]
        workload: bool,
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
        #[command(flatten)]
        hash_key: HashKeyArg,
        /// Also exit 1 when a config has warnings (an `UnknownKey` is usually a typo).
        #[arg(long)]
        strict: bool,
        /// A referenced ConfigMap or Secret that is not in the files (Secrets kept out of Git):
        /// `error` (as the operator reports it) or `placeholder` (each of its keys stands in as
        /// an opaque value, a Secret's as secret material, and everything else is checked; the
        /// stand-ins are listed on stderr).
        #[arg(long = "missing-sources", value_enum, default_value_t = MissingSources::Error)]
        missing_sources: MissingSources,
    },
    /// Print the revisions a live KafkaToolConfig (or, with --global, a GlobalClientDefaults)
    /// keeps in status.history: time, hash, author, cause and changed key names.
    #[cfg(feature = "operator")]
    History {
        #[arg(short = 'n', long = "namespace")]
        namespace: Option<String>,
        /// NAME is a GlobalClientDefaults.
        #[arg(long)]
        global: bool,
        name: String,
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

/// `--hash-key-file` of `render` and `validate`.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct HashKeyArg {
    /// The cluster's content-hash key (32 raw bytes: `kubectl get secret
    /// kafka-config-operator-hash-key -n <operator namespace> -o jsonpath='{.data.key}' | base64
    /// -d`), so that the hashes printed are the ones the operator writes. Without it they are
    /// unkeyed (`sha256:`) and differ from the cluster's.
    #[arg(long = "hash-key-file", value_name = "FILE")]
    pub file: Option<PathBuf>,
}

/// Printed on stderr when hashes are shown without a key (stdout stays machine-readable).
pub const UNKEYED_NOTE: &str = "note: without --hash-key-file the content hashes printed are \
     unkeyed (sha256:) and differ from the cluster's (hmac-sha256: with the operator's key)";

impl HashKeyArg {
    /// Loads the manifests and the key, if one is given.
    pub fn load(&self, paths: &[PathBuf]) -> Result<Workspace, CliError> {
        let mut workspace = Workspace::load(paths)?;
        if let Some(file) = &self.file {
            let bytes = std::fs::read(file).map_err(|source| CliError::HashKeyRead {
                path: file.clone(),
                source,
            })?;
            let key = HashKey::new(bytes).map_err(|source| CliError::HashKey {
                path: file.clone(),
                source,
            })?;
            workspace.hash_key = Some(key);
        }
        Ok(workspace)
    }
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
    #[error("--hash-key-file {}: {source}", path.display())]
    HashKeyRead {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("--hash-key-file {}: {source}", path.display())]
    HashKey {
        path: PathBuf,
        source: crate::engine::render::HashKeyError,
    },
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
        hash_key: workspace.hash_key.as_ref(),
    })
}

/// The time of every condition change `validate` prints: offline there is no history to keep a
/// transition time from, and the wall clock would make two runs on the same files differ.
pub const OFFLINE_TIME: &str = "1970-01-01T00:00:00Z";

/// A config evaluated, and what writing its output would meet.
pub struct Outcome<'a> {
    pub config: &'a ToolConfigManifest,
    pub ev: Evaluation,
    /// `(reason, message)` when the write would fail, as the operator reports it in `Ready`:
    /// `OutputConflict` (another config of the input writes the same object first, or a
    /// ConfigMap/Secret of the input holds the name and is not this config's) or
    /// `OutputWriteFailed` (the API server would refuse the object: name, label value).
    pub write_failure: Option<(String, String)>,
}

impl Outcome<'_> {
    /// Valid and writable: what `render` prints and `validate` calls Ready.
    pub fn is_ok(&self) -> bool {
        self.ev.is_valid() && self.write_failure.is_none()
    }
}

/// Every config of the workspace evaluated, in input order, outputs checked against each other
/// and against the ConfigMaps and Secrets of the input. `render` and `validate` share it, so
/// they agree on what fails.
pub fn outcomes(workspace: &Workspace) -> Vec<Outcome<'_>> {
    let mut written: std::collections::BTreeMap<(String, String, String), String> =
        Default::default();
    let mut out = Vec::new();
    for config in &workspace.configs {
        let ev = evaluate_manifest(workspace, config);
        let mut write_failure = None;
        if let Some(rendered) = &ev.rendered {
            let name = crate::output::output_name(&config.spec, rendered);
            let kind = rendered.kind_str().to_string();
            let target = (config.namespace.clone(), kind.clone(), name.clone());
            let existing = crate::manifest::ExistingObject {
                namespace: config.namespace.clone(),
                kind: kind.clone(),
                name: name.clone(),
            };
            if let Some(owner) = written.get(&target) {
                write_failure = Some((
                    "OutputConflict".to_string(),
                    format!(
                        "{kind} {}/{name} is already written by KafkaToolConfig {owner}",
                        config.namespace
                    ),
                ));
            } else if let Some(owner) = workspace.existing.get(&existing)
                && owner.as_deref() != Some(config.metadata.name.as_str())
            {
                // The operator's own words for an object it does not control.
                write_failure = Some((
                    "OutputConflict".to_string(),
                    format!(
                        "{kind} {name} already exists and is not controlled by this \
                         KafkaToolConfig; the operator never overwrites it: delete or rename \
                         it, or set spec.output.name"
                    ),
                ));
            } else {
                write_failure = crate::manifest::write_refusal(
                    &config.metadata.name,
                    &config.namespace,
                    &name,
                    rendered,
                );
                if write_failure.is_none() {
                    written.insert(target, config.metadata.name.clone());
                }
            }
        }
        out.push(Outcome {
            config,
            ev,
            write_failure,
        });
    }
    out
}

/// Pretty JSON in which every character that could drive a terminal is a `\uXXXX` escape:
/// serde_json escapes C0 controls only, and JSON output is read on terminals too. The same value:
/// such characters can stand only inside strings, where any character may be escaped.
fn to_json_pretty<T: Serialize>(value: &T) -> String {
    let json =
        serde_json::to_string_pretty(value).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"));
    // A line break here is the layout's: serde_json writes one in a string as `\n`.
    let escaped = |c: char| c != '\n' && safe_text::drives_terminal(c);
    if !json.contains(escaped) {
        return json;
    }
    let mut out = String::with_capacity(json.len() + 16);
    for c in json.chars() {
        if escaped(c) {
            // All of them are in the Basic Multilingual Plane: one escape each.
            let _ = write!(out, "\\u{:04x}", u32::from(c));
        } else {
            out.push(c);
        }
    }
    out
}

fn report_problems(outcome: &Outcome<'_>) {
    let config = outcome.config;
    let mut stderr = std::io::stderr().lock();
    let failure = outcome
        .write_failure
        .iter()
        .map(|(reason, message)| format!("{reason}: {message}"));
    let problems = outcome
        .ev
        .source_problems
        .iter()
        .chain(&outcome.ev.problems);
    for problem in problems.map(ToString::to_string).chain(failure) {
        let line = format!(
            "KafkaToolConfig {}/{} ({}): {problem}",
            config.namespace, config.metadata.name, config.origin
        );
        let _ = writeln!(stderr, "{}", printable(&line));
    }
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
