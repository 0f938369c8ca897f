//! The operator: custom resources and the controller that reconciles them through the engine.

pub mod crd;

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
    /// This replica's identity in leader election; default: the host name.
    #[arg(long, env = "POD_NAME")]
    pub identity: Option<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum OperatorError {
    #[error("the controller is not available in this build yet")]
    NotAvailable,
}

/// Runs the controller until a termination signal.
pub async fn run(_options: RunOptions) -> Result<(), OperatorError> {
    Err(OperatorError::NotAvailable)
}

/// `explain -n NS NAME`: the provenance table of a live KafkaToolConfig, read through the kubeconfig.
pub async fn explain_live(
    _namespace: String,
    _name: String,
    _key: Option<String>,
    _format: crate::cli::TextFormat,
) -> Result<Result<(), crate::cli::Invalid>, crate::cli::CliError> {
    Err(OperatorError::NotAvailable.into())
}
