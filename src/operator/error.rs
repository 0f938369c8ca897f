//! Why a reconcile failed: one variant per step of the pipeline (`reconcile/mod.rs`), and whether
//! a retry can help ([`Error::permanent`]). An invalid spec is not an error, it is a status.

use std::time::Duration;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// An API request of a helper, before the pipeline names its step ([`Error::in_step`]).
    #[error("Kubernetes API: {0}")]
    Kube(#[from] kube::Error),
    /// Dereference: a referenced ConfigMap or Secret could not be read.
    #[error("reading the referenced sources: Kubernetes API: {0}")]
    Dereference(#[source] kube::Error),
    /// Dereference: a source the API server should never have stored (a ConfigMap key in both
    /// `data` and `binaryData`), refused as the offline reader refuses it.
    #[error("{kind} {namespace}/{name}: {source}")]
    InvalidSource {
        kind: &'static str,
        namespace: String,
        name: String,
        #[source]
        source: crate::output::DataError,
    },
    /// Apply output: the request got no answer (or failed before the write).
    #[error("writing the output: Kubernetes API: {0}")]
    Output(#[source] kube::Error),
    /// Apply output: the API server refused the write; the status already says so
    /// (`OutputWriteFailed`).
    #[error("the API server refused the output: {0}")]
    OutputRefused(#[source] kube::Error),
    /// Roll out: a rollout target could not be read or patched.
    #[error("rolling out: Kubernetes API: {0}")]
    Rollout(#[source] kube::Error),
    /// Prune: old immutable outputs could not be listed or deleted.
    #[error("pruning old outputs: Kubernetes API: {0}")]
    Prune(#[source] kube::Error),
    /// Prune: a rollout target is still replacing pods: which old outputs they mount is not
    /// known yet.
    #[error("{0} is still rolling out")]
    RolloutInProgress(String),
    /// Prune: a rollout target's controller has not observed its latest spec yet (milliseconds,
    /// usually): which ReplicaSets will run which template is not known yet.
    #[error("the controller of {0} has not observed its latest spec")]
    NotObserved(String),
    /// Status: the status write failed.
    #[error("writing the status: Kubernetes API: {0}")]
    Status(#[source] kube::Error),
    /// Status: the config moved on between each read and the status write built on it.
    #[error("the KafkaToolConfig kept changing while its status was written")]
    StaleStatus,
    #[error("the object has no {0}")]
    MissingField(&'static str),
    #[error("cannot serialize: {0}")]
    Serialize(#[from] serde_json::Error),
}

impl Error {
    /// Names the step an API error of a helper happened in (`step`: one of the variants that
    /// carry a `kube::Error`); every other error already says where it comes from.
    pub fn in_step(self, step: fn(kube::Error) -> Error) -> Error {
        match self {
            Error::Kube(error) => step(error),
            other => other,
        }
    }

    /// The API error, whichever step it came from.
    fn api(&self) -> Option<&kube::Error> {
        match self {
            Error::Kube(error)
            | Error::Dereference(error)
            | Error::Output(error)
            | Error::OutputRefused(error)
            | Error::Rollout(error)
            | Error::Prune(error)
            | Error::Status(error) => Some(error),
            _ => None,
        }
    }

    /// Whether the same reconcile fails again until the spec or an input changes (each of them
    /// is watched): an object without a namespace or uid, a source the API server should never
    /// have stored, an output the API server refuses for good ([`refused_for_good`]). Such a
    /// config is still retried on the long backoff ([`BACKOFF_CAP`]): what refuses the write (an
    /// admission webhook or policy) is not watched. Everything else is transient: the API server,
    /// the network, a race, a rollout in progress.
    pub fn permanent(&self) -> bool {
        match self {
            Error::MissingField(_) | Error::Serialize(_) | Error::InvalidSource { .. } => true,
            Error::OutputRefused(kube::Error::Api(status)) => refused_for_good(status.code),
            _ => false,
        }
    }

    /// A short, bounded label for `reconcile_errors_total{reason}`.
    pub fn metric_label(&self) -> &'static str {
        if let Some(error) = self.api() {
            return match error {
                kube::Error::Api(status) if status.is_conflict() => "Conflict",
                kube::Error::Api(status) if status.is_already_exists() => "AlreadyExists",
                kube::Error::Api(status) if status.is_forbidden() => "Forbidden",
                kube::Error::Api(status) if status.is_not_found() => "NotFound",
                kube::Error::Api(status) if status.is_invalid() => "Invalid",
                kube::Error::Api(_) => "ApiError",
                _ => "Transport",
            };
        }
        match self {
            Error::MissingField(_) => "MissingField",
            Error::Serialize(_) => "Serialize",
            Error::RolloutInProgress(_) => "RolloutInProgress",
            Error::NotObserved(_) => "NotObserved",
            Error::InvalidSource { .. } => "InvalidSource",
            Error::StaleStatus => "Conflict",
            _ => "ApiError",
        }
    }

    /// The longest wait before the next attempt after this error. The API server not answering
    /// (no connection, a timeout, 429, a 5xx: etcd down, say) ends when the outage does, and the
    /// retry should follow soon after; a watch that resumes after such an outage does not relist,
    /// so nothing else reschedules these configs (docs/RELIABILITY.md). Every other error keeps
    /// the long cap.
    pub fn backoff_cap(&self) -> Duration {
        let unavailable = match self.api() {
            Some(kube::Error::Api(status)) => status.code == 429 || status.code >= 500,
            Some(
                kube::Error::HyperError(_) | kube::Error::Service(_) | kube::Error::ReadEvents(_),
            ) => true,
            _ => false,
        };
        if unavailable {
            UNAVAILABLE_BACKOFF_CAP
        } else {
            BACKOFF_CAP
        }
    }
}

/// Whether the API server will refuse the same write again whatever the retry: 400 (a malformed
/// object, most admission denials), 413 (too large), 422 (invalid, a ValidatingAdmissionPolicy).
/// Only a change of the config (or of the policy) helps: kstatus's `Stalled`. Anything else
/// (403 while RBAC is being applied, 409, 429, 5xx) may pass on a retry.
pub fn refused_for_good(code: u16) -> bool {
    matches!(code, 400 | 413 | 422)
}

/// The backoff cap of errors other than the API server's unavailability.
pub const BACKOFF_CAP: Duration = Duration::from_secs(300);
/// The backoff cap while the API server does not answer. At most 32 reconciles run at once, so
/// even every config of a large cluster failing at this pace keeps the request rate bounded.
pub const UNAVAILABLE_BACKOFF_CAP: Duration = Duration::from_secs(30);

#[cfg(test)]
mod tests {
    use super::*;

    fn api_error(code: u16, reason: &str) -> Error {
        Error::Kube(kube::Error::Api(Box::new(
            kube::core::Status::failure("from the test", reason).with_code(code),
        )))
    }

    #[test]
    fn only_the_api_servers_unavailability_gets_the_short_backoff_cap() {
        for unavailable in [
            api_error(500, "InternalError"),
            api_error(503, "ServiceUnavailable"),
            api_error(504, "Timeout"),
            api_error(429, "TooManyRequests"),
            Error::Kube(kube::Error::ReadEvents(std::io::Error::other(
                "connection reset",
            ))),
            Error::Kube(kube::Error::Service("connection refused".into())),
        ] {
            assert_eq!(
                unavailable.backoff_cap(),
                UNAVAILABLE_BACKOFF_CAP,
                "{unavailable}"
            );
        }
        for refused in [
            api_error(403, "Forbidden"),
            api_error(409, "Conflict"),
            api_error(422, "Invalid"),
            api_error(404, "NotFound"),
            Error::MissingField("metadata.name"),
            Error::RolloutInProgress("deployment/web".into()),
        ] {
            assert_eq!(refused.backoff_cap(), BACKOFF_CAP, "{refused}");
        }
    }

    #[test]
    fn a_step_names_a_helpers_api_error_and_keeps_its_classification() {
        let tagged = api_error(503, "ServiceUnavailable").in_step(Error::Rollout);
        assert!(matches!(tagged, Error::Rollout(_)), "{tagged}");
        assert!(tagged.to_string().starts_with("rolling out: "), "{tagged}");
        assert_eq!(tagged.backoff_cap(), UNAVAILABLE_BACKOFF_CAP);
        assert_eq!(tagged.metric_label(), "ApiError");
        let own = Error::NotObserved("deployment/web".into()).in_step(Error::Prune);
        assert!(matches!(own, Error::NotObserved(_)), "{own}");
    }

    #[test]
    fn only_what_a_retry_cannot_fix_is_permanent() {
        let refused = |code: u16| match api_error(code, "from the test") {
            Error::Kube(error) => Error::OutputRefused(error),
            other => other,
        };
        assert!(refused(422).permanent());
        assert!(refused(400).permanent());
        assert!(!refused(403).permanent());
        assert!(!refused(500).permanent());
        assert!(Error::MissingField("metadata.uid").permanent());
        assert!(!api_error(422, "Invalid").in_step(Error::Status).permanent());
        assert!(!Error::RolloutInProgress("deployment/web".into()).permanent());
    }
}
