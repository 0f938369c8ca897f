//! The owned-object forwarding: events of the ConfigMaps and Secrets the operator owns become
//! reconciles of their owner only when someone else changed or deleted one.
//!
//! Custom for `reconciles_per_change` (≤ 1.2): `Controller::owns` measured 2.0 per edit, this 1.00.

use std::collections::HashMap;
use std::pin::pin;
use std::sync::Arc;
use std::time::Duration;

use futures::{Stream, StreamExt};
use kube::core::PartialObjectMeta;
use kube::runtime::reflector::{ObjectRef, Store};
use kube::runtime::watcher;
use kube::{Resource, ResourceExt};
use tokio::sync::mpsc::UnboundedSender;
use tracing::debug;

use crate::operator::configs_seen::ConfigsSeen;
use crate::operator::context::lock;
use crate::operator::crd::KafkaToolConfig;
use crate::operator::ownership::{controlling_config, foreign_content_owner, hash_of};

/// How long an event of one of our outputs waits for its owner's cached status to record the
/// output's hash before it counts as a change by someone else: a reconcile writes the output,
/// then the status, and the status reaches the cache through the watch shortly after.
const OWN_WRITE_SETTLE: Duration = Duration::from_secs(2);
/// How much longer an event whose hash the owner's cached status does not record after
/// [`OWN_WRITE_SETTLE`] waits for it, woken by each KafkaToolConfig watch event: in a burst of
/// edits the status watch falls seconds behind (scale run, 1,000 edits at N = 10,000: 0.45 extra
/// reconciles per edit without this wait).
const OWN_WRITE_PATIENCE: Duration = Duration::from_secs(8);

/// The KafkaToolConfig that controls an object (its controller ownerReference).
pub(super) fn controller_owner<K: Resource>(object: &K) -> Option<ObjectRef<KafkaToolConfig>> {
    let namespace = object.meta().namespace.as_deref()?;
    controlling_config(object.meta()).map(|r| ObjectRef::new(&r.name).within(namespace))
}

/// Whether the owner's cached status records `hash` as its output's hash: then the event is the
/// operator's own write (or a replay of it) and there is nothing to reconcile.
fn recorded(
    reader: &Store<KafkaToolConfig>,
    owner: &ObjectRef<KafkaToolConfig>,
    hash: Option<&str>,
) -> bool {
    hash.is_some()
        && reader
            .get(owner)
            .and_then(|c| c.status.as_ref()?.config_hash.clone())
            .as_deref()
            == hash
}

/// An output: namespace and name.
type OutputKey = (String, String);

/// Events of our outputs waiting out [`OWN_WRITE_SETTLE`]: only an output's latest event is
/// decided. An earlier one is superseded: its hash may be an earlier write of ours that a later
/// write of ours replaced, which the owner's status then no longer records (two renders within
/// the settle time, e.g. an old spec's and then the new one's after a watch came back), and
/// deciding it would reconcile the owner for nothing. Holds an output only while it waits.
#[derive(Debug, Default)]
struct Settling {
    waiting: HashMap<OutputKey, u64>,
    next: u64,
}

impl Settling {
    /// A newer event of `output` arrived: the check of an earlier one is dropped.
    fn supersede(&mut self, output: &OutputKey) {
        self.waiting.remove(output);
    }

    /// `output`'s latest event waits; the ticket it is decided with.
    fn wait(&mut self, output: OutputKey) -> u64 {
        self.next = self.next.wrapping_add(1);
        self.waiting.insert(output, self.next);
        self.next
    }

    /// Whether the event holding `ticket` is still `output`'s latest: then it is decided now (and
    /// forgotten); otherwise a later event decides.
    fn decide(&mut self, output: &OutputKey, ticket: u64) -> bool {
        if self.waiting.get(output) == Some(&ticket) {
            self.waiting.remove(output);
            true
        } else {
            false
        }
    }
}

/// Turns events of the outputs we own into reconciles of their owner: at once when an output is
/// deleted; when one carries a hash its owner's status does not record, after
/// [`OWN_WRITE_SETTLE`] (and [`OWN_WRITE_PATIENCE`] more while the status watch catches up) and
/// only if the status still does not record it and no later event of the output came meanwhile
/// (someone else changed the output; our own write is recorded by then). Replaces
/// `owns_stream`, which reconciled the owner again after each of its own writes: two reconciles
/// per source edit.
pub(super) async fn forward_owned<K>(
    events: impl Stream<Item = Result<watcher::Event<PartialObjectMeta<K>>, watcher::Error>> + Send,
    reader: Store<KafkaToolConfig>,
    configs_seen: ConfigsSeen,
    tx: UnboundedSender<ObjectRef<KafkaToolConfig>>,
) where
    PartialObjectMeta<K>: Resource,
{
    let settling = Arc::new(std::sync::Mutex::new(Settling::default()));
    let mut events = pin!(events);
    while let Some(event) = events.next().await {
        let (object, deleted, listed) = match event {
            Ok(watcher::Event::Apply(o)) => (o, false, false),
            Ok(watcher::Event::InitApply(o)) => (o, false, true),
            Ok(watcher::Event::Delete(o)) => (o, true, false),
            Ok(watcher::Event::Init | watcher::Event::InitDone) => continue,
            Err(error) => {
                debug!(%error, "owned output watch");
                continue;
            }
        };
        let Some(owner) = controller_owner(&object) else {
            continue;
        };
        let output: OutputKey = (object.namespace().unwrap_or_default(), object.name_any());
        lock(&settling).supersede(&output);
        // Deleted, or files or the hash annotation written by someone else: repair now.
        if deleted || foreign_content_owner(&object.metadata) {
            let _ = tx.send(owner);
            continue;
        }
        let hash = hash_of(object.meta());
        if recorded(&reader, &owner, hash.as_deref()) {
            continue;
        }
        if listed {
            // A (re)list, not a write in flight: decide now. An owner not cached yet is
            // reconciled when it is (its own first event); at a start, the 10,000 timers this
            // spawned for 10,000 outputs listed before their owners were 3 MB at the relist peak.
            if reader.get(&owner).is_some() {
                let _ = tx.send(owner);
            }
            continue;
        }
        let ticket = lock(&settling).wait(output.clone());
        let (reader, tx, settling, seen) = (
            reader.clone(),
            tx.clone(),
            settling.clone(),
            configs_seen.clone(),
        );
        tokio::spawn(async move {
            tokio::time::sleep(OWN_WRITE_SETTLE).await;
            let is_recorded = || recorded(&reader, &owner, hash.as_deref()).then_some(());
            let recorded_in_time = seen
                .wait_for(OWN_WRITE_PATIENCE, is_recorded)
                .await
                .is_some();
            let latest = lock(&settling).decide(&output, ticket);
            if latest && !recorded_in_time {
                let _ = tx.send(owner);
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::ConfigMap;
    use kube::runtime::reflector;

    use crate::output::HASH_ANNOTATION;

    #[test]
    fn an_output_maps_to_its_controller_kafkatoolconfig_only() {
        let output: PartialObjectMeta<ConfigMap> = serde_json::from_value(serde_json::json!({
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {
                "name": "orders-kafka",
                "namespace": "ns",
                "annotations": {HASH_ANNOTATION: "sha256:ab"},
                "ownerReferences": [
                    {"apiVersion": "apps/v1", "kind": "Deployment", "name": "x", "uid": "1", "controller": false},
                    {"apiVersion": "kafkaconfig.dev/v1alpha1", "kind": "KafkaToolConfig", "name": "orders", "uid": "2", "controller": true},
                ],
            },
        }))
        .expect("metadata deserializes");
        assert_eq!(
            controller_owner(&output),
            Some(ObjectRef::new("orders").within("ns"))
        );
        assert_eq!(hash_of(output.meta()).as_deref(), Some("sha256:ab"));
        let foreign: PartialObjectMeta<ConfigMap> = serde_json::from_value(serde_json::json!({
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "orders-kafka", "namespace": "ns"},
        }))
        .expect("metadata deserializes");
        assert_eq!(controller_owner(&foreign), None);
        // Nothing cached: no hash counts as recorded.
        let (reader, mut writer) = reflector::store::<KafkaToolConfig>();
        let owner = ObjectRef::new("orders").within("ns");
        assert!(!recorded(&reader, &owner, Some("sha256:ab")));
        // The owner's cached status records the hash: our own write.
        let config: KafkaToolConfig = serde_json::from_value(serde_json::json!({
            "apiVersion": "kafkaconfig.dev/v1alpha1",
            "kind": "KafkaToolConfig",
            "metadata": {"name": "orders", "namespace": "ns"},
            "spec": {"tool": "kafka-console-producer"},
            "status": {"configHash": "sha256:ab"},
        }))
        .expect("a KafkaToolConfig");
        writer.apply_watcher_event(&watcher::Event::Apply(config));
        assert!(recorded(&reader, &owner, Some("sha256:ab")));
        assert!(!recorded(&reader, &owner, Some("sha256:cd")));
        assert!(!recorded(&reader, &owner, None));
    }

    #[test]
    fn only_the_latest_event_of_an_output_is_decided_after_the_settle_time() {
        let mut settling = Settling::default();
        let output = ("ns".to_string(), "orders-kafka".to_string());
        let other = ("ns".to_string(), "payments-kafka".to_string());
        // Two writes of ours in a row (an old spec's render, then the new spec's): the first
        // event's hash is no longer the status's when its check runs, but it is superseded.
        let first = settling.wait(output.clone());
        let elsewhere = settling.wait(other.clone());
        settling.supersede(&output);
        let second = settling.wait(output.clone());
        assert!(!settling.decide(&output, first));
        assert!(settling.decide(&output, second));
        assert!(!settling.decide(&output, second), "decided once");
        assert!(settling.decide(&other, elsewhere));
        // A later event that is decided at once (recorded, listed, deleted) supersedes too.
        let waiting = settling.wait(output.clone());
        settling.supersede(&output);
        assert!(!settling.decide(&output, waiting));
        assert!(settling.waiting.is_empty(), "nothing is kept once decided");
    }

    /// Our own output write whose status the watch brings in late (a burst): no reconcile. An
    /// output whose hash no status ever records (someone else's): its owner is reconciled once
    /// the patience runs out.
    #[tokio::test(start_paused = true)]
    async fn an_own_write_recorded_late_is_not_forwarded_and_a_foreign_one_is() {
        let config = |hash: &str| -> KafkaToolConfig {
            serde_json::from_value(serde_json::json!({
                "apiVersion": "kafkaconfig.dev/v1alpha1",
                "kind": "KafkaToolConfig",
                "metadata": {"name": "orders", "namespace": "ns"},
                "spec": {"tool": "kafka-console-producer"},
                "status": {"configHash": hash},
            }))
            .expect("a KafkaToolConfig")
        };
        let output = |hash: &str| -> PartialObjectMeta<ConfigMap> {
            serde_json::from_value(serde_json::json!({
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {
                    "name": "orders-kafka", "namespace": "ns",
                    "annotations": {HASH_ANNOTATION: hash},
                    "ownerReferences": [{"apiVersion": "kafkaconfig.dev/v1alpha1",
                        "kind": "KafkaToolConfig", "name": "orders", "uid": "2", "controller": true}],
                },
            }))
            .expect("metadata deserializes")
        };
        let (reader, mut writer) = reflector::store::<KafkaToolConfig>();
        writer.apply_watcher_event(&watcher::Event::Apply(config("sha256:old")));
        let seen = ConfigsSeen::default();
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let events = futures::stream::iter([Ok(watcher::Event::Apply(output("sha256:new")))]);
        forward_owned(events, reader.clone(), seen.clone(), tx.clone()).await;
        // The status write reaches the cache 5 s later, after the settle time.
        tokio::time::sleep(Duration::from_secs(5)).await;
        writer.apply_watcher_event(&watcher::Event::Apply(config("sha256:new")));
        seen.bump();
        tokio::time::sleep(Duration::from_secs(20)).await;
        assert!(rx.try_recv().is_err(), "our own write was forwarded");

        let events = futures::stream::iter([Ok(watcher::Event::Apply(output("sha256:foreign")))]);
        forward_owned(events, reader, seen.clone(), tx).await;
        tokio::time::sleep(OWN_WRITE_SETTLE + OWN_WRITE_PATIENCE / 2).await;
        assert!(
            rx.try_recv().is_err(),
            "decided before the patience ran out"
        );
        tokio::time::sleep(OWN_WRITE_PATIENCE).await;
        assert_eq!(
            rx.try_recv().ok(),
            Some(ObjectRef::new("orders").within("ns"))
        );
    }
}
