//! One reconcile of a KafkaToolConfig: dereference (read the referenced sources, namespace
//! labels, GlobalClientDefaults) → engine (pure) → apply (output, rollout) → status.

use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::StreamExt;
use k8s_openapi::api::core::v1::ObjectReference;
use kube::api::Api;
use kube::runtime::controller::Action;
use kube::runtime::events::{Event, EventType};
use kube::runtime::reflector::{ObjectRef, Store};
use kube::{Resource, ResourceExt};
use tokio::sync::mpsc::Receiver;
use tokio::sync::mpsc::error::TrySendError;
use tracing::{Instrument, info, info_span, warn};

use crate::engine::sources::{SourceKind, SourceRef};
use crate::engine::{Request, evaluate};
use crate::operator::apply;
use crate::operator::authors;
use crate::operator::context::{Context, EVENTS_AT_ONCE, Error, QueuedEvent, Seen, lock};
use crate::operator::crd::KafkaToolConfig;
use crate::operator::dereference;
use crate::operator::history;
use crate::operator::index::ConfigId;
use crate::operator::inputs;
use crate::operator::versions::Cached;
use crate::output::Owner;
use crate::status::{self, KafkaToolConfigStatus, Live, READY, RECONCILING, WriteFailure};

/// How often a healthy config is re-checked without any trigger (drift of the output object is
/// also caught by the owned-object watch; this is the safety net for missed events). Not a
/// requeue per config: kube-runtime's scheduler kept an entry (about 700 bytes) for each of
/// them, 7 MB at N = 10,000; [`keep_resyncing`] walks the cache instead.
pub const RESYNC: Duration = Duration::from_secs(600);
/// [`RESYNC`] is served in this many slices, one per tick, so a period's reconciles are spread
/// evenly instead of arriving as one wave.
const RESYNC_SLICES: u32 = 600;
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
    // Never render against half-filled caches: a missing GlobalClientDefaults would change content.
    ctx.namespaces_synced.wait().await;
    ctx.globals_synced.wait().await;
    // Nor decide "unchanged" or "absent" from half-filled version caches.
    for scope in &ctx.versions {
        scope.config_maps.synced.wait().await;
        scope.secrets.synced.wait().await;
    }
    // Nor roll without the workloads that opted in.
    for flag in &ctx.workloads_synced {
        flag.wait().await;
    }
    let namespace = config
        .namespace()
        .ok_or(Error::MissingField("metadata.namespace"))?;
    let name = config.name_any();
    let span = info_span!("reconcile", namespace = %namespace, config = %name);
    let key = ConfigId::new(&namespace, &name);
    // First come, first served; the semaphore is never closed.
    let _slot = ctx.reconcile_slots.acquire().await.ok();
    // The object kube-runtime handed over may have waited long for the slot: the cache's latest
    // has any status write of ours that arrived meanwhile (`Context::status_writes` forgets a
    // write once the cache holds it).
    let Some(config) = ctx.latest_config(&config) else {
        return Ok(Action::await_change());
    };
    ctx.metrics.started();
    let started = Instant::now();
    // Boxed: a reconcile waiting for its slot above stays a small future.
    let result = Box::pin(reconcile_inner(&config, &ctx, &namespace, &name).instrument(span)).await;
    ctx.metrics.finished();
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
            write_reconciling(&ctx, &namespace, &name, config.metadata.generation).await;
        }
        Err(_) => {}
    }
    ctx.globals_status_wake.notify_one();
    result
}

async fn write_reconciling(ctx: &Context, namespace: &str, name: &str, generation: Option<i64>) {
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
    match apply::write_status(&api, &ctx.metrics, name, &initial).await {
        Ok(written) => ctx.status_written(&ConfigId::new(namespace, name), written, &initial),
        Err(error) => warn!(%namespace, %name, %error, "cannot write the Reconciling status"),
    }
}

pub fn error_policy(config: Arc<KafkaToolConfig>, error: &Error, ctx: Arc<Context>) -> Action {
    ctx.metrics.error(error.metric_label());
    let key = ConfigId::new(config.namespace().unwrap_or_default(), config.name_any());
    let delay = ctx.backoff(&key, error.backoff_cap());
    warn!(namespace = %key.namespace, name = %key.name, %error, retry_in_ms = delay.as_millis() as u64, "reconcile failed");
    Action::requeue(delay)
}

/// How often `kafka_config_configs` is recounted from the cache. Counting on every reconcile
/// made an initial sync of N configs cost O(N²); the count lags the cache by at most this.
const READY_GAUGE_PERIOD: Duration = Duration::from_secs(2);

/// Keeps `kafka_config_configs` current: one O(N) count of the cache per period.
pub async fn keep_ready_gauge(ctx: Arc<Context>) {
    let mut tick = tokio::time::interval(READY_GAUGE_PERIOD);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        update_ready_gauge(&ctx);
    }
}

/// Reconciles every cached config once per [`RESYNC`], starting one period after the start (a
/// start reconciles everything anyway): each tick sends the configs whose name falls in that
/// tick's slice, so the cost is spread evenly and nothing is kept per config.
pub async fn keep_resyncing(
    configs: Store<KafkaToolConfig>,
    send: impl Fn(ObjectRef<KafkaToolConfig>) + Send,
) {
    let every = RESYNC / RESYNC_SLICES;
    let mut tick = tokio::time::interval_at(tokio::time::Instant::now() + RESYNC, every);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut slice = 0;
    loop {
        tick.tick().await;
        for config in configs.state() {
            if resync_slice(&config) == slice {
                send(ObjectRef::from_obj(&*config));
            }
        }
        slice = (slice + 1) % RESYNC_SLICES;
    }
}

/// The slice of [`RESYNC`] a config is resynced in: stable for its name.
fn resync_slice(config: &KafkaToolConfig) -> u32 {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    config.metadata.namespace.hash(&mut hasher);
    config.metadata.name.hash(&mut hasher);
    (hasher.finish() % u64::from(RESYNC_SLICES)) as u32
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
        .map(|inputs| {
            inputs
                .global_client_defaults
                .iter()
                .map(|g| g.name.clone())
                .collect()
        })
        .unwrap_or_default();
    Some((
        ConfigId::new(namespace, config.name_any()),
        sources,
        globals,
    ))
}

fn update_ready_gauge(ctx: &Context) {
    let (mut ready, mut not_ready, mut unknown) = (0, 0, 0);
    for config in ctx.all_configs() {
        match config
            .status
            .as_ref()
            .and_then(|s| s.ready_status())
            .map(|(status, _)| status)
        {
            Some("True") => ready += 1,
            Some("False") => not_ready += 1,
            _ => unknown += 1,
        }
    }
    ctx.metrics.set_configs(ready, not_ready, unknown);
}

async fn reconcile_inner(
    config: &KafkaToolConfig,
    ctx: &Arc<Context>,
    namespace: &str,
    name: &str,
) -> Result<Action, Error> {
    let opted_in = lock(&ctx.opt_ins).targets(namespace, name);
    // Nothing changed since the live output was rendered (a restart, the periodic resync): the
    // caches prove it, so nothing is read or written. Workloads are not cached: with any rollout
    // target the reconcile goes on and checks them.
    if opted_in.is_empty() && inputs::unchanged(ctx, config, namespace).is_some() {
        // Its dependencies are in the index already: `record_known_dependencies` read them from
        // the same spec and status.
        ctx.metrics.unchanged.inc();
        return Ok(Action::await_change());
    }

    let api: Api<apply::Written<KafkaToolConfig>> = Api::namespaced(ctx.client.clone(), namespace);
    let generation = config.metadata.generation;
    let uid = config.uid().ok_or(Error::MissingField("metadata.uid"))?;
    let spec = &config.spec.config;
    let key = ConfigId::new(namespace, name);
    let previous = previous_status(ctx, config, &key);
    // What the output step and history read of it (hash, inputs).
    let cached = previous.status.as_ref();

    let referenced = crate::engine::sources::referenced_sources(spec);
    let fetched =
        dereference::fetch_sources(&ctx.client, namespace, &referenced, |source| {
            match ctx
                .versions(source.kind, namespace)?
                .get(namespace, &source.name)
            {
                Cached::Present {
                    resource_version, ..
                } => Some(resource_version.to_string()),
                Cached::Absent | Cached::Unknown => None,
            }
        })
        .await?;
    let labels = ctx.namespace_labels(namespace);
    let globals = ctx.global_defaults();
    let ev = evaluate(&Request {
        name,
        namespace,
        spec,
        namespace_labels: &labels,
        globals: &globals,
        sources: &fetched.sources,
        hash_key: Some(&ctx.hash_key),
    });

    // The output name is a dependency too: deleting a conflicting object must wake us up.
    let mut watched = ev.referenced.clone();
    if let Some(rendered) = &ev.rendered {
        watched.push(SourceRef {
            kind: rendered.kind.into(),
            name: crate::output::output_name(spec, rendered),
        });
    }
    lock(&ctx.index).record(&key, &watched, &ev.globals_applied);

    let seen = Seen {
        generation,
        sources: fetched.versions.clone(),
        globals: inputs::selected_globals(ctx, config, &labels),
    };
    // What the previous evaluation saw is in its status (also after a restart).
    let seen_before = cached.and_then(|before| {
        Some(inputs::from_status(
            before.observed_generation,
            before.inputs.as_ref()?,
        ))
    });

    let previous_hash = cached.and_then(|s| s.config_hash.clone());
    let mut live = Live {
        hash: previous_hash.clone(),
        write_failure: None,
    };
    let owner = Owner {
        name,
        namespace,
        uid: Some(&uid),
    };
    let mut wrote_output = None;
    let mut failed_write = None;
    let mut previous_files = None;
    let mut prune_current = None;
    if let Some(rendered) = &ev.rendered {
        let output_name = crate::output::output_name(spec, rendered);
        let cached = ctx
            .versions(rendered.kind.into(), namespace)
            .map_or(Cached::Unknown, |v| v.get(namespace, &output_name));
        let state = match apply::ensure_output(
            &ctx.client,
            &ctx.metrics,
            &owner,
            spec,
            rendered,
            previous_hash.as_deref(),
            cached,
        )
        .await
        {
            Ok(state) => state,
            // The API server refused the write (a 422, a 500, a webhook): say so in Ready, then
            // return the error so the controller retries with backoff. Without an answer at all
            // (transport errors) a status write would fail the same way.
            Err(Error::Kube(kube::Error::Api(refusal))) => {
                let message =
                    write_refused_message(rendered.kind_str(), namespace, &output_name, &refusal);
                live.write_failure = Some(WriteFailure {
                    reason: OUTPUT_WRITE_FAILED.to_string(),
                    message,
                    retried: !refused_for_good(refusal.code),
                });
                failed_write = Some(Error::OutputRefused(kube::Error::Api(refusal)));
                apply::OutputState::default()
            }
            Err(error) => return Err(error),
        };
        if failed_write.is_some() {
            // live.hash stays the previous one: the last good output is what is in place.
        } else if let Some(message) = state.conflict {
            live.hash = None;
            // Retried: garbage collection may remove the old owner's object (a config deleted
            // and created again), or its owner may clean up.
            live.write_failure = Some(WriteFailure {
                reason: "OutputConflict".to_string(),
                message,
                retried: true,
            });
        } else {
            live.hash = state.hash.clone();
            previous_files = state.previous_files;
            if state.wrote {
                wrote_output = Some((
                    rendered.kind_str(),
                    crate::output::output_name(spec, rendered),
                    rendered.hash.clone(),
                ));
            }
            if spec.output().immutable == Some(true) {
                prune_current = Some(crate::output::output_name(spec, rendered));
            }
        }
    }

    let (targets, mount) =
        apply::targets_of(spec, &opted_in, live.hash.as_deref(), ev.rendered.as_ref());
    let rollout = match (&live.hash, &live.write_failure) {
        (Some(hash), None) if !targets.is_empty() => Some(
            apply::roll_out(
                &ctx.client,
                &ctx.metrics,
                namespace,
                &targets,
                hash,
                mount.as_ref(),
            )
            .await?,
        ),
        _ => None,
    };
    // After the rollout, so what the targets carry now decides which old outputs are still used.
    let history = cached.map(|s| s.history.as_slice()).unwrap_or_default();
    let gc_pending = match &prune_current {
        Some(current) => {
            let prune = apply::Prune {
                owner: &owner,
                spec,
                current,
                targets: &targets,
                history,
            };
            apply::prune_immutable(&ctx.client, &ctx.metrics, &prune).await?
        }
        None => apply::GcPending::No,
    };

    let now = now();
    let mut next = status::build(&ev, generation, previous.status.as_ref(), &live, &now);
    next.inputs = Some(inputs::InputsStatus {
        // Kept until another annotation is the cause of a revision.
        change_cause: cached
            .and_then(|s| s.inputs.as_ref())
            .and_then(|i| i.change_cause.clone()),
        ..inputs::to_status(&seen, &ctx.hash_key_id)
    });
    if let Some(rollout) = rollout {
        next.rollout = rollout;
    } else if targets.is_empty() {
        next.rollout.clear();
    }
    let before = previous.status.as_ref();
    crate::operator::pods::record(&ctx.pods, namespace, &mut next, before, &now);
    if let (Some(hash), Some(rendered)) = (&live.hash, &ev.rendered)
        && previous_hash.as_deref() != Some(hash.as_str())
        && live.write_failure.is_none()
    {
        let change = history::Change {
            config,
            ev: &ev,
            previous_files: previous_files.as_ref(),
            files: &rendered.files,
            previous: cached,
            hash_key_id: &ctx.hash_key_id,
            seen_before: seen_before.as_ref(),
            seen: &seen,
            authors: authors::Authors {
                config: None,
                sources: fetched.authors,
                globals: inputs::global_authors(ctx, &seen),
            },
        };
        history::record_revision(change, &mut next, hash, &now);
    }

    if previous.differs(&next) {
        match apply::write_status(&api, &ctx.metrics, name, &next).await {
            Ok(written) => ctx.status_written(&key, written, &next),
            // Deleted meanwhile: garbage collection removes its output.
            Err(Error::Kube(kube::Error::Api(status))) if status.is_not_found() => {
                return Ok(Action::await_change());
            }
            Err(error) => return Err(error),
        }
    }
    let events = transition_events(previous.status.as_ref(), &next, wrote_output);
    if !events.is_empty() {
        publish_events(ctx, &config.object_ref(&()), events).await;
    }

    if let Some(error) = failed_write {
        return Err(error);
    }
    // Rendered or invalid: nothing changes until the spec, a source or a GlobalClientDefaults
    // does, and each of those is watched (plus the periodic resync, `keep_resyncing`).
    Ok(if live.write_failure.is_some() {
        Action::requeue(CONFLICT_RETRY)
    } else if gc_pending == apply::GcPending::Held {
        Action::requeue(GC_RETRY)
    } else if gc_pending == apply::GcPending::Observing {
        Action::requeue(OBSERVE_RETRY)
    } else {
        Action::await_change()
    })
}

/// Ready's reason when the API server refused the output write.
pub const OUTPUT_WRITE_FAILED: &str = "OutputWriteFailed";

/// Whether the API server will refuse the same write again whatever the retry: 400 (a malformed
/// object, most admission denials), 413 (too large), 422 (invalid, a ValidatingAdmissionPolicy).
/// Only a change of the config (or of the policy) helps: kstatus's `Stalled`. Anything else
/// (403 while RBAC is being applied, 409, 429, 5xx) may pass on a retry.
fn refused_for_good(code: u16) -> bool {
    matches!(code, 400 | 413 | 422)
}

/// Longest API-server message quoted in a status (it may echo what was sent).
const REFUSAL_MESSAGE_LIMIT: usize = 256;

/// "cannot write ConfigMap ns/name: 422 Invalid: …", the API server's message cut to a bound.
/// For a Secret output only the code and reason: the message comes from the API server or an
/// admission webhook, either of which may quote the Secret's data, and a status is readable by
/// anyone who can read the config.
fn write_refused_message(
    kind: &str,
    namespace: &str,
    name: &str,
    refusal: &kube::core::Status,
) -> String {
    let head = format!(
        "cannot write {kind} {namespace}/{name}: {} {}",
        refusal.code, refusal.reason
    );
    if kind == "Secret" {
        return format!("{head} (the API server's message is not shown for a Secret)");
    }
    let mut text = refusal.message.clone();
    if text.len() > REFUSAL_MESSAGE_LIMIT {
        let mut cut = REFUSAL_MESSAGE_LIMIT;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        let total = text.len();
        text.truncate(cut);
        text.push_str(&format!("…({total} bytes)"));
    }
    format!("{head}: {text}")
}

/// The status the next one is built from and compared with.
struct Previous {
    /// Rebuilt from a projection (`KafkaToolConfigStatus::rebuilt`), or as it is.
    status: Option<KafkaToolConfigStatus>,
    /// The projection `status` was rebuilt from: the stored status's digest compares.
    projection: Option<Arc<KafkaToolConfigStatus>>,
}

impl Previous {
    fn differs(&self, next: &KafkaToolConfigStatus) -> bool {
        match &self.projection {
            Some(projection) => projection.differs_from_stored(next),
            None => apply::status_changed(self.status.as_ref(), next),
        }
    }
}

/// The previous status, without a request: the cache's projection holds all the next status is
/// built from (history, transition times, output keys, rollout) and a digest of the rest. When
/// the cache has not yet seen this operator's last status write of the config (a reconcile that
/// follows right after another), the projection of that write stands in for it.
fn previous_status(ctx: &Context, config: &KafkaToolConfig, key: &ConfigId) -> Previous {
    let projection = ctx
        .unseen_status_write(key, config.resource_version().as_deref())
        .or_else(|| config.status.clone().map(Arc::new));
    match projection {
        Some(projection) => match projection.rebuilt() {
            Some(rebuilt) => Previous {
                status: Some(rebuilt),
                projection: Some(projection),
            },
            // Not a projection (a status built by hand): compared as it is.
            None => Previous {
                status: Some((*projection).clone()),
                projection: None,
            },
        },
        None => Previous {
            status: None,
            projection: None,
        },
    }
}

/// Events on transitions only (a resync publishes nothing). Messages are the status messages,
/// which never carry secret values.
fn transition_events(
    previous: Option<&KafkaToolConfigStatus>,
    next: &KafkaToolConfigStatus,
    wrote: Option<(&str, String, String)>,
) -> Vec<Event> {
    let mut events = Vec::new();
    // A new history entry (a repair of the output's content adds none).
    let before = previous.and_then(|p| p.history.last()).map(|e| &e.hash);
    let revision = next.history.last().filter(|e| Some(&e.hash) != before);
    if let Some((kind, name, hash)) = wrote {
        info!(%kind, output = %name, %hash, "rendered");
        events.push(Event {
            type_: EventType::Normal,
            reason: "Rendered".into(),
            note: Some(history::event_note(kind, &name, &hash, revision)),
            action: "Render".into(),
            secondary: None,
        });
    }
    let ready = next.condition(READY);
    let was = previous.and_then(|p| p.condition(READY));
    if let Some(ready) = ready
        && ready.status == "False"
        && was.is_none_or(|w| w.status != ready.status || w.reason != ready.reason)
    {
        warn!(reason = %ready.reason, message = %ready.message, "not ready");
        let mut note = ready.message.clone();
        note.truncate(1000);
        events.push(Event {
            type_: EventType::Warning,
            reason: ready.reason.clone(),
            note: Some(note),
            action: "Render".into(),
            secondary: None,
        });
    }
    events
}

/// Hands the events to [`deliver_events`], out of the reconcile slot (an Event is on no edit's
/// path); publishes them here when that queue is full, so neither memory nor the number of
/// requests in flight grows with a burst.
async fn publish_events(ctx: &Context, reference: &ObjectReference, events: Vec<Event>) {
    for event in events {
        let event = match &ctx.event_queue {
            Some(queue) => match queue.try_send((reference.clone(), event)) {
                Ok(()) => continue,
                Err(TrySendError::Full((_, event)) | TrySendError::Closed((_, event))) => event,
            },
            None => event,
        };
        publish_event(ctx, reference, &event).await;
    }
}

async fn publish_event(ctx: &Context, reference: &ObjectReference, event: &Event) {
    match ctx.recorder.publish(event, reference).await {
        Ok(()) => ctx.metrics.write("Event"),
        Err(e) => {
            warn!(namespace = ?reference.namespace, name = ?reference.name, error = %e, "cannot publish an event")
        }
    }
}

/// Publishes queued events, [`EVENTS_AT_ONCE`] at a time.
pub async fn deliver_events(ctx: Arc<Context>, queue: Receiver<QueuedEvent>) {
    futures::stream::unfold(queue, |mut queue| async move {
        queue.recv().await.map(|item| (item, queue))
    })
    .for_each_concurrent(EVENTS_AT_ONCE, |(reference, event)| {
        let ctx = ctx.clone();
        async move { publish_event(&ctx, &reference, &event).await }
    })
    .await;
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

    #[test]
    fn a_refusal_quotes_the_api_message_cut_to_a_bound_and_never_for_a_secret() {
        let refusal = |message: &str| kube::core::Status {
            code: 422,
            reason: "Invalid".into(),
            message: message.into(),
            ..Default::default()
        };
        assert_eq!(
            write_refused_message("ConfigMap", "ns", "out", &refusal("too big")),
            "cannot write ConfigMap ns/out: 422 Invalid: too big"
        );
        let long = write_refused_message("ConfigMap", "ns", "out", &refusal(&"é".repeat(300)));
        assert!(long.ends_with("…(600 bytes)"), "{long}");
        assert!(long.len() < 256 + 80, "{long}");
        let secret = write_refused_message("Secret", "ns", "out", &refusal("password=hunter2"));
        assert!(!secret.contains("hunter2"), "{secret}");
        assert!(
            secret.starts_with("cannot write Secret ns/out: 422 Invalid"),
            "{secret}"
        );
    }
}
