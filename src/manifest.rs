//! Reading Kubernetes manifests from files and folders (multi-document YAML), for the offline CLI:
//! KafkaToolConfigs, GlobalClientDefaults, ConfigMaps, Secrets and Namespaces.

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
            let metadata: Metadata = doc
                .get("metadata")
                .cloned()
                .map(serde_json::from_value)
                .transpose()
                .ok()
                .flatten()
                .unwrap_or_default();
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
            match kind.as_str() {
                "KafkaToolConfig" => {
                    let spec = doc.get("spec").cloned().unwrap_or(serde_json::Value::Null);
                    let spec: ToolConfigSpec =
                        serde_json::from_value(spec).map_err(|e| fail(format!("spec: {e}")))?;
                    self.configs.push(ToolConfigManifest {
                        metadata,
                        namespace,
                        spec,
                        origin: path.display().to_string(),
                    });
                }
                "GlobalClientDefaults" => {
                    let spec = doc.get("spec").cloned().unwrap_or(serde_json::Value::Null);
                    let spec: GlobalClientDefaultsSpec =
                        serde_json::from_value(spec).map_err(|e| fail(format!("spec: {e}")))?;
                    self.globals.push(GlobalDefaults {
                        name: metadata.name,
                        spec,
                    });
                }
                "ConfigMap" => {
                    let data = config_map_data(&doc)
                        .map_err(|e| fail(e.located(text, index, &namespace, &metadata.name)))?;
                    self.sources
                        .entry(namespace)
                        .or_default()
                        .config_maps
                        .insert(metadata.name, data);
                }
                "Secret" => {
                    let data = secret_data(&doc)
                        .map_err(|e| fail(e.located(text, index, &namespace, &metadata.name)))?;
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

trait Located {
    fn field_and_key(&self) -> Option<(&'static str, &str)>;
    fn located(&self, text: &str, index: usize, namespace: &str, name: &str) -> String;
}

impl Located for DataError {
    fn field_and_key(&self) -> Option<(&'static str, &str)> {
        match self {
            DataError::NotAString { field, key, .. } | DataError::NotBase64 { field, key, .. } => {
                Some((field, key))
            }
            DataError::DuplicateKey { key } => Some(("data", key)),
            DataError::NotAMap { .. } => None,
        }
    }

    /// The message with the line and column of the value in `text` (document `index`), when
    /// they can be found.
    fn located(&self, text: &str, index: usize, namespace: &str, name: &str) -> String {
        let at = self
            .field_and_key()
            .and_then(|(field, key)| value_location(text, index, field, key))
            .map(|(line, column)| format!("line {line}, column {column}: "))
            .unwrap_or_default();
        format!("{at}{namespace}/{name}: {self}")
    }
}

/// Where the value of `field.key` of document `index` starts (1-based line and column). Read
/// again only when an error needs it, so a valid file is parsed once.
fn value_location(text: &str, index: usize, field: &str, key: &str) -> Option<(u64, u64)> {
    type Spans = Option<BTreeMap<String, serde_saphyr::Spanned<serde::de::IgnoredAny>>>;
    #[derive(Deserialize)]
    struct Located {
        #[serde(default)]
        data: Spans,
        #[serde(default, rename = "stringData")]
        string_data: Spans,
        #[serde(default, rename = "binaryData")]
        binary_data: Spans,
    }
    let options = serde_saphyr::options! { with_snippet: false };
    let documents: Vec<Option<Located>> =
        serde_saphyr::from_multiple_with_options(text, options).ok()?;
    let document = documents.into_iter().nth(index)??;
    let spans = match field {
        "data" => document.data,
        "stringData" => document.string_data,
        "binaryData" => document.binary_data,
        _ => None,
    }?;
    let at = spans.get(key)?.referenced;
    (at.line() > 0).then(|| (at.line(), at.column()))
}

/// A YAML syntax error with its line and column and never a snippet of the file; inside a Secret
/// not even the parser's words (they may quote what they stumbled on), only where it is.
fn yaml_error_message(text: &str, error: &serde_saphyr::Error) -> String {
    let Some(at) = error.location().filter(|l| l.line() > 0) else {
        return format!("not valid YAML: {error}");
    };
    let (line, column) = (at.line(), at.column());
    match secret_around(text, line) {
        Some(place) => format!(
            "line {line}, column {column}: not valid YAML inside {place} (the content is not \
             shown: it may be secret)"
        ),
        None => format!("line {line}, column {column}: not valid YAML: {error}"),
    }
}

/// When 1-based `line` of `text` is in a document of kind Secret: "Secret NS/NAME", with the
/// field and key the line is under where the indentation tells (`stringData` key `password`).
/// A plain scan of the lines: the YAML could not be parsed.
fn secret_around(text: &str, line: u64) -> Option<String> {
    let lines: Vec<&str> = text.lines().collect();
    let here = usize::try_from(line)
        .ok()?
        .saturating_sub(1)
        .min(lines.len());
    let is_separator = |l: &str| l.starts_with("---");
    let start = lines[..here]
        .iter()
        .rposition(|l| is_separator(l))
        .map_or(0, |i| i + 1);
    let end = lines[here..]
        .iter()
        .position(|l| is_separator(l))
        .map_or(lines.len(), |i| here + i);
    let document = &lines[start..end];
    fn top<'a>(l: &'a str, key: &str) -> Option<&'a str> {
        l.strip_prefix(key)
            .and_then(|rest| rest.strip_prefix(':'))
            .map(str::trim)
    }
    let kind = document.iter().find_map(|l| top(l, "kind"))?;
    if kind.trim_matches(|c| c == '"' || c == '\'') != "Secret" {
        return None;
    }
    // metadata: {name: x, namespace: y} or a block with indented name:/namespace:.
    let word = |l: &str, key: &str| {
        let at = l.find(&format!("{key}:"))?;
        let before = l[..at].chars().last();
        if before.is_some_and(|c| c.is_alphanumeric()) {
            return None;
        }
        let value = l[at + key.len() + 1..].trim_start();
        let value: String = value
            .chars()
            .take_while(|c| !matches!(c, ',' | '}' | ' ' | '#'))
            .collect();
        (!value.is_empty()).then(|| value.trim_matches(|c| c == '"' || c == '\'').to_string())
    };
    let metadata = document.iter().position(|l| top(l, "metadata").is_some());
    let in_metadata = |key: &str| {
        let from = metadata?;
        let mut scope = vec![document[from]];
        scope.extend(
            document[from + 1..]
                .iter()
                .take_while(|l| l.starts_with(' ') || l.trim().is_empty()),
        );
        scope.iter().find_map(|l| word(l, key))
    };
    let name = in_metadata("name").unwrap_or_default();
    let namespace = in_metadata("namespace").unwrap_or_else(|| DEFAULT_NAMESPACE.to_string());
    let mut place = format!("Secret {namespace}/{name}");
    // The top-level field the line is under, and the key at that field's first indentation.
    let local = here
        .saturating_sub(start)
        .min(document.len().saturating_sub(1));
    let field_at = document[..=local]
        .iter()
        .rposition(|l| !l.starts_with(' ') && !l.trim().is_empty() && !l.starts_with('#'));
    if let Some(field_at) = field_at
        && let Some(field) = ["data", "stringData"]
            .into_iter()
            .find(|f| top(document[field_at], f).is_some())
    {
        place.push_str(&format!(", {field}"));
        let children = &document[field_at + 1..=local];
        let indent = children
            .iter()
            .find(|l| !l.trim().is_empty())
            .map(|l| l.len() - l.trim_start().len());
        let key = indent.and_then(|indent| {
            children.iter().rev().find_map(|l| {
                let own = l.len() - l.trim_start().len();
                let (key, _) = l.trim_start().split_once(':')?;
                (own == indent && !key.starts_with('#')).then(|| key.trim().to_string())
            })
        });
        if let Some(key) = key {
            place.push_str(&format!(" key {key}"));
        }
    }
    Some(place)
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
