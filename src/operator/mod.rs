//! The operator: custom resources and the controller that reconciles them through the engine.
//!
//! `run` wires the watches (see [`controller`]), the health/metrics server, leader election and
//! the GlobalClientDefaults status loop; `explain_live` is `explain` for a live object.

pub mod apply;
pub mod context;
pub mod controller;
pub mod crd;
pub mod dereference;
pub mod events;
pub mod generations;
pub mod globals;
pub mod health;
pub mod history;
pub mod index;
pub mod inputs;
pub mod leader;
pub mod metrics;
pub mod reconcile;
pub mod versions;

#[cfg(test)]
mod fixtures;
#[cfg(test)]
mod reconcile_tests;

use std::io::Write as _;

use k8s_openapi::api::core::v1::Namespace;
use kube::api::{Api, ListParams};
use kube::{Client, ResourceExt};

use crate::engine::globals::GlobalDefaults;
use crate::engine::{Request, evaluate};
use crate::operator::crd::{GlobalClientDefaults, KafkaToolConfig};

/// Options of `kafka-config-operator run`.
#[derive(Debug, Clone, clap::Args)]
pub struct RunOptions {
    /// Watch only these namespaces (repeatable); default: all namespaces.
    #[arg(long = "watch-namespace")]
    pub watch_namespaces: Vec<String>,
    /// Address of /healthz, /readyz and /metrics.
    #[arg(long, default_value = "0.0.0.0:8080")]
    pub metrics_address: std::net::SocketAddr,
    /// Take part in leader election on a Lease (only the leader writes).
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set)]
    pub leader_election: bool,
    /// Namespace of the leader-election Lease; default: the pod's namespace, else `default`.
    #[arg(long, env = "POD_NAMESPACE")]
    pub lease_namespace: Option<String>,
    /// Name of the leader-election Lease.
    #[arg(long, default_value = "kafka-config-operator")]
    pub lease_name: String,
    /// This replica's identity in leader election; default: the host name and process id.
    #[arg(long, env = "POD_NAME")]
    pub identity: Option<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum OperatorError {
    #[error("cannot build a Kubernetes client (in-cluster config or KUBECONFIG): {0}")]
    Client(#[source] kube::Error),
    #[error(
        "the {resource} resource is not served by this cluster: install the CRDs first \
         (kubectl apply -f crds/, or the Helm chart) and start the operator again"
    )]
    CrdMissing { resource: &'static str },
    #[error(
        "cannot list {resource}{scope}: {source}; check the operator's RBAC (e2e/rbac/cluster.yaml)"
    )]
    Startup {
        resource: &'static str,
        scope: String,
        #[source]
        source: kube::Error,
    },
    #[error("cannot serve health and metrics on {address}: {source}")]
    Bind {
        address: std::net::SocketAddr,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "lost the leader Lease {0}; stopped writing and exiting so that a fresh start can campaign again"
    )]
    LeadershipLost(String),
    #[error("KafkaToolConfig {namespace}/{name} not found")]
    NotFound { namespace: String, name: String },
    #[error("Kubernetes API: {0}")]
    Kube(#[from] kube::Error),
}

/// Runs the controller until a termination signal (or loss of leadership).
pub async fn run(options: RunOptions) -> Result<(), OperatorError> {
    controller::run(options).await
}

/// Verifies that the CRDs are served before any watch starts: a missing CRD would otherwise
/// show up only as an endless watch backoff.
pub async fn check_crds(client: &Client, namespaces: &[String]) -> Result<(), OperatorError> {
    let lp = ListParams::default().limit(1);
    let scopes: Vec<Option<&String>> = if namespaces.is_empty() {
        vec![None]
    } else {
        namespaces.iter().map(Some).collect()
    };
    for scope in scopes {
        let api: Api<KafkaToolConfig> = match scope {
            Some(ns) => Api::namespaced(client.clone(), ns),
            None => Api::all(client.clone()),
        };
        classify(
            api.list_metadata(&lp).await,
            "kafkatoolconfigs.kafkaconfig.dev",
            scope,
        )?;
    }
    let api: Api<GlobalClientDefaults> = Api::all(client.clone());
    classify(
        api.list_metadata(&lp).await,
        "globalclientdefaults.kafkaconfig.dev",
        None,
    )?;
    Ok(())
}

fn classify<T>(
    result: Result<T, kube::Error>,
    resource: &'static str,
    scope: Option<&String>,
) -> Result<(), OperatorError> {
    match result {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(s)) if s.is_not_found() => Err(OperatorError::CrdMissing { resource }),
        Err(source) => Err(OperatorError::Startup {
            resource,
            scope: scope
                .map(|ns| format!(" in namespace {ns}"))
                .unwrap_or_default(),
            source,
        }),
    }
}

/// `explain -n NS NAME`: the provenance table of a live KafkaToolConfig, read through the kubeconfig.
pub async fn explain_live(
    namespace: String,
    name: String,
    key: Option<String>,
    format: crate::cli::TextFormat,
) -> Result<Result<(), crate::cli::Invalid>, crate::cli::CliError> {
    let client = Client::try_default().await.map_err(OperatorError::Client)?;
    let api: Api<KafkaToolConfig> = Api::namespaced(client.clone(), &namespace);
    let config = api
        .get_opt(&name)
        .await
        .map_err(OperatorError::Kube)?
        .ok_or_else(|| OperatorError::NotFound {
            namespace: namespace.clone(),
            name: name.clone(),
        })?;
    let spec = &config.spec.config;
    let refs = crate::engine::sources::referenced_sources(spec);
    let fetched = dereference::fetch_sources(&client, &namespace, &refs, |_| None)
        .await
        .map_err(OperatorError::Kube)?;
    let mut stderr = std::io::stderr().lock();
    // Namespace labels and GlobalClientDefaults need cluster-wide read access, which a tenant
    // may lack: explain what we can and say what is missing.
    let labels = match Api::<Namespace>::all(client.clone())
        .get_metadata_opt(&namespace)
        .await
    {
        Ok(ns) => ns.map(|n| n.labels().clone()).unwrap_or_default(),
        Err(e) => {
            let _ = writeln!(
                stderr,
                "warning: cannot read namespace {namespace} labels ({e}); GlobalClientDefaults selection may differ"
            );
            Default::default()
        }
    };
    let globals: Vec<GlobalDefaults> = match Api::<GlobalClientDefaults>::all(client.clone())
        .list(&ListParams::default())
        .await
    {
        Ok(list) => list
            .items
            .into_iter()
            .map(|g| GlobalDefaults {
                name: g.name_any(),
                spec: g.spec.config,
            })
            .collect(),
        Err(e) => {
            let _ = writeln!(
                stderr,
                "warning: cannot list GlobalClientDefaults ({e}); cluster defaults are not shown"
            );
            Vec::new()
        }
    };
    let ev = evaluate(&Request {
        name: &name,
        namespace: &namespace,
        spec,
        namespace_labels: &labels,
        globals: &globals,
        sources: &fetched.sources,
    });
    for problem in ev.source_problems.iter().chain(&ev.problems) {
        let _ = writeln!(stderr, "KafkaToolConfig {namespace}/{name}: {problem}");
    }
    drop(stderr);
    let entries = crate::cli::explain_entries(&namespace, &name, &ev, key.as_deref());
    crate::cli::print_explain(&entries, format)?;
    Ok(if ev.is_valid() {
        Ok(())
    } else {
        Err(crate::cli::Invalid)
    })
}
