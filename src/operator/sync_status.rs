//! Keeps `pods.rs`'s numbers current: a watch of each workload kind records, for the workloads
//! whose template carries our hash annotation only, the few numbers `Synced` needs (no object is
//! cached), and re-reconciles the configs that target a workload when they change, so a pod
//! becoming ready updates the status.

use std::fmt::Debug;
use std::sync::Arc;

use futures::StreamExt;
use k8s_openapi::api::apps::v1::{DaemonSet, Deployment, StatefulSet};
use kube::core::NamespaceResourceScope;
use kube::runtime::WatchStreamExt;
use kube::runtime::reflector::ObjectRef;
use kube::runtime::watcher::{self, watcher};
use kube::{Api, Client, Resource, ResourceExt};
use serde::de::DeserializeOwned;
use tracing::warn;

use crate::operator::context::{Context, scoped};
use crate::operator::crd::KafkaToolConfig;
use crate::operator::pods::{self, KINDS, Key, Pods};
use crate::operator::synced::Synced;

/// The configs that target a workload, in their spec or (opted in another way) their status.
fn targeting(
    ctx: &Context,
    kind: &str,
    namespace: &str,
    name: &str,
) -> Vec<ObjectRef<KafkaToolConfig>> {
    ctx.all_configs()
        .iter()
        .filter(|c| c.namespace().as_deref() == Some(namespace))
        .filter(|c| {
            let in_spec = c.spec.config.rollout.as_ref().is_some_and(|r| {
                r.targets
                    .iter()
                    .any(|t| format!("{:?}", t.kind) == kind && t.name == name)
            });
            let in_status = c
                .status
                .as_ref()
                .is_some_and(|s| s.rollout.iter().any(|r| r.kind == kind && r.name == name));
            in_spec || in_status
        })
        .map(|c| ObjectRef::from_obj(&**c))
        .collect()
}

/// Watches one kind in `scope` (all namespaces when `None`).
fn watch<K>(
    client: &Client,
    scope: Option<&str>,
    ctx: &Arc<Context>,
    synced: &Synced,
    pods: fn(&K) -> Option<Pods>,
    send: &(impl Fn(ObjectRef<KafkaToolConfig>) + Clone + Send + 'static),
) where
    K: Resource<DynamicType = (), Scope = NamespaceResourceScope>
        + Clone
        + DeserializeOwned
        + Debug
        + Send
        + 'static,
{
    let api: Api<K> = scoped(client, scope);
    let Some(kind) = KINDS.iter().copied().find(|k| *k == K::kind(&())) else {
        return;
    };
    let (ctx, synced, send) = (ctx.clone(), synced.clone(), send.clone());
    tokio::spawn(async move {
        let mut events = std::pin::pin!(watcher(api, watcher::Config::default()).default_backoff());
        while let Some(event) = events.next().await {
            let (object, deleted) = match event {
                Ok(watcher::Event::Apply(o) | watcher::Event::InitApply(o)) => (o, false),
                Ok(watcher::Event::Delete(o)) => (o, true),
                Ok(watcher::Event::InitDone) => {
                    // Reconciles wait for this first list (`Caches::synced`): none has read
                    // the numbers before, so none needs to run again for them.
                    synced.mark();
                    continue;
                }
                Ok(watcher::Event::Init) => continue,
                Err(error) => {
                    warn!(%error, kind, "workload status watch");
                    continue;
                }
            };
            let namespace = object.namespace().unwrap_or_default();
            let name = object.name_any();
            let now = if deleted { None } else { pods(&object) };
            let key: Key = (kind, namespace.as_str().into(), name.as_str().into());
            if ctx.pods.observe(key, now) && synced.is_set() {
                for config in targeting(&ctx, kind, &namespace, &name) {
                    send(config);
                }
            }
        }
    });
}

/// Spawns the watch of each kind in `scope`; `synced` holds one flag per kind, in
/// [`Workloads::synced`] too.
pub fn spawn(
    client: &Client,
    scope: Option<&str>,
    ctx: &Arc<Context>,
    synced: &[Synced; 3],
    send: impl Fn(ObjectRef<KafkaToolConfig>) + Clone + Send + 'static,
) {
    watch::<Deployment>(client, scope, ctx, &synced[0], pods::deployment, &send);
    watch::<StatefulSet>(client, scope, ctx, &synced[1], pods::stateful_set, &send);
    watch::<DaemonSet>(client, scope, ctx, &synced[2], pods::daemon_set, &send);
}
