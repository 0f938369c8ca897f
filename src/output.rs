//! The objects the operator writes: a ConfigMap or Secret holding the rendered files, labelled,
//! annotated with the content hash and owned by its KafkaToolConfig. Shared by the controller
//! and the offline `render`, so both produce the same objects. Also the other direction, the one
//! conversion of a ConfigMap's or Secret's data into sources (`config_map_source`,
//! `secret_source`), shared by the controller and the offline manifest reader, so both read the
//! same data.

// Text here comes from the API server (statuses, annotations, data): a byte-offset slice of it
// panics inside a character, and the release build aborts on a panic. Cut with `safe_text`.
#![deny(clippy::string_slice)]

use std::collections::BTreeMap;

use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::{ConfigMap, Secret};

use crate::engine::sources::SourceData;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};

use crate::engine::render::{KEYED_PREFIX, Rendered, UNKEYED_PREFIX};
use crate::engine::spec::{OutputKind, ToolConfigSpec};

pub const API_GROUP: &str = "kafkaconfig.dev";
pub const API_VERSION: &str = "kafkaconfig.dev/v1alpha1";
pub const HASH_ANNOTATION: &str = "kafkaconfig.dev/config-hash";
pub const CHANGE_CAUSE_ANNOTATION: &str = "kafkaconfig.dev/change-cause";
pub const CONFIG_LABEL: &str = "kafkaconfig.dev/config";
pub const MANAGED_BY_LABEL: &str = "app.kubernetes.io/managed-by";
pub const MANAGER: &str = "kafka-config-operator";

/// The owner a written object points back to.
#[derive(Debug, Clone)]
pub struct Owner<'a> {
    pub name: &'a str,
    pub namespace: &'a str,
    /// Absent offline; the controller always has it.
    pub uid: Option<&'a str>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum OutputObject {
    ConfigMap(ConfigMap),
    Secret(Secret),
}

impl OutputObject {
    pub fn to_json(&self) -> serde_json::Value {
        let value = match self {
            OutputObject::ConfigMap(cm) => serde_json::to_value(cm),
            OutputObject::Secret(s) => serde_json::to_value(s),
        };
        value.unwrap_or(serde_json::Value::Null)
    }
}

/// `<name>-<first 8 hex of the hash>` for `output.immutable` (keyed or unkeyed alike).
pub fn immutable_name(base: &str, hash: &str) -> String {
    let hex = hash
        .strip_prefix(KEYED_PREFIX)
        .or_else(|| hash.strip_prefix(UNKEYED_PREFIX))
        .unwrap_or(hash);
    // The previous hash comes from a status, which is text from the API server: cut on a
    // character boundary.
    format!("{base}-{}", crate::engine::safe_text::head(hex, 8))
}

/// The name the output is written under.
pub fn output_name(spec: &ToolConfigSpec, rendered: &Rendered) -> String {
    if spec.output().immutable == Some(true) {
        immutable_name(&rendered.name, &rendered.hash)
    } else {
        rendered.name.clone()
    }
}

pub fn build(owner: &Owner<'_>, spec: &ToolConfigSpec, rendered: &Rendered) -> OutputObject {
    let immutable = spec.output().immutable == Some(true);
    let metadata = ObjectMeta {
        name: Some(output_name(spec, rendered)),
        namespace: Some(owner.namespace.to_string()),
        labels: Some(BTreeMap::from([
            (MANAGED_BY_LABEL.to_string(), MANAGER.to_string()),
            (CONFIG_LABEL.to_string(), owner.name.to_string()),
        ])),
        annotations: Some(BTreeMap::from([(
            HASH_ANNOTATION.to_string(),
            rendered.hash.clone(),
        )])),
        owner_references: owner.uid.map(|uid| {
            vec![OwnerReference {
                api_version: API_VERSION.to_string(),
                kind: "KafkaToolConfig".to_string(),
                name: owner.name.to_string(),
                uid: uid.to_string(),
                controller: Some(true),
                block_owner_deletion: Some(true),
            }]
        }),
        ..ObjectMeta::default()
    };
    let immutable = immutable.then_some(true);
    match rendered.kind {
        OutputKind::ConfigMap => OutputObject::ConfigMap(ConfigMap {
            metadata,
            data: Some(rendered.files.clone()),
            immutable,
            ..ConfigMap::default()
        }),
        OutputKind::Secret => OutputObject::Secret(Secret {
            metadata,
            data: Some(
                rendered
                    .files
                    .iter()
                    .map(|(k, v)| (k.clone(), ByteString(v.clone().into_bytes())))
                    .collect(),
            ),
            type_: Some("Opaque".to_string()),
            immutable,
            ..Secret::default()
        }),
    }
}

/// A ConfigMap's `data`/`binaryData` or a Secret's `data`/`stringData` that cannot be read. Never
/// carries the value: in a Secret it is the secret, so only the field, the key and (once
/// the offline reader has placed it) the line and column are named.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DataError {
    /// A field that is not a mapping of strings to strings.
    #[error("{field}: not a mapping of keys to strings")]
    NotAMap { field: &'static str },
    /// One value of such a field is not a string (a number, a list…).
    #[error("{field}.{key}: {found}, not a string (the value is not shown)")]
    NotAString {
        field: &'static str,
        key: String,
        found: &'static str,
    },
    #[error("{field}.{key}: not valid base64 ({problem}; the value is not shown)")]
    NotBase64 {
        field: &'static str,
        key: String,
        problem: String,
    },
    /// What the API server answers for such a ConfigMap (k8s.io/kubernetes
    /// pkg/apis/core/validation `ValidateConfigMap`, `field.Invalid` of `data[key]`).
    #[error("data[{key}]: Invalid value: \"{key}\": duplicate of key present in binaryData")]
    DuplicateKey { key: String },
}

/// What a ConfigMap offers as sources: `data` and `binaryData` together. The one conversion the
/// offline reader and the operator (`operator::dereference`) share. A key in both is refused,
/// as the API server refuses to store such a ConfigMap.
pub fn config_map_source(config_map: ConfigMap) -> Result<SourceData, DataError> {
    let mut data: BTreeMap<String, Vec<u8>> = config_map
        .data
        .unwrap_or_default()
        .into_iter()
        .map(|(key, value)| (key, value.into_bytes()))
        .collect();
    for (key, value) in config_map.binary_data.unwrap_or_default() {
        if data.contains_key(&key) {
            return Err(DataError::DuplicateKey { key });
        }
        data.insert(key, value.0);
    }
    Ok(SourceData { data })
}

/// What a Secret offers as sources: its data as the API server stores it, `stringData` merged
/// over `data`, `stringData` winning (k8s.io/kubernetes pkg/apis/core/v1
/// `Convert_v1_Secret_To_core_Secret`). The one conversion the offline reader and the operator
/// share; the operator reads Secrets from the API server, which never returns `stringData`, so
/// for it this is `data`.
pub fn secret_source(secret: Secret) -> SourceData {
    let mut data: BTreeMap<String, Vec<u8>> = secret
        .data
        .unwrap_or_default()
        .into_iter()
        .map(|(key, value)| (key, value.0))
        .collect();
    for (key, value) in secret.string_data.unwrap_or_default() {
        data.insert(key, value.into_bytes());
    }
    SourceData { data }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_immutable_name_takes_eight_characters_of_the_hash_and_never_splits_one() {
        let hex = "0123456789abcdef".repeat(4);
        for prefix in [KEYED_PREFIX, UNKEYED_PREFIX] {
            assert_eq!(
                immutable_name("app", &format!("{prefix}{hex}")),
                "app-01234567"
            );
        }
        // A status is the API server's text: a hash that is not hex must not abort the
        // operator (the release build has `panic = "abort"`).
        assert_eq!(immutable_name("app", "sha256:abcdefg€x"), "app-abcdefg");
        assert_eq!(immutable_name("app", "ab"), "app-ab");
    }
}
