//! What goes into a `status.history` entry: the names (never values) of the keys that changed,
//! and a cause people can act on.

use std::collections::{BTreeMap, BTreeSet};

use kube::{Resource, ResourceExt};

use crate::engine::{Evaluation, properties};
use crate::operator::authors::{self, Authors};
use crate::operator::context::Seen;
use crate::operator::crd::KafkaToolConfig;
use crate::output::CHANGE_CAUSE_ANNOTATION;
use crate::status::{self, HistoryEntry, KafkaToolConfigStatus};

/// What a reconcile that produced a new live hash knows about the change.
pub struct Change<'a> {
    pub config: &'a KafkaToolConfig,
    pub ev: &'a Evaluation,
    /// The files the output held before (none: a first output).
    pub previous_files: Option<&'a BTreeMap<String, String>>,
    pub files: &'a BTreeMap<String, String>,
    /// The status the next one is built from.
    pub previous: Option<&'a KafkaToolConfigStatus>,
    pub hash_key_id: &'a str,
    pub seen_before: Option<&'a Seen>,
    pub seen: &'a Seen,
    /// Of the sources and GlobalClientDefaults (the config's own is read here).
    pub authors: Authors,
}

/// Appends the revision of `hash` to `next.history`: the names (never values) of the keys that
/// changed, the cause (a new change-cause annotation once, else computed) and the author.
pub fn record_revision(
    change: Change<'_>,
    next: &mut KafkaToolConfigStatus,
    hash: &str,
    now: &str,
) {
    let empty = BTreeMap::new();
    let changed = changed_keys(change.previous_files.unwrap_or(&empty), change.files);
    // Names only, and never a key that may be Secret content.
    let mut changed: Vec<String> = changed.iter().map(|k| change.ev.key_label(k)).collect();
    // In the order of what is shown: the raw order would hint where a hidden key's text sorts.
    changed.sort_unstable();
    let inputs = change.previous.and_then(|s| s.inputs.as_ref());
    let recorded = inputs.and_then(|i| i.change_cause.as_deref());
    let annotation = change.config.annotations().get(CHANGE_CAUSE_ANNOTATION);
    let annotation = new_annotation(annotation.map(String::as_str), recorded);
    // The previous status was rendered with another key (a rotation), or unkeyed (an operator
    // before the keyed hash): the content may be the same, the hash is not.
    let key_changed = inputs.is_some_and(|i| i.hash_key.as_deref() != Some(change.hash_key_id));
    let first = change.previous.is_none_or(|s| s.config_hash.is_none());
    let cause = cause(
        annotation,
        change.seen_before,
        change.seen,
        first,
        key_changed,
    );
    let kind = KafkaToolConfig::kind(&());
    let authors = Authors {
        config: authors::author(&kind, &change.config.metadata, authors::SPEC),
        ..change.authors
    };
    let by = authors::of_change(&authors, change.seen_before.filter(|_| !first), change.seen);
    if let (Some(text), Some(inputs)) = (annotation, next.inputs.as_mut()) {
        inputs.change_cause = Some(annotation_digest(text));
    }
    status::record_history(next, hash, now, changed, cause, by);
}

/// The note of a `Rendered` Event: output, revision, hash, changed key names and author, never
/// values, so `kubectl events` keeps the trail after `status.history` drops an entry. `revision`:
/// the history entry this render added; none for a repair of the output (same content again).
pub fn event_note(kind: &str, name: &str, hash: &str, revision: Option<&HistoryEntry>) -> String {
    let Some(entry) = revision.filter(|e| e.hash == hash) else {
        return format!("{kind} {name} now holds {hash}");
    };
    let changed = if entry.changed_keys.is_empty() {
        "none".to_string()
    } else {
        entry.changed_keys.join(",")
    };
    let by = entry.by.as_ref().map_or_else(
        || "unknown".to_string(),
        |b| format!("{} ({} {})", b.manager, b.kind, b.name),
    );
    // The hash whole and first: a note is cut at 1024 bytes, and tools match it by hash.
    format!(
        "revision {} of {kind} {name}: {hash}; changed keys: {changed}; by {by}; cause: {}",
        entry.revision, entry.cause
    )
}

/// Names of keys whose value differs between two sets of rendered files. `.properties` files are
/// compared key by key; any other file (`tool.args`) is named as a whole when it changed.
pub fn changed_keys(old: &BTreeMap<String, String>, new: &BTreeMap<String, String>) -> Vec<String> {
    let mut changed = BTreeSet::new();
    let files: BTreeSet<&String> = old.keys().chain(new.keys()).collect();
    for file in files {
        let (a, b) = (old.get(file), new.get(file));
        if a == b {
            continue;
        }
        if file.ends_with(".properties") {
            let parse = |text: Option<&String>| -> BTreeMap<String, String> {
                text.and_then(|t| properties::load_str(t).ok())
                    .map(|entries| entries.into_iter().map(|e| (e.key, e.value)).collect())
                    .unwrap_or_default()
            };
            let (a, b) = (parse(a), parse(b));
            for key in a.keys().chain(b.keys()) {
                if a.get(key) != b.get(key) {
                    changed.insert(key.clone());
                }
            }
        } else {
            changed.insert(file.clone());
        }
    }
    changed.into_iter().collect()
}

/// The cause of the one rollout a new content-hash key brings (a rotation, or the upgrade to the
/// keyed hash).
pub const KEY_CHANGED: &str = "the content-hash key changed";

/// What `status.inputs.changeCause` records of a `kafkaconfig.dev/change-cause` annotation: 16
/// hex digits of its SHA-256, so a long comment costs no status or cache space twice.
pub fn annotation_digest(text: &str) -> String {
    use sha2::Digest as _;
    let digest = sha2::Sha256::digest(text.trim().as_bytes());
    digest[..8].iter().map(|b| format!("{b:02x}")).collect()
}

/// The change-cause annotation when it is the cause of this revision: set, and not the one
/// recorded already (`recorded`: its [`annotation_digest`]). An annotation left in place is not
/// the cause of every later change.
pub fn new_annotation<'a>(annotation: Option<&'a str>, recorded: Option<&str>) -> Option<&'a str> {
    annotation
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .filter(|t| recorded != Some(annotation_digest(t).as_str()))
}

/// Why the content changed, from what the previous reconcile saw. `key_changed`: the previous
/// hash was made with another content-hash key (or none).
pub fn cause(
    annotation: Option<&str>,
    before: Option<&Seen>,
    now: &Seen,
    first: bool,
    key_changed: bool,
) -> String {
    if let Some(text) = annotation.map(str::trim).filter(|t| !t.is_empty()) {
        return text.to_string();
    }
    if first {
        return "first render".to_string();
    }
    let Some(before) = before else {
        return "spec, sources or GlobalClientDefaults changed while the operator was not running"
            .to_string();
    };
    let mut causes = Vec::new();
    if before.generation != now.generation {
        causes.push("spec changed".to_string());
    }
    for (source, version) in &now.sources {
        if before.sources.get(source) != Some(version) {
            causes.push(format!("{} {} changed", source.kind.as_str(), source.name));
        }
    }
    for (name, generation) in &now.globals {
        if before.globals.get(name) != Some(generation) {
            causes.push(format!("GlobalClientDefaults {name} changed"));
        }
    }
    for name in before.globals.keys() {
        if !now.globals.contains_key(name) {
            causes.push(format!("GlobalClientDefaults {name} no longer applies"));
        }
    }
    if key_changed {
        causes.push(KEY_CHANGED.to_string());
    }
    if causes.is_empty() {
        "namespace labels or the operator's catalogue changed".to_string()
    } else {
        causes.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::sources::{SourceKind, SourceRef};

    #[test]
    fn changed_keys_names_keys_not_values() {
        let old = BTreeMap::from([
            (
                "producer.properties".to_string(),
                "acks=all\nlinger.ms=5\n".to_string(),
            ),
            ("tool.args".to_string(), "--topic\norders\n".to_string()),
        ]);
        let new = BTreeMap::from([
            (
                "producer.properties".to_string(),
                "acks=all\nlinger.ms=10\nbatch.size=1\n".to_string(),
            ),
            ("tool.args".to_string(), "--topic\norders\n".to_string()),
        ]);
        assert_eq!(changed_keys(&old, &new), vec!["batch.size", "linger.ms"]);
    }

    #[test]
    fn a_revision_event_names_keys_and_author_and_a_repair_only_the_hash() {
        let entry = HistoryEntry {
            revision: 3,
            hash: "hmac-sha256:ab".into(),
            time: "t".into(),
            changed_keys: vec!["linger.ms".into()],
            cause: "ConfigMap base changed".into(),
            by: Some(crate::status::Author {
                kind: "ConfigMap".into(),
                name: "base".into(),
                manager: "helm".into(),
                operation: None,
                time: None,
            }),
        };
        assert_eq!(
            event_note("ConfigMap", "orders-kafka", "hmac-sha256:ab", Some(&entry)),
            "revision 3 of ConfigMap orders-kafka: hmac-sha256:ab; changed keys: linger.ms; \
             by helm (ConfigMap base); cause: ConfigMap base changed"
        );
        assert_eq!(
            event_note("ConfigMap", "orders-kafka", "hmac-sha256:ab", None),
            "ConfigMap orders-kafka now holds hmac-sha256:ab"
        );
    }

    #[test]
    fn an_annotation_is_the_cause_of_one_revision_only() {
        assert_eq!(new_annotation(Some(" ticket 42 "), None), Some("ticket 42"));
        let recorded = annotation_digest("ticket 42");
        assert_eq!(recorded.len(), 16);
        assert_eq!(new_annotation(Some("ticket 42"), Some(&recorded)), None);
        assert_eq!(
            new_annotation(Some("ticket 43"), Some(&recorded)),
            Some("ticket 43")
        );
        assert_eq!(new_annotation(Some("  "), None), None);
    }

    #[test]
    fn cause_prefers_the_annotation_then_names_the_source() {
        let source = SourceRef {
            kind: SourceKind::ConfigMap,
            name: "base-client".into(),
        };
        let before = Seen {
            generation: Some(1),
            sources: BTreeMap::from([(source.clone(), Some("10".into()))]),
            globals: BTreeMap::new(),
        };
        let now = Seen {
            sources: BTreeMap::from([(source, Some("11".into()))]),
            ..before.clone()
        };
        assert_eq!(
            cause(None, Some(&before), &now, false, false),
            "ConfigMap base-client changed"
        );
        assert_eq!(
            cause(Some("ticket 42"), Some(&before), &now, false, false),
            "ticket 42"
        );
        assert_eq!(
            cause(None, Some(&before), &before, false, true),
            "the content-hash key changed"
        );
    }
}
