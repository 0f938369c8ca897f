//! The custom resources: `KafkaToolConfig` (namespaced) and `GlobalClientDefaults` (cluster-scoped)
//! in `kafkaconfig.dev/v1alpha1`. The specs are the engine's own types, flattened in, so the API
//! and the engine can never disagree.

use kube::CustomResource;
use kube::CustomResourceExt;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::engine::spec::{GlobalClientDefaultsSpec, ToolConfigSpec};
use crate::status::{Condition, HistoryEntry, KafkaToolConfigStatus};

/// Layered Kafka configuration for one tool or client, rendered into a ConfigMap or Secret.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[kube(
    group = "kafkaconfig.dev",
    version = "v1alpha1",
    kind = "KafkaToolConfig",
    namespaced,
    shortname = "ktc",
    // Not `kafka`: Strimzi's kind `Kafka` is `kubectl get kafka` (issue 26).
    category = "kafkaconfig",
    status = "KafkaToolConfigStatus",
    printcolumn = r#"{"name":"Ready","type":"string","jsonPath":".status.conditions[?(@.type==\"Ready\")].status"}"#,
    printcolumn = r#"{"name":"Reason","type":"string","jsonPath":".status.conditions[?(@.type==\"Ready\")].reason"}"#,
    printcolumn = r#"{"name":"Synced","type":"string","jsonPath":".status.conditions[?(@.type==\"Synced\")].status"}"#,
    printcolumn = r#"{"name":"Tool","type":"string","jsonPath":".spec.tool"}"#,
    printcolumn = r#"{"name":"Hash","type":"string","jsonPath":".status.configHash","priority":1}"#,
    printcolumn = r#"{"name":"Age","type":"date","jsonPath":".metadata.creationTimestamp"}"#
)]
pub struct KafkaToolConfigSpec {
    #[serde(flatten)]
    pub config: ToolConfigSpec,
}

/// Cluster-wide defaults, enforced settings and override policy for the KafkaToolConfigs it selects.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[kube(
    group = "kafkaconfig.dev",
    version = "v1alpha1",
    kind = "GlobalClientDefaults",
    // kube-derive would say "globalclientdefaultses"
    plural = "globalclientdefaults",
    shortname = "gcd",
    // Not `kafka`: Strimzi's kind `Kafka` is `kubectl get kafka` (issue 26).
    category = "kafkaconfig",
    status = "GlobalClientDefaultsStatus",
    printcolumn = r#"{"name":"Valid","type":"string","jsonPath":".status.conditions[?(@.type==\"Valid\")].status"}"#,
    printcolumn = r#"{"name":"Priority","type":"integer","jsonPath":".spec.priority"}"#,
    printcolumn = r#"{"name":"Selected","type":"integer","jsonPath":".status.selectedConfigs"}"#,
    printcolumn = r#"{"name":"Synced","type":"integer","jsonPath":".status.syncedConfigs"}"#,
    printcolumn = r#"{"name":"Age","type":"date","jsonPath":".metadata.creationTimestamp"}"#
)]
pub struct GlobalClientDefaultsSpecResource {
    #[serde(flatten)]
    pub config: GlobalClientDefaultsSpec,
}

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GlobalClientDefaultsStatus {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    #[serde(default)]
    pub conditions: Vec<Condition>,
    /// How many KafkaToolConfigs this object applies to.
    #[serde(default)]
    pub selected_configs: i64,
    /// How many of those are Ready with an output rendered from this object's current
    /// generation: how far an edit has propagated.
    #[serde(default)]
    pub synced_configs: i64,
    /// The last spec revisions, with who made them (changed keys are not known here: the
    /// configs' own history names them).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub history: Vec<HistoryEntry>,
}

/// Both CRDs as YAML documents, exactly what `crds/` holds.
pub fn crds_yaml() -> Result<String, String> {
    let crds = [KafkaToolConfig::crd(), GlobalClientDefaults::crd()];
    let mut out = String::new();
    for crd in crds {
        let value = serde_json::to_value(&crd).map_err(|e| e.to_string())?;
        out.push_str("---\n");
        out.push_str(&serde_saphyr::to_string(&value).map_err(|e| e.to_string())?);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn committed_crds_match_the_types() {
        let committed = include_str!("../../crds/kafkaconfig.dev_crds.yaml");
        assert_eq!(
            committed,
            crds_yaml().expect("CRDs serialize"),
            "crds/ is stale: run `cargo run -- crds > crds/kafkaconfig.dev_crds.yaml`"
        );
    }

    #[test]
    fn a_cached_config_fits_the_allocator_size_class_it_was_measured_in() {
        // The watch cache holds each KafkaToolConfig in an `Arc` (two counters, 16 bytes): up
        // to 1,024 bytes it takes jemalloc's 1,024-byte class, above it the 1,280-byte one,
        // 2.5 MiB more at N = 10,000 (`rss_10k_mib`). Box a field that is often empty when
        // this fails.
        let size = std::mem::size_of::<KafkaToolConfig>();
        assert!(size + 16 <= 1024, "KafkaToolConfig is {size} bytes");
    }
}
