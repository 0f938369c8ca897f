//! Who changed an object's content, from its `metadata.managedFields`: the field manager, the
//! operation and the time of the latest entry that owns a content field (`spec`, `data`). A
//! manager is the name a client gives itself, not an authenticated user (the audit log has that).
//!
//! The watch caches keep only that one entry, without its field set ([`keep_latest`]): the whole
//! managedFields of 10,000 configs would cost megabytes for one name each.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ManagedFieldsEntry, ObjectMeta};

use crate::engine::sources::SourceRef;
use crate::operator::context::Seen;
use crate::status::Author;

/// The content of a KafkaToolConfig or a GlobalClientDefaults.
pub const SPEC: &[&str] = &["f:spec"];
/// The content of a ConfigMap or a Secret.
pub const DATA: &[&str] = &["f:data", "f:binaryData", "f:stringData"];

/// The latest entry that owns a field inside one of `content` (an entry without a field set is
/// one [`keep_latest`] already picked). Status writes do not count.
///
/// Owning a field, not just naming `content`: when another manager changes a key, Kubernetes
/// moves the key to it and leaves the old manager an empty `f:data: {}`. Times are whole
/// seconds and ties are sorted by manager name, so the time alone would name the old manager
/// for an edit made in the same second.
fn latest<'a>(meta: &'a ObjectMeta, content: &[&str]) -> Option<&'a ManagedFieldsEntry> {
    meta.managed_fields
        .iter()
        .flatten()
        .filter(|e| e.subresource.as_deref().is_none_or(str::is_empty))
        .filter(|e| {
            e.fields_v1
                .as_ref()
                .is_none_or(|f| content.iter().any(|c| owns_a_field_in(f.0.get(*c))))
        })
        .max_by_key(|e| e.time.as_ref().map(|t| t.0))
}

/// Whether a field set's node has a member field (`.` is the map itself, not its content).
fn owns_a_field_in(node: Option<&serde_json::Value>) -> bool {
    node.and_then(serde_json::Value::as_object)
        .is_some_and(|fields| fields.keys().any(|k| k != "."))
}

/// Replaces managedFields with the entry [`author`] reads, without its field set.
pub fn keep_latest(meta: &mut ObjectMeta, content: &[&str]) {
    let kept = latest(meta, content).map(|e| ManagedFieldsEntry {
        fields_v1: None,
        fields_type: None,
        api_version: None,
        ..e.clone()
    });
    meta.managed_fields = kept.map(|e| vec![e]);
}

/// The author of `kind`/`name`'s latest content change, if Kubernetes recorded one.
pub fn author(kind: &str, meta: &ObjectMeta, content: &[&str]) -> Option<Author> {
    let entry = latest(meta, content)?;
    Some(Author {
        kind: kind.to_string(),
        name: meta.name.clone().unwrap_or_default(),
        manager: entry.manager.clone()?,
        operation: entry.operation.clone(),
        time: entry.time.as_ref().map(|t| {
            chrono::DateTime::from_timestamp(t.0.as_second(), 0)
                .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true))
                .unwrap_or_default()
        }),
    })
}

/// The authors of everything one evaluation read.
#[derive(Debug, Default)]
pub struct Authors {
    /// Of the config's spec.
    pub config: Option<Author>,
    pub sources: BTreeMap<SourceRef, Author>,
    /// Of each selecting GlobalClientDefaults, by name.
    pub globals: BTreeMap<String, Author>,
}

/// Who caused a revision: of the inputs that changed since `before` (the spec, a source, a
/// GlobalClientDefaults), the one changed last. The spec's author for a first render, or when
/// the previous inputs are unknown; nobody for a change of the hash key or the catalogue.
pub fn of_change(authors: &Authors, before: Option<&Seen>, now: &Seen) -> Option<Author> {
    let Some(before) = before else {
        return authors.config.clone();
    };
    let mut candidates = Vec::new();
    if before.generation != now.generation {
        candidates.extend(authors.config.as_ref());
    }
    for (source, version) in &now.sources {
        if before.sources.get(source) != Some(version) {
            candidates.extend(authors.sources.get(source));
        }
    }
    for (name, generation) in &now.globals {
        if before.globals.get(name) != Some(generation) {
            candidates.extend(authors.globals.get(name));
        }
    }
    // RFC 3339 in whole seconds and `Z`: the text orders as the time does. The first wins a tie.
    let mut best: Option<&Author> = None;
    for candidate in candidates {
        if best.is_none_or(|b| candidate.time > b.time) {
            best = Some(candidate);
        }
    }
    best.cloned()
}

#[cfg(test)]
mod tests {
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::{FieldsV1, Time};
    use serde_json::json;

    use super::*;
    use crate::engine::sources::SourceKind;

    fn entry(manager: &str, secs: i64, fields: serde_json::Value) -> ManagedFieldsEntry {
        ManagedFieldsEntry {
            manager: Some(manager.into()),
            operation: Some("Update".into()),
            time: Some(Time(
                k8s_openapi::jiff::Timestamp::from_second(secs).expect("a valid time"),
            )),
            fields_v1: Some(FieldsV1(fields)),
            fields_type: Some("FieldsV1".into()),
            api_version: Some("kafkaconfig.dev/v1alpha1".into()),
            ..ManagedFieldsEntry::default()
        }
    }

    #[test]
    fn the_latest_content_change_wins_and_the_cache_keeps_only_it() {
        let mut status = entry("kafka-config-operator", 300, json!({"f:status": {}}));
        status.subresource = Some("status".into());
        let mut meta = ObjectMeta {
            name: Some("orders".into()),
            managed_fields: Some(vec![
                entry(
                    "kubectl-client-side-apply",
                    100,
                    json!({"f:spec": {"f:tool": {}}}),
                ),
                entry("argocd-controller", 200, json!({"f:spec": {"f:x": {}}})),
                // Later, but a label and a status write: not a content change.
                entry(
                    "kubectl-label",
                    250,
                    json!({"f:metadata": {"f:labels": {}}}),
                ),
                status,
            ]),
            ..ObjectMeta::default()
        };
        let author = author("KafkaToolConfig", &meta, SPEC).expect("an author");
        assert_eq!(author.manager, "argocd-controller");
        assert_eq!(author.name, "orders");
        assert_eq!(author.time.as_deref(), Some("1970-01-01T00:03:20Z"));
        keep_latest(&mut meta, SPEC);
        assert_eq!(meta.managed_fields.as_ref().map(Vec::len), Some(1));
        // The cache's point: no field set (the bulk) is kept.
        let kept = &meta.managed_fields.as_deref().unwrap_or_default()[0];
        assert_eq!(
            (&kept.fields_v1, &kept.fields_type, &kept.api_version),
            (&None, &None, &None),
            "{kept:?}"
        );
        assert_eq!(
            super::author("KafkaToolConfig", &meta, SPEC),
            Some(author),
            "the kept entry says the same"
        );
    }

    /// What the API server holds after `kubectl apply` created a ConfigMap and helm patched its
    /// key within the same second: both entries at one time, sorted by manager name.
    #[test]
    fn an_edit_in_the_same_second_names_the_manager_that_now_owns_the_key() {
        let meta = ObjectMeta {
            name: Some("base".into()),
            managed_fields: Some(vec![
                entry("helm", 100, json!({"f:data": {"f:client.properties": {}}})),
                entry(
                    "kubectl-client-side-apply",
                    100,
                    json!({"f:data": {}, "f:metadata": {"f:annotations": {".": {}}}}),
                ),
            ]),
            ..ObjectMeta::default()
        };
        let by = author("ConfigMap", &meta, DATA).map(|a| a.manager);
        assert_eq!(by.as_deref(), Some("helm"));
        let map_only = ObjectMeta {
            managed_fields: Some(vec![entry("kubectl", 100, json!({"f:data": {".": {}}}))]),
            ..meta
        };
        assert_eq!(author("ConfigMap", &map_only, DATA), None);
    }

    #[test]
    fn the_changed_input_names_the_author() {
        let source = SourceRef {
            kind: SourceKind::ConfigMap,
            name: "base".into(),
        };
        let by = |manager: &str, time: &str| Author {
            kind: "x".into(),
            name: "y".into(),
            manager: manager.into(),
            operation: None,
            time: Some(time.into()),
        };
        let authors = Authors {
            config: Some(by("kubectl", "2026-01-01T00:00:09Z")),
            sources: BTreeMap::from([(source.clone(), by("helm", "2026-01-01T00:00:05Z"))]),
            globals: BTreeMap::new(),
        };
        let before = Seen {
            generation: Some(1),
            sources: BTreeMap::from([(source.clone(), Some("1".into()))]),
            globals: BTreeMap::new(),
        };
        let mut now = before.clone();
        now.sources.insert(source, Some("2".into()));
        // The spec's author changed it later, but the spec did not change: the source's.
        assert_eq!(
            of_change(&authors, Some(&before), &now).map(|a| a.manager),
            Some("helm".into())
        );
        now.generation = Some(2);
        assert_eq!(
            of_change(&authors, Some(&before), &now).map(|a| a.manager),
            Some("kubectl".into())
        );
        assert_eq!(of_change(&authors, Some(&before), &before), None);
    }

    #[test]
    fn of_several_changed_inputs_the_latest_change_names_the_author() {
        let source = SourceRef {
            kind: SourceKind::ConfigMap,
            name: "base".into(),
        };
        let by = |manager: &str, second: u32| Author {
            kind: "x".into(),
            name: "y".into(),
            manager: manager.into(),
            operation: None,
            time: Some(format!("2026-01-01T00:00:{second:02}Z")),
        };
        let authors = Authors {
            config: Some(by("kubectl", 5)),
            sources: BTreeMap::from([(source.clone(), by("helm", 9))]),
            globals: BTreeMap::from([("team".to_string(), by("argocd", 9))]),
        };
        let before = Seen {
            generation: Some(1),
            sources: BTreeMap::from([(source.clone(), Some("1".into()))]),
            globals: BTreeMap::from([("team".to_string(), Some(1))]),
        };
        let manager = |now: &Seen| of_change(&authors, Some(&before), now).map(|a| a.manager);
        let everything = Seen {
            generation: Some(2),
            sources: BTreeMap::from([(source, Some("2".into()))]),
            globals: BTreeMap::from([("team".to_string(), Some(2))]),
        };
        // The spec's change is older; the source and the GlobalClientDefaults tie, and the
        // first listed (the source) wins.
        assert_eq!(manager(&everything).as_deref(), Some("helm"));
        let global_only = Seen {
            globals: everything.globals.clone(),
            ..before.clone()
        };
        assert_eq!(manager(&global_only).as_deref(), Some("argocd"));
    }
}
