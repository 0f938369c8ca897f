//! Which pods run the current configuration: per rollout target, the hash of its pod template and
//! the `updated/ready/total` pods its own status reports, and the config's `Synced` condition
//! (`True` once every target's pods all run the current hash). Not part of `Ready`: a rollout in
//! progress is not a failure of the config, and health checks must not wait for pods.
//!
//! A watch of each workload kind keeps, for the workloads whose template carries our hash
//! annotation only, those few numbers (no object is cached), and re-reconciles the configs that
//! target a workload when they change: a pod becoming ready updates the status.

use std::collections::HashMap;
use std::fmt::Debug;
use std::sync::{Arc, Mutex};

use futures::StreamExt;
use k8s_openapi::api::apps::v1::{DaemonSet, Deployment, StatefulSet};
use k8s_openapi::api::core::v1::PodTemplateSpec;
use kube::core::NamespaceResourceScope;
use kube::runtime::WatchStreamExt;
use kube::runtime::reflector::ObjectRef;
use kube::runtime::watcher::{self, watcher};
use kube::{Api, Client, Resource, ResourceExt};
use serde::de::DeserializeOwned;
use tracing::warn;

use crate::operator::context::{Context, lock};
use crate::operator::crd::KafkaToolConfig;
use crate::operator::synced::Synced;
use crate::output::HASH_ANNOTATION;
use crate::status::{self, ContentHash, KafkaToolConfigStatus};

/// The condition: every target's pods run the current hash.
pub const SYNCED: &str = "Synced";

/// What a workload's own status says about its pods.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pods {
    /// The hash annotation on its pod template.
    hash: ContentHash,
    /// Pods with the current template.
    pub updated: i32,
    pub ready: i32,
    /// Pods wanted (`spec.replicas`; a DaemonSet's scheduled nodes).
    pub total: i32,
    /// Pods that exist, old ones included (`status.replicas`).
    current: i32,
    /// Its controller has seen the latest template (`observedGeneration` = `generation`).
    observed: bool,
}

impl Pods {
    fn all_run(&self, hash: &str) -> bool {
        self.observed
            && self.hash.is(hash)
            && self.updated >= self.total
            && self.ready >= self.total
            && self.current <= self.total
    }
}

/// The kinds watched, as `status.rollout[].kind` names them.
const KINDS: [&str; 3] = ["Deployment", "StatefulSet", "DaemonSet"];

/// (kind, namespace, name) of a workload.
type Key = (&'static str, Box<str>, Box<str>);

/// The pods of every workload carrying our hash annotation, per watched kind.
#[derive(Debug, Default)]
pub struct Workloads {
    pods: Mutex<HashMap<Key, Pods>>,
    /// Every kind's watch has its first list: before, "not seen" does not mean "absent".
    pub synced: Vec<Synced>,
}

impl Workloads {
    fn get(&self, kind: &str, namespace: &str, name: &str) -> Option<Pods> {
        let kind = KINDS.iter().find(|k| **k == kind)?;
        lock(&self.pods)
            .get(&(*kind, namespace.into(), name.into()))
            .cloned()
    }

    /// Records a workload's pods; whether that changed anything.
    fn observe(&self, key: Key, pods: Option<Pods>) -> bool {
        let mut map = lock(&self.pods);
        match pods {
            Some(pods) => map.insert(key, pods.clone()).as_ref() != Some(&pods),
            None => map.remove(&key).is_some(),
        }
    }

    fn all_synced(&self) -> bool {
        self.synced.iter().all(Synced::is_set)
    }
}

/// Fills each `status.rollout` entry's pod counts and sets `Synced` (removed without targets).
/// Before the workload watches have their first list, the previous counts and condition stay.
pub fn record(
    workloads: &Workloads,
    namespace: &str,
    next: &mut KafkaToolConfigStatus,
    previous: Option<&KafkaToolConfigStatus>,
    now: &str,
) {
    let previous_conditions = previous.map(|p| p.conditions.as_slice()).unwrap_or(&[]);
    if next.rollout.is_empty() {
        next.conditions.retain(|c| c.type_ != SYNCED);
        return;
    }
    if !workloads.all_synced() {
        if let Some(kept) = previous_conditions.iter().find(|c| c.type_ == SYNCED) {
            next.conditions.retain(|c| c.type_ != SYNCED);
            next.conditions.push(kept.clone());
        }
        return;
    }
    let hash = next.config_hash.clone().unwrap_or_default();
    let mut behind = Vec::new();
    for target in &mut next.rollout {
        let pods = workloads.get(&target.kind, namespace, &target.name);
        target.updated = pods.as_ref().map(|p| p.updated);
        target.ready = pods.as_ref().map(|p| p.ready);
        target.total = pods.as_ref().map(|p| p.total);
        match pods {
            Some(pods) if pods.all_run(&hash) => {}
            Some(pods) => behind.push(format!(
                "{} {}: {}/{} updated, {}/{} ready{}",
                target.kind,
                target.name,
                pods.updated,
                pods.total,
                pods.ready,
                pods.total,
                if pods.hash.is(&hash) {
                    ""
                } else {
                    " (template has another hash)"
                }
            )),
            None => behind.push(format!(
                "{} {}: not found, or its template does not carry the hash",
                target.kind, target.name
            )),
        }
    }
    let (value, reason, message) = if behind.is_empty() {
        (
            "True",
            "AllPodsCurrent",
            format!(
                "the pods of all {} targets run the current hash",
                next.rollout.len()
            ),
        )
    } else {
        ("False", "PodsBehind", behind.join("; "))
    };
    status::set_condition(
        &mut next.conditions,
        previous_conditions,
        SYNCED,
        value,
        reason,
        message,
        next.observed_generation,
        now,
    );
}

fn pods_of(
    template: Option<&PodTemplateSpec>,
    generation: Option<i64>,
    observed: Option<i64>,
    [updated, ready, total, current]: [Option<i32>; 4],
) -> Option<Pods> {
    let hash = template?
        .metadata
        .as_ref()?
        .annotations
        .as_ref()?
        .get(HASH_ANNOTATION)?;
    Some(Pods {
        hash: ContentHash::new(hash),
        updated: updated.unwrap_or(0),
        ready: ready.unwrap_or(0),
        total: total.unwrap_or(1),
        current: current.unwrap_or(0),
        observed: observed.is_some() && observed >= generation,
    })
}

fn deployment(d: &Deployment) -> Option<Pods> {
    let s = d.status.clone().unwrap_or_default();
    let spec = d.spec.as_ref()?;
    pods_of(
        Some(&spec.template),
        d.metadata.generation,
        s.observed_generation,
        [
            s.updated_replicas,
            s.ready_replicas,
            Some(spec.replicas.unwrap_or(1)),
            s.replicas,
        ],
    )
}

fn stateful_set(d: &StatefulSet) -> Option<Pods> {
    let s = d.status.clone().unwrap_or_default();
    let spec = d.spec.as_ref()?;
    pods_of(
        Some(&spec.template),
        d.metadata.generation,
        s.observed_generation,
        [
            s.updated_replicas,
            s.ready_replicas,
            Some(spec.replicas.unwrap_or(1)),
            Some(s.replicas),
        ],
    )
}

fn daemon_set(d: &DaemonSet) -> Option<Pods> {
    let s = d.status.clone().unwrap_or_default();
    pods_of(
        d.spec.as_ref().map(|s| &s.template),
        d.metadata.generation,
        s.observed_generation,
        [
            s.updated_number_scheduled,
            Some(s.number_ready),
            Some(s.desired_number_scheduled),
            Some(s.current_number_scheduled),
        ],
    )
}

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

/// The configs with a rollout target of `kind`.
fn with_targets(ctx: &Context, kind: &str) -> Vec<ObjectRef<KafkaToolConfig>> {
    ctx.all_configs()
        .iter()
        .filter(|c| {
            c.status
                .as_ref()
                .is_some_and(|s| s.rollout.iter().any(|r| r.kind == kind))
        })
        .map(|c| ObjectRef::from_obj(&**c))
        .collect()
}

/// Watches one kind in `scope` (all namespaces when `None`).
fn watch<K>(
    client: &Client,
    scope: Option<&str>,
    ctx: Arc<Context>,
    synced: Synced,
    pods: fn(&K) -> Option<Pods>,
    send: impl Fn(ObjectRef<KafkaToolConfig>) + Send + 'static,
) where
    K: Resource<DynamicType = (), Scope = NamespaceResourceScope>
        + Clone
        + DeserializeOwned
        + Debug
        + Send
        + 'static,
{
    let api: Api<K> = match scope {
        Some(namespace) => Api::namespaced(client.clone(), namespace),
        None => Api::all(client.clone()),
    };
    let Some(kind) = KINDS.iter().copied().find(|k| *k == K::kind(&())) else {
        return;
    };
    tokio::spawn(async move {
        let mut events = std::pin::pin!(watcher(api, watcher::Config::default()).default_backoff());
        while let Some(event) = events.next().await {
            let (object, deleted) = match event {
                Ok(watcher::Event::Apply(o) | watcher::Event::InitApply(o)) => (o, false),
                Ok(watcher::Event::Delete(o)) => (o, true),
                Ok(watcher::Event::InitDone) => {
                    // Reconciles before the first list kept the previous counts: refresh every
                    // config with a target of this kind once (one pass over the configs).
                    if !synced.is_set() {
                        synced.mark();
                        for config in with_targets(&ctx, kind) {
                            send(config);
                        }
                    }
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
            if ctx.workloads.observe(key, now) && synced.is_set() {
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
    watch::<Deployment>(
        client,
        scope,
        ctx.clone(),
        synced[0].clone(),
        deployment,
        send.clone(),
    );
    watch::<StatefulSet>(
        client,
        scope,
        ctx.clone(),
        synced[1].clone(),
        stateful_set,
        send.clone(),
    );
    watch::<DaemonSet>(
        client,
        scope,
        ctx.clone(),
        synced[2].clone(),
        daemon_set,
        send,
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::status::RolloutStatus;

    const HASH: &str = "hmac-sha256:0123456789abcdef";

    fn workloads(pods: Option<Pods>) -> Workloads {
        let flag = Synced::default();
        flag.mark();
        let workloads = Workloads {
            synced: vec![flag],
            ..Workloads::default()
        };
        workloads.observe(("Deployment", "team-a".into(), "api".into()), pods);
        workloads
    }

    fn status() -> KafkaToolConfigStatus {
        KafkaToolConfigStatus {
            config_hash: Some(HASH.into()),
            rollout: vec![RolloutStatus {
                kind: "Deployment".into(),
                name: "api".into(),
                hash: Some(HASH.into()),
                updated: None,
                ready: None,
                total: None,
            }],
            ..KafkaToolConfigStatus::default()
        }
    }

    fn pods(updated: i32, ready: i32) -> Pods {
        Pods {
            hash: ContentHash::new(HASH),
            updated,
            ready,
            total: 3,
            current: 3,
            observed: true,
        }
    }

    fn synced(status: &KafkaToolConfigStatus) -> (String, String) {
        let c = status.condition(SYNCED).expect("a Synced condition");
        (c.status.clone(), c.message.clone())
    }

    #[test]
    fn synced_once_every_pod_runs_the_current_hash() {
        let mut next = status();
        record(&workloads(Some(pods(0, 0))), "team-a", &mut next, None, "t");
        assert_eq!(
            synced(&next),
            (
                "False".into(),
                "Deployment api: 0/3 updated, 0/3 ready".into()
            )
        );
        assert_eq!(next.rollout[0].updated, Some(0));
        let mut after = status();
        record(
            &workloads(Some(pods(3, 3))),
            "team-a",
            &mut after,
            Some(&next),
            "u",
        );
        assert_eq!(synced(&after).0, "True");
        assert_eq!(after.rollout[0].ready, Some(3));
        // Updated but not ready yet, or unobserved: not synced.
        let mut next = status();
        record(&workloads(Some(pods(3, 2))), "team-a", &mut next, None, "t");
        assert_eq!(synced(&next).0, "False");
        let unobserved = Pods {
            observed: false,
            ..pods(3, 3)
        };
        record(&workloads(Some(unobserved)), "team-a", &mut next, None, "t");
        assert_eq!(synced(&next).0, "False");
        // Not seen at all.
        record(&workloads(None), "team-a", &mut next, None, "t");
        assert!(synced(&next).1.contains("not found"));
    }

    #[test]
    fn no_targets_no_condition_and_before_the_first_list_the_previous_one_stays() {
        let mut previous = status();
        record(
            &workloads(Some(pods(3, 3))),
            "team-a",
            &mut previous,
            None,
            "t",
        );
        let mut next = KafkaToolConfigStatus {
            conditions: previous.conditions.clone(),
            ..KafkaToolConfigStatus::default()
        };
        record(&workloads(None), "team-a", &mut next, Some(&previous), "u");
        assert!(next.condition(SYNCED).is_none());
        let unsynced = Workloads::default();
        let mut next = status();
        record(
            &Workloads {
                synced: vec![Synced::default()],
                ..unsynced
            },
            "team-a",
            &mut next,
            Some(&previous),
            "u",
        );
        assert_eq!(next.condition(SYNCED), previous.condition(SYNCED));
    }
}
