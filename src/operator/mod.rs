//! The operator: custom resources and the controller that reconciles them through the engine.
//!
//! `run` wires the watches (see [`controller`]), the health/metrics server, leader election and
//! the GlobalClientDefaults status loop.

// Text here comes from the API server (statuses, annotations, data): a byte-offset slice of it
// panics inside a character, and the release build aborts on a panic. Cut with `safe_text`.
#![deny(clippy::string_slice)]

pub mod apply;
pub mod authors;
pub mod config_id;
pub mod configs_seen;
pub mod context;
pub mod controller;
pub mod crd;
pub mod dereference;
pub mod error;
pub mod events;
pub mod generations;
pub mod globals;
pub mod hash_key;
pub mod health;
pub mod history;
pub mod index;
pub mod inputs;
pub mod metrics;
pub mod opt_ins;
pub mod ownership;
pub mod pods;
pub mod reconcile;
pub mod running;
pub mod sync_status;
pub mod synced;
pub mod versions;
pub mod workloads;

#[cfg(test)]
mod fixtures;
#[cfg(test)]
mod reconcile_tests;

use kube::Client;
use kube::api::{Api, ListParams};

use crate::operator::context::scoped;
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
    /// The operator's own namespace: the leader-election Lease and the content-hash key Secret
    /// live there; default: the pod's namespace, else `default`.
    #[arg(long, env = "POD_NAMESPACE")]
    pub lease_namespace: Option<String>,
    /// Name of the Secret (in the operator's namespace) holding the content-hash key; created
    /// with a random key on the first start when absent. Delete it and restart the operator to
    /// rotate the key (every workload rolls once).
    #[arg(long, default_value = crate::operator::hash_key::DEFAULT_SECRET)]
    pub hash_key_secret: String,
    /// Name of the leader-election Lease.
    #[arg(long, default_value = "kafka-config-operator")]
    pub lease_name: String,
    /// This replica's identity in leader election; default: the host name and process id.
    #[arg(long, env = "POD_NAME")]
    pub identity: Option<String>,
    /// Log format: `json` (one object a line, for log collectors) or `text` (for a terminal).
    /// The level is `RUST_LOG` (default `info,kube=warn`).
    #[arg(long, env = "KCO_LOG_FORMAT", value_enum, default_value_t = LogFormat::Json)]
    pub log_format: LogFormat,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    Json,
    Text,
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
    /// Boxed: the largest variant, and every CLI result carries this type.
    #[error(transparent)]
    HashKey(Box<crate::operator::hash_key::KeyError>),
    #[error("KafkaToolConfig {namespace}/{name} not found")]
    NotFound { namespace: String, name: String },
    #[error("Kubernetes API: {0}")]
    Kube(#[from] kube::Error),
}

/// Runs the controller until a termination signal (or loss of leadership).
pub use controller::run;

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
        let api: Api<KafkaToolConfig> = scoped(client, scope.map(String::as_str));
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
