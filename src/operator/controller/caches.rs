//! What the caches keep: the modifiers that strip `managedFields` and bulky status before an
//! object is cached, and what each KafkaToolConfig watch event tells the context once the cache
//! has it.

use kube::Resource;
use kube::runtime::watcher;

use crate::operator::authors;
use crate::operator::config_id::ConfigId;
use crate::operator::context::Context;
use crate::operator::crd::KafkaToolConfig;
use crate::operator::synced::Synced;
use crate::status::KafkaToolConfigStatus;

const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";

/// Memory: the caches keep neither managedFields nor kubectl's copy of the whole object.
pub(super) fn strip<K: Resource>(object: &mut K) {
    object.meta_mut().managed_fields = None;
    if let Some(annotations) = object.meta_mut().annotations.as_mut() {
        annotations.remove(LAST_APPLIED);
    }
}

/// [`strip`], but keeps the one managedFields entry that says who last changed the spec
/// (`authors::keep_latest`), without its field set: history names it.
pub(super) fn strip_keeping_author<K: Resource>(object: &mut K) {
    authors::keep_latest(object.meta_mut(), authors::SPEC);
    let kept = object.meta_mut().managed_fields.take();
    strip(object);
    object.meta_mut().managed_fields = kept;
}

/// [`strip`] for a KafkaToolConfig: its spec's author is kept only while a reconcile may still
/// record it. History names the config's author for a first render, for a new generation and
/// when the previous inputs are unknown (`authors::of_change`); once the status records a render
/// of the current generation with its inputs, it never will. About 250 bytes per config in
/// steady state: `rss_10k_mib` (≤ 64 MiB) measured 67.1 MiB with the entry kept (da2500f).
pub(super) fn strip_config(config: &mut KafkaToolConfig) {
    let recorded = config.status.as_ref().is_some_and(|s| {
        s.config_hash.is_some()
            && s.inputs.is_some()
            && s.observed_generation.is_some()
            && s.observed_generation == config.metadata.generation
    });
    if recorded {
        strip(config);
    } else {
        strip_keeping_author(config);
    }
}

/// Memory: a cached KafkaToolConfig keeps only the part of its status the fast paths read and
/// what the next status is built from ([`KafkaToolConfigStatus::cached`]).
pub(super) fn compact_status(config: &mut KafkaToolConfig) {
    config.status = config.status.take().map(KafkaToolConfigStatus::cached);
}

/// Called after the cache has applied a KafkaToolConfig watch event: wakes the reconciles waiting
/// for a newer version of a config ([`Caches::configs_seen`](crate::operator::context::Caches::configs_seen)). A deleted config leaves the
/// reverse index and the per-config tables (also one deleted while the watch was down, at
/// `InitDone`: a relisted store holds only what exists).
pub(super) fn observe_config(
    ctx: &Context,
    event: &Result<watcher::Event<KafkaToolConfig>, watcher::Error>,
) {
    ctx.caches.configs_seen.bump();
    match event {
        Ok(watcher::Event::Delete(config)) => ctx.forget_config(&ConfigId::of(config)),
        Ok(watcher::Event::InitDone) => ctx.forget_gone_configs(),
        _ => {}
    }
}

/// Marks `synced` when a watch stream finishes its initial list.
pub(super) fn mark_on_init_done<K>(
    synced: Synced,
) -> impl FnMut(&Result<watcher::Event<K>, watcher::Error>) {
    move |event| {
        if matches!(event, Ok(watcher::Event::InitDone)) {
            synced.mark();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    use kube::runtime::reflector::{self, ObjectRef, Store};

    use crate::engine::sources::SourceKind;
    use crate::operator::context::{BACKOFF_CAP, lock};

    #[test]
    fn a_config_keeps_its_spec_author_only_until_its_status_records_the_generation() {
        let with = |generation: i64, status: serde_json::Value| -> KafkaToolConfig {
            let mut config: KafkaToolConfig = serde_json::from_value(serde_json::json!({
                "apiVersion": "kafkaconfig.dev/v1alpha1",
                "kind": "KafkaToolConfig",
                "metadata": {"name": "c", "namespace": "ns", "generation": generation,
                    "managedFields": [{"manager": "argocd-controller", "operation": "Apply",
                        "time": "2026-12-06T00:00:00Z", "fieldsType": "FieldsV1",
                        "fieldsV1": {"f:spec": {"f:tool": {}}}}]},
                "spec": {"tool": "kafka-topics"},
                "status": status,
            }))
            .expect("a config");
            strip_config(&mut config);
            config
        };
        let manager = |config: &KafkaToolConfig| {
            authors::author("KafkaToolConfig", &config.metadata, authors::SPEC).map(|a| a.manager)
        };
        let recorded = serde_json::json!({"observedGeneration": 2, "configHash": "sha256:00",
            "inputs": {"operator": "0"}});
        // The status records generation 2's render: history will not ask for the spec's author.
        assert_eq!(manager(&with(2, recorded.clone())), None);
        // A new generation, a first render, a status without inputs: history names it.
        assert_eq!(
            manager(&with(3, recorded)).as_deref(),
            Some("argocd-controller")
        );
        let unrendered = serde_json::json!({"observedGeneration": 2, "inputs": {"operator": "0"}});
        assert_eq!(
            manager(&with(2, unrendered)).as_deref(),
            Some("argocd-controller")
        );
        let no_inputs = serde_json::json!({"observedGeneration": 2, "configHash": "sha256:00"});
        assert_eq!(
            manager(&with(2, no_inputs)).as_deref(),
            Some("argocd-controller")
        );
    }

    fn listed(name: &str, version: &str) -> KafkaToolConfig {
        serde_json::from_value(serde_json::json!({
            "apiVersion": "kafkaconfig.dev/v1alpha1",
            "kind": "KafkaToolConfig",
            "metadata": {"name": name, "namespace": "ns", "resourceVersion": version},
            "spec": {"tool": "kafka-console-producer"},
        }))
        .expect("a valid KafkaToolConfig")
    }

    /// A context over `configs`. Its client (needed to build it) points nowhere: nothing is sent.
    fn context(configs: Store<KafkaToolConfig>) -> Context {
        let uri = "http://127.0.0.1:1".parse().expect("a valid URI");
        let client = kube::Client::try_from(kube::Config::new(uri)).expect("a client");
        crate::operator::fixtures::test_context(client, vec![configs], Vec::new())
    }

    #[tokio::test]
    async fn a_config_deleted_while_the_watch_was_down_is_forgotten_when_the_relist_ends() {
        let (configs, mut writer) = reflector::store::<KafkaToolConfig>();
        let ctx = context(configs);
        let mut feed = |event: watcher::Event<KafkaToolConfig>| {
            writer.apply_watcher_event(&event);
            observe_config(&ctx, &Ok(event));
        };
        feed(watcher::Event::Init);
        feed(watcher::Event::InitApply(listed("orders", "10")));
        feed(watcher::Event::InitApply(listed("gone", "11")));
        feed(watcher::Event::InitDone);
        let orders = ConfigId::new("ns", "orders");
        let gone = ConfigId::new("ns", "gone");
        // The watch expires and relists.
        feed(watcher::Event::Init);
        feed(watcher::Event::InitApply(listed("orders", "12")));
        // `gone` was deleted while the watch was down: the relist does not list it.
        let base = |name: &str| crate::engine::sources::SourceRef {
            kind: SourceKind::ConfigMap,
            name: name.into(),
        };
        lock(&ctx.index).record(&orders, &[base("base")], &[]);
        lock(&ctx.index).record(&gone, &[base("base")], &[]);
        for key in [&orders, &gone] {
            lock(&ctx.failures).insert(key.clone(), 3);
            lock(&ctx.invalid_reported).insert(key.clone(), Some(1));
        }
        feed(watcher::Event::InitDone);
        // `gone` leaves the reverse index and the per-config tables; so does a config deleted
        // while watched.
        let readers = || lock(&ctx.index).dependants("ns", SourceKind::ConfigMap, "base");
        let tables = || {
            let failures: Vec<ConfigId> = lock(&ctx.failures).keys().cloned().collect();
            let invalid: Vec<ConfigId> = lock(&ctx.invalid_reported).keys().cloned().collect();
            (failures, invalid)
        };
        assert_eq!(readers(), std::slice::from_ref(&orders));
        assert_eq!(tables(), (vec![orders.clone()], vec![orders.clone()]));
        feed(watcher::Event::Delete(listed("orders", "14")));
        assert!(readers().is_empty());
        assert_eq!(tables(), (vec![], vec![]));
    }

    #[tokio::test]
    async fn a_relist_retries_the_cached_configs_whose_reconciles_failed_now() {
        let (configs, mut writer) = reflector::store::<KafkaToolConfig>();
        let ctx = context(configs.clone());
        for event in [
            watcher::Event::Init,
            watcher::Event::InitApply(listed("orders", "10")),
            watcher::Event::InitApply(listed("payments", "11")),
            watcher::Event::InitDone,
        ] {
            writer.apply_watcher_event(&event);
        }
        let orders = ConfigId::new("ns", "orders");
        // failed through an outage: its backoff grew
        for _ in 0..9 {
            ctx.backoff(&orders, BACKOFF_CAP);
        }
        assert!(ctx.backoff(&orders, BACKOFF_CAP) >= Duration::from_secs(225));
        // another scope's config, not in this store
        let elsewhere = ConfigId::new("other", "orders");
        ctx.backoff(&elsewhere, BACKOFF_CAP);
        let retried = ctx.retry_failed(&configs);
        assert_eq!(retried, vec![ObjectRef::new("orders").within("ns")]);
        // its backoff starts again; the other scope's failure is left to its own relist
        assert!(ctx.backoff(&orders, BACKOFF_CAP) <= Duration::from_millis(1250));
        assert_eq!(lock(&ctx.failures).get(&elsewhere), Some(&1));
        assert!(ctx.retry_failed(&configs).len() == 1, "failed again since");
    }
}
