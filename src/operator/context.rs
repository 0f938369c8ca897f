//! What every reconcile shares: the client, the caches (namespaces, GlobalClientDefaults, the
//! KafkaToolConfigs of each watched scope), the reverse index, metrics, the event recorder and the
//! leadership (a `watch` value) that gates every write. Built completely by [`Context::new`].

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use k8s_openapi::api::core::v1::Namespace;
use kube::core::NamespaceResourceScope;
use kube::core::PartialObjectMeta;
use kube::runtime::reflector::{ObjectRef, Store};
use kube::{Api, Client, Resource};
use tokio::sync::watch;

use crate::engine::globals::GlobalDefaults;
use crate::engine::render::HashKey;
use crate::engine::sources::{SourceKind, SourceRef};
use crate::operator::configs_seen::ConfigsSeen;
use crate::operator::crd::{GlobalClientDefaults, KafkaToolConfig};
use crate::operator::events::{EventPublisher, QueuedEvent};
use crate::operator::index::{ConfigId, ReverseIndex};
use crate::operator::metrics::Metrics;
use crate::operator::running::Running;
use crate::operator::synced::Synced;
use crate::operator::versions::ObjectVersions;
use crate::output::MANAGER;

pub use crate::operator::error::{BACKOFF_CAP, Error, UNAVAILABLE_BACKOFF_CAP};

/// What an evaluation read, to name the cause of a content change in history ("ConfigMap
/// base-client changed"); kept in `status.inputs` (see `inputs.rs`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Seen {
    pub generation: Option<i64>,
    /// resourceVersion of each referenced source (None: absent).
    pub sources: BTreeMap<SourceRef, Option<String>>,
    /// GlobalClientDefaults that selected the config, with their generation.
    pub globals: BTreeMap<String, Option<i64>>,
}

/// The ConfigMap and Secret version caches of one watched scope.
#[derive(Debug, Default)]
pub struct ScopeVersions {
    /// The namespace watched, or None for all namespaces.
    pub scope: Option<String>,
    pub config_maps: Arc<ObjectVersions>,
    pub secrets: Arc<ObjectVersions>,
}

/// The caches a reconcile reads, as `controller::run` builds them.
pub struct Caches {
    pub namespaces: Store<PartialObjectMeta<Namespace>>,
    pub globals: Store<GlobalClientDefaults>,
    /// One store per watched scope (all namespaces, or each `--watch-namespace`).
    pub configs: Vec<Store<KafkaToolConfig>>,
    /// resourceVersions of the ConfigMaps and Secrets of each scope (see `versions.rs`).
    pub versions: Vec<ScopeVersions>,
    /// Set once the namespace, GlobalClientDefaults, version, workload and pods caches have their
    /// first list. Reconciles wait for it: rendering before the namespaces and GlobalClientDefaults
    /// are full would change content, "unchanged" and "absent" need full version caches, a
    /// rollout needs the workloads that opted in, and "unchanged" with rollout targets needs the
    /// pods' numbers.
    pub synced: Synced,
    /// One flag per workload status watch (`sync_status.rs`); moved to [`Context::pods`].
    pub pods_synced: Vec<Synced>,
    /// Counts the KafkaToolConfig watch events the caches have applied: a reconcile whose status
    /// write found its cached config stale waits on it for the newer version (`reconcile`).
    pub configs_seen: ConfigsSeen,
}

pub struct Context {
    pub client: Client,
    pub metrics: Arc<Metrics>,
    /// Publishes Events, or queues them for `reconcile::deliver_events`.
    pub events: EventPublisher,
    pub caches: Caches,
    pub index: Mutex<ReverseIndex>,
    pub failures: Mutex<HashMap<ConfigId, u32>>,
    /// KafkaToolConfigs that do not decode, with the generation whose status says so (our own
    /// status write comes back as an event; it must not be reported again).
    pub invalid_reported: Mutex<HashMap<ConfigId, Option<i64>>>,
    /// Workloads by the configs their `kafkaconfig.dev/config` annotation names (`workloads.rs`).
    pub opt_ins: Mutex<crate::operator::opt_ins::OptIns>,
    /// Only the leader writes; everyone else keeps warm caches. Set by the campaign
    /// (`controller::run`).
    pub leader: watch::Receiver<bool>,
    /// Wakes the GlobalClientDefaults status loop after a reconcile: selection counts change
    /// when configs do, and a 5 s poll alone would leave them stale for a while.
    pub globals_status_wake: tokio::sync::Notify,
    /// How many reconciles run now (`running.rs`).
    pub running: Running,
    /// The installation's content-hash key (`hash_key.rs`); its public id is recorded in
    /// `status.inputs.hashKey` so that a new key re-renders configs the caches call unchanged.
    pub hash_key: HashKey,
    /// The pods of the rollout targets (`sync_status.rs`).
    pub pods: crate::operator::pods::Workloads,
}

/// The API of `K` in a watched scope: one namespace, or every namespace (`None`).
pub fn scoped<K>(client: &Client, scope: Option<&str>) -> Api<K>
where
    K: Resource<Scope = NamespaceResourceScope, DynamicType = ()>,
{
    match scope {
        Some(ns) => Api::namespaced(client.clone(), ns),
        None => Api::all(client.clone()),
    }
}

/// Locks a mutex even if a panicking reconcile poisoned it: the data are caches that the next
/// reconcile rewrites, so a poisoned value is still usable.
pub fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Context {
    /// Everything a reconcile shares, complete: nothing is set after this. `event_queue`: where
    /// reconciles hand their Events (none: each publishes its own).
    pub fn new(
        client: Client,
        metrics: Arc<Metrics>,
        mut caches: Caches,
        leader: watch::Receiver<bool>,
        instance: Option<String>,
        hash_key: HashKey,
        event_queue: Option<tokio::sync::mpsc::Sender<QueuedEvent>>,
    ) -> Self {
        let events = EventPublisher::new(client.clone(), MANAGER, instance, event_queue);
        let pods = crate::operator::pods::Workloads::new(std::mem::take(&mut caches.pods_synced));
        let running = Running::new(metrics.in_flight.clone());
        Context {
            client,
            metrics,
            events,
            caches,
            index: Mutex::default(),
            failures: Mutex::default(),
            invalid_reported: Mutex::default(),
            opt_ins: Mutex::default(),
            leader,
            globals_status_wake: tokio::sync::Notify::new(),
            running,
            hash_key,
            pods,
        }
    }

    pub fn is_leader(&self) -> bool {
        *self.leader.borrow()
    }

    /// Labels of a namespace from the cache (empty when unknown).
    pub fn namespace_labels(&self, namespace: &str) -> BTreeMap<String, String> {
        self.caches
            .namespaces
            .get(&ObjectRef::new(namespace))
            .and_then(|ns| ns.metadata.labels.clone())
            .unwrap_or_default()
    }

    /// Every GlobalClientDefaults in the cache, as the engine wants them.
    pub fn global_defaults(&self) -> Vec<GlobalDefaults> {
        self.caches
            .globals
            .state()
            .iter()
            .filter_map(|g| {
                Some(GlobalDefaults {
                    name: g.metadata.name.clone()?,
                    spec: g.spec.config.clone(),
                })
            })
            .collect()
    }

    /// The version cache of `kind` that covers `namespace`.
    pub fn versions(&self, kind: SourceKind, namespace: &str) -> Option<&ObjectVersions> {
        let scope = self
            .caches
            .versions
            .iter()
            .find(|v| v.scope.as_deref().is_none_or(|s| s == namespace))?;
        Some(match kind {
            SourceKind::ConfigMap => &scope.config_maps,
            SourceKind::Secret => &scope.secrets,
        })
    }

    /// The cache's current version of the config `id` (`None`: not cached).
    pub fn cached_config(&self, id: &ConfigId) -> Option<Arc<KafkaToolConfig>> {
        let reference = id.object_ref();
        self.caches
            .configs
            .iter()
            .find_map(|store| store.get(&reference))
    }

    /// Every cached KafkaToolConfig of every scope.
    pub fn all_configs(&self) -> Vec<Arc<KafkaToolConfig>> {
        self.caches.configs.iter().flat_map(Store::state).collect()
    }

    /// Exponential backoff with jitter for the n-th consecutive failure: 1 s, 2 s, 4 s, … up to
    /// `cap` (see [`Error::backoff_cap`]), ±25 %, so that a failing API server is not hammered in
    /// lockstep.
    pub fn backoff(&self, key: &ConfigId, cap: Duration) -> Duration {
        let attempt = {
            let mut failures = lock(&self.failures);
            let n = failures.entry(key.clone()).or_insert(0);
            *n = n.saturating_add(1);
            *n
        };
        backoff_for(attempt, jitter_seed(), cap)
    }

    /// A config is gone (a Delete event): its edges in the reverse index, its failure count and
    /// its reported-invalid generation go with it.
    pub fn forget_config(&self, key: &ConfigId) {
        lock(&self.index).forget(key);
        lock(&self.failures).remove(key);
        lock(&self.invalid_reported).remove(key);
    }

    /// After a (re)list has filled the stores: forgets the configs no store has any more (deleted
    /// while the watch was down), as [`Context::forget_config`] does for a Delete event.
    pub fn forget_gone_configs(&self) {
        let cached = |id: &ConfigId| self.cached_config(id).is_some();
        lock(&self.index).retain(cached);
        lock(&self.failures).retain(|key, _| cached(key));
        lock(&self.invalid_reported).retain(|key, _| cached(key));
    }

    pub fn succeeded(&self, key: &ConfigId) {
        lock(&self.failures).remove(key);
    }

    /// After a relist of `store`'s watch (it broke: the API server restarted, say), the configs
    /// of `store` whose last reconcile failed, to be retried now, their backoff started again.
    /// Their failures were most likely the outage itself, and the backoff that grew meanwhile
    /// (up to 5 minutes) would otherwise keep them waiting long after the API server is back:
    /// a relist passes only configs whose generation changed.
    pub fn retry_failed(&self, store: &Store<KafkaToolConfig>) -> Vec<ObjectRef<KafkaToolConfig>> {
        lock(&self.failures)
            .extract_if(|id, _| store.get(&id.object_ref()).is_some())
            .map(|(id, _)| id.object_ref())
            .collect()
    }
}

/// A cheap seed for jitter; cryptographic quality is not needed.
fn jitter_seed() -> u64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    u64::from(nanos)
        .wrapping_mul(6364136223846793005)
        .rotate_left(17)
}

pub fn backoff_for(attempt: u32, seed: u64, cap: Duration) -> Duration {
    let exponent = attempt.saturating_sub(1).min(9);
    let cap_ms = u64::try_from(cap.as_millis()).unwrap_or(u64::MAX);
    let base_ms = (1000u64 << exponent).min(cap_ms);
    // seed % 501 in [0, 500] → factor in [0.75, 1.25]
    let permille = 750 + (seed % 501);
    Duration::from_millis(base_ms * permille / 1000)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_grows_exponentially_and_is_capped() {
        let mid = u64::MAX / 2 - (u64::MAX / 2) % 501 + 250; // factor exactly 1.0
        assert_eq!(backoff_for(1, mid, BACKOFF_CAP), Duration::from_secs(1));
        assert_eq!(backoff_for(2, mid, BACKOFF_CAP), Duration::from_secs(2));
        assert_eq!(backoff_for(5, mid, BACKOFF_CAP), Duration::from_secs(16));
        assert_eq!(backoff_for(30, mid, BACKOFF_CAP), Duration::from_secs(300));
        assert_eq!(
            backoff_for(5, mid, UNAVAILABLE_BACKOFF_CAP),
            Duration::from_secs(16)
        );
        assert_eq!(
            backoff_for(6, mid, UNAVAILABLE_BACKOFF_CAP),
            Duration::from_secs(30)
        );
        assert_eq!(
            backoff_for(30, mid, UNAVAILABLE_BACKOFF_CAP),
            Duration::from_secs(30)
        );
    }

    #[test]
    fn backoff_jitter_stays_within_a_quarter() {
        for seed in [0, 1, 250, 500, 12345, u64::MAX] {
            let d = backoff_for(3, seed, BACKOFF_CAP);
            assert!(
                d >= Duration::from_millis(3000) && d <= Duration::from_millis(5000),
                "{d:?}"
            );
        }
    }
}
