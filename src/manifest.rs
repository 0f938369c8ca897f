//! Reading Kubernetes manifests from files and folders (multi-document YAML), for the offline CLI:
//! KafkaToolConfigs, GlobalClientDefaults, ConfigMaps, Secrets and Namespaces.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use base64::Engine as _;
use serde::Deserialize;

use crate::engine::globals::GlobalDefaults;
use crate::engine::render::HashKey;
use crate::engine::sources::{SourceData, SourceSet};
use crate::engine::spec::{GlobalClientDefaultsSpec, ToolConfigSpec};

#[derive(Debug, thiserror::Error)]
pub enum ManifestError {
    #[error("{path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: not valid YAML: {message}")]
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
        let documents: Vec<serde_json::Value> =
            serde_saphyr::from_multiple(text).map_err(|e| ManifestError::Yaml {
                path: path.to_path_buf(),
                message: e.to_string(),
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
                    let data = config_map_data(&doc).map_err(fail)?;
                    self.sources
                        .entry(namespace)
                        .or_default()
                        .config_maps
                        .insert(metadata.name, data);
                }
                "Secret" => {
                    let data = secret_data(&doc).map_err(fail)?;
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

fn string_map(doc: &serde_json::Value, field: &str) -> Result<BTreeMap<String, String>, String> {
    match doc.get(field) {
        None | Some(serde_json::Value::Null) => Ok(BTreeMap::new()),
        Some(value) => serde_json::from_value(value.clone()).map_err(|e| format!("{field}: {e}")),
    }
}

fn decode_base64(field: &str, key: &str, value: &str) -> Result<Vec<u8>, String> {
    base64::engine::general_purpose::STANDARD
        .decode(value.trim())
        .map_err(|e| format!("{field}.{key} is not base64: {e}"))
}

fn config_map_data(doc: &serde_json::Value) -> Result<SourceData, String> {
    let mut data: BTreeMap<String, Vec<u8>> = string_map(doc, "data")?
        .into_iter()
        .map(|(k, v)| (k, v.into_bytes()))
        .collect();
    for (key, value) in string_map(doc, "binaryData")? {
        data.insert(key.clone(), decode_base64("binaryData", &key, &value)?);
    }
    Ok(SourceData { data })
}

fn secret_data(doc: &serde_json::Value) -> Result<SourceData, String> {
    let mut data = BTreeMap::new();
    for (key, value) in string_map(doc, "data")? {
        data.insert(key.clone(), decode_base64("data", &key, &value)?);
    }
    // The API server merges stringData over data.
    for (key, value) in string_map(doc, "stringData")? {
        data.insert(key, value.into_bytes());
    }
    Ok(SourceData { data })
}

#[cfg(test)]
mod tests {
    use super::*;

    const CONFIG: &str = "apiVersion: kafkaconfig.dev/v1alpha1\nkind: KafkaToolConfig\nmetadata: {name: orders, namespace: team-a}\nspec: {tool: client, roles: [producer]}\n";
    const GLOBAL: &str = "apiVersion: kafkaconfig.dev/v1alpha1\nkind: GlobalClientDefaults\nmetadata: {name: prod}\nspec: {priority: 1}\n";

    fn read(files: &[(&str, &str)]) -> Result<Workspace, ManifestError> {
        let mut workspace = Workspace::default();
        for (path, text) in files {
            workspace.add_documents(Path::new(path), text)?;
        }
        Ok(workspace)
    }

    #[test]
    fn the_same_object_in_two_files_is_refused_naming_both_files() {
        let error = read(&[("a/global.yaml", GLOBAL), ("b/global.yaml", GLOBAL)])
            .expect_err("a duplicate is refused");
        let message = error.to_string();
        assert!(
            matches!(error, ManifestError::Duplicate { .. }),
            "{message}"
        );
        assert!(message.contains("GlobalClientDefaults prod"), "{message}");
        assert!(
            message.starts_with("b/global.yaml: document 0"),
            "{message}"
        );
        assert!(
            message.contains("first in a/global.yaml, document 0"),
            "{message}"
        );
    }

    #[test]
    fn a_cluster_scoped_object_is_the_same_whatever_namespace_its_manifest_names() {
        let in_namespace = GLOBAL.replace("{name: prod}", "{name: prod, namespace: x}");
        let error = read(&[("a.yaml", GLOBAL), ("b.yaml", &in_namespace)])
            .expect_err("one cluster-scoped object");
        assert!(matches!(error, ManifestError::Duplicate { .. }), "{error}");
    }

    #[test]
    fn a_file_named_twice_is_read_once() {
        let dir = std::env::temp_dir().join(format!("kco-manifest-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let file = dir.join("global.yaml");
        std::fs::write(&file, GLOBAL).expect("write");
        let workspace = Workspace::load(&[dir.clone(), file.clone()]);
        let _ = std::fs::remove_dir_all(&dir);
        assert_eq!(workspace.expect("one definition").globals.len(), 1);
    }

    #[test]
    fn the_same_object_twice_in_one_file_is_refused_with_both_documents() {
        let text = format!("{CONFIG}---\n{CONFIG}");
        let message = read(&[("one.yaml", &text)])
            .expect_err("a duplicate is refused")
            .to_string();
        assert!(
            message.contains("KafkaToolConfig team-a/orders"),
            "{message}"
        );
        assert!(message.starts_with("one.yaml: document 1"), "{message}");
        assert!(
            message.contains("first in one.yaml, document 0"),
            "{message}"
        );
    }

    #[test]
    fn only_group_kind_namespace_and_name_together_identify_an_object() {
        let other_namespace = CONFIG.replace("team-a", "team-b");
        let other_name = CONFIG.replace("orders", "payments");
        let other_version = CONFIG.replace("v1alpha1", "v1");
        // Same name, another kind in the core group: a ConfigMap may share the config's name.
        let config_map = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: orders, namespace: team-a}\ndata: {}\n";
        let workspace = read(&[
            ("a.yaml", CONFIG),
            ("b.yaml", &other_namespace),
            ("c.yaml", &other_name),
            ("d.yaml", config_map),
        ])
        .expect("distinct objects");
        assert_eq!(workspace.configs.len(), 3);
        let error = read(&[("a.yaml", CONFIG), ("e.yaml", &other_version)])
            .expect_err("another version of the same group is the same object");
        assert!(matches!(error, ManifestError::Duplicate { .. }), "{error}");
    }
}
