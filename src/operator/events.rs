//! Kubernetes Events (`events.k8s.io/v1`), one `create` per event.
//!
//! kube-runtime's `Recorder` keeps every published event for six minutes to turn repeats into a
//! series, and scans that cache on every publish: at 10,000 configs it held tens of MiB and a
//! second render within six minutes was recorded as "count 2" of the first one, whose note names
//! the previous hash. The operator only publishes on transitions (a new hash, a new failure
//! reason), so every event is new: no cache, no series, no `patch` permission.

use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::api::events::v1::Event as K8sEvent;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
use k8s_openapi::jiff::Timestamp;
use kube::api::{Api, ObjectMeta, PostParams};
use kube::runtime::events::{Event, EventType};

use crate::engine::safe_text;

/// An Event waiting for delivery.
pub enum QueuedEvent {
    /// A `Rendered` Event: its note is built at delivery from the config's history entry
    /// (the status is the record; the Event repeats it), so a queued one is a few dozen bytes,
    /// not a first render's note that lists every key.
    Rendered {
        config: crate::operator::config_id::ConfigId,
        output_kind: &'static str,
        output: Box<str>,
        /// 33 bytes in place of a 77-byte string: the queue holds one per render of a sync.
        hash: crate::status::ContentHash,
        /// The history entry this render added; none for a repair (same content again).
        revision: Option<i64>,
    },
    /// Any other Event, whole, and the object it is about (boxed: few are queued, and every
    /// slot of the queue is the size of the largest variant).
    Whole(Box<(ObjectReference, Event)>),
}
/// Events queued at most; beyond, a reconcile publishes its own. Rendered Events wait for the
/// reconciles to finish (`reconcile::deliver_events`): an initial sync of 10,000 configs queues
/// one each, about 180 bytes.
pub const EVENT_QUEUE: usize = 16_384;
/// Events published at once by `reconcile::deliver_events`.
pub const EVENTS_AT_ONCE: usize = 4;

/// Longest note the API server accepts.
const MAX_NOTE: usize = 1024;

pub struct EventPublisher {
    client: kube::Client,
    controller: String,
    instance: String,
    /// Where reconciles hand their Events for `reconcile::deliver_events` (at most
    /// [`EVENT_QUEUE`]); none: each publishes its own.
    pub queue: Option<tokio::sync::mpsc::Sender<QueuedEvent>>,
}

impl EventPublisher {
    pub fn new(
        client: kube::Client,
        controller: &str,
        instance: Option<String>,
        queue: Option<tokio::sync::mpsc::Sender<QueuedEvent>>,
    ) -> Self {
        EventPublisher {
            client,
            controller: controller.to_string(),
            instance: instance.unwrap_or_else(|| controller.to_string()),
            queue,
        }
    }

    pub async fn publish(
        &self,
        event: &Event,
        regarding: &ObjectReference,
    ) -> Result<(), kube::Error> {
        let namespace = regarding.namespace.as_deref().unwrap_or("default");
        let api: Api<K8sEvent> = Api::namespaced(self.client.clone(), namespace);
        api.create(&PostParams::default(), &self.build(event, regarding))
            .await?;
        Ok(())
    }

    fn build(&self, event: &Event, regarding: &ObjectReference) -> K8sEvent {
        let now = Timestamp::now();
        let note = event
            .note
            .as_deref()
            .map(|n| safe_text::head(n, MAX_NOTE).to_string());
        K8sEvent {
            metadata: ObjectMeta {
                name: Some(format!(
                    "{}.{:x}",
                    regarding.name.as_deref().unwrap_or(&self.controller),
                    now.as_nanosecond()
                )),
                namespace: regarding.namespace.clone(),
                ..ObjectMeta::default()
            },
            action: Some(event.action.clone()),
            reason: Some(event.reason.clone()),
            note,
            event_time: Some(MicroTime(now)),
            regarding: Some(regarding.clone()),
            related: event.secondary.clone(),
            reporting_controller: Some(self.controller.clone()),
            reporting_instance: Some(self.instance.clone()),
            type_: Some(
                match event.type_ {
                    EventType::Normal => "Normal",
                    EventType::Warning => "Warning",
                }
                .to_string(),
            ),
            ..K8sEvent::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn publisher() -> EventPublisher {
        // A client is only needed to build the publisher; nothing is sent in these tests.
        let config = kube::Config::new("http://127.0.0.1:1".parse().expect("a valid URI"));
        let client = kube::Client::try_from(config).expect("a client");
        EventPublisher::new(client, "kafka-config-operator", None, None)
    }

    #[tokio::test]
    async fn an_event_names_its_object_and_reporter_and_is_not_a_series() {
        let publisher = publisher();
        let regarding = ObjectReference {
            kind: Some("KafkaToolConfig".into()),
            name: Some("orders".into()),
            namespace: Some("team-a".into()),
            ..ObjectReference::default()
        };
        let event = Event {
            type_: EventType::Normal,
            reason: "Rendered".into(),
            note: Some("é".repeat(MAX_NOTE)),
            action: "Render".into(),
            secondary: None,
        };
        let built = publisher.build(&event, &regarding);
        assert!(
            built
                .metadata
                .name
                .as_deref()
                .is_some_and(|n| n.starts_with("orders."))
        );
        assert_eq!(built.metadata.namespace.as_deref(), Some("team-a"));
        assert_eq!(built.type_.as_deref(), Some("Normal"));
        assert_eq!(
            built.reporting_instance.as_deref(),
            Some("kafka-config-operator")
        );
        assert!(built.series.is_none());
        let note = built.note.expect("the event has a note");
        assert!(
            note.len() <= MAX_NOTE && note.chars().all(|c| c == 'é'),
            "{}",
            note.len()
        );
    }
}
