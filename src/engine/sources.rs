//! Reading what a spec references: `.properties` files and env values held in ConfigMaps and
//! Secrets of the config's own namespace.

use std::collections::BTreeMap;

use crate::engine::key::Key;
use crate::engine::outcome::{Problem, Reason, Warning};
use crate::engine::properties;
use crate::engine::reference::Bindings;
use crate::engine::spec::{KeyRef, ToolConfigSpec};
use crate::engine::taint::{SecretSource, SecretText, Value};

/// The data of one ConfigMap (`data` and `binaryData`) or Secret (decoded `data`).
/// `Debug` and `Drop` (redacted, zeroed): `engine::secret`.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct SourceData {
    pub data: BTreeMap<String, Vec<u8>>,
}

/// Looks up ConfigMaps and Secrets of one namespace.
pub trait Sources {
    fn config_map(&self, name: &str) -> Option<&SourceData>;
    fn secret(&self, name: &str) -> Option<&SourceData>;
}

/// An in-memory set of sources, as the CLI reads them from manifests.
#[derive(Debug, Clone, Default)]
pub struct SourceSet {
    pub config_maps: BTreeMap<String, SourceData>,
    pub secrets: BTreeMap<String, SourceData>,
}

impl Sources for SourceSet {
    fn config_map(&self, name: &str) -> Option<&SourceData> {
        self.config_maps.get(name)
    }

    fn secret(&self, name: &str) -> Option<&SourceData> {
        self.secrets.get(name)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
pub enum SourceKind {
    ConfigMap,
    Secret,
}

impl SourceKind {
    pub fn as_str(self) -> &'static str {
        match self {
            SourceKind::ConfigMap => "ConfigMap",
            SourceKind::Secret => "Secret",
        }
    }

    /// The inverse of [`SourceKind::as_str`] (kinds as written in a status).
    pub fn parse(kind: &str) -> Option<SourceKind> {
        match kind {
            "ConfigMap" => Some(SourceKind::ConfigMap),
            "Secret" => Some(SourceKind::Secret),
            _ => None,
        }
    }
}

/// An output is an object of the same two kinds; the controller watches it like a source.
impl From<crate::engine::spec::OutputKind> for SourceKind {
    fn from(kind: crate::engine::spec::OutputKind) -> Self {
        match kind {
            crate::engine::spec::OutputKind::ConfigMap => SourceKind::ConfigMap,
            crate::engine::spec::OutputKind::Secret => SourceKind::Secret,
        }
    }
}

/// An object a config depends on: what the controller's reverse index is keyed by.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
pub struct SourceRef {
    pub kind: SourceKind,
    pub name: String,
}

/// Every ConfigMap and Secret a spec references, whether or not it exists.
pub fn referenced_sources(spec: &ToolConfigSpec) -> Vec<SourceRef> {
    let mut refs = Vec::new();
    let mut push = |kind, r: &KeyRef| {
        refs.push(SourceRef {
            kind,
            name: r.name.clone(),
        })
    };
    for file in &spec.config_files {
        if let Some(r) = &file.config_map_key_ref {
            push(SourceKind::ConfigMap, r);
        }
        if let Some(r) = &file.secret_key_ref {
            push(SourceKind::Secret, r);
        }
    }
    for env in &spec.env {
        if let Some(from) = &env.value_from {
            if let Some(r) = &from.config_map_key_ref {
                push(SourceKind::ConfigMap, r);
            }
            if let Some(r) = &from.secret_key_ref {
                push(SourceKind::Secret, r);
            }
        }
    }
    refs.sort();
    refs.dedup();
    refs
}

/// Fetches one key, or says precisely what is missing. `Ok(None)` for an optional miss.
fn fetch<'s>(
    sources: &'s dyn Sources,
    namespace: &str,
    kind: SourceKind,
    key_ref: &KeyRef,
    field: &str,
) -> Result<Option<&'s [u8]>, Problem> {
    if let Some(other) = key_ref.namespace.as_deref()
        && other != namespace
    {
        return Err(Problem::new(
            Reason::CrossNamespaceReference,
            field,
            format!(
                "{} {}/{} is in another namespace; a KafkaToolConfig in {namespace} can only read its own namespace",
                kind.as_str(),
                other,
                key_ref.name
            ),
        ));
    }
    let object = match kind {
        SourceKind::ConfigMap => sources.config_map(&key_ref.name),
        SourceKind::Secret => sources.secret(&key_ref.name),
    };
    let Some(object) = object else {
        if key_ref.is_optional() {
            return Ok(None);
        }
        let reason = match kind {
            SourceKind::ConfigMap => Reason::ConfigMapNotFound,
            SourceKind::Secret => Reason::SecretNotFound,
        };
        return Err(Problem::new(
            reason,
            field,
            format!(
                "{} {} does not exist in this namespace",
                kind.as_str(),
                key_ref.name
            ),
        ));
    };
    match object.data.get(&key_ref.key) {
        Some(bytes) => Ok(Some(bytes)),
        None if key_ref.is_optional() => Ok(None),
        None => Err(Problem::new(
            Reason::KeyNotFound,
            field,
            format!(
                "{} {} has no key {:?} (keys: {})",
                kind.as_str(),
                key_ref.name,
                key_ref.key,
                object.data.keys().cloned().collect::<Vec<_>>().join(", ")
            ),
        )),
    }
}

/// A parsed configuration file.
#[derive(Debug, Clone)]
pub struct LoadedFile {
    pub index: usize,
    pub kind: SourceKind,
    pub object: String,
    pub key: String,
    pub entries: Vec<FileEntry>,
}

/// One `key=value` of a file; the value of a file held in a Secret is Secret data from here on,
/// and so is its key unless Kafka defines it ([`Key::from_secret_file`]).
/// `Debug` (redacted): `engine::secret`.
#[derive(Clone)]
pub struct FileEntry {
    pub key: Key,
    pub value: Value,
    pub line: u32,
}

impl LoadedFile {
    /// `configFiles[0] base-client/client.properties`: what its entries' sources start with.
    pub fn source_file(&self) -> String {
        format!("configFiles[{}] {}/{}", self.index, self.object, self.key)
    }
}

/// Loads every `spec.configFiles` entry; problems are collected, not short-circuited, so one
/// status names every missing source at once.
pub fn load_files(
    spec: &ToolConfigSpec,
    namespace: &str,
    sources: &dyn Sources,
    problems: &mut Vec<Problem>,
    warnings: &mut Vec<Warning>,
) -> Vec<LoadedFile> {
    let mut files = Vec::new();
    for (index, file) in spec.config_files.iter().enumerate() {
        let (kind, key_ref, field) = match (&file.config_map_key_ref, &file.secret_key_ref) {
            (Some(r), None) => (
                SourceKind::ConfigMap,
                r,
                format!("spec.configFiles[{index}].configMapKeyRef"),
            ),
            (None, Some(r)) => (
                SourceKind::Secret,
                r,
                format!("spec.configFiles[{index}].secretKeyRef"),
            ),
            _ => {
                problems.push(Problem::new(
                    Reason::InvalidArgument,
                    format!("spec.configFiles[{index}]"),
                    "set exactly one of configMapKeyRef and secretKeyRef",
                ));
                continue;
            }
        };
        let bytes = match fetch(sources, namespace, kind, key_ref, &field) {
            Ok(Some(bytes)) => bytes,
            Ok(None) => continue,
            Err(problem) => {
                problems.push(problem);
                continue;
            }
        };
        if !bytes.is_ascii() {
            warnings.push(Warning {
                key: String::new(),
                role: None,
                reason: Reason::NonAsciiInFile,
                message: format!(
                    "{} {}/{}: Kafka reads .properties files as ISO-8859-1, so non-ASCII bytes \
                     (UTF-8 text) become other characters; write them as \\uXXXX",
                    kind.as_str(),
                    key_ref.name,
                    key_ref.key
                ),
            });
        }
        match properties::load(bytes) {
            Ok(entries) => files.push(LoadedFile {
                index,
                kind,
                object: key_ref.name.clone(),
                key: key_ref.key.clone(),
                entries: file_entries(entries, kind, namespace, key_ref),
            }),
            Err(e) => {
                // The error may quote a piece of the file (the code unit of a lone surrogate).
                let why = match kind {
                    SourceKind::ConfigMap => e.to_string(),
                    SourceKind::Secret => format!(
                        "line {}: a \\u escape Java rejects (not shown: it is part of the Secret)",
                        e.line()
                    ),
                };
                problems.push(Problem::new(
                    Reason::ParseError,
                    field,
                    format!("{} {}/{}: {why}", kind.as_str(), key_ref.name, key_ref.key),
                ))
            }
        }
    }
    files
}

/// A file's entries, each key and value of a Secret's file turned into Secret data as it is read.
fn file_entries(
    entries: Vec<properties::Entry>,
    kind: SourceKind,
    namespace: &str,
    key_ref: &KeyRef,
) -> Vec<FileEntry> {
    let from = (kind == SourceKind::Secret)
        .then(|| SecretSource::new(namespace, &key_ref.name, &key_ref.key));
    entries
        .into_iter()
        .map(|entry| match &from {
            Some(from) => FileEntry {
                key: Key::from_secret_file(entry.key, from, entry.line),
                value: Value::Secret(SecretText::from_file(entry.value, from.clone(), entry.line)),
                line: entry.line,
            },
            None => FileEntry {
                key: Key::new(entry.key),
                value: Value::from(entry.value),
                line: entry.line,
            },
        })
        .collect()
}

/// Builds the values `${name}` and `${env.NAME}` resolve to.
pub fn bindings(
    spec: &ToolConfigSpec,
    namespace: &str,
    sources: &dyn Sources,
    problems: &mut Vec<Problem>,
) -> Bindings {
    let mut bindings = Bindings::default();
    for (name, value) in &spec.system_properties {
        bindings
            .system_properties
            .insert(name.clone(), Value::from(value.as_str()));
    }
    for (index, env) in spec.env.iter().enumerate() {
        let field = format!("spec.env[{index}]");
        let binding = match (&env.value, &env.value_from) {
            (Some(value), None) => Value::from(value.as_str()),
            (None, Some(from)) => {
                let (kind, key_ref, field) = match (&from.config_map_key_ref, &from.secret_key_ref)
                {
                    (Some(r), None) => (
                        SourceKind::ConfigMap,
                        r,
                        format!("{field}.valueFrom.configMapKeyRef"),
                    ),
                    (None, Some(r)) => (
                        SourceKind::Secret,
                        r,
                        format!("{field}.valueFrom.secretKeyRef"),
                    ),
                    _ => {
                        problems.push(Problem::new(
                            Reason::InvalidArgument,
                            format!("{field}.valueFrom"),
                            "set exactly one of configMapKeyRef and secretKeyRef",
                        ));
                        continue;
                    }
                };
                match fetch(sources, namespace, kind, key_ref, &field) {
                    Ok(Some(bytes)) => {
                        let value = match String::from_utf8(bytes.to_vec()) {
                            Ok(value) => value,
                            Err(e) => {
                                zeroize::Zeroize::zeroize(&mut e.into_bytes());
                                problems.push(Problem::new(
                                    Reason::ParseError,
                                    field,
                                    format!(
                                        "{} {}/{} is not UTF-8 text",
                                        kind.as_str(),
                                        key_ref.name,
                                        key_ref.key
                                    ),
                                ));
                                continue;
                            }
                        };
                        match kind {
                            SourceKind::ConfigMap => Value::from(value),
                            SourceKind::Secret => Value::Secret(SecretText::from_key(
                                value,
                                SecretSource::new(namespace, &key_ref.name, &key_ref.key),
                            )),
                        }
                    }
                    Ok(None) => continue,
                    Err(problem) => {
                        problems.push(problem);
                        continue;
                    }
                }
            }
            _ => {
                problems.push(Problem::new(
                    Reason::InvalidArgument,
                    field,
                    "set exactly one of value and valueFrom",
                ));
                continue;
            }
        };
        bindings.env.insert(env.name.clone(), binding);
    }
    bindings
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_parse_error_in_a_secret_file_quotes_nothing_of_it() {
        let spec: ToolConfigSpec = serde_json::from_value(serde_json::json!({
            "tool": "kafka-console-producer",
            "configFiles": [
                {"secretKeyRef": {"name": "creds", "key": "client.properties"}},
                {"configMapKeyRef": {"name": "base", "key": "client.properties"}}
            ]
        }))
        .unwrap_or_default();
        let file = || SourceData {
            data: BTreeMap::from([(
                "client.properties".to_string(),
                b"ok=1\nlone=\\uDBFFx\n".to_vec(),
            )]),
        };
        let mut sources = SourceSet::default();
        sources.secrets.insert("creds".into(), file());
        sources.config_maps.insert("base".into(), file());
        let (mut problems, mut warnings) = (Vec::new(), Vec::new());
        load_files(&spec, "ns", &sources, &mut problems, &mut warnings);
        let messages: Vec<&str> = problems.iter().map(|p| p.message.as_str()).collect();
        assert_eq!(messages.len(), 2, "{messages:?}");
        assert!(messages[0].starts_with("Secret creds/client.properties: line 2"));
        assert!(!messages[0].contains("DBFF"), "{}", messages[0]);
        // A ConfigMap's text is the user's own: the unit is named.
        assert!(messages[1].contains("DBFF"), "{}", messages[1]);
    }
}
