//! The events step: Events on transitions only (a resync publishes nothing), handed to a bounded
//! queue that [`deliver_events`] empties outside the reconcile slots.

use std::sync::Arc;

use futures::StreamExt;
use k8s_openapi::api::core::v1::ObjectReference;
use kube::Resource;
use kube::runtime::events::{Event, EventType};
use tokio::sync::mpsc::Receiver;
use tokio::sync::mpsc::error::TrySendError;
use tracing::{info, warn};

use crate::operator::context::{Context, EVENTS_AT_ONCE, QueuedEvent};
use crate::operator::crd::KafkaToolConfig;
use crate::operator::history;
use crate::status::{KafkaToolConfigStatus, READY};

/// Events on transitions only (a resync publishes nothing). Messages are the status messages,
/// which never carry secret values.
fn transition_events(
    previous: Option<&KafkaToolConfigStatus>,
    next: &KafkaToolConfigStatus,
    wrote: Option<(&str, String, String)>,
) -> Vec<Event> {
    let mut events = Vec::new();
    // A new history entry (a repair of the output's content adds none).
    let before = previous.and_then(|p| p.history.last()).map(|e| &e.hash);
    let revision = next.history.last().filter(|e| Some(&e.hash) != before);
    if let Some((kind, name, hash)) = wrote {
        info!(%kind, output = %name, %hash, "rendered");
        events.push(Event {
            type_: EventType::Normal,
            reason: "Rendered".into(),
            note: Some(history::event_note(kind, &name, &hash, revision)),
            action: "Render".into(),
            secondary: None,
        });
    }
    let ready = next.condition(READY);
    let was = previous.and_then(|p| p.condition(READY));
    if let Some(ready) = ready
        && ready.status == "False"
        && was.is_none_or(|w| w.status != ready.status || w.reason != ready.reason)
    {
        warn!(reason = %ready.reason, message = %ready.message, "not ready");
        let mut note = ready.message.clone();
        note.truncate(1000);
        events.push(Event {
            type_: EventType::Warning,
            reason: ready.reason.clone(),
            note: Some(note),
            action: "Render".into(),
            secondary: None,
        });
    }
    events
}

/// The events step: publishes the transitions from `previous` to `next` (and the output's
/// render), if any.
pub async fn publish_transitions(
    ctx: &Context,
    config: &KafkaToolConfig,
    previous: Option<&KafkaToolConfigStatus>,
    next: &KafkaToolConfigStatus,
    wrote: Option<(&str, String, String)>,
) {
    let events = transition_events(previous, next, wrote);
    if !events.is_empty() {
        publish_events(ctx, &config.object_ref(&()), events).await;
    }
}

/// Hands the events to [`deliver_events`], out of the reconcile slot (an Event is on no edit's
/// path); publishes them here when that queue is full, so neither memory nor the number of
/// requests in flight grows with a burst.
async fn publish_events(ctx: &Context, reference: &ObjectReference, events: Vec<Event>) {
    for event in events {
        let event = match &ctx.event_queue {
            Some(queue) => match queue.try_send((reference.clone(), event)) {
                Ok(()) => continue,
                Err(TrySendError::Full((_, event)) | TrySendError::Closed((_, event))) => event,
            },
            None => event,
        };
        publish_event(ctx, reference, &event).await;
    }
}

async fn publish_event(ctx: &Context, reference: &ObjectReference, event: &Event) {
    match ctx.recorder.publish(event, reference).await {
        Ok(()) => ctx.metrics.write("Event"),
        Err(e) => {
            warn!(namespace = ?reference.namespace, name = ?reference.name, error = %e, "cannot publish an event")
        }
    }
}

/// Publishes queued events, [`EVENTS_AT_ONCE`] at a time.
pub async fn deliver_events(ctx: Arc<Context>, queue: Receiver<QueuedEvent>) {
    futures::stream::unfold(queue, |mut queue| async move {
        queue.recv().await.map(|item| (item, queue))
    })
    .for_each_concurrent(EVENTS_AT_ONCE, |(reference, event)| {
        let ctx = ctx.clone();
        async move { publish_event(&ctx, &reference, &event).await }
    })
    .await;
}
