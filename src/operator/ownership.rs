//! Who controls an object and which content it holds: the one place that reads the
//! `kafkaconfig.dev/config-hash` annotation and the controller ownerReference of outputs and
//! workload templates, for the write path, the watches and the resourceVersion cache alike.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kube::api::ObjectMeta;

use crate::operator::crd::KafkaToolConfig;
use crate::output::{HASH_ANNOTATION, MANAGER};

/// The content hash an object (an output, or a workload's pod template) is stamped with.
pub fn hash_of(meta: &ObjectMeta) -> Option<String> {
    meta.annotations
        .as_ref()
        .and_then(|a| a.get(HASH_ANNOTATION))
        .cloned()
}

/// Whether the object with this uid is the controller of `meta`'s object.
pub fn is_controlled_by(meta: &ObjectMeta, uid: &str) -> bool {
    meta.owner_references
        .iter()
        .flatten()
        .any(|r| r.controller == Some(true) && r.uid == uid)
}

/// The ownerReference by which a KafkaToolConfig controls an object (one of its outputs).
pub fn controlling_config(meta: &ObjectMeta) -> Option<&OwnerReference> {
    use kube::Resource as _;
    meta.owner_references.iter().flatten().find(|r| {
        r.controller == Some(true)
            && r.kind == KafkaToolConfig::kind(&())
            && r.api_version == KafkaToolConfig::api_version(&())
    })
}

/// Whether another field manager has written the output's files (`kubectl edit`, a controller),
/// so the hash annotation may still say current while the content is not, or its hash annotation
/// (`kubectl annotate`): either way the output is not what this operator wrote, and the owner is
/// reconciled at once. Our forced apply takes the fields back, so after a repair this is false
/// again.
pub fn foreign_content_owner(meta: &ObjectMeta) -> bool {
    meta.managed_fields.iter().flatten().any(|entry| {
        entry.manager.as_deref() != Some(MANAGER)
            && entry.fields_v1.as_ref().is_some_and(|fields| {
                ["f:data", "f:binaryData", "f:stringData"]
                    .iter()
                    .any(|f| fields.0.get(*f).is_some())
                    || fields.0["f:metadata"]["f:annotations"]
                        .get(format!("f:{HASH_ANNOTATION}"))
                        .is_some()
            })
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn files_or_the_hash_written_by_another_manager_count_as_drift() {
        use k8s_openapi::apimachinery::pkg::apis::meta::v1::{FieldsV1, ManagedFieldsEntry};
        let entry = |manager: &str, fields: serde_json::Value| ManagedFieldsEntry {
            manager: Some(manager.into()),
            fields_v1: Some(FieldsV1(fields)),
            ..Default::default()
        };
        let meta = |entries: Vec<ManagedFieldsEntry>| kube::api::ObjectMeta {
            managed_fields: Some(entries),
            ..Default::default()
        };
        let ours = entry(MANAGER, json!({"f:data": {"f:tool.args": {}}}));
        assert!(!foreign_content_owner(&meta(vec![ours.clone()])));
        // Someone labelled the object: not its files.
        let labels = entry("kubectl-label", json!({"f:metadata": {"f:labels": {}}}));
        assert!(!foreign_content_owner(&meta(vec![ours.clone(), labels])));
        let edit = entry(
            "kubectl-edit",
            json!({"f:data": {"f:producer.properties": {}}}),
        );
        assert!(foreign_content_owner(&meta(vec![ours.clone(), edit])));
        // Someone set the hash annotation (the files are still ours): not our write either.
        let annotate = entry(
            "kubectl-annotate",
            json!({"f:metadata": {"f:annotations": {format!("f:{HASH_ANNOTATION}"): {}}}}),
        );
        assert!(foreign_content_owner(&meta(vec![ours.clone(), annotate])));
        // Another annotation is not the hash.
        let other = entry(
            "kubectl-annotate",
            json!({"f:metadata": {"f:annotations": {"f:team": {}}}}),
        );
        assert!(!foreign_content_owner(&meta(vec![ours, other])));
    }

    #[test]
    fn the_controller_reference_decides_ownership_and_the_annotation_the_hash() {
        let meta: ObjectMeta = serde_json::from_value(json!({
            "annotations": {HASH_ANNOTATION: "sha256:ab"},
            "ownerReferences": [
                {"apiVersion": "apps/v1", "kind": "Deployment", "name": "x", "uid": "1", "controller": false},
                {"apiVersion": "kafkaconfig.dev/v1alpha1", "kind": "KafkaToolConfig", "name": "orders", "uid": "2", "controller": true},
            ],
        }))
        .expect("metadata deserializes");
        assert_eq!(hash_of(&meta).as_deref(), Some("sha256:ab"));
        assert!(is_controlled_by(&meta, "2"));
        assert!(!is_controlled_by(&meta, "1"));
        assert_eq!(
            controlling_config(&meta).map(|r| r.name.as_str()),
            Some("orders")
        );
        assert_eq!(hash_of(&ObjectMeta::default()), None);
        assert_eq!(controlling_config(&ObjectMeta::default()), None);
    }

    #[test]
    fn only_a_controller_reference_to_our_kind_and_group_makes_an_output_ours() {
        // Each reference misses one of the three: an object so referenced is somebody else's,
        // and the operator must neither route its events to a config nor take it as an output.
        for (api_version, kind, controller) in [
            ("kafkaconfig.dev/v1alpha1", "KafkaToolConfig", false),
            ("example.com/v1", "KafkaToolConfig", true),
            ("kafkaconfig.dev/v1alpha1", "GlobalClientDefaults", true),
        ] {
            let meta: ObjectMeta = serde_json::from_value(json!({"ownerReferences": [
                {"apiVersion": api_version, "kind": kind, "name": "x", "uid": "1", "controller": controller},
            ]}))
            .expect("metadata deserializes");
            assert_eq!(
                controlling_config(&meta),
                None,
                "{api_version} {kind} controller={controller}"
            );
        }
    }
}
