//! Workloads as rollout targets, watched by metadata only:
//!
//! - a Deployment, StatefulSet or DaemonSet annotated `kafkaconfig.dev/config: <name>[,…]`
//!   (Reloader style) is a rollout target of each named KafkaToolConfig of its namespace;
//! - a workload that appears (created, or re-created after a delete) is handed at once to the
//!   configs that name it, by annotation or in `rollout.targets`, so its template is stamped
//!   right after creation and never by a surprise restart at the next resync.
//!
//! Only creation, deletion and a change of the annotation trigger anything: a workload's status
//! updates (every pod that starts) come through the watch too, and are dropped here.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::fmt::Debug;
use std::sync::Arc;

use futures::StreamExt;
use k8s_openapi::api::apps::v1::{DaemonSet, Deployment, StatefulSet};
use kube::core::{NamespaceResourceScope, PartialObjectMeta};
use kube::runtime::WatchStreamExt;
use kube::runtime::reflector::ObjectRef;
use kube::runtime::watcher::{self, watcher};
use kube::{Api, Client, Resource, ResourceExt};
use serde::de::DeserializeOwned;
use tracing::{debug, warn};

use crate::engine::spec::RolloutKind;
use crate::operator::context::{Context, lock};
use crate::operator::crd::KafkaToolConfig;
use crate::operator::synced::Synced;

/// The opt-in annotation on a workload: comma-separated KafkaToolConfig names, same namespace.
pub const CONFIG_ANNOTATION: &str = "kafkaconfig.dev/config";

/// At most this many names are read from one annotation (a hostile value cannot make the index
/// grow without bound).
const MAX_NAMES: usize = 16;

/// The workload kinds watched for the annotation (an Argo Rollout is a `rollout.targets` kind
/// only: watching a CRD that may not be installed would hold readiness).
pub const WATCHED_KINDS: [RolloutKind; 3] = [
    RolloutKind::Deployment,
    RolloutKind::StatefulSet,
    RolloutKind::DaemonSet,
];

/// The config names of an annotation value: trimmed, each a valid object name (DNS subdomain,
/// at most 253 characters), duplicates and the rest dropped.
pub fn parse_annotation(value: &str) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for name in value.split(',').map(str::trim) {
        let valid = !name.is_empty()
            && name.len() <= 253
            && name
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'.')
            && name.starts_with(|c: char| c.is_ascii_alphanumeric())
            && name.ends_with(|c: char| c.is_ascii_alphanumeric());
        if valid && !names.iter().any(|n| n == name) {
            names.push(name.to_string());
        }
        if names.len() == MAX_NAMES {
            break;
        }
    }
    names
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
struct WorkloadKey {
    kind: RolloutKind,
    namespace: String,
    name: String,
}

/// Which workloads exist and which configs their annotation names.
#[derive(Debug, Default)]
pub struct OptIns {
    workloads: BTreeMap<WorkloadKey, Vec<String>>,
}

impl OptIns {
    /// The workloads whose annotation names `config` in `namespace`.
    pub fn targets(&self, namespace: &str, config: &str) -> Vec<(RolloutKind, String)> {
        self.workloads
            .iter()
            .filter(|(key, configs)| {
                key.namespace == namespace && configs.iter().any(|c| c == config)
            })
            .map(|(key, _)| (key.kind, key.name.clone()))
            .collect()
    }

    /// Records a workload as it is now (`None`: deleted). Returns whether it appeared or went
    /// away, and the configs its annotation named before or names now when that changed too.
    fn observe(&mut self, key: WorkloadKey, names: Option<Vec<String>>) -> (bool, Vec<String>) {
        let before = match &names {
            Some(names) => self.workloads.insert(key, names.clone()),
            None => self.workloads.remove(&key),
        };
        // Some/None differ exactly when the workload appeared or went away.
        let appeared_or_gone = before.is_none() != names.is_none();
        if before == names {
            return (false, Vec::new());
        }
        let affected: BTreeSet<String> = before.into_iter().chain(names).flatten().collect();
        (appeared_or_gone, affected.into_iter().collect())
    }

    /// Forgets the workloads of `kind` (in `scope`, or everywhere) a relist did not list.
    fn retain_listed(
        &mut self,
        kind: RolloutKind,
        scope: Option<&str>,
        listed: &HashSet<WorkloadKey>,
    ) -> Vec<WorkloadKey> {
        let gone: Vec<WorkloadKey> = self
            .workloads
            .keys()
            .filter(|k| k.kind == kind && scope.is_none_or(|s| s == k.namespace))
            .filter(|k| !listed.contains(*k))
            .cloned()
            .collect();
        for key in &gone {
            self.workloads.remove(key);
        }
        gone
    }
}

/// The configs that name a workload: its annotation's and those with it in `rollout.targets`.
fn named_by(
    ctx: &Context,
    key: &WorkloadKey,
    annotated: Vec<String>,
) -> Vec<ObjectRef<KafkaToolConfig>> {
    let mut configs: BTreeSet<String> = annotated.into_iter().collect();
    for config in ctx.all_configs() {
        if config.namespace().as_deref() != Some(key.namespace.as_str()) {
            continue;
        }
        let names_it = config.spec.config.rollout.as_ref().is_some_and(|r| {
            r.targets
                .iter()
                .any(|t| t.kind == key.kind && t.name == key.name)
        });
        if names_it {
            configs.insert(config.name_any());
        }
    }
    configs
        .into_iter()
        .map(|name| ObjectRef::new(&name).within(&key.namespace))
        .collect()
}

/// Spawns the metadata watches of every watched kind in `scope`; returns their sync flags
/// (reconciles wait for them, so a config never reconciles without its opt-ins).
pub fn spawn(
    client: &Client,
    scope: Option<&str>,
    ctx: &Arc<Context>,
    send: impl Fn(ObjectRef<KafkaToolConfig>) + Clone + Send + Sync + 'static,
    flags: &[Synced],
) {
    let mut flags = flags.iter();
    for kind in WATCHED_KINDS {
        let Some(flag) = flags.next().cloned() else {
            return;
        };
        let scope = scope.map(str::to_string);
        let (client, ctx, send) = (client.clone(), ctx.clone(), send.clone());
        match kind {
            RolloutKind::Deployment => {
                tokio::spawn(watch::<Deployment>(client, scope, kind, ctx, send, flag));
            }
            RolloutKind::StatefulSet => {
                tokio::spawn(watch::<StatefulSet>(client, scope, kind, ctx, send, flag));
            }
            RolloutKind::DaemonSet => {
                tokio::spawn(watch::<DaemonSet>(client, scope, kind, ctx, send, flag));
            }
            RolloutKind::Rollout => {}
        }
    }
}

async fn watch<K>(
    client: Client,
    scope: Option<String>,
    kind: RolloutKind,
    ctx: Arc<Context>,
    send: impl Fn(ObjectRef<KafkaToolConfig>),
    synced: Synced,
) where
    K: Resource<DynamicType = (), Scope = NamespaceResourceScope>
        + Clone
        + DeserializeOwned
        + Debug
        + Send
        + 'static,
{
    // Metadata only: a `PartialObjectMeta` API makes metadata-only list and watch requests.
    let api: Api<PartialObjectMeta<K>> = match &scope {
        Some(namespace) => Api::namespaced(client, namespace),
        None => Api::all(client),
    };
    let events = watcher(api, watcher::Config::default()).default_backoff();
    let mut events = std::pin::pin!(events);
    let mut listed: HashSet<WorkloadKey> = HashSet::new();
    while let Some(event) = events.next().await {
        let event: watcher::Event<PartialObjectMeta<K>> = match event {
            Ok(event) => event,
            Err(error) => {
                warn!(%error, ?kind, "workload watch");
                continue;
            }
        };
        let (object, deleted, initial) = match event {
            watcher::Event::Init => {
                listed.clear();
                continue;
            }
            watcher::Event::InitDone => {
                // Deleted while the watch was down: the configs that named it hear of it.
                let gone = lock(&ctx.opt_ins).retain_listed(kind, scope.as_deref(), &listed);
                for key in gone {
                    for config in named_by(&ctx, &key, Vec::new()) {
                        send(config);
                    }
                }
                synced.mark();
                continue;
            }
            watcher::Event::InitApply(o) => (o, false, true),
            watcher::Event::Apply(o) => (o, false, false),
            watcher::Event::Delete(o) => (o, true, false),
        };
        let key = WorkloadKey {
            kind,
            namespace: object.namespace().unwrap_or_default(),
            name: object.name_any(),
        };
        let names = (!deleted).then(|| {
            object
                .annotations()
                .get(CONFIG_ANNOTATION)
                .map(|v| parse_annotation(v))
                .unwrap_or_default()
        });
        if initial {
            listed.insert(key.clone());
        }
        let (appeared_or_gone, annotated) = lock(&ctx.opt_ins).observe(key.clone(), names);
        // The initial list is not a change: every config reconciles after a start anyway.
        if initial || (!appeared_or_gone && annotated.is_empty()) {
            continue;
        }
        let configs = if appeared_or_gone {
            named_by(&ctx, &key, annotated)
        } else {
            annotated
                .into_iter()
                .map(|name| ObjectRef::new(&name).within(&key.namespace))
                .collect()
        };
        debug!(?kind, workload = %key.name, namespace = %key.namespace, count = configs.len(), "workload appeared, went away or changed its opt-in");
        for config in configs {
            send(config);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(name: &str) -> WorkloadKey {
        WorkloadKey {
            kind: RolloutKind::Deployment,
            namespace: "team-a".into(),
            name: name.into(),
        }
    }

    #[test]
    fn the_annotation_lists_valid_names_once_and_drops_the_rest() {
        assert_eq!(
            parse_annotation(" orders , payments,orders,,Bad_Name,-x,a.b "),
            ["orders", "payments", "a.b"]
        );
        let many: Vec<String> = (0..40).map(|i| format!("c{i}")).collect();
        assert_eq!(parse_annotation(&many.join(",")).len(), MAX_NAMES);
        assert!(parse_annotation(&"a".repeat(254)).is_empty());
    }

    #[test]
    fn a_workload_appearing_or_changing_its_annotation_names_the_configs_to_reconcile() {
        let mut opt_ins = OptIns::default();
        // Created with the annotation: appeared, and names orders.
        assert_eq!(
            opt_ins.observe(key("api"), Some(vec!["orders".into()])),
            (true, vec!["orders".to_string()])
        );
        assert_eq!(
            opt_ins.targets("team-a", "orders"),
            [(RolloutKind::Deployment, "api".to_string())]
        );
        assert!(opt_ins.targets("team-b", "orders").is_empty());
        // A status update (same annotation): nothing to do.
        assert_eq!(
            opt_ins.observe(key("api"), Some(vec!["orders".into()])),
            (false, vec![])
        );
        // Moved to another config: both hear of it.
        assert_eq!(
            opt_ins.observe(key("api"), Some(vec!["payments".into()])),
            (false, vec!["orders".to_string(), "payments".to_string()])
        );
        // Deleted: gone, the config it named hears of it.
        assert_eq!(
            opt_ins.observe(key("api"), None),
            (true, vec!["payments".to_string()])
        );
        // A workload without the annotation appears: only `rollout.targets` can name it.
        assert_eq!(opt_ins.observe(key("plain"), Some(vec![])), (true, vec![]));
    }

    #[test]
    fn a_relist_forgets_the_workloads_it_no_longer_lists_in_its_scope_only() {
        let mut opt_ins = OptIns::default();
        opt_ins.observe(key("kept"), Some(vec!["orders".into()]));
        opt_ins.observe(key("gone"), Some(vec!["orders".into()]));
        let mut elsewhere = key("other-ns");
        elsewhere.namespace = "team-b".into();
        opt_ins.observe(elsewhere.clone(), Some(vec!["orders".into()]));
        let listed: HashSet<WorkloadKey> = [key("kept")].into();
        let gone = opt_ins.retain_listed(RolloutKind::Deployment, Some("team-a"), &listed);
        assert_eq!(gone, vec![key("gone")]);
        assert_eq!(opt_ins.targets("team-b", "orders").len(), 1);
    }
}
