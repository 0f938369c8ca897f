//! `run`: the client, the health server, the shared caches (Namespaces, GlobalClientDefaults)
//! and their triggers, one controller per scope, the workload watches, and the leader campaign.

use std::collections::HashMap;
use std::pin::pin;
use std::sync::Arc;
use std::time::Instant;

use futures::future::BoxFuture;
use futures::{FutureExt, StreamExt};
use k8s_openapi::api::core::v1::Namespace;
use kube::api::Api;
use kube::core::PartialObjectMeta;
use kube::runtime::reflector::{self, ObjectRef, Store};
use kube::runtime::watcher::{self, watcher};
use kube::runtime::{WatchStreamExt, predicates};
use kube::{Client, ResourceExt};
use tokio::sync::mpsc::{UnboundedSender, unbounded_channel};
use tokio::sync::watch;
use tracing::{debug, error, info, warn};

use super::caches::{mark_on_init_done, strip, strip_keeping_author};
use crate::operator::context::{Caches, Context, ScopeVersions};
use crate::operator::crd::{GlobalClientDefaults, KafkaToolConfig};
use crate::operator::globals;
use crate::operator::hash_key::{self, KeySecret};
use crate::operator::health;
use crate::operator::leader::{self, Attempt, LeaseLock};
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
    let ready = Synced::default();
    let address = options.metrics_address;
    health::serve(address, metrics.clone(), ready.clone())
        .await
        .map_err(|source| OperatorError::Bind { address, source })?;
    info!(%address, %identity, scopes = ?options.watch_namespaces, "starting");

    // Only the campaign changes it (and the shutdown below); reconciles and controllers read it.
    let leader = watch::Sender::new(!options.leader_election);
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
    // One flag per kind per scope for the workload status watches (`sync_status.rs`).
    let pod_flags: Vec<[Synced; 3]> = scopes.iter().map(|_| Default::default()).collect();
    let versions: Vec<ScopeVersions> = scopes
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
    // What reconciles wait for: every cache they read has its first list (the pods' numbers
    // too: with them a restart proves a rollout current without reading the workload).
    let inputs_synced = Synced::all(
        [namespaces_synced, globals_synced]
            .into_iter()
            .chain(
                workload_flags
                    .iter()
                    .flatten()
                    .map(|(_, flag)| flag.clone()),
            )
            .chain(pod_flags.iter().flatten().cloned())
            .chain(
                versions
                    .iter()
                    .flat_map(|v| [v.config_maps.synced.clone(), v.secrets.synced.clone()]),
            )
            .collect(),
    );
    let config_synced: Vec<Synced> = stores.iter().map(|_| Synced::default()).collect();
    let (event_queue, events) = tokio::sync::mpsc::channel(crate::operator::context::EVENT_QUEUE);
    let caches = Caches {
        namespaces: ns_reader,
        globals: gcd_reader,
        configs: readers,
        versions,
        synced: inputs_synced.clone(),
        pods_synced: pod_flags.iter().flatten().cloned().collect(),
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
    tokio::spawn(reconcile::deliver_events(ctx.clone(), events));

    let mut routes = Vec::new();
    let mut controllers: Vec<BoxFuture<'static, ()>> = Vec::new();
    for (((scope, (reader, writer)), synced), versions) in scopes
        .into_iter()
        .zip(stores)
        .zip(config_synced.iter().cloned())
        .zip(ctx.caches.versions.iter())
    {
        let (tx, rx) = unbounded_channel();
        routes.push((scope.clone(), tx));
        controllers.push(super::controller(
            &client,
            scope.as_deref(),
            reader,
            writer,
            synced,
            &ctx,
            versions,
            rx,
            leader.subscribe(),
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
        let flags: Vec<Synced> = std::iter::once(inputs_synced)
            .chain(config_synced)
            .collect();
        async move {
            for flag in flags {
                flag.wait().await;
            }
            ready.mark();
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
    leader.send_replace(false);
    if let (Some(lease), Ok(())) = (&lease, &result) {
        lease.release().await;
    }
    result
}

/// Campaigns for the Lease until leadership is lost (then returns the reason).
async fn campaign(
    lease: Arc<LeaseLock>,
    leader: watch::Sender<bool>,
    metrics: Arc<Metrics>,
    ready: Synced,
) -> OperatorError {
    // Campaign only with warm caches, so the first reconcile-all sees every object.
    ready.wait().await;
    let mut last_renewal: Option<Instant> = None;
    loop {
        let is_leader = *leader.borrow();
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
                    metrics.leader(true);
                    info!(identity = %lease.identity(), "became the leader; reconciling everything");
                    // Each controller reconciles everything on this change (`became_leader`).
                    leader.send_replace(true);
                }
            }
            Ok(Attempt::HeldBy(holder)) => {
                if is_leader {
                    leader.send_replace(false);
                    metrics.leader(false);
                    return OperatorError::LeadershipLost(format!("(now held by {holder})"));
                }
                debug!(%holder, "standing by");
            }
            Ok(Attempt::Conflict) => debug!("lost a race on the Lease; retrying"),
            Err(e) => warn!(error = %e, "leader election"),
        }
        if *leader.borrow() && last_renewal.is_some_and(|t| t.elapsed() > leader::RENEW_DEADLINE) {
            leader.send_replace(false);
            metrics.leader(false);
            error!("could not renew the leader Lease in time");
            return OperatorError::LeadershipLost("(renewal deadline passed)".to_string());
        }
        let pause = if *leader.borrow() {
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
    use http::{Method, StatusCode};
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
    use serde_json::json;

    use super::*;
    use crate::operator::fixtures::{self, Exchange};

    const LEASES: &str = "/apis/coordination.k8s.io/v1/namespaces/ops/leases";
    const LEASE: &str = "/apis/coordination.k8s.io/v1/namespaces/ops/leases/kco";

    /// The campaign takes a free Lease and says so, renews after `RENEW_EVERY`, and when it
    /// finds another replica holding the Lease it stops leading and returns why (the process then
    /// exits, as controller-runtime's does).
    #[tokio::test(start_paused = true)]
    async fn the_campaign_leads_until_another_replica_holds_the_lease() {
        let (client, api_server) = fixtures::client();
        let scenario = api_server.run(vec![
            Exchange::get_absent(LEASE),
            Exchange::new(Method::POST, LEASES, |r| {
                assert_eq!(r.body["spec"]["holderIdentity"], "me");
                (StatusCode::CREATED, r.body.clone())
            }),
            Exchange::get(
                LEASE,
                json!({
                    "apiVersion": "coordination.k8s.io/v1",
                    "kind": "Lease",
                    "metadata": {"name": "kco", "namespace": "ops", "resourceVersion": "42"},
                    "spec": {"holderIdentity": "other", "leaseDurationSeconds": 15,
                             "renewTime": MicroTime(k8s_openapi::jiff::Timestamp::now()),
                             "leaseTransitions": 1},
                }),
            ),
        ]);
        let lease = Arc::new(LeaseLock::new(client, "ops", "kco", "me"));
        let (leader, mut leading) = watch::channel(false);
        let ready = Synced::default();
        ready.mark();
        let campaign = tokio::spawn(campaign(
            lease.clone(),
            leader,
            Arc::new(Metrics::new()),
            ready,
        ));
        // Virtual time: a campaign that misbehaved would retry every few seconds for ever.
        let minute = std::time::Duration::from_secs(60);
        tokio::time::timeout(minute, leading.wait_for(|is_leader| *is_leader))
            .await
            .expect("the campaign leads within a minute")
            .expect("the campaign became the leader");
        let lost = tokio::time::timeout(minute, campaign)
            .await
            .expect("the campaign ends within a minute")
            .expect("the campaign does not panic");
        assert!(
            matches!(&lost, OperatorError::LeadershipLost(why) if why.contains("other")),
            "{lost}"
        );
        assert!(!*leading.borrow(), "no longer leading");
        drop(lease);
        assert_eq!(fixtures::finish(scenario).await.len(), 3);
    }
}
