//! Reading Kubernetes manifests from files and folders (multi-document YAML), for the offline CLI:
//! KafkaToolConfigs, GlobalClientDefaults, ConfigMaps, Secrets and Namespaces. Stricter than the
//! operator: what `kubectl apply` would refuse (unknown fields, names the API server refuses,
//! the CRDs' apply-time rules) is an error here (`gate`, `api_rules`).

mod api_rules;
mod gate;
mod locate;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use base64::Engine as _;
use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use serde::Deserialize;

use crate::engine::globals::GlobalDefaults;
use crate::engine::render::HashKey;
use crate::engine::sources::{SourceData, SourceSet};
use crate::engine::spec::{GlobalClientDefaultsSpec, ToolConfigSpec};
use crate::output::{DataError, config_map_source, secret_source};
use locate::{Located as _, Step, at_field, yaml_error_message};

pub use api_rules::write_refusal;

#[derive(Debug, thiserror::Error)]
pub enum ManifestError {
    #[error("{path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    /// `message` says "not valid YAML" and where; never a snippet of the file.
    #[error("{path}: {message}")]
    Yaml { path: PathBuf, message: String },
    #[error("{path}: document {index} ({kind} {name}): {message}")]
    Object {
        path: PathBuf,
        index: usize,
        kind: String,
        name: String,
        message: String,
    },
    /// Two documents of one set are the same Kubernetes object: `kubectl apply` would silently
    /// keep the last one, so a preview of the set cannot say what the cluster would get.
    /// Like every error here, it starts with the file (of the second definition).
    #[error(
        "{path}: document {index} ({kind} {object}) is defined twice, first in {first}; applied \
         together, the second would silently replace the first. Give each its own name (or \
         namespace), or keep one"
    )]
    Duplicate {
        path: PathBuf,
        index: usize,
        kind: String,
        /// `name`, or `namespace/name` for a namespaced object.
        object: String,
        /// `path, document N` of the first definition.
        first: String,
    },
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Metadata {
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub namespace: Option<String>,
    #[serde(default)]
    pub uid: Option<String>,
    #[serde(default)]
    pub generation: Option<i64>,
    #[serde(default)]
    pub labels: BTreeMap<String, String>,
    #[serde(default)]
    pub annotations: BTreeMap<String, String>,
    #[serde(default)]
    pub owner_references: Vec<OwnerRef>,
}

/// An entry of `metadata.ownerReferences`: which object controls a ConfigMap or Secret of the
/// input, to tell an output the operator wrote from an object it would never overwrite.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct OwnerRef {
    #[serde(default)]
    pub kind: String,
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub controller: Option<bool>,
}

/// A ConfigMap or Secret of the input: the name an output would clash with.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct ExistingObject {
    pub namespace: String,
    /// `ConfigMap` or `Secret`.
    pub kind: String,
    pub name: String,
}

/// A KafkaToolConfig read from a file.
#[derive(Debug, Clone)]
pub struct ToolConfigManifest {
    pub metadata: Metadata,
    pub namespace: String,
    pub spec: ToolConfigSpec,
    pub origin: String,
}

/// Everything read from the given paths.
#[derive(Debug, Default)]
pub struct Workspace {
    pub configs: Vec<ToolConfigManifest>,
    pub globals: Vec<GlobalDefaults>,
    pub sources: BTreeMap<String, SourceSet>,
    pub namespace_labels: BTreeMap<String, BTreeMap<String, String>>,
    /// The content-hash key (`--hash-key-file`); without it the hashes are unkeyed `sha256:`
    /// and differ from the cluster's.
    pub hash_key: Option<HashKey>,
    /// The ConfigMaps and Secrets of the input, with the KafkaToolConfig that controls each (by
    /// its controller ownerReference), if any: an output may only replace its own.
    pub existing: BTreeMap<ExistingObject, Option<String>>,
    /// Where each object was defined, to refuse a second definition of the same object.
    origins: BTreeMap<ObjectKey, String>,
}

/// What identifies a Kubernetes object: API group (not version), kind, namespace (empty for a
/// cluster-scoped kind) and name.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct ObjectKey {
    group: String,
    kind: String,
    namespace: String,
    name: String,
}

const DEFAULT_NAMESPACE: &str = "default";

/// Kinds without a namespace: their `metadata.namespace`, if any, does not tell objects apart.
const CLUSTER_SCOPED: &[&str] = &[
    "Namespace",
    "GlobalClientDefaults",
    "CustomResourceDefinition",
    "ClusterRole",
    "ClusterRoleBinding",
    "PersistentVolume",
    "StorageClass",
    "PriorityClass",
    "ValidatingWebhookConfiguration",
    "MutatingWebhookConfiguration",
];

impl Workspace {
    pub fn load(paths: &[PathBuf]) -> Result<Workspace, ManifestError> {
        let mut workspace = Workspace::default();
        let mut files = Vec::new();
        for path in paths {
            collect_files(path, &mut files)?;
        }
        // A file named twice (`-f examples/ -f examples/a/x.yaml`) is read once: its objects are
        // not two definitions.
        let mut read = std::collections::BTreeSet::new();
        files.retain(|file| {
            read.insert(std::fs::canonicalize(file).unwrap_or_else(|_| file.clone()))
        });
        for file in files {
            let text = std::fs::read_to_string(&file).map_err(|source| ManifestError::Read {
                path: file.clone(),
                source,
            })?;
            workspace.add_documents(&file, &text)?;
        }
        Ok(workspace)
    }

    pub fn add_documents(&mut self, path: &Path, text: &str) -> Result<(), ManifestError> {
        // Never with serde-saphyr's snippet: the lines around an error inside a Secret are the
        // password (issue 24), and CI logs keep stderr.
        let options = serde_saphyr::options! { with_snippet: false };
        let documents: Vec<serde_json::Value> =
            serde_saphyr::from_multiple_with_options(text, options).map_err(|e| {
                ManifestError::Yaml {
                    path: path.to_path_buf(),
                    message: yaml_error_message(text, &e),
                }
            })?;
        for (index, doc) in documents.into_iter().enumerate() {
            if doc.is_null() {
                continue;
            }
            let kind = doc
                .get("kind")
                .and_then(|k| k.as_str())
                .unwrap_or_default()
                .to_string();
            // Read, not defaulted: `name: y` is a boolean in YAML, and "metadata.name is
            // missing" would send the reader looking for a line that is there.
            let metadata: Metadata = match doc.get("metadata").filter(|m| !m.is_null()) {
                None => Metadata::default(),
                Some(m) => {
                    serde_json::from_value(m.clone()).map_err(|e| ManifestError::Object {
                        path: path.to_path_buf(),
                        index,
                        kind: kind.clone(),
                        name: String::new(),
                        message: metadata_error(&e),
                    })?
                }
            };
            let fail = |message: String| ManifestError::Object {
                path: path.to_path_buf(),
                index,
                kind: kind.clone(),
                name: metadata.name.clone(),
                message,
            };
            if metadata.name.is_empty() && !kind.is_empty() {
                return Err(fail("metadata.name is missing".into()));
            }
            let namespace = metadata
                .namespace
                .clone()
                .unwrap_or_else(|| DEFAULT_NAMESPACE.to_string());
            if !kind.is_empty() {
                self.record_origin(&doc, &kind, &namespace, &metadata.name, path, index)?;
            }
            let api_version = doc
                .get("apiVersion")
                .and_then(|v| v.as_str())
                .unwrap_or_default();
            if let Some(why) = own_group_problem(api_version, &kind) {
                return Err(fail(why));
            }
            // What `kubectl apply` would refuse: unknown fields, then names and sizes.
            let located = |problems: Vec<(Vec<Step>, String)>| {
                let shown: Vec<String> = problems
                    .iter()
                    .take(MAX_SHOWN)
                    .map(|(steps, message)| format!("{}{message}", at_field(text, index, steps)))
                    .collect();
                let more = problems.len().saturating_sub(MAX_SHOWN);
                let more = if more > 0 {
                    format!("; and {more} more")
                } else {
                    String::new()
                };
                fail(format!("{}{more}", shown.join("; ")))
            };
            let unknown = gate::unknown_fields(&kind, &doc);
            if !unknown.is_empty() {
                return Err(located(
                    unknown
                        .iter()
                        .map(|f| (f.steps.clone(), f.text()))
                        .collect(),
                ));
            }
            if KINDS_READ.contains(&kind.as_str()) {
                let problems = api_rules::object_problems(&kind, &doc, &metadata.name);
                if !problems.is_empty() {
                    return Err(located(field_problems(problems)));
                }
            }
            match kind.as_str() {
                "KafkaToolConfig" => {
                    let spec = doc.get("spec").cloned().unwrap_or(serde_json::Value::Null);
                    let spec: ToolConfigSpec = gate::typed_spec(spec)
                        .map_err(|f| located(vec![(f.steps.clone(), f.text())]))?;
                    let rules = api_rules::spec_rule_problems(&spec);
                    if !rules.is_empty() {
                        return Err(located(field_problems(rules)));
                    }
                    self.configs.push(ToolConfigManifest {
                        metadata,
                        namespace,
                        spec,
                        origin: path.display().to_string(),
                    });
                }
                "GlobalClientDefaults" => {
                    let spec = doc.get("spec").cloned().unwrap_or(serde_json::Value::Null);
                    let spec: GlobalClientDefaultsSpec = gate::typed_spec(spec)
                        .map_err(|f| located(vec![(f.steps.clone(), f.text())]))?;
                    self.globals.push(GlobalDefaults {
                        name: metadata.name,
                        spec,
                    });
                }
                "ConfigMap" => {
                    let data = config_map_data(&doc)
                        .map_err(|e| fail(e.located(text, index, &namespace, &metadata.name)))?;
                    self.record_existing(&kind, &namespace, &metadata);
                    self.sources
                        .entry(namespace)
                        .or_default()
                        .config_maps
                        .insert(metadata.name, data);
                }
                "Secret" => {
                    let data = secret_data(&doc)
                        .map_err(|e| fail(e.located(text, index, &namespace, &metadata.name)))?;
                    self.record_existing(&kind, &namespace, &metadata);
                    self.sources
                        .entry(namespace)
                        .or_default()
                        .secrets
                        .insert(metadata.name, data);
                }
                "Namespace" => {
                    self.namespace_labels.insert(metadata.name, metadata.labels);
                }
                // Other objects (Deployments, …) may share the files; they are not inputs.
                _ => {}
            }
        }
        Ok(())
    }

    /// Remembers where an object is defined; a second definition of it is an error naming both.
    fn record_origin(
        &mut self,
        doc: &serde_json::Value,
        kind: &str,
        namespace: &str,
        name: &str,
        path: &Path,
        index: usize,
    ) -> Result<(), ManifestError> {
        let api_version = doc
            .get("apiVersion")
            .and_then(|v| v.as_str())
            .unwrap_or_default();
        // `v1` is the core group; `kafkaconfig.dev/v1alpha1` and `.../v1` are one group.
        let group = api_version
            .rsplit_once('/')
            .map_or("", |(group, _)| group)
            .to_string();
        let cluster_scoped = CLUSTER_SCOPED.contains(&kind);
        let key = ObjectKey {
            group,
            kind: kind.to_string(),
            namespace: if cluster_scoped {
                String::new()
            } else {
                namespace.to_string()
            },
            name: name.to_string(),
        };
        let here = format!("{}, document {index}", path.display());
        if let Some(first) = self.origins.get(&key) {
            return Err(ManifestError::Duplicate {
                path: path.to_path_buf(),
                index,
                kind: kind.to_string(),
                object: if cluster_scoped {
                    name.to_string()
                } else {
                    format!("{namespace}/{name}")
                },
                first: first.clone(),
            });
        }
        self.origins.insert(key, here);
        Ok(())
    }

    fn record_existing(&mut self, kind: &str, namespace: &str, metadata: &Metadata) {
        let owner = metadata
            .owner_references
            .iter()
            .find(|r| r.controller == Some(true) && r.kind == "KafkaToolConfig")
            .map(|r| r.name.clone());
        let key = ExistingObject {
            namespace: namespace.to_string(),
            kind: kind.to_string(),
            name: metadata.name.clone(),
        };
        self.existing.insert(key, owner);
    }

    pub fn sources_of(&self, namespace: &str) -> SourceSet {
        self.sources.get(namespace).cloned().unwrap_or_default()
    }

    pub fn labels_of(&self, namespace: &str) -> BTreeMap<String, String> {
        self.namespace_labels
            .get(namespace)
            .cloned()
            .unwrap_or_default()
    }
}

fn collect_files(path: &Path, out: &mut Vec<PathBuf>) -> Result<(), ManifestError> {
    let read_err = |source| ManifestError::Read {
        path: path.to_path_buf(),
        source,
    };
    if path.is_dir() {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(path)
            .map_err(read_err)?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .collect();
        entries.sort();
        for entry in entries {
            let is_yaml = entry.extension().is_some_and(|e| e == "yaml" || e == "yml");
            if entry.is_dir() || is_yaml {
                collect_files(&entry, out)?;
            }
        }
        Ok(())
    } else if path.exists() {
        out.push(path.to_path_buf());
        Ok(())
    } else {
        Err(read_err(std::io::Error::new(
            std::io::ErrorKind::NotFound,
            "no such file or folder",
        )))
    }
}

/// A `data`-like field of a manifest as strings, each value checked without printing it.
fn string_map(
    doc: &serde_json::Value,
    field: &'static str,
) -> Result<BTreeMap<String, String>, DataError> {
    let object = match doc.get(field) {
        None | Some(serde_json::Value::Null) => return Ok(BTreeMap::new()),
        Some(serde_json::Value::Object(object)) => object,
        Some(_) => return Err(DataError::NotAMap { field }),
    };
    object
        .iter()
        .map(|(key, value)| {
            let found = match value {
                serde_json::Value::String(text) => return Ok((key.clone(), text.clone())),
                serde_json::Value::Null => "null",
                serde_json::Value::Bool(_) => "a boolean",
                serde_json::Value::Number(_) => "a number",
                serde_json::Value::Array(_) => "a list",
                serde_json::Value::Object(_) => "a mapping",
            };
            Err(DataError::NotAString {
                field,
                key: key.clone(),
                found,
            })
        })
        .collect()
}

/// Decodes a base64 value; the error says what is wrong, never which byte (it is the content).
fn decode_base64(field: &'static str, key: &str, value: &str) -> Result<Vec<u8>, DataError> {
    use base64::DecodeError;
    base64::engine::general_purpose::STANDARD
        .decode(value.trim())
        .map_err(|e| DataError::NotBase64 {
            field,
            key: key.to_string(),
            problem: match e {
                DecodeError::InvalidByte(offset, _) => {
                    format!("a character that is not base64 at offset {offset}")
                }
                DecodeError::InvalidLength(length) => format!("a length of {length}"),
                DecodeError::InvalidLastSymbol(offset, _) => {
                    format!("an impossible last character at offset {offset}")
                }
                DecodeError::InvalidPadding => "wrong padding".to_string(),
            },
        })
}

fn config_map_data(doc: &serde_json::Value) -> Result<SourceData, DataError> {
    let mut binary = BTreeMap::new();
    for (key, value) in string_map(doc, "binaryData")? {
        let bytes = decode_base64("binaryData", &key, &value)?;
        binary.insert(key, ByteString(bytes));
    }
    let config_map = ConfigMap {
        data: Some(string_map(doc, "data")?),
        binary_data: Some(binary),
        ..ConfigMap::default()
    };
    config_map_source(config_map)
}

fn secret_data(doc: &serde_json::Value) -> Result<SourceData, DataError> {
    let mut data = BTreeMap::new();
    for (key, value) in string_map(doc, "data")? {
        let bytes = decode_base64("data", &key, &value)?;
        data.insert(key, ByteString(bytes));
    }
    let secret = Secret {
        data: Some(data),
        string_data: Some(string_map(doc, "stringData")?),
        ..Secret::default()
    };
    Ok(secret_source(secret))
}

/// The kinds the reader takes as input; the API server's name and size rules are checked on them.
const KINDS_READ: [&str; 5] = [
    "KafkaToolConfig",
    "GlobalClientDefaults",
    "ConfigMap",
    "Secret",
    "Namespace",
];

/// The most problems of one document shown; the rest are counted.
const MAX_SHOWN: usize = 10;

/// `(field, why)` pairs as located problems (`spec.env[1]` is the steps `spec`, `env`, 1).
/// What is wrong with a `metadata` that is not an object of strings, with the YAML rule behind
/// the usual cause.
fn metadata_error(error: &serde_json::Error) -> String {
    let text = error.to_string();
    // serde repeats a string it did not expect, and a Secret's metadata can hold its data
    // (kubectl's last-applied annotation): the value is never repeated.
    let text = match (
        text.find("invalid type: string \""),
        text.rfind("\", expected"),
    ) {
        (Some(start), Some(end)) if end > start => {
            format!(
                "{}invalid type: a string{}",
                &text[..start],
                &text[end + 1..]
            )
        }
        _ => text,
    };
    let hint = if text.contains("boolean") || text.contains("integer") || text.contains("floating")
    {
        " (unquoted y, yes, on, true, n, no, off, false and numbers are not strings in YAML: quote them)"
    } else {
        ""
    };
    format!("metadata cannot be read: {text}{hint}")
}

fn field_problems(problems: Vec<(String, String)>) -> Vec<(Vec<Step>, String)> {
    problems
        .into_iter()
        .map(|(field, why)| {
            let mut steps = Vec::new();
            for part in field.split('.').filter(|p| !p.is_empty()) {
                let (key, index) = match part.split_once('[') {
                    Some((key, rest)) => (key, rest.trim_end_matches(']').parse::<usize>().ok()),
                    None => (part, None),
                };
                steps.push(Step::Key(key.to_string()));
                steps.extend(index.map(Step::Index));
            }
            let text = if field.is_empty() {
                why
            } else {
                format!("{field}: {why}")
            };
            (steps, text)
        })
        .collect()
}

/// The API group of our kinds.
const GROUP: &str = "kafkaconfig.dev";

/// Our own API group is checked, never skipped: a misspelt kind or a wrong apiVersion would
/// otherwise pass the offline gate with nothing checked (issue 26).
fn own_group_problem(api_version: &str, kind: &str) -> Option<String> {
    const KINDS: [&str; 2] = ["KafkaToolConfig", "GlobalClientDefaults"];
    let group = api_version.rsplit_once('/').map_or("", |(group, _)| group);
    let ours = KINDS.contains(&kind);
    if group == GROUP && !ours {
        let hint = crate::engine::suggest::closest(kind, KINDS)
            .map(|k| format!("; did you mean {k}?"))
            .unwrap_or_default();
        return Some(format!(
            "{kind:?} is not a kind of {GROUP} (it has {}){hint}",
            KINDS.join(" and ")
        ));
    }
    if ours && api_version != crate::output::API_VERSION {
        return Some(format!(
            "apiVersion {api_version:?} is not served for {kind}: use {}",
            crate::output::API_VERSION
        ));
    }
    None
}

#[cfg(test)]
mod tests;
