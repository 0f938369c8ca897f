//! One reconcile of a KafkaToolConfig, as a pipeline of steps (each in its own module, each with
//! its own [`Error`] variants): dereference (the referenced sources, namespace labels,
//! GlobalClientDefaults) → evaluate (the engine, pure) → apply the output → roll out → prune →
//! status (+ history) → events.

mod evaluate;
mod events;
mod output;
mod prune;
mod report;
mod resync;
mod rollout;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use kube::ResourceExt;
use kube::api::Api;
use kube::runtime::controller::Action;
use tracing::{Instrument, debug, info_span, warn};

use crate::engine::sources::{SourceKind, SourceRef};
use crate::engine::spec::RolloutKind;
use crate::operator::apply::{self, GcPending};
use crate::operator::context::{Context, Error, lock};
use crate::operator::crd::KafkaToolConfig;
use crate::operator::dereference;
use crate::operator::index::ConfigId;
use crate::operator::inputs;
use crate::operator::pods;
use crate::output::Owner;
use crate::status::{self, KafkaToolConfigStatus, Live, READY, RECONCILING};

pub use events::deliver_events;
pub use output::OUTPUT_WRITE_FAILED;
pub use resync::{RESYNC, keep_ready_gauge, keep_resyncing};

/// An output held by someone else: check again now and then, the owner may clean up.
const CONFLICT_RETRY: Duration = Duration::from_secs(60);
/// Old immutable outputs still used by a rollout target: check again soon whether it moved on
/// (ReplicaSets are not watched).
const GC_RETRY: Duration = Duration::from_secs(20);
/// A Deployment whose controller has not observed our template edit yet: it does so within
/// milliseconds, and the old outputs wait for it.
const OBSERVE_RETRY: Duration = Duration::from_secs(1);

pub fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

pub async fn reconcile(config: Arc<KafkaToolConfig>, ctx: Arc<Context>) -> Result<Action, Error> {
    record_known_dependencies(&ctx, &config);
    if !ctx.is_leader() {
        // A standby keeps its caches warm; the leader reconciles everything when it takes over.
        return Ok(Action::await_change());
    }
    // Never render, decide "unchanged" or "absent", or roll against half-filled caches.
    ctx.caches.synced.wait().await;
    let namespace = config
        .namespace()
        .ok_or(Error::MissingField("metadata.namespace"))?;
    let name = config.name_any();
    let key = ConfigId::new(&namespace, &name);
    // Hundreds may wait for a permit: no span and no object of their own meanwhile.
    drop(config);
    let _running = ctx.running.enter().await;
    let span = info_span!("reconcile", namespace = %namespace, config = %name);
    // The object kube-runtime handed over may have waited for the caches and a permit above:
    // the cache's latest has any status write of ours that arrived meanwhile.
    let Some(config) = ctx.cached_config(&key) else {
        return Ok(Action::await_change());
    };
    let started = Instant::now();
    // Boxed: a reconcile waiting for the caches above stays a small future.
    let result =
        Box::pin(reconcile_inner(config.clone(), &ctx, &namespace, &name).instrument(span)).await;
    ctx.metrics.reconciles.inc();
    ctx.metrics
        .reconcile_duration
        .observe(started.elapsed().as_secs_f64());
    match &result {
        Ok(_) => ctx.succeeded(&key),
        // Its status says why already.
        Err(Error::OutputRefused(_)) => {}
        // kstatus: a config whose first reconcile could not finish says "working on it", so no
        // health check passes before the output exists. A first reconcile that finishes writes
        // its result directly: one status write per new config instead of two.
        Err(_) if config.status.as_ref().is_none_or(|s| !s.has_conditions()) => {
            write_reconciling(&ctx, &config, &namespace, &name).await;
        }
        Err(_) => {}
    }
    ctx.globals_status_wake.notify_one();
    result
}

async fn write_reconciling(ctx: &Context, config: &KafkaToolConfig, namespace: &str, name: &str) {
    let generation = config.metadata.generation;
    let resource_version = config.resource_version();
    let resource_version = resource_version.as_deref();
    let api: Api<apply::Written<KafkaToolConfig>> = Api::namespaced(ctx.client.clone(), namespace);
    let mut initial = KafkaToolConfigStatus {
        observed_generation: generation,
        ..KafkaToolConfigStatus::default()
    };
    let now = now();
    // kstatus reads Reconciling=True as InProgress; Ready=Unknown says the same to the rest.
    for (type_, value, reason) in [
        (READY, "Unknown", "Reconciling"),
        (RECONCILING, "True", status::PROGRESSING),
    ] {
        status::set_condition(
            &mut initial.conditions,
            &[],
            type_,
            value,
            reason,
            "the operator is rendering this configuration".into(),
            generation,
            &now,
        );
    }
    // Onto the version without a status only: the cache may not have a status written since.
    if let Err(error) =
        apply::write_status(&api, &ctx.metrics, name, resource_version, &initial).await
    {
        warn!(%namespace, %name, %error, "cannot write the Reconciling status");
    }
}

pub fn error_policy(config: Arc<KafkaToolConfig>, error: &Error, ctx: Arc<Context>) -> Action {
    ctx.metrics.error(error.metric_label());
    let key = ConfigId::new(config.namespace().unwrap_or_default(), config.name_any());
    let delay = ctx.backoff(&key, error.backoff_cap());
    // A permanent error waits on the same backoff (see `Error::permanent`); the log says which.
    warn!(namespace = %key.namespace, name = %key.name, %error, permanent = error.permanent(), retry_in_ms = delay.as_millis() as u64, "reconcile failed");
    Action::requeue(delay)
}

/// Records in the reverse index what a config depends on as far as its spec and last status
/// tell, before anything is read. A source edit that lands while this reconcile reads then either
/// finds the config in the index (and reconciles it again) or is already in the version cache the
/// reconcile reads next; recorded only after the read, an edit in between was lost. A standby
/// records too, so that a new leader misses no edit while its reconcile-everything runs.
fn record_known_dependencies(ctx: &Context, config: &KafkaToolConfig) {
    if let Some((key, sources, globals)) = known_dependencies(config) {
        lock(&ctx.index).record(&key, &sources, &globals);
    }
}

/// The sources a config's spec names plus its last output, and the GlobalClientDefaults its last
/// evaluation saw.
fn known_dependencies(config: &KafkaToolConfig) -> Option<(ConfigId, Vec<SourceRef>, Vec<String>)> {
    let namespace = config.namespace()?;
    let mut sources = crate::engine::sources::referenced_sources(&config.spec.config);
    let status = config.status.as_ref();
    if let Some(output) = status.and_then(|s| s.output.as_ref())
        && let Some(kind) = SourceKind::parse(&output.kind)
    {
        sources.push(SourceRef {
            kind,
            name: output.name.clone(),
        });
    }
    let globals = status
        .and_then(|s| s.inputs.as_ref())
        .into_iter()
        .flat_map(|inputs| &inputs.global_client_defaults)
        .map(|g| g.name.clone())
        .collect();
    Some((
        ConfigId::new(namespace, config.name_any()),
        sources,
        globals,
    ))
}

/// How many times a reconcile runs the pipeline when each status write finds the config moved on.
const STATUS_WRITE_ATTEMPTS: usize = 3;
/// How long a reconcile whose status write found its config stale waits for the watch to bring in
/// the newer version (milliseconds, unless the watch is down: the backoff retries then).
const CACHE_CATCH_UP: Duration = Duration::from_secs(5);

/// The pipeline, run again when the status write finds that the cache's copy of the config was
/// stale (this operator's last status write not in it yet, or someone changed the config
/// meanwhile), on the newer version once the watch has brought it in: the next status is built
/// from the one it replaces. Neither a read of the config nor a cache of our own writes.
async fn reconcile_inner(
    mut config: Arc<KafkaToolConfig>,
    ctx: &Arc<Context>,
    namespace: &str,
    name: &str,
) -> Result<Action, Error> {
    let mut carried = Carried::default();
    for attempt in 1..=STATUS_WRITE_ATTEMPTS {
        if let Some(action) = run_pipeline(&config, ctx, namespace, name, &mut carried).await? {
            return Ok(action);
        }
        if attempt == STATUS_WRITE_ATTEMPTS {
            break;
        }
        match newer_in_cache(ctx, &config).await {
            Newer::Cached(newer) => config = newer,
            // Deleted meanwhile: garbage collection removes its output.
            Newer::Gone => return Ok(Action::await_change()),
            Newer::NotYet => break,
        }
    }
    Err(Error::StaleStatus)
}

/// What an earlier run of this reconcile did that a later one (on a newer version of the config,
/// after a refused status write) must still report.
#[derive(Default)]
struct Carried {
    /// The output it wrote: its `Rendered` Event goes out with the status that records it.
    wrote: Option<(&'static str, String, String)>,
    /// The status's hash and the output's files before that write: a later run finds the output
    /// current already, and its history entry names the keys changed since those files, not
    /// every key (e2e_governance saw that once, on a loaded machine).
    before: Option<(Option<String>, BTreeMap<String, String>)>,
}

impl Carried {
    fn track(&mut self, applied: &mut output::Applied) {
        match &self.before {
            None => {
                if let Some(files) = &applied.previous_files {
                    self.before = Some((applied.previous_hash.clone(), files.clone()));
                }
            }
            Some((hash, files)) if *hash == applied.previous_hash => {
                applied.previous_files = Some(files.clone());
            }
            Some(_) => {}
        }
    }
}

enum Newer {
    Cached(Arc<KafkaToolConfig>),
    Gone,
    NotYet,
}

/// Waits (at most [`CACHE_CATCH_UP`]) until the cache holds `config` at another resourceVersion.
async fn newer_in_cache(ctx: &Context, config: &KafkaToolConfig) -> Newer {
    let stale = config.resource_version();
    let id = ConfigId::of(config);
    let newer = || match ctx.cached_config(&id) {
        None => Some(Newer::Gone),
        Some(cached) if cached.resource_version() != stale => Some(Newer::Cached(cached)),
        Some(_) => None,
    };
    ctx.caches
        .configs_seen
        .wait_for(CACHE_CATCH_UP, newer)
        .await
        .unwrap_or(Newer::NotYet)
}

/// One run of the pipeline. Returns at once when the caches prove nothing changed since the live
/// output was rendered; a refused output write is returned only after the status and events say
/// so. `None`: the status write found `config` stale. `carried`: what this or an
/// earlier run (its `Rendered` Event goes out with the status that records it).
async fn run_pipeline(
    config: &KafkaToolConfig,
    ctx: &Arc<Context>,
    namespace: &str,
    name: &str,
    carried: &mut Carried,
) -> Result<Option<Action>, Error> {
    let opted_in = lock(&ctx.opt_ins).targets(namespace, name);
    if unchanged(ctx, config, namespace, &opted_in) {
        return Ok(Some(Action::await_change()));
    }
    let spec = &config.spec.config;
    let uid = config.uid().ok_or(Error::MissingField("metadata.uid"))?;
    let owner = Owner {
        name,
        namespace,
        uid: Some(&uid),
    };
    let key = ConfigId::new(namespace, name);
    let previous = report::previous_status(config);
    let before = previous.status.as_ref();

    let read = dereference::dereference(ctx, spec, namespace).await?;
    let evaluated = evaluate::evaluate(ctx, config, &key, &read);
    let ev = &evaluated.ev;
    let mut applied = output::apply_output(ctx, &owner, ev, before, spec).await?;
    let rolled = rollout::roll_out(ctx, namespace, spec, &opted_in, ev, &applied.live).await?;
    let gc = prune::prune(ctx, &owner, spec, &applied, &rolled.targets, before).await?;
    carried.track(&mut applied);
    if let Some(output) = applied.wrote.take() {
        carried.wrote = Some(output);
    }

    let authors = read.fetched.authors;
    let next = report::next_status(
        ctx,
        config,
        &previous,
        &evaluated,
        &applied,
        rolled.statuses,
        authors,
    );
    let version = config.resource_version();
    match report::write(ctx, &key, version.as_deref(), &previous, &next).await? {
        report::Written::Done => {}
        report::Written::Stale => {
            debug!(version = ?version, "status write refused: the config moved on since it was cached");
            return Ok(None);
        }
        // Deleted meanwhile: garbage collection removes its output.
        report::Written::Gone => return Ok(Some(Action::await_change())),
    }
    events::publish_transitions(ctx, config, before, &next, carried.wrote.take()).await;

    if let Some(error) = applied.refused {
        return Err(error);
    }
    Ok(Some(next_action(&applied.live, gc)))
}

/// Nothing changed since the live output was rendered (a restart, the periodic resync): the
/// caches prove it, so nothing is read or written. Its dependencies are in the index already:
/// `record_known_dependencies` read them from the same spec and status.
fn unchanged(
    ctx: &Context,
    config: &KafkaToolConfig,
    namespace: &str,
    opted_in: &[(RolloutKind, String)],
) -> bool {
    let unchanged = inputs::unchanged(ctx, config, namespace).is_some()
        && rollout_current(ctx, config, namespace, opted_in);
    if unchanged {
        ctx.metrics.unchanged.inc();
    }
    unchanged
}

/// The rollout needs nothing, as the workload watches prove: the status lists exactly the
/// targets (named, then opted in), each with the recorded hash, each target's pod template
/// carries that hash, and the pod numbers and `Synced` in the status are the watch's. Argo
/// Rollouts are not watched: a config that targets one reads it.
fn rollout_current(
    ctx: &Context,
    config: &KafkaToolConfig,
    namespace: &str,
    opted_in: &[(RolloutKind, String)],
) -> bool {
    let Some(status) = config.status.as_ref() else {
        return false;
    };
    let (targets, _) = apply::targets_of(&config.spec.config, opted_in, None, None);
    if targets.is_empty() {
        return status.rollout.is_empty();
    }
    let Some(hash) = status.config_hash.as_deref() else {
        return false;
    };
    let listed = targets.len() == status.rollout.len()
        && targets.iter().zip(&status.rollout).all(|(target, listed)| {
            let kind = format!("{:?}", target.kind);
            target.kind != RolloutKind::Rollout
                && listed.kind == kind
                && listed.name == target.name
                && listed.via.is_some() == target.opted_in
                && listed.hash.as_deref() == Some(hash)
                && ctx
                    .pods
                    .template_carries(&kind, namespace, &target.name, hash)
        });
    if !listed || !ctx.pods.all_synced() {
        return false;
    }
    // The cache keeps a projection: conditions without messages. The counts and Synced's
    // value decide its message (every hash is current here), so they are what is compared.
    let stored = status.rebuilt().unwrap_or_else(|| status.clone());
    let mut now = stored.clone();
    pods::record(&ctx.pods, namespace, &mut now, Some(&stored), &self::now());
    let synced = |s: &KafkaToolConfigStatus| s.condition(pods::SYNCED).map(|c| c.status.clone());
    now.rollout == stored.rollout && synced(&now) == synced(&stored)
}

/// Rendered or invalid: nothing changes until the spec, a source or a GlobalClientDefaults does,
/// and each of those is watched (plus the periodic resync, `keep_resyncing`). An output held by
/// someone else, or old outputs held back, are checked again after a while.
fn next_action(live: &Live, gc: GcPending) -> Action {
    if live.write_failure.is_some() {
        Action::requeue(CONFLICT_RETRY)
    } else if gc == GcPending::Held {
        Action::requeue(GC_RETRY)
    } else if gc == GcPending::Observing {
        Action::requeue(OBSERVE_RETRY)
    } else {
        Action::await_change()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(status: serde_json::Value) -> KafkaToolConfig {
        serde_json::from_value(serde_json::json!({
            "apiVersion": "kafkaconfig.dev/v1alpha1",
            "kind": "KafkaToolConfig",
            "metadata": {"name": "orders", "namespace": "team-a"},
            "spec": {
                "tool": "kafka-console-producer",
                "configFiles": [{"configMapKeyRef": {"name": "base-client", "key": "client.properties"}}],
                "env": [{"name": "PASSWORD", "valueFrom": {"secretKeyRef": {"name": "sasl", "key": "password"}}}]
            },
            "status": status
        }))
        .expect("a valid KafkaToolConfig")
    }

    fn names(sources: &[SourceRef]) -> Vec<(SourceKind, &str)> {
        sources.iter().map(|s| (s.kind, s.name.as_str())).collect()
    }

    #[test]
    fn a_new_config_depends_on_what_its_spec_names_before_anything_is_read() {
        let (key, sources, globals) =
            known_dependencies(&config(serde_json::json!(null))).expect("a namespaced config");
        assert_eq!(key, ConfigId::new("team-a", "orders"));
        assert_eq!(
            names(&sources),
            [
                (SourceKind::ConfigMap, "base-client"),
                (SourceKind::Secret, "sasl")
            ]
        );
        assert!(globals.is_empty());
    }

    const HASH: &str = "hmac-sha256:ab12";

    /// A config rolling Deployment `api` (and `targets` more), with `status` as stored.
    fn rolling(targets: serde_json::Value, status: serde_json::Value) -> KafkaToolConfig {
        serde_json::from_value(serde_json::json!({
            "apiVersion": "kafkaconfig.dev/v1alpha1",
            "kind": "KafkaToolConfig",
            "metadata": {"name": "orders", "namespace": "team-a"},
            "spec": {"tool": "kafka-console-producer", "rollout": {"targets": targets}},
            "status": status
        }))
        .expect("a valid KafkaToolConfig")
    }

    /// What the status says after a rollout of `api` whose one pod runs `HASH`.
    fn rolled(synced: &str) -> serde_json::Value {
        serde_json::json!({
            "configHash": HASH,
            "rollout": [{"kind": "Deployment", "name": "api", "hash": HASH,
                         "updated": 1, "ready": 1, "total": 1}],
            "conditions": [{"type": "Synced", "status": synced, "reason": "AllPodsCurrent",
                            "message": "the pods of all 1 targets run the current hash",
                            "lastTransitionTime": "2026-12-06T00:00:00Z"}]
        })
    }

    /// A context whose Deployment watch saw `api` with `hash` on its template and `ready` pods.
    fn watching(hash: &str, ready: i32) -> Arc<Context> {
        let (ctx, _api_server) = crate::operator::fixtures::context(&[], Vec::new());
        let deployment: k8s_openapi::api::apps::v1::Deployment =
            serde_json::from_value(serde_json::json!({
                "metadata": {"name": "api", "namespace": "team-a", "generation": 2},
                "spec": {"replicas": 1, "selector": {},
                         "template": {"metadata": {"annotations": {crate::output::HASH_ANNOTATION: hash}}}},
                "status": {"observedGeneration": 2, "replicas": 1, "updatedReplicas": 1,
                           "readyReplicas": ready}
            }))
            .expect("a Deployment");
        let key = ("Deployment", "team-a".into(), "api".into());
        ctx.pods.observe(key, pods::deployment(&deployment));
        ctx
    }

    fn current(
        ctx: &Context,
        config: &KafkaToolConfig,
        opted_in: &[(RolloutKind, String)],
    ) -> bool {
        rollout_current(ctx, config, "team-a", opted_in)
    }

    #[tokio::test]
    async fn the_workload_watch_proves_a_rollout_current_from_the_stored_or_the_cached_status() {
        let api = serde_json::json!([{"kind": "Deployment", "name": "api"}]);
        let ctx = watching(HASH, 1);
        let config = rolling(api.clone(), rolled("True"));
        assert!(current(&ctx, &config, &[]));
        let mut cached = config.clone();
        cached.status = cached.status.take().map(KafkaToolConfigStatus::cached);
        assert!(
            current(&ctx, &cached, &[]),
            "the cache's projection proves it too"
        );
    }

    #[tokio::test]
    async fn a_rollout_is_not_current_when_anything_the_status_says_about_it_moved() {
        let api = serde_json::json!([{"kind": "Deployment", "name": "api"}]);
        // The template carries another hash (someone edited it, or a rollout was lost).
        assert!(!current(
            &watching("hmac-sha256:ffff", 1),
            &rolling(api.clone(), rolled("True")),
            &[]
        ));
        // A pod is no longer ready: the counts and Synced are to be written.
        assert!(!current(
            &watching(HASH, 0),
            &rolling(api.clone(), rolled("True")),
            &[]
        ));
        // The status says Synced=False, the pods are all current now.
        assert!(!current(
            &watching(HASH, 1),
            &rolling(api.clone(), rolled("False")),
            &[]
        ));
        // A workload opted in since: it is rolled and listed.
        let worker = [(RolloutKind::Deployment, "worker".to_string())];
        assert!(!current(
            &watching(HASH, 1),
            &rolling(api.clone(), rolled("True")),
            &worker
        ));
        // An Argo Rollout is not watched: it is read.
        let argo = serde_json::json!([{"kind": "Rollout", "name": "api"}]);
        let mut status = rolled("True");
        status["rollout"][0]["kind"] = "Rollout".into();
        assert!(!current(&watching(HASH, 1), &rolling(argo, status), &[]));
        // No target any more, but the status still lists one: the list goes.
        assert!(!current(
            &watching(HASH, 1),
            &rolling(serde_json::json!([]), rolled("True")),
            &[]
        ));
        assert!(current(
            &watching(HASH, 1),
            &rolling(
                serde_json::json!([]),
                serde_json::json!({"configHash": HASH})
            ),
            &[]
        ));
    }

    #[test]
    fn a_rendered_config_also_depends_on_its_output_and_the_globals_it_last_saw() {
        let (_, sources, globals) = known_dependencies(&config(serde_json::json!({
            "output": {"kind": "ConfigMap", "name": "orders-kafka", "keys": ["producer.properties"]},
            "inputs": {"operator": "0.1.0", "globalClientDefaults": [{"name": "prod", "generation": 2}]}
        })))
        .expect("a namespaced config");
        assert!(names(&sources).contains(&(SourceKind::ConfigMap, "orders-kafka")));
        assert_eq!(globals, ["prod"]);
    }
}
