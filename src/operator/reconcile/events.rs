//! The events step: Events on transitions only (a resync publishes nothing), handed to a bounded
//! queue that [`deliver_events`] empties while no reconcile runs.

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::api::core::v1::ObjectReference;
use kube::Resource;
use kube::runtime::events::{Event, EventType};
use tokio::sync::mpsc::Receiver;
use tokio::sync::mpsc::error::TrySendError;
use tokio::sync::watch;
use tracing::{info, warn};

use super::report;
use crate::operator::config_id::ConfigId;
use crate::operator::context::Context;
use crate::operator::crd::KafkaToolConfig;
use crate::operator::events::{EVENTS_AT_ONCE, QueuedEvent};
use crate::operator::history;
use crate::status::{ContentHash, HistoryEntry, KafkaToolConfigStatus, READY};

/// The `Rendered` Event of a render: output, hash and the history entry it added (if any).
fn rendered(kind: &str, output: &str, hash: &str, revision: Option<&HistoryEntry>) -> Event {
    Event {
        type_: EventType::Normal,
        reason: "Rendered".into(),
        note: Some(history::event_note(kind, output, hash, revision)),
        action: "Render".into(),
        secondary: None,
    }
}

/// The Warning Event of a transition to Ready=False, if this is one. Its message is the status
/// message, which never carries secret values.
fn not_ready(
    previous: Option<&KafkaToolConfigStatus>,
    next: &KafkaToolConfigStatus,
) -> Option<Event> {
    let ready = next.condition(READY)?;
    let was = previous.and_then(|p| p.condition(READY));
    if ready.status != "False"
        || was.is_some_and(|w| w.status == ready.status && w.reason == ready.reason)
    {
        return None;
    }
    warn!(reason = %ready.reason, message = %ready.message, "not ready");
    Some(Event {
        type_: EventType::Warning,
        reason: ready.reason.clone(),
        // Cut to the Event API's bound, at a character boundary, where every Event is published.
        note: Some(ready.message.clone()),
        action: "Render".into(),
        secondary: None,
    })
}

/// The events step: publishes the transitions from `previous` to `next` (a resync publishes
/// nothing): the output's render, and a turn to Ready=False.
pub async fn publish_transitions(
    ctx: &Context,
    config: &KafkaToolConfig,
    previous: Option<&KafkaToolConfigStatus>,
    next: &KafkaToolConfigStatus,
    wrote: Option<(&'static str, String, String)>,
) {
    let reference = config.object_ref(&());
    if let Some((kind, output, hash)) = wrote {
        info!(%kind, %output, %hash, "rendered");
        // A new history entry (a repair of the output's content adds none).
        let before = previous.and_then(|p| p.history.last()).map(|e| &e.hash);
        let revision = next.history.last().filter(|e| Some(&e.hash) != before);
        let queued = QueuedEvent::Rendered {
            config: ConfigId::of(config),
            output_kind: kind,
            output: output.as_str().into(),
            hash: ContentHash::new(&hash),
            revision: revision.map(|e| e.revision),
        };
        if enqueue(ctx, queued).is_some() {
            let event = rendered(kind, &output, &hash, revision);
            publish_event(ctx, &reference, &event).await;
        }
    }
    if let Some(event) = not_ready(previous, next)
        && let Some(QueuedEvent::Whole(whole)) =
            enqueue(ctx, QueuedEvent::Whole(Box::new((reference, event))))
    {
        publish_event(ctx, &whole.0, &whole.1).await;
    }
}

/// Hands an Event to [`deliver_events`], out of the reconcile (an Event is on no edit's
/// path); gives it back when that queue is full (or there is none): the reconcile then
/// publishes it itself, so neither memory nor the requests in flight grow with a burst.
fn enqueue(ctx: &Context, event: QueuedEvent) -> Option<QueuedEvent> {
    let Some(queue) = &ctx.events.queue else {
        return Some(event);
    };
    match queue.try_send(event) {
        Ok(()) => None,
        Err(TrySendError::Full(event) | TrySendError::Closed(event)) => Some(event),
    }
}

async fn publish_event(ctx: &Context, reference: &ObjectReference, event: &Event) {
    match ctx.events.publish(event, reference).await {
        Ok(()) => ctx.metrics.write("Event"),
        Err(e) => {
            warn!(namespace = ?reference.namespace, name = ?reference.name, error = %e, "cannot publish an event")
        }
    }
}

/// A queued Event as it is published: a `Rendered` one's note from the history entry it names,
/// as the cached status holds it now (Events wait until no reconcile runs, so the cache has had
/// the time to bring in the status write). `None`: the config is gone.
fn delivered(ctx: &Context, queued: QueuedEvent) -> Option<(ObjectReference, Event)> {
    let (id, output_kind, output, hash, revision) = match queued {
        QueuedEvent::Whole(whole) => return Some(*whole),
        QueuedEvent::Rendered {
            config,
            output_kind,
            output,
            hash,
            revision,
        } => (config, output_kind, output, hash, revision),
    };
    let config = ctx.cached_config(&id)?;
    let hash = hash.text();
    let status = report::previous_status(&config).status;
    // The entry may have left the history (its cap), or the cache may not hold it yet: the note
    // then says less.
    let entry = revision.and_then(|r| {
        status
            .as_ref()?
            .history
            .iter()
            .find(|e| e.revision == r && e.hash == *hash)
            .cloned()
    });
    let event = rendered(output_kind, &output, &hash, entry.as_ref());
    Some((config.object_ref(&()), event))
}

/// Publishes queued events, [`EVENTS_AT_ONCE`] at a time, each once no reconcile runs: an
/// Event is a record of a write already made, and the writes of an initial sync (or a burst)
/// come first on an API server that is their bottleneck. Once `stopping` is set (a clean
/// shutdown: no reconcile runs any more, the watches are gone) it publishes what is queued
/// without waiting and returns when the queue is empty.
pub async fn deliver_events(
    ctx: Arc<Context>,
    queue: Receiver<QueuedEvent>,
    stopping: watch::Receiver<bool>,
) {
    let stopped = stopping.clone();
    futures::stream::unfold((queue, stopping), |(mut queue, mut stopping)| async move {
        let stop = *stopping.borrow_and_update();
        let next = match stop {
            true => queue.try_recv().ok(),
            false => tokio::select! {
                next = queue.recv() => next,
                _ = stopping.changed() => queue.try_recv().ok(),
            },
        };
        next.map(|queued| (queued, (queue, stopping)))
    })
    .for_each_concurrent(EVENTS_AT_ONCE, |queued| {
        let (ctx, stopped) = (ctx.clone(), stopped.clone());
        async move {
            ctx.running.idle().await;
            // Stopping, the watch brings in nothing more.
            if !*stopped.borrow() {
                entry_cached(&ctx, &queued).await;
            }
            if let Some((reference, event)) = delivered(&ctx, queued) {
                publish_event(&ctx, &reference, &event).await;
            }
        }
    })
    .await;
}

/// How long a `Rendered` Event waits for the watch to bring in the status write with its entry.
const ENTRY_WAIT: Duration = Duration::from_secs(5);

/// Waits (at most [`ENTRY_WAIT`]) until the cache holds the history entry a queued `Rendered`
/// Event names: the status write that added it reaches the cache through the watch, usually
/// milliseconds after the reconcile ended. Returns at once for any other Event, or when the
/// config is gone.
async fn entry_cached(ctx: &Context, queued: &QueuedEvent) {
    let QueuedEvent::Rendered {
        config,
        revision: Some(revision),
        ..
    } = queued
    else {
        return;
    };
    let entry_or_gone = || {
        let Some(cached) = ctx.cached_config(config) else {
            return Some(());
        };
        let status = report::previous_status(&cached).status;
        let last = status.and_then(|s| s.history.last().map(|e| e.revision));
        last.is_some_and(|last| last >= *revision).then_some(())
    };
    ctx.caches
        .configs_seen
        .wait_for(ENTRY_WAIT, entry_or_gone)
        .await;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::operator::fixtures;

    const HASH: &str =
        "hmac-sha256:ab12ab12ab12ab12ab12ab12ab12ab12ab12ab12ab12ab12ab12ab12ab12ab12";

    /// Config orders whose status has one history entry, `revision`, changing `acks`.
    fn config_at(revision: i64) -> KafkaToolConfig {
        serde_json::from_value(serde_json::json!({
            "apiVersion": "kafkaconfig.dev/v1alpha1",
            "kind": "KafkaToolConfig",
            "metadata": {"name": "orders", "namespace": "team-a", "uid": "u-1"},
            "spec": {"tool": "kafka-console-producer"},
            "status": {"configHash": HASH, "history": [{
                "revision": revision, "hash": HASH, "time": "2026-12-06T00:00:00Z",
                "changedKeys": ["acks"], "cause": "spec changed",
                "by": {"kind": "KafkaToolConfig", "name": "orders", "manager": "argocd-controller"}
            }]}
        }))
        .expect("a config")
    }

    /// `config` as the controller's cache holds it.
    fn cached(mut config: KafkaToolConfig) -> KafkaToolConfig {
        config.status = config.status.take().map(KafkaToolConfigStatus::cached);
        config
    }

    fn queued(revision: Option<i64>) -> QueuedEvent {
        QueuedEvent::Rendered {
            config: ConfigId::new("team-a", "orders"),
            output_kind: "ConfigMap",
            output: "orders-kafka".into(),
            hash: ContentHash::new(HASH),
            revision,
        }
    }

    /// A status message quotes what the manifest holds, any character: a note longer than the
    /// Event bound must not be cut inside a character (that panicked, and a panic aborts).
    #[test]
    fn a_long_not_ready_message_with_wide_characters_becomes_a_warning() {
        let message = "€".repeat(400);
        let status: KafkaToolConfigStatus = serde_json::from_value(serde_json::json!({
            "conditions": [{"type": "Ready", "status": "False", "reason": "InvalidConfig",
                            "message": message, "lastTransitionTime": "2026-12-07T00:00:00Z"}]
        }))
        .expect("a status");
        let event = not_ready(None, &status).expect("a transition to Ready=False");
        assert_eq!(event.type_, EventType::Warning);
        assert_eq!(event.note.as_deref(), Some(message.as_str()));
    }

    /// One waits per render during an initial sync: 10,000 in the scale run (`rss_10k_mib`).
    #[test]
    fn a_queued_event_stays_small() {
        let size = std::mem::size_of::<QueuedEvent>();
        assert!(size <= 136, "QueuedEvent is {size} bytes");
    }

    /// A queued Rendered Event is a reference to a history entry: the note delivered is the one
    /// the reconcile would have published, read from the cache's projection of the status.
    #[tokio::test]
    async fn a_queued_rendered_event_is_delivered_with_its_history_entry() {
        let config = config_at(2);
        let cached = cached(config.clone());
        let (ctx, _api_server) = fixtures::context(&[cached], Vec::new());
        let entry = config.status.as_ref().and_then(|s| s.history.first());
        let expected = history::event_note("ConfigMap", "orders-kafka", HASH, entry);
        assert!(
            expected.starts_with("revision 2 of ConfigMap orders-kafka"),
            "{expected}"
        );

        let (reference, event) = delivered(&ctx, queued(Some(2))).expect("the config is cached");
        assert_eq!(event.note.as_deref(), Some(expected.as_str()));
        assert_eq!(event.reason, "Rendered");
        assert_eq!(reference.uid.as_deref(), Some("u-1"));

        // A repair (no new entry) says what the output holds; a gone config publishes nothing.
        let (_, repair) = delivered(&ctx, queued(None)).expect("the config is cached");
        assert_eq!(
            repair.note.as_deref(),
            Some(history::event_note("ConfigMap", "orders-kafka", HASH, None).as_str())
        );
        let gone = QueuedEvent::Rendered {
            config: ConfigId::new("team-a", "deleted"),
            output_kind: "ConfigMap",
            output: "deleted-kafka".into(),
            hash: ContentHash::new(HASH),
            revision: Some(1),
        };
        assert!(delivered(&ctx, gone).is_none());
    }

    /// The status write that added the entry may reach the cache after the reconcile ended: the
    /// Event waits for the watch to bring it in, and its note names the revision.
    #[tokio::test]
    async fn a_rendered_event_waits_for_the_watch_to_bring_in_its_entry() {
        let at = |revision| cached(config_at(revision));
        let (ctx, _api_server, mut writer) = fixtures::context_with_watch(&[at(2)], Vec::new());
        let watch = {
            let ctx = ctx.clone();
            tokio::spawn(async move {
                tokio::time::sleep(Duration::from_millis(50)).await;
                writer.apply_watcher_event(&kube::runtime::watcher::Event::Apply(at(3)));
                ctx.caches.configs_seen.bump();
            })
        };
        let queued = queued(Some(3));
        entry_cached(&ctx, &queued).await;
        let (_, event) = delivered(&ctx, queued).expect("the config is cached");
        let note = event.note.unwrap_or_default();
        assert!(
            note.starts_with("revision 3 of ConfigMap orders-kafka"),
            "{note}"
        );
        watch.await.expect("the watch task");
    }

    /// A clean shutdown publishes what is queued at once (no wait for the watch) and ends the
    /// delivery once the queue is empty, though reconciles could still hold its sender.
    #[tokio::test]
    async fn a_clean_stop_publishes_the_queued_events_then_ends() {
        const EVENTS: &str = "/apis/events.k8s.io/v1/namespaces/team-a/events";
        fn posted(request: &fixtures::Received) -> (http::StatusCode, serde_json::Value) {
            assert_eq!(request.body["reason"], "Rendered");
            (http::StatusCode::CREATED, request.body.clone())
        }
        // The cache has revision 2 only: a wait for revision 3's entry would take ENTRY_WAIT.
        let (ctx, api_server) = fixtures::context(&[cached(config_at(2))], Vec::new());
        let scenario = api_server.run(vec![
            fixtures::Exchange::new(http::Method::POST, EVENTS, posted),
            fixtures::Exchange::new(http::Method::POST, EVENTS, posted),
        ]);
        let (queue, events) = tokio::sync::mpsc::channel(8);
        queue.try_send(queued(Some(2))).expect("room in the queue");
        queue.try_send(queued(Some(3))).expect("room in the queue");
        let (stopping, stopping_rx) = watch::channel(false);
        let delivery = tokio::spawn(deliver_events(ctx.clone(), events, stopping_rx));
        stopping.send_replace(true);
        tokio::time::timeout(ENTRY_WAIT / 2, delivery)
            .await
            .expect("delivery ends at once when stopping")
            .expect("delivery does not panic");
        drop((ctx, queue));
        let received = fixtures::finish(scenario).await;
        let notes: Vec<&str> = received
            .iter()
            .filter_map(|r| r.body["note"].as_str())
            .collect();
        assert!(
            notes
                .iter()
                .any(|n| n.starts_with("revision 2 of ConfigMap")),
            "{notes:?}"
        );
    }
}
