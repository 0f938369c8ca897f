//! Wiring: one kube-runtime `Controller` per watched scope (all namespaces, or each
//! `--watch-namespace`, so a tenant can grant namespaced Roles only), fed by
//!
//! - the KafkaToolConfigs, filtered by generation (`generations.rs`) so status writes never
//!   re-trigger;
//! - metadata-only watches of the ConfigMaps/Secrets we own (label selector), mapped by owner, but
//!   only when one is deleted or carries a hash its owner's status does not record, so the
//!   operator's own output writes do not come back as a second reconcile;
//! - metadata-only watches of all ConfigMaps/Secrets, mapped through the reverse index to the
//!   configs that read them, except the controller owner of an output (no Secret data is ever
//!   cached);
//! - GlobalClientDefaults and Namespace label changes, mapped here and sent with `reconcile_on`;
//! - metadata-only watches of Deployments, StatefulSets and DaemonSets (`workloads.rs`): the
//!   `kafkaconfig.dev/config` opt-in, and workloads that appear after the config naming them;
//! - a "reconcile everything" trigger when this replica becomes leader.
//!
//! Caches strip `managedFields`. Every replica keeps warm caches; only the Lease holder writes.
//! At most `RECONCILE_CONCURRENCY` reconciles do API work at once, in all scopes together, first
//! come first served (`running.rs`), so a relist of thousands of configs queues here instead of
//! in the API server's priority-and-fairness queues (429s).

mod caches;
mod invalid;
mod owned;
mod run;

use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use futures::{FutureExt, Stream, StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::core::{DeserializeGuard, PartialObjectMeta};
use kube::runtime::WatchStreamExt;
use kube::runtime::controller::{Config as ControllerConfig, Controller};
use kube::runtime::reflector::{self, ObjectRef, Store};
use kube::runtime::watcher::{self, watcher};
use kube::{Client, ResourceExt};
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};
use tokio::sync::watch;
use tracing::{debug, warn};

use crate::engine::sources::SourceKind;
use crate::operator::context::{Context, ScopeVersions, lock, scoped};
use crate::operator::crd::KafkaToolConfig;
use crate::operator::generations::Generations;
use crate::operator::reconcile::{self, error_policy, reconcile};
use crate::operator::running::ADMITTED_PER_SCOPE;
use crate::operator::synced::Synced;
use crate::operator::versions::ObjectVersions;
use crate::output::{MANAGED_BY_LABEL, MANAGER};
use caches::{compact_status, mark_on_init_done, observe_config, strip_config};
use invalid::{report_invalid, unguard};
use owned::{controller_owner, forward_owned};

pub use run::run;

/// Trailing-edge debounce: a ConfigMap and a Secret applied back to back (one `kubectl apply` of a
/// commit sends them a round trip apart) become one render. Every edit waits this long before
/// its render starts, so it is short (edit → output p50 ≤ 100 ms, issue 7).
const DEBOUNCE: Duration = Duration::from_millis(50);

/// One item each time this replica becomes the leader (not for the value it starts with: without
/// leader election it leads from the start, and the first list reconciles everything anyway).
fn became_leader(leader: watch::Receiver<bool>) -> impl Stream<Item = ()> + Send + 'static {
    futures::stream::unfold(leader, |mut leader| async move {
        loop {
            leader.changed().await.ok()?;
            if *leader.borrow_and_update() {
                return Some(((), leader));
            }
        }
    })
}

#[allow(clippy::too_many_arguments)]
fn controller(
    client: &Client,
    scope: Option<&str>,
    reader: Store<KafkaToolConfig>,
    writer: reflector::store::Writer<KafkaToolConfig>,
    synced: Synced,
    ctx: &Arc<Context>,
    versions: &ScopeVersions,
    mut triggers: UnboundedReceiver<ObjectRef<KafkaToolConfig>>,
    leader: watch::Receiver<bool>,
) -> BoxFuture<'static, ()> {
    let report_ctx = ctx.clone();
    let generations = Arc::new(std::sync::Mutex::new(Generations::default()));
    let (owned_tx, mut owned_rx) = unbounded_channel();
    let primary = watcher(
        scoped::<DeserializeGuard<KafkaToolConfig>>(client, scope),
        watcher::Config::default(),
    )
    .default_backoff()
    .filter_map(move |event| {
        let ctx = report_ctx.clone();
        async move {
            let mut invalid = Vec::new();
            let event = event.map(|event| unguard(event, &mut invalid)).transpose();
            for object in invalid {
                report_invalid(&ctx, object).await;
            }
            event
        }
    })
    .modify(strip_config)
    .modify(compact_status)
    .reflect(writer)
    // After the cache has the event: a relist forgets the configs it no longer finds only once
    // the store is swapped in, and the configs it found changed reconcile once the store has them.
    .inspect({
        let ctx = ctx.clone();
        let generations = generations.clone();
        let tx = owned_tx.clone();
        let reader = reader.clone();
        move |event| {
            observe_config(&ctx, event);
            if let Ok(event) = event {
                for config in lock(&generations).observe(event) {
                    let _ = tx.send(config);
                }
                if matches!(event, watcher::Event::InitDone) {
                    for config in ctx.retry_failed(&reader) {
                        let _ = tx.send(config);
                    }
                }
            }
        }
    })
    .inspect(mark_on_init_done(synced))
    .applied_objects()
    .try_filter(move |config| futures::future::ready(lock(&generations).changed(config)));
    let owned = watcher::Config::default().labels(&format!("{MANAGED_BY_LABEL}={MANAGER}"));
    tokio::spawn(reconcile::keep_resyncing(reader.clone(), {
        let tx = owned_tx.clone();
        move |config| {
            let _ = tx.send(config);
        }
    }));
    tokio::spawn(forward_owned(
        watcher(
            scoped::<PartialObjectMeta<ConfigMap>>(client, scope),
            owned.clone(),
        )
        .default_backoff(),
        reader.clone(),
        ctx.caches.configs_seen.clone(),
        owned_tx.clone(),
    ));
    tokio::spawn(forward_owned(
        watcher(scoped::<PartialObjectMeta<Secret>>(client, scope), owned).default_backoff(),
        reader.clone(),
        ctx.caches.configs_seen.clone(),
        owned_tx.clone(),
    ));
    let config_maps = sources::<ConfigMap>(
        SourceKind::ConfigMap,
        client,
        scope,
        versions.config_maps.clone(),
        ctx.clone(),
        owned_tx.clone(),
    );
    let secrets = sources::<Secret>(
        SourceKind::Secret,
        client,
        scope,
        versions.secrets.clone(),
        ctx.clone(),
        owned_tx,
    );
    let scope_name = scope.unwrap_or("all namespaces").to_string();
    Controller::for_stream(primary, reader)
        .with_config(
            ControllerConfig::default()
                .debounce(DEBOUNCE)
                .concurrency(ADMITTED_PER_SCOPE),
        )
        .watches_stream(config_maps, dependants(ctx.clone(), SourceKind::ConfigMap))
        .watches_stream(secrets, dependants(ctx.clone(), SourceKind::Secret))
        .reconcile_on(futures::stream::poll_fn(move |cx| owned_rx.poll_recv(cx)))
        .reconcile_on(futures::stream::poll_fn(move |cx| triggers.poll_recv(cx)))
        .reconcile_all_on(became_leader(leader))
        .run(reconcile, error_policy, ctx.clone())
        .for_each(|result| async move {
            match result {
                Ok((object, _)) => {
                    debug!(namespace = ?object.namespace, name = %object.name, "reconciled")
                }
                Err(kube::runtime::controller::Error::ReconcilerFailed(..)) => {} // logged by error_policy
                Err(error) => debug!(%error, "controller"),
            }
        })
        .map(move |()| warn!(scope = %scope_name, "controller stream ended"))
        .boxed()
}

/// The metadata of every ConfigMap or Secret (`K`) in `scope`. The version cache sees each event
/// before it becomes a trigger, so a reconcile started by an edit never finds the old
/// resourceVersion there. What a relist no longer lists (deleted while the watch was down)
/// reconciles every config that reads it, an output's owner too.
fn sources<K>(
    kind: SourceKind,
    client: &Client,
    scope: Option<&str>,
    versions: Arc<ObjectVersions>,
    ctx: Arc<Context>,
    tx: UnboundedSender<ObjectRef<KafkaToolConfig>>,
) -> impl Stream<Item = Result<PartialObjectMeta<K>, watcher::Error>> + Send + 'static
where
    K: kube::Resource<DynamicType = (), Scope = kube::core::NamespaceResourceScope>
        + Clone
        + std::fmt::Debug
        + Send
        + Sync
        + 'static,
{
    watcher(
        scoped::<PartialObjectMeta<K>>(client, scope),
        watcher::Config::default(),
    )
    .default_backoff()
    .inspect(move |event| {
        let Ok(event) = event else { return };
        for (namespace, name) in versions.observe(event) {
            for config in lock(&ctx.index).dependants(&namespace, kind, &name) {
                let _ = tx.send(config.object_ref());
            }
        }
    })
    .touched_objects()
}

/// The configs that read a ConfigMap or Secret. An output is in the index too (under its own
/// name, for OutputConflict); its controller owner hears about it from `forward_owned`, which
/// ignores the operator's own writes.
fn dependants<K>(
    ctx: Arc<Context>,
    kind: SourceKind,
) -> impl Fn(PartialObjectMeta<K>) -> Vec<ObjectRef<KafkaToolConfig>> + Send + Sync + 'static
where
    PartialObjectMeta<K>: kube::Resource,
{
    move |object| {
        let owner = controller_owner(&object);
        let namespace = object.namespace().unwrap_or_default();
        lock(&ctx.index)
            .dependants(&namespace, kind, &object.name_any())
            .into_iter()
            .map(|config| config.object_ref())
            .filter(|config| owner.as_ref() != Some(config))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn next(stream: &mut (impl Stream<Item = ()> + Unpin)) -> Option<()> {
        tokio::time::timeout(Duration::from_secs(5), stream.next())
            .await
            .expect("the stream answers")
    }

    #[tokio::test]
    async fn everything_is_reconciled_each_time_this_replica_becomes_the_leader_only() {
        let (leader, leading) = watch::channel(false);
        let mut became = Box::pin(became_leader(leading));
        leader.send_replace(true);
        assert_eq!(next(&mut became).await, Some(()));
        // Losing the Lease is no reason to reconcile; the stream ends with the campaign.
        leader.send_replace(false);
        drop(leader);
        assert_eq!(next(&mut became).await, None);
        // Leading from the start (no election): the first list reconciles everything already.
        let (leader, leading) = watch::channel(true);
        let mut became = Box::pin(became_leader(leading));
        drop(leader);
        assert_eq!(next(&mut became).await, None);
    }
}
