//! Leader election on a `coordination.k8s.io/v1` Lease, written against the Lease API directly
//! (holderIdentity, leaseDurationSeconds, renewTime; optimistic concurrency through
//! resourceVersion on `replace`), so that of several replicas exactly one writes.
//!
//! The holder renews every [`RENEW_EVERY`]; a standby retries every [`RETRY_EVERY`] and takes
//! over once `renewTime + leaseDurationSeconds` has passed. A holder that cannot renew within
//! [`RENEW_DEADLINE`] gives up: it stops writing and the process exits, as controller-runtime does,
//! rather than risk two writers.

use std::time::Duration;

use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use kube::api::{ObjectMeta, PostParams};
use kube::{Api, Client};
use tracing::{info, warn};

pub const LEASE_DURATION_SECONDS: i32 = 15;
pub const RENEW_EVERY: Duration = Duration::from_secs(5);
pub const RETRY_EVERY: Duration = Duration::from_secs(2);
pub const RENEW_DEADLINE: Duration = Duration::from_secs(10);

#[derive(Debug, thiserror::Error)]
pub enum LeaderError {
    #[error("Lease {namespace}/{name}: {source}")]
    Api {
        namespace: String,
        name: String,
        #[source]
        source: kube::Error,
    },
    #[error("Lease request gave no answer within {0:?}")]
    Timeout(Duration),
}

/// Custom: kube-runtime 5.0 has no leader election, and one writer at a time needs one.
pub struct LeaseLock {
    api: Api<Lease>,
    namespace: String,
    name: String,
    identity: String,
}

/// What one attempt found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Attempt {
    /// We hold the lease (acquired or renewed).
    Held,
    /// Someone else holds a lease that has not expired.
    HeldBy(String),
    /// Lost a race on the resourceVersion; try again next round.
    Conflict,
}

impl LeaseLock {
    pub fn new(client: Client, namespace: &str, name: &str, identity: &str) -> Self {
        LeaseLock {
            api: Api::namespaced(client, namespace),
            namespace: namespace.to_string(),
            name: name.to_string(),
            identity: identity.to_string(),
        }
    }

    pub fn identity(&self) -> &str {
        &self.identity
    }

    fn err(&self, source: kube::Error) -> LeaderError {
        LeaderError::Api {
            namespace: self.namespace.clone(),
            name: self.name.clone(),
            source,
        }
    }

    /// One acquire-or-renew step.
    pub async fn try_acquire_or_renew(&self) -> Result<Attempt, LeaderError> {
        let now = Timestamp::now();
        let params = PostParams::default();
        let Some(mut lease) = self
            .api
            .get_opt(&self.name)
            .await
            .map_err(|e| self.err(e))?
        else {
            let lease = Lease {
                metadata: ObjectMeta {
                    name: Some(self.name.clone()),
                    ..ObjectMeta::default()
                },
                spec: Some(LeaseSpec {
                    holder_identity: Some(self.identity.clone()),
                    lease_duration_seconds: Some(LEASE_DURATION_SECONDS),
                    acquire_time: Some(MicroTime(now)),
                    renew_time: Some(MicroTime(now)),
                    lease_transitions: Some(0),
                    ..LeaseSpec::default()
                }),
            };
            return match self.api.create(&params, &lease).await {
                Ok(_) => Ok(Attempt::Held),
                Err(kube::Error::Api(s)) if s.is_already_exists() || s.is_conflict() => {
                    Ok(Attempt::Conflict)
                }
                Err(e) => Err(self.err(e)),
            };
        };
        let spec = lease.spec.get_or_insert_with(LeaseSpec::default);
        let holder = spec.holder_identity.clone().filter(|h| !h.is_empty());
        let ours = holder.as_deref() == Some(self.identity.as_str());
        if !ours && let Some(holder) = holder {
            let duration = i64::from(
                spec.lease_duration_seconds
                    .unwrap_or(LEASE_DURATION_SECONDS),
            );
            let expired = match &spec.renew_time {
                Some(renewed) => renewed.0 + SignedDuration::from_secs(duration) < now,
                None => true,
            };
            if !expired {
                return Ok(Attempt::HeldBy(holder));
            }
            info!(previous = %holder, "the leader Lease expired; taking over");
        }
        if !ours {
            spec.acquire_time = Some(MicroTime(now));
            spec.lease_transitions = Some(spec.lease_transitions.unwrap_or(0) + 1);
            spec.holder_identity = Some(self.identity.clone());
        }
        spec.renew_time = Some(MicroTime(now));
        spec.lease_duration_seconds = Some(LEASE_DURATION_SECONDS);
        // `replace` carries the resourceVersion we read: two standbys cannot both win.
        match self.api.replace(&self.name, &params, &lease).await {
            Ok(_) => Ok(Attempt::Held),
            Err(kube::Error::Api(s)) if s.is_conflict() => Ok(Attempt::Conflict),
            Err(e) => Err(self.err(e)),
        }
    }

    /// Gives the lease up on a clean shutdown, so a standby takes over at once instead of after
    /// the lease expires.
    pub async fn release(&self) {
        let Ok(Some(mut lease)) = self.api.get_opt(&self.name).await else {
            return;
        };
        let Some(spec) = lease.spec.as_mut() else {
            return;
        };
        if spec.holder_identity.as_deref() != Some(self.identity.as_str()) {
            return;
        }
        spec.holder_identity = None;
        spec.lease_duration_seconds = Some(1);
        spec.renew_time = Some(MicroTime(Timestamp::now()));
        match self
            .api
            .replace(&self.name, &PostParams::default(), &lease)
            .await
        {
            Ok(_) => info!("released the leader Lease"),
            Err(e) => warn!(error = %e, "cannot release the leader Lease; it will expire"),
        }
    }
}

#[cfg(test)]
mod tests {
    use http::{Method, StatusCode};
    use serde_json::{Value, json};

    use super::*;
    use crate::operator::fixtures::{self, Exchange, api_status};

    const LEASES: &str = "/apis/coordination.k8s.io/v1/namespaces/ops/leases";
    const LEASE: &str = "/apis/coordination.k8s.io/v1/namespaces/ops/leases/kco";

    fn lease(holder: Option<&str>, renewed_secs_ago: i64, transitions: i32) -> Value {
        let renewed = Timestamp::now() - SignedDuration::from_secs(renewed_secs_ago);
        json!({
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {"name": "kco", "namespace": "ops", "resourceVersion": "41"},
            "spec": {
                "holderIdentity": holder,
                "leaseDurationSeconds": LEASE_DURATION_SECONDS,
                "renewTime": MicroTime(renewed),
                "leaseTransitions": transitions,
            },
        })
    }

    /// One attempt by `me` against `exchanges`; returns its outcome and what the server got.
    async fn attempt(exchanges: Vec<Exchange>) -> (Attempt, Vec<fixtures::Received>) {
        let (client, api_server) = fixtures::client();
        let scenario = api_server.run(exchanges);
        let lock = LeaseLock::new(client, "ops", "kco", "me");
        let outcome = lock.try_acquire_or_renew().await;
        drop(lock);
        let received = fixtures::finish(scenario).await;
        (outcome.expect("no API error"), received)
    }

    fn echo(request: &fixtures::Received) -> (StatusCode, Value) {
        (StatusCode::OK, request.body.clone())
    }

    #[tokio::test]
    async fn without_a_lease_it_creates_one_naming_itself() {
        let (outcome, received) = attempt(vec![
            Exchange::get_absent(LEASE),
            Exchange::new(Method::POST, LEASES, |r| {
                assert_eq!(r.body["spec"]["holderIdentity"], "me");
                assert_eq!(r.body["spec"]["leaseTransitions"], 0);
                (StatusCode::CREATED, r.body.clone())
            }),
        ])
        .await;
        assert_eq!(outcome, Attempt::Held);
        assert_eq!(received.len(), 2);
    }

    #[tokio::test]
    async fn a_lease_another_replica_renewed_recently_is_left_alone() {
        let (outcome, received) =
            attempt(vec![Exchange::get(LEASE, lease(Some("other"), 3, 4))]).await;
        assert_eq!(outcome, Attempt::HeldBy("other".into()));
        assert_eq!(received.len(), 1, "a standby writes nothing");
    }

    #[tokio::test]
    async fn an_expired_lease_is_taken_over_with_the_version_read() {
        let (outcome, _) = attempt(vec![
            Exchange::get(LEASE, lease(Some("other"), 60, 4)),
            Exchange::new(Method::PUT, LEASE, |r| {
                assert_eq!(r.body["metadata"]["resourceVersion"], "41");
                assert_eq!(r.body["spec"]["holderIdentity"], "me");
                assert_eq!(r.body["spec"]["leaseTransitions"], 5);
                echo(r)
            }),
        ])
        .await;
        assert_eq!(outcome, Attempt::Held);
    }

    #[tokio::test]
    async fn the_holder_renews_without_counting_a_transition() {
        let (outcome, _) = attempt(vec![
            Exchange::get(LEASE, lease(Some("me"), 4, 2)),
            Exchange::new(Method::PUT, LEASE, |r| {
                assert_eq!(r.body["spec"]["holderIdentity"], "me");
                assert_eq!(r.body["spec"]["leaseTransitions"], 2);
                echo(r)
            }),
        ])
        .await;
        assert_eq!(outcome, Attempt::Held);
    }

    #[tokio::test]
    async fn losing_the_race_for_an_expired_lease_is_a_conflict_not_an_error() {
        let (outcome, _) = attempt(vec![
            Exchange::get(LEASE, lease(Some("other"), 60, 4)),
            Exchange::new(Method::PUT, LEASE, |_| {
                (
                    StatusCode::CONFLICT,
                    api_status(409, "Conflict", "the object has been modified"),
                )
            }),
        ])
        .await;
        assert_eq!(outcome, Attempt::Conflict);
    }

    #[tokio::test]
    async fn release_gives_up_only_a_lease_it_holds() {
        let (client, api_server) = fixtures::client();
        let scenario = api_server.run(vec![
            Exchange::get(LEASE, lease(Some("me"), 1, 2)),
            Exchange::new(Method::PUT, LEASE, |r| {
                assert_eq!(r.body["spec"]["holderIdentity"], Value::Null);
                assert_eq!(r.body["spec"]["leaseDurationSeconds"], 1);
                echo(r)
            }),
            // Held by another replica by now: nothing is written.
            Exchange::get(LEASE, lease(Some("other"), 1, 3)),
        ]);
        let lock = LeaseLock::new(client, "ops", "kco", "me");
        lock.release().await;
        lock.release().await;
        drop(lock);
        assert_eq!(fixtures::finish(scenario).await.len(), 3);
    }
}
