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

use std::collections::{BTreeSet, HashSet};
use std::sync::Arc;

use futures::StreamExt;
use kube::api::DynamicObject;
use kube::core::PartialObjectMeta;
use kube::runtime::WatchStreamExt;
use kube::runtime::reflector::ObjectRef;
use kube::runtime::watcher::{self, watcher};
use kube::{Api, Client, ResourceExt};
use tracing::{debug, warn};

use crate::engine::spec::RolloutKind;
use crate::operator::apply::api_resource;
use crate::operator::context::{Context, lock};
use crate::operator::crd::KafkaToolConfig;
use crate::operator::opt_ins::WorkloadKey;
use crate::operator::synced::Synced;

/// The opt-in annotation on a workload: comma-separated KafkaToolConfig names, same namespace.
pub const CONFIG_ANNOTATION: &str = "kafkaconfig.dev/config";

/// At most this many names are read from one annotation (a hostile value cannot make the index
/// grow without bound).
const MAX_NAMES: usize = 16;

/// The workload kinds always watched; Argo Rollouts' `Rollout` too when its CRD is served at
/// start-up ([`watched_kinds`]).
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

/// The kinds to watch: Deployments, StatefulSets, DaemonSets and, when the API server serves
/// Argo Rollouts' CRD at start-up, Rollouts.
pub async fn watched_kinds(client: &Client) -> Vec<RolloutKind> {
    let mut kinds = WATCHED_KINDS.to_vec();
    // Discovery, which every authenticated identity may read (a list could be forbidden in a
    // namespaced installation).
    let served = client
        .list_api_group_resources("argoproj.io/v1alpha1")
        .await
        .is_ok_and(|list| list.resources.iter().any(|r| r.name == "rollouts"));
    if served {
        kinds.push(RolloutKind::Rollout);
    }
    kinds
}

/// Spawns the metadata watch of each kind in `scope`, each with its sync flag (reconciles wait
/// for them, so a config never reconciles without its opt-ins).
pub fn spawn(
    client: &Client,
    scope: Option<&str>,
    ctx: &Arc<Context>,
    send: impl Fn(ObjectRef<KafkaToolConfig>) + Clone + Send + Sync + 'static,
    kinds: &[(RolloutKind, Synced)],
) {
    for (kind, flag) in kinds {
        // Metadata only: `PartialObjectMeta` makes metadata-only list and watch requests.
        let resource = api_resource(*kind);
        let api: Api<PartialObjectMeta<DynamicObject>> = match scope {
            Some(namespace) => Api::namespaced_with(client.clone(), namespace, &resource),
            None => Api::all_with(client.clone(), &resource),
        };
        let scope = scope.map(str::to_string);
        let (ctx, send, flag) = (ctx.clone(), send.clone(), flag.clone());
        tokio::spawn(watch(api, scope, *kind, ctx, send, flag));
    }
}

async fn watch(
    api: Api<PartialObjectMeta<DynamicObject>>,
    scope: Option<String>,
    kind: RolloutKind,
    ctx: Arc<Context>,
    send: impl Fn(ObjectRef<KafkaToolConfig>),
    synced: Synced,
) {
    let events = watcher(api, watcher::Config::default()).default_backoff();
    let mut events = std::pin::pin!(events);
    let mut listed: HashSet<WorkloadKey> = HashSet::new();
    // After the first list, a relist (the watch was down, or its resourceVersion expired) may
    // bring workloads created meanwhile: those are handed on as on a creation.
    let mut relist = false;
    while let Some(event) = events.next().await {
        let event = match event {
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
                relist = true;
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
        // The first list is not a change: every config reconciles after a start anyway.
        if (initial && !relist) || (!appeared_or_gone && annotated.is_empty()) {
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
}
