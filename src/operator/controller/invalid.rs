//! KafkaToolConfigs that do not decode into the operator's types: they leave the cache, and the
//! leader reports each once per generation (a log line, a Warning Event, a status).

use k8s_openapi::api::core::v1::ObjectReference;
use kube::Resource;
use kube::api::{Api, ApiResource, DynamicObject, Patch, PatchParams};
use kube::core::DeserializeGuard;
use kube::core::error_boundary::InvalidObject;
use kube::runtime::events::{Event, EventType};
use kube::runtime::watcher;
use tracing::{debug, warn};

use crate::operator::config_id::ConfigId;
use crate::operator::context::{Context, lock};
use crate::operator::crd::{KafkaToolConfig, KafkaToolConfigSpec};
use crate::status;

fn placeholder(metadata: kube::core::ObjectMeta) -> KafkaToolConfig {
    KafkaToolConfig {
        metadata,
        spec: KafkaToolConfigSpec {
            config: Default::default(),
        },
        status: None,
    }
}

/// Isolates a KafkaToolConfig that does not deserialize into our types (e.g. stored under a
/// looser or older schema): without the guard one such object fails the whole list and stalls
/// every config of the scope. It is collected in `invalid` (to report) and leaves the cache (a
/// `Delete`), so nothing reconciles a stale spec; every other config keeps reconciling.
pub(super) fn unguard(
    event: watcher::Event<DeserializeGuard<KafkaToolConfig>>,
    invalid: &mut Vec<InvalidObject>,
) -> Option<watcher::Event<KafkaToolConfig>> {
    use watcher::Event as E;
    match event {
        E::Init => Some(E::Init),
        E::InitDone => Some(E::InitDone),
        E::InitApply(DeserializeGuard(Ok(k))) => Some(E::InitApply(k)),
        E::InitApply(DeserializeGuard(Err(bad))) => {
            invalid.push(bad);
            None
        }
        E::Apply(DeserializeGuard(Ok(k))) => Some(E::Apply(k)),
        E::Apply(DeserializeGuard(Err(bad))) => {
            let metadata = bad.metadata.clone();
            invalid.push(bad);
            Some(E::Delete(placeholder(metadata)))
        }
        E::Delete(DeserializeGuard(Ok(k))) => Some(E::Delete(k)),
        E::Delete(DeserializeGuard(Err(bad))) => Some(E::Delete(placeholder(bad.metadata))),
    }
}

/// A log line and (on the leader) a Warning Event and a status naming the object: Ready=False and
/// Valid=False with reason `InvalidSpec`, so kstatus, Argo CD and `kubectl get` show it too. The
/// deserializer's message is not repeated: it may quote a value of the spec, and values never go
/// to logs, events or status.
pub(super) async fn report_invalid(ctx: &Context, object: InvalidObject) {
    let meta = object.metadata;
    let namespace = meta.namespace.clone().unwrap_or_default();
    let name = meta.name.clone().unwrap_or_default();
    if !ctx.is_leader() {
        debug!(%namespace, %name, "KafkaToolConfig does not match the operator's types (the leader reports it)");
        return;
    }
    let key = ConfigId::new(&namespace, &name);
    if lock(&ctx.invalid_reported).insert(key, meta.generation) == Some(meta.generation) {
        return;
    }
    warn!(%namespace, %name, "KafkaToolConfig does not match the operator's types; skipped until it is fixed");
    let reference = ObjectReference {
        api_version: Some(KafkaToolConfig::api_version(&()).into_owned()),
        kind: Some(KafkaToolConfig::kind(&()).into_owned()),
        name: meta.name,
        namespace: meta.namespace,
        uid: meta.uid,
        resource_version: meta.resource_version,
        ..ObjectReference::default()
    };
    let event = Event {
        type_: EventType::Warning,
        reason: INVALID_SPEC.into(),
        note: Some(INVALID_SPEC_MESSAGE.into()),
        action: "Decode".into(),
        secondary: None,
    };
    match ctx.events.publish(&event, &reference).await {
        Ok(()) => ctx.metrics.write("Event"),
        Err(e) => warn!(error = %e, "cannot publish an event"),
    }
    let api: Api<DynamicObject> = Api::namespaced_with(
        ctx.client.clone(),
        &namespace,
        &ApiResource::erase::<KafkaToolConfig>(&()),
    );
    let patch = invalid_status(meta.generation, &crate::operator::reconcile::now());
    match api
        .patch_status(&name, &PatchParams::default(), &Patch::Merge(&patch))
        .await
    {
        Ok(_) => ctx.metrics.write("Status"),
        Err(e) => {
            // Try again on the next event rather than never.
            lock(&ctx.invalid_reported).remove(&ConfigId::new(&namespace, &name));
            warn!(%namespace, %name, error = %e, "cannot write the status of an undecodable KafkaToolConfig");
        }
    }
}

const INVALID_SPEC: &str = "InvalidSpec";

const INVALID_SPEC_MESSAGE: &str = "this KafkaToolConfig does not match the operator's types (check it \
     with `kafka-config-operator validate`); it is skipped until fixed";

/// The status merge patch for a KafkaToolConfig that does not decode (conditions are replaced as
/// a whole; the last good hash and history stay).
fn invalid_status(generation: Option<i64>, now: &str) -> serde_json::Value {
    let mut conditions = Vec::new();
    // Stalled: kstatus (Flux) reports Failed; only an edit of the spec can fix it.
    for (type_, value) in [
        (status::READY, "False"),
        (status::STALLED, "True"),
        (status::VALID, "False"),
    ] {
        status::set_condition(
            &mut conditions,
            &[],
            type_,
            value,
            INVALID_SPEC,
            INVALID_SPEC_MESSAGE.to_string(),
            generation,
            now,
        );
    }
    serde_json::json!({"status": {"observedGeneration": generation, "conditions": conditions}})
}

#[cfg(test)]
mod tests {
    use super::*;
    use kube::ResourceExt;

    #[test]
    fn an_undecodable_config_gets_ready_and_valid_false_and_stalled_at_its_generation() {
        let patch = invalid_status(Some(7), "2026-12-02T00:00:00Z");
        assert_eq!(patch["status"]["observedGeneration"], 7);
        let conditions = patch["status"]["conditions"]
            .as_array()
            .cloned()
            .expect("status.conditions is a list");
        let types: Vec<&str> = conditions
            .iter()
            .filter_map(|c| c["type"].as_str())
            .collect();
        assert_eq!(types, ["Ready", "Stalled", "Valid"]);
        for c in &conditions {
            // kstatus: Failed until the spec is edited.
            let expected = if c["type"] == "Stalled" {
                "True"
            } else {
                "False"
            };
            assert_eq!(c["status"], expected);
            assert_eq!(c["reason"], "InvalidSpec");
            assert_eq!(c["observedGeneration"], 7);
            assert_eq!(c["lastTransitionTime"], "2026-12-02T00:00:00Z");
        }
    }

    fn guard(spec: serde_json::Value) -> DeserializeGuard<KafkaToolConfig> {
        serde_json::from_value(serde_json::json!({
            "apiVersion": "kafkaconfig.dev/v1alpha1",
            "kind": "KafkaToolConfig",
            "metadata": {"name": "c", "namespace": "ns"},
            "spec": spec,
        }))
        .expect("metadata deserializes")
    }

    #[test]
    fn an_invalid_config_is_reported_and_leaves_the_cache() {
        let good = serde_json::json!({"tool": "kafka-console-producer"});
        let bad = serde_json::json!({"tool": 42, "rollout": "sometimes"});
        let mut invalid = Vec::new();
        assert!(matches!(
            unguard(watcher::Event::InitApply(guard(good.clone())), &mut invalid),
            Some(watcher::Event::InitApply(k)) if k.name_any() == "c"
        ));
        assert!(invalid.is_empty());
        assert!(unguard(watcher::Event::InitApply(guard(bad.clone())), &mut invalid).is_none());
        assert_eq!(invalid.len(), 1);
        assert!(matches!(
            unguard(watcher::Event::Apply(guard(bad.clone())), &mut invalid),
            Some(watcher::Event::Delete(k)) if k.name_any() == "c" && k.namespace().as_deref() == Some("ns")
        ));
        assert_eq!(invalid.len(), 2);
        assert!(matches!(
            unguard(watcher::Event::Delete(guard(bad)), &mut invalid),
            Some(watcher::Event::Delete(_))
        ));
        assert_eq!(invalid.len(), 2, "a deletion is not reported");
        assert!(matches!(
            unguard(watcher::Event::Apply(guard(good)), &mut invalid),
            Some(watcher::Event::Apply(_))
        ));
    }
}
