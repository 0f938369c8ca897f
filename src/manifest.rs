//! Reading Kubernetes manifests from files and folders (multi-document YAML), for the offline CLI:
//! KafkaToolConfigs, GlobalClientDefaults, ConfigMaps, Secrets and Namespaces.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use base64::Engine as _;
use serde::Deserialize;

use crate::engine::globals::GlobalDefaults;
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
}

const DEFAULT_NAMESPACE: &str = "default";

impl Workspace {
    pub fn load(paths: &[PathBuf]) -> Result<Workspace, ManifestError> {
        let mut workspace = Workspace::default();
        let mut files = Vec::new();
        for path in paths {
            collect_files(path, &mut files)?;
        }
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
