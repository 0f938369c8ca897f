//! The pods of the rollout targets, as their own status reports them, and the config's `Synced`
//! condition built from them (`sync_status.rs` keeps the numbers current from a watch). Not part
//! of `Ready`: a rollout in progress is not a failure of the config, and health checks must not
//! wait for pods.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, PoisonError};

use k8s_openapi::api::apps::v1::{DaemonSet, Deployment, StatefulSet};
use k8s_openapi::api::core::v1::PodTemplateSpec;

use crate::operator::ownership::hash_of;
use crate::operator::synced::Synced;
use crate::status::{self, ContentHash, KafkaToolConfigStatus};

/// A map of small numbers that the next event rewrites: usable after a panic elsewhere.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

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
pub const KINDS: [&str; 3] = ["Deployment", "StatefulSet", "DaemonSet"];

/// (kind, namespace, name) of a workload.
pub type Key = (&'static str, Box<str>, Box<str>);

/// The pods of every workload carrying our hash annotation, per watched kind.
#[derive(Debug, Default)]
pub struct Workloads {
    pods: Mutex<HashMap<Key, Pods>>,
    /// Every kind's watch has its first list: before, "not seen" does not mean "absent".
    pub synced: Vec<Synced>,
}

impl Workloads {
    /// `synced`: one flag per kind per scope.
    pub fn new(synced: Vec<Synced>) -> Self {
        Workloads {
            pods: Mutex::default(),
            synced,
        }
    }

    fn get(&self, kind: &str, namespace: &str, name: &str) -> Option<Pods> {
        let kind = KINDS.iter().find(|k| **k == kind)?;
        lock(&self.pods)
            .get(&(*kind, namespace.into(), name.into()))
            .cloned()
    }

    /// Records a workload's pods; whether that changed anything.
    pub fn observe(&self, key: Key, pods: Option<Pods>) -> bool {
        let mut map = lock(&self.pods);
        match pods {
            Some(pods) => map.insert(key, pods.clone()).as_ref() != Some(&pods),
            None => map.remove(&key).is_some(),
        }
    }

    /// Whether the workload's pod template carries `hash`, as its watch last saw it.
    pub fn template_carries(&self, kind: &str, namespace: &str, name: &str, hash: &str) -> bool {
        self.get(kind, namespace, name)
            .is_some_and(|pods| pods.hash.is(hash))
    }

    pub fn all_synced(&self) -> bool {
        self.synced.iter().all(Synced::is_set)
    }
}

/// Fills each `status.rollout` entry's pod counts and sets `Synced` (removed without targets).
/// Only Deployments, StatefulSets and DaemonSets count (an Argo Rollout has no counts).
/// Before the workload watches have their first list, the previous counts and condition stay.
pub fn record(
    workloads: &Workloads,
    namespace: &str,
    next: &mut KafkaToolConfigStatus,
    previous: Option<&KafkaToolConfigStatus>,
    now: &str,
) {
    let previous_conditions = previous.map(|p| p.conditions.as_slice()).unwrap_or(&[]);
    // Argo Rollouts' `Rollout` has no watch of its pods here: it does not count.
    if !next
        .rollout
        .iter()
        .any(|t| KINDS.contains(&t.kind.as_str()))
    {
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
    let mut counted = 0;
    for target in next.rollout.iter_mut() {
        if !KINDS.contains(&target.kind.as_str()) {
            continue;
        }
        counted += 1;
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
            format!("the pods of all {counted} targets run the current hash"),
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
    let hash = hash_of(template?.metadata.as_ref()?)?;
    Some(Pods {
        hash: ContentHash::new(&hash),
        updated: updated.unwrap_or(0),
        ready: ready.unwrap_or(0),
        total: total.unwrap_or(1),
        current: current.unwrap_or(0),
        observed: observed.is_some() && observed >= generation,
    })
}

pub fn deployment(d: &Deployment) -> Option<Pods> {
    // Borrowed: this runs on every watch event of every workload; a clone of the status did not
    // need to happen.
    let default = Default::default();
    let s = d.status.as_ref().unwrap_or(&default);
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

pub fn stateful_set(d: &StatefulSet) -> Option<Pods> {
    let default = Default::default();
    let s = d.status.as_ref().unwrap_or(&default);
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

pub fn daemon_set(d: &DaemonSet) -> Option<Pods> {
    let default = Default::default();
    let s = d.status.as_ref().unwrap_or(&default);
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
                via: None,
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
