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
//! At most `RECONCILE_SLOTS` reconciles do API work at once, so a relist of thousands of configs
//! queues here, first come first served, instead of in the API server's priority-and-fairness
//! queues (429s).

use std::collections::HashMap;
use std::pin::pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use futures::future::BoxFuture;
use futures::{FutureExt, Stream, StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::api::core::v1::{ConfigMap, Namespace, Secret};
use kube::api::{Api, ApiResource, DynamicObject, Patch, PatchParams};
use kube::core::error_boundary::InvalidObject;
use kube::core::{DeserializeGuard, NamespaceResourceScope, PartialObjectMeta};
use kube::runtime::controller::{Config as ControllerConfig, Controller};
use kube::runtime::events::{Event, EventType};
use kube::runtime::reflector::{self, ObjectRef, Store};
use kube::runtime::watcher::{self, watcher};
use kube::runtime::{WatchStreamExt, predicates};
use kube::{Client, Resource, ResourceExt};
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};
use tracing::{debug, error, info, warn};

use crate::engine::sources::SourceKind;
use crate::operator::authors;
use crate::operator::config_id::ConfigId;
use crate::operator::context::{Context, ScopeVersions, lock};
use crate::operator::crd::{GlobalClientDefaults, KafkaToolConfig, KafkaToolConfigSpec};
use crate::operator::generations::Generations;
use crate::operator::globals;
use crate::operator::hash_key::{self, KeySecret};
use crate::operator::health;
use crate::operator::leader::{self, Attempt, LeaseLock};
use crate::operator::metrics::Metrics;
use crate::operator::ownership::{controlling_config, foreign_data_owner, hash_of};
use crate::operator::reconcile::{self, error_policy, reconcile};
use crate::operator::sync_status;
use crate::operator::synced::Synced;
use crate::operator::workloads;
use crate::operator::{LogFormat, OperatorError, RunOptions, check_crds};
use crate::output::{MANAGED_BY_LABEL, MANAGER};
use crate::status::{self, KafkaToolConfigStatus};

/// Trailing-edge debounce: a ConfigMap and a Secret applied back to back (one `kubectl apply` of a
/// commit sends them a round trip apart) become one render. Every edit waits this long before
/// its render starts, so it is short (edit → output p50 ≤ 100 ms, issue 7).
const DEBOUNCE: Duration = Duration::from_millis(50);
/// Reconciles kube-runtime admits at once. Of these, `Context::reconcile_slots` (32) do API work,
/// first come first served. Bounded because every admitted reconcile holds a future and a
/// tracing span (whose slab never shrinks): admitting a whole relist of 10,000 configs cost
/// 35 MiB at the restart peak. Beyond this many, kube-runtime releases the surplus in hash
/// order, so it is well above what a burst keeps waiting.
const CONCURRENCY: u16 = 256;
/// How long an event of one of our outputs waits for its owner's cached status to record the
/// output's hash before it counts as a change by someone else: a reconcile writes the output,
/// then the status, and the status reaches the cache through the watch shortly after.
const OWN_WRITE_SETTLE: Duration = Duration::from_secs(2);
const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";

fn init_logging(format: LogFormat) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info,kube=warn"));
    let logs = tracing_subscriber::fmt().with_env_filter(filter);
    let _ = match format {
        LogFormat::Json => logs
            .json()
            .with_current_span(true)
            .with_span_list(false)
            .try_init(),
        LogFormat::Text => logs.with_ansi(false).try_init(),
    };
}

/// Memory: the caches keep neither managedFields nor kubectl's copy of the whole object.
fn strip<K: Resource>(object: &mut K) {
    object.meta_mut().managed_fields = None;
    if let Some(annotations) = object.meta_mut().annotations.as_mut() {
        annotations.remove(LAST_APPLIED);
    }
}

/// [`strip`], but keeps the one managedFields entry that says who last changed the spec
/// (`authors::keep_latest`), without its field set: history names it.
fn strip_keeping_author<K: Resource>(object: &mut K) {
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
fn strip_config(config: &mut KafkaToolConfig) {
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
fn compact_status(config: &mut KafkaToolConfig) {
    config.status = config.status.take().map(KafkaToolConfigStatus::cached);
}

/// Lets the context forget a status write once the watch has brought it into the cache (called
/// after the reflector has applied the event). A listed object is in the store only when its
/// list completes (kube-runtime swaps a relist in at `InitDone`): until then a reconcile still
/// finds the status from before the watch went down, and builds on our write instead. A deleted
/// config leaves the reverse index (also one deleted while the watch was down, at `InitDone`).
fn observe_config(ctx: &Context, event: &Result<watcher::Event<KafkaToolConfig>, watcher::Error>) {
    let (config, deleted) = match event {
        Ok(watcher::Event::Apply(c)) => (c, false),
        Ok(watcher::Event::Delete(c)) => (c, true),
        Ok(watcher::Event::InitDone) => {
            ctx.forget_cached_status_writes();
            ctx.forget_gone_configs();
            return;
        }
        _ => return,
    };
    let key = ConfigId::new(config.namespace().unwrap_or_default(), config.name_any());
    ctx.observe_config(&key, config.resource_version().as_deref(), deleted);
    if deleted {
        ctx.forget_config(&key);
    }
}

/// Marks `synced` when a watch stream finishes its initial list.
fn mark_on_init_done<K>(synced: Synced) -> impl FnMut(&Result<watcher::Event<K>, watcher::Error>) {
    move |event| {
        if matches!(event, Ok(watcher::Event::InitDone)) {
            synced.mark();
        }
    }
}

fn scoped<K>(client: &Client, scope: Option<&str>) -> Api<K>
where
    K: Resource<Scope = NamespaceResourceScope, DynamicType = ()>,
{
    match scope {
        Some(ns) => Api::namespaced(client.clone(), ns),
        None => Api::all(client.clone()),
    }
}

/// The KafkaToolConfig that controls an object (its controller ownerReference).
fn controller_owner<K: Resource>(object: &K) -> Option<ObjectRef<KafkaToolConfig>> {
    let namespace = object.meta().namespace.as_deref()?;
    controlling_config(object.meta()).map(|r| ObjectRef::new(&r.name).within(namespace))
}

/// Whether the owner's status records `hash` as its output's hash: then the event is the
/// operator's own write (or a replay of it) and there is nothing to reconcile. The status is the
/// cached one or, while the cache has not brought it in yet (its watch may be down), our last
/// status write of the owner (`written`: its hash).
fn recorded(
    reader: &Store<KafkaToolConfig>,
    owner: &ObjectRef<KafkaToolConfig>,
    hash: Option<&str>,
    written: impl FnOnce() -> Option<String>,
) -> bool {
    let Some(hash) = hash else {
        return false;
    };
    reader
        .get(owner)
        .and_then(|c| c.status.as_ref()?.config_hash.clone())
        .as_deref()
        == Some(hash)
        || written().as_deref() == Some(hash)
}

/// [`recorded`] with this operator's status write of `owner` that the cache may not have yet.
fn recorded_by(
    ctx: &Context,
    reader: &Store<KafkaToolConfig>,
    owner: &ObjectRef<KafkaToolConfig>,
    hash: Option<&str>,
) -> bool {
    recorded(reader, owner, hash, || {
        let key = ConfigId::new(owner.namespace.clone().unwrap_or_default(), &owner.name);
        ctx.unseen_written_hash(&key)
    })
}

/// An output: namespace and name.
type OutputKey = (String, String);

/// Events of our outputs waiting out [`OWN_WRITE_SETTLE`]: only an output's latest event is
/// decided. An earlier one is superseded: its hash may be an earlier write of ours that a later
/// write of ours replaced, which the owner's status then no longer records (two renders within
/// the settle time, e.g. an old spec's and then the new one's after a watch came back), and
/// deciding it would reconcile the owner for nothing. Holds an output only while it waits.
#[derive(Debug, Default)]
struct Settling {
    waiting: HashMap<OutputKey, u64>,
    next: u64,
}

impl Settling {
    /// A newer event of `output` arrived: the check of an earlier one is dropped.
    fn supersede(&mut self, output: &OutputKey) {
        self.waiting.remove(output);
    }

    /// `output`'s latest event waits; the ticket it is decided with.
    fn wait(&mut self, output: OutputKey) -> u64 {
        self.next = self.next.wrapping_add(1);
        self.waiting.insert(output, self.next);
        self.next
    }

    /// Whether the event holding `ticket` is still `output`'s latest: then it is decided now (and
    /// forgotten); otherwise a later event decides.
    fn decide(&mut self, output: &OutputKey, ticket: u64) -> bool {
        if self.waiting.get(output) == Some(&ticket) {
            self.waiting.remove(output);
            true
        } else {
            false
        }
    }
}

/// Turns events of the outputs we own into reconciles of their owner: at once when an output is
/// deleted; when one carries a hash its owner's status does not record, after
/// [`OWN_WRITE_SETTLE`] and only if the status still does not record it and no later event of
/// the output came meanwhile (someone else changed the output; our own write is recorded by
/// then). Replaces `owns_stream`, which reconciled the owner again after each of its own writes:
/// two reconciles per source edit.
async fn forward_owned<K>(
    events: impl Stream<Item = Result<watcher::Event<PartialObjectMeta<K>>, watcher::Error>> + Send,
    ctx: Arc<Context>,
    reader: Store<KafkaToolConfig>,
    tx: UnboundedSender<ObjectRef<KafkaToolConfig>>,
) where
    PartialObjectMeta<K>: Resource,
{
    let settling = Arc::new(std::sync::Mutex::new(Settling::default()));
    let mut events = pin!(events);
    while let Some(event) = events.next().await {
        let (object, deleted, listed) = match event {
            Ok(watcher::Event::Apply(o)) => (o, false, false),
            Ok(watcher::Event::InitApply(o)) => (o, false, true),
            Ok(watcher::Event::Delete(o)) => (o, true, false),
            Ok(watcher::Event::Init | watcher::Event::InitDone) => continue,
            Err(error) => {
                debug!(%error, "owned output watch");
                continue;
            }
        };
        let Some(owner) = controller_owner(&object) else {
            continue;
        };
        let output: OutputKey = (object.namespace().unwrap_or_default(), object.name_any());
        lock(&settling).supersede(&output);
        if deleted {
            let _ = tx.send(owner);
            continue;
        }
        // Files edited by someone else under a current hash annotation: repair now.
        if foreign_data_owner(&object.metadata) {
            let _ = tx.send(owner);
            continue;
        }
        let hash = hash_of(object.meta());
        if recorded_by(&ctx, &reader, &owner, hash.as_deref()) {
            continue;
        }
        if listed {
            // A (re)list, not a write in flight: decide now. An owner not cached yet is
            // reconciled when it is (its own first event); at a start, the 10,000 timers this
            // spawned for 10,000 outputs listed before their owners were 3 MB at the relist peak.
            if reader.get(&owner).is_some() {
                let _ = tx.send(owner);
            }
            continue;
        }
        let ticket = lock(&settling).wait(output.clone());
        let (ctx, reader, tx, settling) =
            (ctx.clone(), reader.clone(), tx.clone(), settling.clone());
        tokio::spawn(async move {
            tokio::time::sleep(OWN_WRITE_SETTLE).await;
            let latest = lock(&settling).decide(&output, ticket);
            if latest && !recorded_by(&ctx, &reader, &owner, hash.as_deref()) {
                let _ = tx.send(owner);
            }
        });
    }
}

fn receiver_stream<T: Send + 'static>(
    rx: UnboundedReceiver<T>,
) -> impl Stream<Item = T> + Send + 'static {
    futures::stream::unfold(rx, |mut rx| async move {
        rx.recv().await.map(|item| (item, rx))
    })
}

/// Sends a config to the controller of its scope.
struct Routes {
    routes: Vec<(Option<String>, UnboundedSender<ObjectRef<KafkaToolConfig>>)>,
}

impl Routes {
    fn send(&self, object: ObjectRef<KafkaToolConfig>) {
        let ns = object.namespace.clone();
        for (scope, tx) in &self.routes {
            if scope.is_none() || scope.as_deref() == ns.as_deref() {
                let _ = tx.send(object.clone());
                return;
            }
        }
    }
}

fn identity(options: &RunOptions) -> String {
    options.identity.clone().unwrap_or_else(|| {
        let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
            .map(|h| h.trim().to_string())
            .ok()
            .filter(|h| !h.is_empty())
            .or_else(|| std::env::var("HOSTNAME").ok())
            .unwrap_or_else(|| "kafka-config-operator".to_string());
        format!("{host}-{}", std::process::id())
    })
}

fn lease_namespace(options: &RunOptions) -> String {
    options.lease_namespace.clone().unwrap_or_else(|| {
        std::fs::read_to_string("/var/run/secrets/kubernetes.io/serviceaccount/namespace")
            .map(|ns| ns.trim().to_string())
            .ok()
            .filter(|ns| !ns.is_empty())
            .unwrap_or_else(|| "default".to_string())
    })
}

pub async fn run(options: RunOptions) -> Result<(), OperatorError> {
    init_logging(options.log_format);
    let client = Client::try_default().await.map_err(OperatorError::Client)?;
    check_crds(&client, &options.watch_namespaces).await?;
    // Before anything renders: every hash this process writes is keyed with it.
    let hash_key = hash_key::ensure(
        &client,
        &KeySecret {
            namespace: &lease_namespace(&options),
            name: &options.hash_key_secret,
        },
    )
    .await
    .map_err(|e| OperatorError::HashKey(Box::new(e)))?;
    let identity = identity(&options);
    let metrics = Arc::new(Metrics::new());
    let ready = Arc::new(AtomicBool::new(false));
    let address = options.metrics_address;
    health::serve(address, metrics.clone(), ready.clone())
        .await
        .map_err(|source| OperatorError::Bind { address, source })?;
    info!(%address, %identity, scopes = ?options.watch_namespaces, "starting");

    let leader = Arc::new(AtomicBool::new(!options.leader_election));
    metrics.leader(!options.leader_election);

    let namespaces_synced = Synced::default();
    let globals_synced = Synced::default();
    let (ns_reader, ns_writer) = reflector::store::<PartialObjectMeta<Namespace>>();
    let ns_events = watcher(
        Api::<PartialObjectMeta<Namespace>>::all(client.clone()),
        watcher::Config::default(),
    )
    .default_backoff()
    .modify(strip)
    .reflect(ns_writer)
    .inspect(mark_on_init_done(namespaces_synced.clone()))
    .applied_objects()
    .predicate_filter(predicates::labels, Default::default());
    let (gcd_reader, gcd_writer) = reflector::store::<GlobalClientDefaults>();
    let gcd_events = watcher(
        Api::<GlobalClientDefaults>::all(client.clone()),
        watcher::Config::default(),
    )
    .default_backoff()
    .modify(strip_keeping_author)
    .reflect(gcd_writer)
    .inspect(mark_on_init_done(globals_synced.clone()));

    let scopes: Vec<Option<String>> = if options.watch_namespaces.is_empty() {
        vec![None]
    } else {
        options.watch_namespaces.iter().cloned().map(Some).collect()
    };
    let stores: Vec<(
        Store<KafkaToolConfig>,
        reflector::store::Writer<KafkaToolConfig>,
    )> = scopes.iter().map(|_| reflector::store()).collect();
    let readers: Vec<Store<KafkaToolConfig>> = stores.iter().map(|(r, _)| r.clone()).collect();
    let mut context = Context::new(
        client.clone(),
        metrics.clone(),
        ns_reader,
        gcd_reader,
        readers,
        leader.clone(),
        Some(identity.clone()),
        hash_key,
    );
    context.namespaces_synced = namespaces_synced;
    context.globals_synced = globals_synced;
    // One flag per kind per scope for the workload status watches (`sync_status.rs`).
    let pod_flags: Vec<[Synced; 3]> = scopes.iter().map(|_| Default::default()).collect();
    context.pods.synced = pod_flags.iter().flatten().cloned().collect();
    context.versions = scopes
        .iter()
        .map(|scope| ScopeVersions {
            scope: scope.clone(),
            ..ScopeVersions::default()
        })
        .collect();
    // One flag per workload watch (`workloads.rs`): each scope watches each kind.
    let kinds = workloads::watched_kinds(&client).await;
    let workload_flags: Vec<Vec<_>> = scopes
        .iter()
        .map(|_| kinds.iter().map(|k| (*k, Synced::default())).collect())
        .collect();
    context.workloads_synced = workload_flags
        .iter()
        .flatten()
        .map(|(_, flag)| flag.clone())
        .collect();
    let (event_queue, events) = tokio::sync::mpsc::channel(crate::operator::context::EVENT_QUEUE);
    context.event_queue = Some(event_queue);
    let ctx = Arc::new(context);
    tokio::spawn(reconcile::deliver_events(ctx.clone(), events));
    let config_synced: Vec<Synced> = stores.iter().map(|_| Synced::default()).collect();

    let mut routes = Vec::new();
    let mut reconcile_all = Vec::new();
    let mut controllers: Vec<BoxFuture<'static, ()>> = Vec::new();
    for (((scope, (reader, writer)), synced), versions) in scopes
        .into_iter()
        .zip(stores)
        .zip(config_synced.iter().cloned())
        .zip(ctx.versions.iter())
    {
        let (tx, rx) = unbounded_channel();
        routes.push((scope.clone(), tx));
        let (all_tx, all_rx) = unbounded_channel::<()>();
        reconcile_all.push(all_tx);
        controllers.push(controller(
            &client,
            scope.as_deref(),
            reader,
            writer,
            synced,
            &ctx,
            versions,
            rx,
            all_rx,
        ));
    }
    let routes = Arc::new(Routes { routes });
    for (scope, flags) in routes
        .routes
        .iter()
        .map(|(s, _)| s.clone())
        .zip(&workload_flags)
    {
        let routes = routes.clone();
        workloads::spawn(
            &client,
            scope.as_deref(),
            &ctx,
            move |config| routes.send(config),
            flags,
        );
    }
    for ((scope, _), flags) in routes.routes.iter().zip(&pod_flags) {
        let routes = routes.clone();
        sync_status::spawn(&client, scope.as_deref(), &ctx, flags, move |config| {
            routes.send(config)
        });
    }

    // Namespace label changes move GlobalClientDefaults selection: re-reconcile that namespace.
    tokio::spawn({
        let ctx = ctx.clone();
        let routes = routes.clone();
        async move {
            let mut events = pin!(ns_events);
            while let Some(event) = events.next().await {
                match event {
                    Ok(ns) => {
                        let name = ns.name_any();
                        for config in ctx.all_configs() {
                            if config.namespace().as_deref() == Some(name.as_str()) {
                                routes.send(ObjectRef::from_obj(&*config));
                            }
                        }
                    }
                    Err(error) => warn!(%error, "namespace watch"),
                }
            }
        }
    });

    // GlobalClientDefaults edits: the configs selected before and after the edit.
    tokio::spawn({
        let ctx = ctx.clone();
        let routes = routes.clone();
        async move {
            let mut generations: HashMap<String, Option<i64>> = HashMap::new();
            let mut events = pin!(gcd_events);
            while let Some(event) = events.next().await {
                let (global, deleted, initial) = match event {
                    Ok(watcher::Event::Apply(g)) => (g, false, false),
                    Ok(watcher::Event::InitApply(g)) => (g, false, true),
                    Ok(watcher::Event::Delete(g)) => (g, true, false),
                    Ok(_) => continue,
                    Err(error) => {
                        warn!(%error, "GlobalClientDefaults watch");
                        continue;
                    }
                };
                let name = global.name_any();
                let generation = global.metadata.generation;
                let changed = if deleted {
                    generations.remove(&name);
                    true
                } else {
                    // The initial list is not a change: reconciles wait for this cache anyway.
                    match generations.insert(name.clone(), generation) {
                        None => !initial,
                        Some(old) => old != generation,
                    }
                };
                if changed {
                    let affected = globals::affected(&ctx, &global);
                    debug!(global = %name, count = affected.len(), "GlobalClientDefaults changed");
                    for object in affected {
                        routes.send(object);
                    }
                }
            }
        }
    });

    // Ready once every cache has its first full list.
    tokio::spawn({
        let ready = ready.clone();
        let flags: Vec<Synced> = [ctx.namespaces_synced.clone(), ctx.globals_synced.clone()]
            .into_iter()
            .chain(config_synced.iter().cloned())
            .chain(ctx.workloads_synced.iter().cloned())
            .chain(
                ctx.versions
                    .iter()
                    .flat_map(|v| [v.config_maps.synced.clone(), v.secrets.synced.clone()]),
            )
            .collect();
        async move {
            for flag in flags {
                flag.wait().await;
            }
            ready.store(true, Ordering::SeqCst);
            info!("caches synced; ready");
        }
    });

    tokio::spawn(globals::keep_status(ctx.clone()));
    tokio::spawn(reconcile::keep_ready_gauge(ctx.clone()));

    let lease = options.leader_election.then(|| {
        Arc::new(LeaseLock::new(
            client.clone(),
            &lease_namespace(&options),
            &options.lease_name,
            &identity,
        ))
    });
    let campaign: BoxFuture<'static, OperatorError> = match &lease {
        Some(lease) => campaign(
            lease.clone(),
            leader.clone(),
            metrics.clone(),
            ready.clone(),
            reconcile_all,
        )
        .boxed(),
        None => futures::future::pending().boxed(),
    };

    let result = tokio::select! {
        _ = futures::future::join_all(controllers) => Ok(()),
        lost = campaign => Err(lost),
        () = shutdown_signal() => {
            info!("termination signal; shutting down");
            Ok(())
        }
    };
    leader.store(false, Ordering::SeqCst);
    if let (Some(lease), Ok(())) = (&lease, &result) {
        lease.release().await;
    }
    result
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
    triggers: UnboundedReceiver<ObjectRef<KafkaToolConfig>>,
    reconcile_all: UnboundedReceiver<()>,
) -> BoxFuture<'static, ()> {
    let report_ctx = ctx.clone();
    let generations = Arc::new(std::sync::Mutex::new(Generations::default()));
    let (owned_tx, owned_rx) = unbounded_channel();
    let primary = watcher(
        scoped::<DeserializeGuard<KafkaToolConfig>>(client, scope),
        watcher::Config::default(),
    )
    .default_backoff()
    .filter_map(move |event| {
        let ctx = report_ctx.clone();
        async move {
            let mut invalid = Vec::new();
            let event = match event {
                Ok(event) => unguard(event, &mut invalid).map(Ok),
                Err(error) => Some(Err(error)),
            };
            for object in invalid {
                report_invalid(&ctx, object).await;
            }
            event
        }
    })
    .modify(strip_config)
    .modify(compact_status)
    .reflect(writer)
    // After the cache has the event: a status write is forgotten only once the cache holds it,
    // and the configs a relist found changed reconcile once the store has them.
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
        ctx.clone(),
        reader.clone(),
        owned_tx.clone(),
    ));
    tokio::spawn(forward_owned(
        watcher(scoped::<PartialObjectMeta<Secret>>(client, scope), owned).default_backoff(),
        ctx.clone(),
        reader.clone(),
        owned_tx.clone(),
    ));
    // The version caches see each event before it becomes a trigger, so a reconcile started by
    // an edit never finds the old resourceVersion there. What a relist no longer lists (deleted
    // while the watch was down) reconciles every config that reads it, an output's owner too.
    let gone = |ctx: Arc<Context>, kind: SourceKind, tx: UnboundedSender<_>| {
        move |objects: Vec<(String, String)>| {
            for (namespace, name) in objects {
                for config in lock(&ctx.index).dependants(&namespace, kind, &name) {
                    let _ = tx.send(config.object_ref());
                }
            }
        }
    };
    let cm_versions = versions.config_maps.clone();
    let cm_gone = gone(ctx.clone(), SourceKind::ConfigMap, owned_tx.clone());
    let config_maps = watcher(
        scoped::<PartialObjectMeta<ConfigMap>>(client, scope),
        watcher::Config::default(),
    )
    .default_backoff()
    .inspect(move |event| {
        if let Ok(event) = event {
            cm_gone(cm_versions.observe(event));
        }
    })
    .touched_objects();
    let secret_versions = versions.secrets.clone();
    let secret_gone = gone(ctx.clone(), SourceKind::Secret, owned_tx);
    let secrets = watcher(
        scoped::<PartialObjectMeta<Secret>>(client, scope),
        watcher::Config::default(),
    )
    .default_backoff()
    .inspect(move |event| {
        if let Ok(event) = event {
            secret_gone(secret_versions.observe(event));
        }
    })
    .touched_objects();
    let (ctx_cm, ctx_secret) = (ctx.clone(), ctx.clone());
    // An output is in the index too (under its own name, for OutputConflict); its controller
    // owner hears about it from `forward_owned`, which ignores the operator's own writes.
    let dependants = move |ctx: &Context,
                           kind: SourceKind,
                           ns: Option<String>,
                           name: String,
                           owner: Option<ObjectRef<KafkaToolConfig>>| {
        let ns = ns.unwrap_or_default();
        lock(&ctx.index)
            .dependants(&ns, kind, &name)
            .into_iter()
            .map(|config| config.object_ref())
            .filter(|config| owner.as_ref() != Some(config))
            .collect::<Vec<_>>()
    };
    let scope_name = scope.unwrap_or("all namespaces").to_string();
    Controller::for_stream(primary, reader)
        .with_config(
            ControllerConfig::default()
                .debounce(DEBOUNCE)
                .concurrency(CONCURRENCY),
        )
        .watches_stream(config_maps, move |cm: PartialObjectMeta<ConfigMap>| {
            let owner = controller_owner(&cm);
            dependants(
                &ctx_cm,
                SourceKind::ConfigMap,
                cm.namespace(),
                cm.name_any(),
                owner,
            )
        })
        .watches_stream(secrets, move |s: PartialObjectMeta<Secret>| {
            let owner = controller_owner(&s);
            dependants(
                &ctx_secret,
                SourceKind::Secret,
                s.namespace(),
                s.name_any(),
                owner,
            )
        })
        .reconcile_on(receiver_stream(owned_rx))
        .reconcile_on(receiver_stream(triggers))
        .reconcile_all_on(receiver_stream(reconcile_all))
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

fn placeholder(metadata: kube::core::ObjectMeta) -> KafkaToolConfig {
    KafkaToolConfig {
        metadata,
        spec: KafkaToolConfigSpec {
            config: Default::default(),
        },
        status: None,
    }
}

/// Isolates a KafkaToolConfig that does not deserialize into our types (e.g. stored under a
/// looser or older schema): without the guard one such object fails the whole list and stalls
/// every config of the scope. It is collected in `invalid` (to report) and leaves the cache (a
/// `Delete`), so nothing reconciles a stale spec; every other config keeps reconciling.
fn unguard(
    event: watcher::Event<DeserializeGuard<KafkaToolConfig>>,
    invalid: &mut Vec<InvalidObject>,
) -> Option<watcher::Event<KafkaToolConfig>> {
    use watcher::Event as E;
    match event {
        E::Init => Some(E::Init),
        E::InitDone => Some(E::InitDone),
        E::InitApply(DeserializeGuard(Ok(k))) => Some(E::InitApply(k)),
        E::InitApply(DeserializeGuard(Err(bad))) => {
            invalid.push(bad);
            None
        }
        E::Apply(DeserializeGuard(Ok(k))) => Some(E::Apply(k)),
        E::Apply(DeserializeGuard(Err(bad))) => {
            let metadata = bad.metadata.clone();
            invalid.push(bad);
            Some(E::Delete(placeholder(metadata)))
        }
        E::Delete(DeserializeGuard(Ok(k))) => Some(E::Delete(k)),
        E::Delete(DeserializeGuard(Err(bad))) => Some(E::Delete(placeholder(bad.metadata))),
    }
}

/// A log line and (on the leader) a Warning Event and a status naming the object: Ready=False and
/// Valid=False with reason `InvalidSpec`, so kstatus, Argo CD and `kubectl get` show it too. The
/// deserializer's message is not repeated: it may quote a value of the spec, and values never go
/// to logs, events or status.
async fn report_invalid(ctx: &Context, object: InvalidObject) {
    let meta = object.metadata;
    let namespace = meta.namespace.clone().unwrap_or_default();
    let name = meta.name.clone().unwrap_or_default();
    if !ctx.is_leader() {
        debug!(%namespace, %name, "KafkaToolConfig does not match the operator's types (the leader reports it)");
        return;
    }
    let key = ConfigId::new(&namespace, &name);
    if lock(&ctx.invalid_reported).insert(key, meta.generation) == Some(meta.generation) {
        return;
    }
    warn!(%namespace, %name, "KafkaToolConfig does not match the operator's types; skipped until it is fixed");
    let reference = ObjectReference {
        api_version: Some(KafkaToolConfig::api_version(&()).into_owned()),
        kind: Some(KafkaToolConfig::kind(&()).into_owned()),
        name: meta.name,
        namespace: meta.namespace,
        uid: meta.uid,
        resource_version: meta.resource_version,
        ..ObjectReference::default()
    };
    let event = Event {
        type_: EventType::Warning,
        reason: INVALID_SPEC.into(),
        note: Some(INVALID_SPEC_MESSAGE.into()),
        action: "Decode".into(),
        secondary: None,
    };
    match ctx.recorder.publish(&event, &reference).await {
        Ok(()) => ctx.metrics.write("Event"),
        Err(e) => warn!(error = %e, "cannot publish an event"),
    }
    let api: Api<DynamicObject> = Api::namespaced_with(
        ctx.client.clone(),
        &namespace,
        &ApiResource::erase::<KafkaToolConfig>(&()),
    );
    let patch = invalid_status(meta.generation, &crate::operator::reconcile::now());
    match api
        .patch_status(&name, &PatchParams::default(), &Patch::Merge(&patch))
        .await
    {
        Ok(_) => ctx.metrics.write("Status"),
        Err(e) => {
            // Try again on the next event rather than never.
            lock(&ctx.invalid_reported).remove(&ConfigId::new(&namespace, &name));
            warn!(%namespace, %name, error = %e, "cannot write the status of an undecodable KafkaToolConfig");
        }
    }
}

const INVALID_SPEC: &str = "InvalidSpec";
const INVALID_SPEC_MESSAGE: &str = "this KafkaToolConfig does not match the operator's types (check it \
     with `kafka-config-operator validate`); it is skipped until fixed";

/// The status merge patch for a KafkaToolConfig that does not decode (conditions are replaced as
/// a whole; the last good hash and history stay).
fn invalid_status(generation: Option<i64>, now: &str) -> serde_json::Value {
    let mut conditions = Vec::new();
    // Stalled: kstatus (Flux) reports Failed; only an edit of the spec can fix it.
    for (type_, value) in [
        (status::READY, "False"),
        (status::STALLED, "True"),
        (status::VALID, "False"),
    ] {
        status::set_condition(
            &mut conditions,
            &[],
            type_,
            value,
            INVALID_SPEC,
            INVALID_SPEC_MESSAGE.to_string(),
            generation,
            now,
        );
    }
    serde_json::json!({"status": {"observedGeneration": generation, "conditions": conditions}})
}

/// Campaigns for the Lease until leadership is lost (then returns the reason).
async fn campaign(
    lease: Arc<LeaseLock>,
    leader: Arc<AtomicBool>,
    metrics: Arc<Metrics>,
    ready: Arc<AtomicBool>,
    reconcile_all: Vec<UnboundedSender<()>>,
) -> OperatorError {
    // Campaign only with warm caches, so the first reconcile-all sees every object.
    while !ready.load(Ordering::SeqCst) {
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let mut last_renewal: Option<Instant> = None;
    loop {
        let is_leader = leader.load(Ordering::SeqCst);
        // A Lease request that hangs (etcd down, a partition) must not keep a leader past its
        // renew deadline: the Lease may expire and a standby take over meanwhile. The attempt
        // gets what is left of the deadline (a standby the whole deadline), and a renewal counts
        // from when it started, which is the renewTime it writes.
        let started = Instant::now();
        let budget = match (is_leader, last_renewal) {
            (true, Some(t)) => leader::RENEW_DEADLINE.saturating_sub(t.elapsed()),
            _ => leader::RENEW_DEADLINE,
        };
        let attempt = tokio::time::timeout(budget, lease.try_acquire_or_renew())
            .await
            .unwrap_or(Err(leader::LeaderError::Timeout(budget)));
        match attempt {
            Ok(Attempt::Held) => {
                last_renewal = Some(started);
                if !is_leader {
                    leader.store(true, Ordering::SeqCst);
                    metrics.leader(true);
                    info!(identity = %lease.identity(), "became the leader; reconciling everything");
                    for tx in &reconcile_all {
                        let _ = tx.send(());
                    }
                }
            }
            Ok(Attempt::HeldBy(holder)) => {
                if is_leader {
                    leader.store(false, Ordering::SeqCst);
                    metrics.leader(false);
                    return OperatorError::LeadershipLost(format!("(now held by {holder})"));
                }
                debug!(%holder, "standing by");
            }
            Ok(Attempt::Conflict) => debug!("lost a race on the Lease; retrying"),
            Err(e) => warn!(error = %e, "leader election"),
        }
        if leader.load(Ordering::SeqCst)
            && last_renewal.is_some_and(|t| t.elapsed() > leader::RENEW_DEADLINE)
        {
            leader.store(false, Ordering::SeqCst);
            metrics.leader(false);
            error!("could not renew the leader Lease in time");
            return OperatorError::LeadershipLost("(renewal deadline passed)".to_string());
        }
        let pause = if leader.load(Ordering::SeqCst) {
            leader::RENEW_EVERY
        } else {
            leader::RETRY_EVERY
        };
        tokio::time::sleep(pause).await;
    }
}

async fn shutdown_signal() {
    let ctrl_c = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = ctrl_c => {},
                    _ = term.recv() => {},
                }
            }
            Err(_) => {
                let _ = ctrl_c.await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = ctrl_c.await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::operator::context::BACKOFF_CAP;
    use crate::output::HASH_ANNOTATION;

    #[test]
    fn an_undecodable_config_gets_ready_and_valid_false_and_stalled_at_its_generation() {
        let patch = invalid_status(Some(7), "2026-12-02T00:00:00Z");
        assert_eq!(patch["status"]["observedGeneration"], 7);
        let conditions = patch["status"]["conditions"]
            .as_array()
            .cloned()
            .expect("status.conditions is a list");
        let types: Vec<&str> = conditions
            .iter()
            .filter_map(|c| c["type"].as_str())
            .collect();
        assert_eq!(types, ["Ready", "Stalled", "Valid"]);
        for c in &conditions {
            // kstatus: Failed until the spec is edited.
            let expected = if c["type"] == "Stalled" {
                "True"
            } else {
                "False"
            };
            assert_eq!(c["status"], expected);
            assert_eq!(c["reason"], "InvalidSpec");
            assert_eq!(c["observedGeneration"], 7);
            assert_eq!(c["lastTransitionTime"], "2026-12-02T00:00:00Z");
        }
    }

    #[test]
    fn a_config_keeps_its_spec_author_only_until_its_status_records_the_generation() {
        let with = |generation: i64, status: serde_json::Value| -> KafkaToolConfig {
            let mut config: KafkaToolConfig = serde_json::from_value(serde_json::json!({
                "apiVersion": "kafkaconfig.dev/v1alpha1",
                "kind": "KafkaToolConfig",
                "metadata": {"name": "c", "namespace": "ns", "generation": generation,
                    "managedFields": [{"manager": "argocd-controller", "operation": "Apply",
                        "time": "2026-12-06T00:00:00Z", "fieldsType": "FieldsV1",
                        "fieldsV1": {"f:spec": {}}}]},
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

    fn guard(spec: serde_json::Value) -> DeserializeGuard<KafkaToolConfig> {
        serde_json::from_value(serde_json::json!({
            "apiVersion": "kafkaconfig.dev/v1alpha1",
            "kind": "KafkaToolConfig",
            "metadata": {"name": "c", "namespace": "ns"},
            "spec": spec,
        }))
        .expect("metadata deserializes")
    }

    #[test]
    fn an_output_maps_to_its_controller_kafkatoolconfig_only() {
        let output: PartialObjectMeta<ConfigMap> = serde_json::from_value(serde_json::json!({
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {
                "name": "orders-kafka",
                "namespace": "ns",
                "annotations": {HASH_ANNOTATION: "sha256:ab"},
                "ownerReferences": [
                    {"apiVersion": "apps/v1", "kind": "Deployment", "name": "x", "uid": "1", "controller": false},
                    {"apiVersion": "kafkaconfig.dev/v1alpha1", "kind": "KafkaToolConfig", "name": "orders", "uid": "2", "controller": true},
                ],
            },
        }))
        .expect("metadata deserializes");
        assert_eq!(
            controller_owner(&output),
            Some(ObjectRef::new("orders").within("ns"))
        );
        assert_eq!(hash_of(output.meta()).as_deref(), Some("sha256:ab"));
        let foreign: PartialObjectMeta<ConfigMap> = serde_json::from_value(serde_json::json!({
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "orders-kafka", "namespace": "ns"},
        }))
        .expect("metadata deserializes");
        assert_eq!(controller_owner(&foreign), None);
        // Nothing cached: no hash counts as recorded.
        let (reader, _writer) = reflector::store::<KafkaToolConfig>();
        let owner = ObjectRef::new("orders").within("ns");
        assert!(!recorded(&reader, &owner, Some("sha256:ab"), || None));
        // Our status write that the cache has not brought in yet (its watch is down) records it.
        assert!(recorded(&reader, &owner, Some("sha256:ab"), || Some(
            "sha256:ab".into()
        )));
        assert!(!recorded(&reader, &owner, Some("sha256:ab"), || Some(
            "sha256:cd".into()
        )));
        assert!(!recorded(&reader, &owner, None, || None));
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
        let client = Client::try_from(kube::Config::new(uri)).expect("a client");
        Context::new(
            client,
            Arc::new(Metrics::new()),
            reflector::store::<PartialObjectMeta<Namespace>>().0,
            reflector::store::<GlobalClientDefaults>().0,
            vec![configs],
            Arc::new(AtomicBool::new(true)),
            None,
            crate::operator::fixtures::test_hash_key(),
        )
    }

    #[tokio::test]
    async fn a_status_write_is_forgotten_only_when_a_relist_has_put_it_in_the_store() {
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
        let written = KafkaToolConfigStatus {
            config_hash: Some("sha256:b".into()),
            ..KafkaToolConfigStatus::default()
        };
        let orders = ConfigId::new("ns", "orders");
        let gone = ConfigId::new("ns", "gone");
        ctx.status_written(&orders, Some("12".into()), &written);
        ctx.status_written(&gone, Some("13".into()), &written);
        // The watch expires; the relist lists our write, but the store shows it only at the end:
        // a reconcile meanwhile (the store's object is at 10) builds on our write.
        feed(watcher::Event::Init);
        feed(watcher::Event::InitApply(listed("orders", "12")));
        assert!(ctx.unseen_status_write(&orders, Some("10")).is_some());
        assert_eq!(
            ctx.unseen_written_hash(&orders).as_deref(),
            Some("sha256:b")
        );
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
        assert_eq!(ctx.unseen_written_hash(&orders), None);
        assert_eq!(ctx.unseen_written_hash(&gone), None);
        // …and leaves the reverse index and the per-config tables; so does a config deleted
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

    #[test]
    fn only_the_latest_event_of_an_output_is_decided_after_the_settle_time() {
        let mut settling = Settling::default();
        let output = ("ns".to_string(), "orders-kafka".to_string());
        let other = ("ns".to_string(), "payments-kafka".to_string());
        // Two writes of ours in a row (an old spec's render, then the new spec's): the first
        // event's hash is no longer the status's when its check runs, but it is superseded.
        let first = settling.wait(output.clone());
        let elsewhere = settling.wait(other.clone());
        settling.supersede(&output);
        let second = settling.wait(output.clone());
        assert!(!settling.decide(&output, first));
        assert!(settling.decide(&output, second));
        assert!(!settling.decide(&output, second), "decided once");
        assert!(settling.decide(&other, elsewhere));
        // A later event that is decided at once (recorded, listed, deleted) supersedes too.
        let waiting = settling.wait(output.clone());
        settling.supersede(&output);
        assert!(!settling.decide(&output, waiting));
        assert!(settling.waiting.is_empty(), "nothing is kept once decided");
    }

    #[test]
    fn an_invalid_config_is_reported_and_leaves_the_cache() {
        let good = serde_json::json!({"tool": "kafka-console-producer"});
        let bad = serde_json::json!({"tool": 42, "rollout": "sometimes"});
        let mut invalid = Vec::new();
        assert!(matches!(
            unguard(watcher::Event::InitApply(guard(good.clone())), &mut invalid),
            Some(watcher::Event::InitApply(k)) if k.name_any() == "c"
        ));
        assert!(invalid.is_empty());
        assert!(unguard(watcher::Event::InitApply(guard(bad.clone())), &mut invalid).is_none());
        assert_eq!(invalid.len(), 1);
        assert!(matches!(
            unguard(watcher::Event::Apply(guard(bad.clone())), &mut invalid),
            Some(watcher::Event::Delete(k)) if k.name_any() == "c" && k.namespace().as_deref() == Some("ns")
        ));
        assert_eq!(invalid.len(), 2);
        assert!(matches!(
            unguard(watcher::Event::Delete(guard(bad)), &mut invalid),
            Some(watcher::Event::Delete(_))
        ));
        assert_eq!(invalid.len(), 2, "a deletion is not reported");
        assert!(matches!(
            unguard(watcher::Event::Apply(guard(good)), &mut invalid),
            Some(watcher::Event::Apply(_))
        ));
    }
}
