//! `run`: the client, the health server, the shared caches (Namespaces, GlobalClientDefaults)
//! and their triggers, one controller per scope, the workload watches, and the leader campaign.

use std::collections::HashMap;
use std::pin::pin;
use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use futures::{FutureExt, StreamExt};
use k8s_openapi::api::core::v1::Namespace;
use kube::api::Api;
use kube::core::PartialObjectMeta;
use kube::runtime::reflector::{self, ObjectRef, Store};
use kube::runtime::watcher::{self, watcher};
use kube::runtime::{WatchStreamExt, predicates};
use kube::{Client, ResourceExt};
use kube_lease_manager::{LeaseManager, LeaseManagerBuilder};
use tokio::sync::OnceCell;
use tokio::sync::mpsc::{UnboundedSender, unbounded_channel};
use tokio::sync::watch;
use tracing::{debug, error, info, warn};

use super::caches::{mark_on_init_done, strip, strip_keeping_author};
use crate::engine::spec::RolloutKind;
use crate::operator::configs_seen::ConfigsSeen;
use crate::operator::context::{Caches, Context, ScopeVersions};
use crate::operator::crd::{GlobalClientDefaults, KafkaToolConfig};
use crate::operator::globals;
use crate::operator::hash_key::{self, KeySecret};
use crate::operator::health;
use crate::operator::metrics::Metrics;
use crate::operator::reconcile;
use crate::operator::sync_status;
use crate::operator::synced::Synced;
use crate::operator::workloads;
use crate::operator::{LogFormat, OperatorError, RunOptions, check_crds};

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

/// Sends a config to the controller of its scope: (namespace, or None for all, and its queue).
struct Routes(Vec<(Option<String>, UnboundedSender<ObjectRef<KafkaToolConfig>>)>);

impl Routes {
    fn send(&self, object: ObjectRef<KafkaToolConfig>) {
        let mut routes = self.0.iter();
        if let Some((_, tx)) = routes.find(|(ns, _)| ns.is_none() || *ns == object.namespace) {
            let _ = tx.send(object);
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
    // Inferred once: the Lease's client is the same connection settings with short timeouts.
    let config = kube::Config::infer()
        .await
        .map_err(|e| OperatorError::Client(kube::Error::InferConfig(e)))?;
    let client = Client::try_from(config.clone()).map_err(OperatorError::Client)?;
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
    let ready = Synced::default();
    let address = options.metrics_address;
    health::serve(address, metrics.clone(), ready.clone())
        .await
        .map_err(|source| OperatorError::Bind { address, source })?;
    info!(%address, %identity, scopes = ?options.watch_namespaces, "starting");

    // Only the campaign changes it (and the shutdown below); reconciles and controllers read it.
    let leader = watch::Sender::new(!options.leader_election);
    metrics.leader(!options.leader_election);

    let (namespaces, namespaces_writer) = reflector::store();
    let (globals, globals_writer) = reflector::store();
    let (namespaces_synced, globals_synced) = (Synced::default(), Synced::default());
    let kinds = workloads::watched_kinds(&client).await;
    let scopes = Scope::all(&options, &kinds);
    let versions: Vec<ScopeVersions> = scopes
        .iter()
        .map(|scope| ScopeVersions {
            scope: scope.namespace.clone(),
            ..ScopeVersions::default()
        })
        .collect();
    // What reconciles wait for: every cache they read has its first list (the pods' numbers
    // too: with them a restart proves a rollout current without reading the workload).
    let inputs_synced = Synced::all(
        [namespaces_synced.clone(), globals_synced.clone()]
            .into_iter()
            .chain(scopes.iter().flat_map(Scope::input_flags))
            .chain(
                versions
                    .iter()
                    .flat_map(|v| [v.config_maps.synced.clone(), v.secrets.synced.clone()]),
            )
            .collect(),
    );
    let (event_queue, events) = tokio::sync::mpsc::channel(crate::operator::events::EVENT_QUEUE);
    let caches = Caches {
        namespaces,
        globals,
        configs: scopes.iter().map(|s| s.configs.clone()).collect(),
        versions,
        synced: inputs_synced.clone(),
        pods_synced: scopes.iter().flat_map(|s| s.pods_synced.clone()).collect(),
        configs_seen: ConfigsSeen::default(),
    };
    let ctx = Arc::new(Context::new(
        client.clone(),
        metrics.clone(),
        caches,
        leader.subscribe(),
        Some(identity.clone()),
        hash_key,
        Some(event_queue),
    ));
    let (stopping, stopping_rx) = watch::channel(false);
    let delivery = tokio::spawn(reconcile::deliver_events(ctx.clone(), events, stopping_rx));
    let every_cache = std::iter::once(inputs_synced)
        .chain(scopes.iter().map(|s| s.configs_synced.clone()))
        .collect();
    tokio::spawn(mark_ready(ready.clone(), every_cache));

    let (senders, receivers): (Vec<_>, Vec<_>) = scopes.iter().map(|_| unbounded_channel()).unzip();
    let scope_names = scopes.iter().map(|s| s.namespace.clone());
    let routes = Arc::new(Routes(scope_names.zip(senders).collect()));
    let mut controllers: Vec<BoxFuture<'static, ()>> = Vec::new();
    for ((scope, triggers), versions) in scopes
        .into_iter()
        .zip(receivers)
        .zip(ctx.caches.versions.iter())
    {
        let namespace = scope.namespace.as_deref();
        let send = {
            let routes = routes.clone();
            move |config| routes.send(config)
        };
        workloads::spawn(
            &client,
            namespace,
            &ctx,
            send.clone(),
            &scope.workloads_synced,
        );
        sync_status::spawn(&client, namespace, &ctx, &scope.pods_synced, send);
        controllers.push(super::controller(
            &client,
            namespace,
            scope.configs,
            scope.writer,
            scope.configs_synced,
            &ctx,
            versions,
            triggers,
            leader.subscribe(),
        ));
    }
    tokio::spawn(namespace_triggers(
        client.clone(),
        namespaces_writer,
        namespaces_synced,
        ctx.clone(),
        routes.clone(),
    ));
    tokio::spawn(global_triggers(
        client.clone(),
        globals_writer,
        globals_synced,
        ctx.clone(),
        routes,
    ));
    tokio::spawn(globals::keep_status(ctx.clone()));
    tokio::spawn(reconcile::keep_ready_gauge(ctx.clone()));

    // Set by the campaign once it has opened the Lease; released on a clean stop.
    let lease = Arc::new(OnceCell::new());
    let campaign: BoxFuture<'static, OperatorError> = match options.leader_election {
        true => campaign(
            lease_builder(config, &options, &identity)?,
            lease.clone(),
            leader.clone(),
            metrics.clone(),
            ready.clone(),
        )
        .boxed(),
        false => futures::future::pending().boxed(),
    };

    let result = tokio::select! {
        _ = futures::future::join_all(controllers) => Ok(()),
        lost = campaign => Err(lost),
        () = shutdown_signal() => {
            info!("termination signal; shutting down");
            Ok(())
        }
    };
    leader.send_replace(false);
    if result.is_ok() {
        if let Some(lease) = lease.get() {
            // A standby takes over at once instead of after the Lease runs out.
            match lease.release().await {
                Ok(()) => info!("released the leader Lease"),
                Err(e) => warn!(error = %e, "cannot release the leader Lease; it will run out"),
            }
        }
        // The Events of writes already made, as far as the grace period allows.
        stopping.send_replace(true);
        if tokio::time::timeout(EVENT_DRAIN, delivery).await.is_err() {
            warn!("queued Events not all published before shutdown");
        }
    }
    result
}

/// One watched scope (a namespace, or every namespace): its config store and the flags its
/// watches set on their first full list.
struct Scope {
    namespace: Option<String>,
    configs: Store<KafkaToolConfig>,
    writer: reflector::store::Writer<KafkaToolConfig>,
    configs_synced: Synced,
    /// One per workload watch (`workloads.rs`): each scope watches each kind.
    workloads_synced: Vec<(RolloutKind, Synced)>,
    /// The workload status watches (`sync_status.rs`).
    pods_synced: [Synced; 3],
}

impl Scope {
    fn all(options: &RunOptions, kinds: &[RolloutKind]) -> Vec<Scope> {
        let namespaces: Vec<Option<String>> = if options.watch_namespaces.is_empty() {
            vec![None]
        } else {
            options.watch_namespaces.iter().cloned().map(Some).collect()
        };
        namespaces
            .into_iter()
            .map(|namespace| {
                let (configs, writer) = reflector::store();
                Scope {
                    namespace,
                    configs,
                    writer,
                    configs_synced: Synced::default(),
                    workloads_synced: kinds.iter().map(|k| (*k, Synced::default())).collect(),
                    pods_synced: Default::default(),
                }
            })
            .collect()
    }

    /// The flags of the caches a reconcile reads besides the configs.
    fn input_flags(&self) -> impl Iterator<Item = Synced> + '_ {
        let workloads = self.workloads_synced.iter().map(|(_, flag)| flag.clone());
        workloads.chain(self.pods_synced.iter().cloned())
    }
}

/// Ready once every cache has its first full list.
async fn mark_ready(ready: Synced, flags: Vec<Synced>) {
    for flag in flags {
        flag.wait().await;
    }
    ready.mark();
    info!("caches synced; ready");
}

/// The Namespace cache (metadata only). A label change moves GlobalClientDefaults selection:
/// every config of that namespace is reconciled again.
async fn namespace_triggers(
    client: Client,
    writer: reflector::store::Writer<PartialObjectMeta<Namespace>>,
    synced: Synced,
    ctx: Arc<Context>,
    routes: Arc<Routes>,
) {
    let events = watcher(
        Api::<PartialObjectMeta<Namespace>>::all(client),
        watcher::Config::default(),
    )
    .default_backoff()
    .modify(strip)
    .reflect(writer)
    .inspect(mark_on_init_done(synced))
    .applied_objects()
    .predicate_filter(predicates::labels, Default::default());
    let mut events = pin!(events);
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

/// The GlobalClientDefaults cache. An edit reconciles the configs selected before and after it.
async fn global_triggers(
    client: Client,
    writer: reflector::store::Writer<GlobalClientDefaults>,
    synced: Synced,
    ctx: Arc<Context>,
    routes: Arc<Routes>,
) {
    let events = watcher(
        Api::<GlobalClientDefaults>::all(client),
        watcher::Config::default(),
    )
    .default_backoff()
    .modify(strip_keeping_author)
    .reflect(writer)
    .inspect(mark_on_init_done(synced));
    let mut generations: HashMap<String, Option<i64>> = HashMap::new();
    let mut events = pin!(events);
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
        let old = match deleted {
            true => generations.remove(&name),
            false => generations.insert(name.clone(), generation),
        };
        // The initial list is not a change: reconciles wait for this cache anyway.
        let changed = deleted || old.map_or(!initial, |old| old != generation);
        if changed {
            let affected = globals::affected(&ctx, &global);
            debug!(global = %name, count = affected.len(), "GlobalClientDefaults changed");
            for object in affected {
                routes.send(object);
            }
        }
    }
}

/// How long a clean shutdown waits for the queued Events (Kubernetes allows 30 s by default).
const EVENT_DRAIN: Duration = Duration::from_secs(5);

/// The Lease is held for 15 s after each renewal and renewed 10 s before it runs out (every 5 s).
const LEASE_SECONDS: u64 = 15;
const RENEW_MARGIN_SECONDS: u64 = 10;
/// Lease requests go through their own client with this timeout: a renewal that hangs (etcd
/// down) fails within it (a connect and a read at most: 13 s into the 15 s Lease), and the
/// leader steps down.
const LEASE_REQUEST_TIMEOUT: Duration = Duration::from_secs(4);
/// A standby whose Lease request failed tries again after this.
const RETRY_EVERY: Duration = Duration::from_secs(2);

/// The leader election: kube-lease-manager on the Lease `options.lease_name` (created if it
/// does not exist), with this replica's identity, through a client of its own.
fn lease_builder(
    mut config: kube::Config,
    options: &RunOptions,
    identity: &str,
) -> Result<impl Fn() -> LeaseManagerBuilder + Send + 'static, OperatorError> {
    config.connect_timeout = Some(LEASE_REQUEST_TIMEOUT);
    config.read_timeout = Some(LEASE_REQUEST_TIMEOUT);
    config.write_timeout = Some(LEASE_REQUEST_TIMEOUT);
    config.reset_reader_on_write = true;
    let client = Client::try_from(config).map_err(OperatorError::Client)?;
    let (name, namespace) = (options.lease_name.clone(), lease_namespace(options));
    let identity = identity.to_string();
    Ok(move || {
        LeaseManagerBuilder::new(client.clone(), &name)
            .with_namespace(&namespace)
            .with_identity(&identity)
            .with_duration(LEASE_SECONDS)
            .with_grace(RENEW_MARGIN_SECONDS)
    })
}

/// Campaigns for the Lease until leadership is lost (then returns the reason). A leader whose
/// Lease request fails steps down at once: it cannot prove it still holds the Lease, and a
/// standby may take it over when it runs out.
async fn campaign(
    builder: impl Fn() -> LeaseManagerBuilder + Send + 'static,
    opened: Arc<OnceCell<LeaseManager>>,
    leader: watch::Sender<bool>,
    metrics: Arc<Metrics>,
    ready: Synced,
) -> OperatorError {
    // Campaign only with warm caches, so the first reconcile-all sees every object.
    ready.wait().await;
    let lease = loop {
        match builder().build().await {
            Ok(manager) => break opened.get_or_init(|| async { manager }).await,
            Err(e) => {
                warn!(error = %e, "cannot open the leader Lease; retrying");
                tokio::time::sleep(RETRY_EVERY).await;
            }
        }
    };
    loop {
        let leading = *leader.borrow();
        match lease.changed().await {
            Ok(true) => {
                metrics.leader(true);
                info!("became the leader; reconciling everything");
                // Each controller reconciles everything on this change (`became_leader`).
                leader.send_replace(true);
            }
            Ok(false) if leading => {
                return step_down(
                    &leader,
                    &metrics,
                    "(now held by another replica)".to_string(),
                );
            }
            Ok(false) => debug!("standing by"),
            Err(e) if leading => {
                error!(error = %e, "could not renew the leader Lease");
                return step_down(&leader, &metrics, format!("(renewal failed: {e})"));
            }
            Err(e) => {
                warn!(error = %e, "leader election");
                tokio::time::sleep(RETRY_EVERY).await;
            }
        }
    }
}

fn step_down(leader: &watch::Sender<bool>, metrics: &Metrics, why: String) -> OperatorError {
    leader.send_replace(false);
    metrics.leader(false);
    OperatorError::LeadershipLost(why)
}

async fn shutdown_signal() {
    #[cfg(unix)]
    if let Ok(mut term) = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
    {
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {},
            _ = term.recv() => {},
        }
        return;
    }
    let _ = tokio::signal::ctrl_c().await;
}
