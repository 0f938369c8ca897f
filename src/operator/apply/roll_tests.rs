//! Tests of a target's roll against a mocked API server (`fixtures.rs`): what is written (the
//! hash annotation, the mounting volumes' names), that every write carries the uid and
//! resourceVersion read, and that a 409 sends the roll back to a fresh read.

use http::{Method, StatusCode};
use serde_json::{Value, json};

use super::*;
use crate::operator::fixtures::{self, Exchange, Received, api_status};

const DEPLOYMENT: &str = "/apis/apps/v1/namespaces/team-a/deployments/web";
const ROLLOUT: &str = "/apis/argoproj.io/v1alpha1/namespaces/team-a/rollouts/web";

/// Workload `web` of `kind` at `version`, its template annotated with `hash` and mounting
/// ConfigMap `volume` (and, in another volume, ConfigMap `log4j`).
fn workload(kind: RolloutKind, version: &str, hash: &str, volume: &str) -> Value {
    let resource = api_resource(kind);
    json!({
        "apiVersion": resource.api_version, "kind": resource.kind,
        "metadata": {"name": "web", "namespace": "team-a", "uid": format!("web-{version}"),
                     "resourceVersion": version},
        "spec": {
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"annotations": {HASH_ANNOTATION: hash}},
                "spec": {
                    "containers": [{"name": "app", "image": "apache/kafka"}],
                    "volumes": [
                        {"name": "kafka-config", "configMap": {"name": volume}},
                        {"name": "logging", "configMap": {"name": "log4j"}}
                    ]
                }
            }
        }
    })
}

/// A read of Argo Rollout `web` at `version`, carrying hash `h1` and mounting `orders`.
fn rollout_at(version: &str) -> Exchange {
    Exchange::get(
        ROLLOUT,
        workload(RolloutKind::Rollout, version, "h1", "orders"),
    )
}

/// A read of Deployment `web` at `version`, carrying hash `h1`.
fn deployment_at(version: &str) -> Exchange {
    Exchange::get(
        DEPLOYMENT,
        workload(RolloutKind::Deployment, version, "h1", "orders"),
    )
}

/// The apply of hash `h2`, which must be guarded by the uid and `version` read (the workload's
/// uid is `web-<version it was created at>`, `uid_at`); answered with `status`.
fn apply_onto(
    path: &'static str,
    uid_at: &'static str,
    version: &'static str,
    status: StatusCode,
) -> Exchange {
    Exchange::new(Method::PATCH, path, move |r: &Received| {
        assert!(
            r.query.contains("fieldManager=kafka-config-operator"),
            "{}",
            r.query
        );
        assert_eq!(
            r.body["metadata"]["uid"],
            format!("web-{uid_at}"),
            "{}",
            r.body
        );
        assert_eq!(r.body["metadata"]["resourceVersion"], version, "{}", r.body);
        assert_eq!(
            r.body["spec"]["template"]["metadata"]["annotations"][HASH_ANNOTATION],
            "h2"
        );
        match status {
            StatusCode::OK => (status, r.body.clone()),
            _ => (
                status,
                api_status(409, "Conflict", "the object has been modified"),
            ),
        }
    })
}

/// Rolls `web` of `kind` to hash `h2` (mounting `mount` when given) against `exchanges`.
async fn roll_web(
    kind: RolloutKind,
    mount: Option<&Mount<'_>>,
    exchanges: Vec<Exchange>,
) -> Result<Vec<RolloutStatus>, Error> {
    let (client, api_server) = fixtures::client();
    let scenario = api_server.run(exchanges);
    let target = Target {
        kind,
        name: "web".into(),
        opted_in: false,
    };
    let rolled = roll_out(&client, &Metrics::new(), "team-a", &[target], "h2", mount).await;
    drop(client);
    fixtures::finish(scenario).await;
    rolled
}

fn hash_of_web(rolled: Result<Vec<RolloutStatus>, Error>) -> Option<String> {
    let statuses = rolled.expect("rolled");
    assert_eq!(statuses.len(), 1);
    statuses[0].hash.clone()
}

#[tokio::test]
async fn the_apply_to_a_workload_carries_the_uid_and_version_it_was_read_at() {
    let rolled = roll_web(
        RolloutKind::Deployment,
        None,
        vec![
            deployment_at("5"),
            apply_onto(DEPLOYMENT, "5", "5", StatusCode::OK),
        ],
    )
    .await;
    assert_eq!(hash_of_web(rolled).as_deref(), Some("h2"));
}

/// Deleted between the read and the apply: the apply, guarded by the uid, is refused instead of
/// creating an object from the patch alone (an Argo Rollout has no schema to refuse it), and the
/// fresh read reports the target missing.
#[tokio::test]
async fn a_workload_deleted_between_its_read_and_the_apply_is_not_created() {
    let rolled = roll_web(
        RolloutKind::Rollout,
        None,
        vec![
            rollout_at("5"),
            apply_onto(ROLLOUT, "5", "5", StatusCode::CONFLICT),
            Exchange::get_absent(ROLLOUT),
        ],
    )
    .await;
    assert_eq!(hash_of_web(rolled), None);
}

/// A second refusal in a row is returned: the reconcile retries with backoff.
#[tokio::test]
async fn a_workload_that_keeps_changing_is_retried_once_then_left_to_the_backoff() {
    let rolled = roll_web(
        RolloutKind::Deployment,
        None,
        vec![
            deployment_at("5"),
            apply_onto(DEPLOYMENT, "5", "5", StatusCode::CONFLICT),
            deployment_at("7"),
            apply_onto(DEPLOYMENT, "7", "7", StatusCode::CONFLICT),
        ],
    )
    .await;
    match rolled {
        Err(Error::Kube(kube::Error::Api(status))) => assert!(status.is_conflict()),
        other => panic!("expected the 409, got {other:?}"),
    }
}

/// An Argo Rollout's volumes are renamed by a merge patch guarded by the version read; the apply
/// of the annotation that follows is guarded by the version that patch produced.
#[tokio::test]
async fn a_rollouts_apply_after_the_volume_rename_carries_the_renamed_version() {
    let rename = Exchange::new(Method::PATCH, ROLLOUT, |r: &Received| {
        assert!(
            r.query.contains("fieldManager=kafka-config-operator"),
            "{}",
            r.query
        );
        assert_eq!(r.body["metadata"]["resourceVersion"], "5", "{}", r.body);
        // A merge patch replaces the list: every volume is sent, only the mounting one renamed.
        assert_eq!(
            r.body["spec"]["template"]["spec"]["volumes"],
            json!([
                {"name": "kafka-config", "configMap": {"name": "orders-0a1b2c3d"}},
                {"name": "logging", "configMap": {"name": "log4j"}}
            ])
        );
        (
            StatusCode::OK,
            workload(RolloutKind::Rollout, "6", "h1", "orders-0a1b2c3d"),
        )
    });
    let rolled = roll_web(
        RolloutKind::Rollout,
        Some(&mount()),
        vec![
            rollout_at("5"),
            rename,
            apply_onto(ROLLOUT, "5", "6", StatusCode::OK),
        ],
    )
    .await;
    assert_eq!(hash_of_web(rolled).as_deref(), Some("h2"));
}

fn mount() -> Mount<'static> {
    Mount {
        kind: OutputKind::ConfigMap,
        base: "orders",
        name: "orders-0a1b2c3d".into(),
    }
}

/// A Deployment already annotated with the hash but still mounting the previous output: applied,
/// naming only the mounting volume (server-side apply merges the list by name).
#[tokio::test]
async fn a_deployment_mounting_a_previous_output_is_pointed_at_the_new_one() {
    let apply = Exchange::new(Method::PATCH, DEPLOYMENT, |r: &Received| {
        assert_eq!(
            r.body["spec"]["template"]["spec"]["volumes"],
            json!([{"name": "kafka-config", "configMap": {"name": "orders-0a1b2c3d"}}]),
            "{}",
            r.body
        );
        assert_eq!(r.body["metadata"]["uid"], "web-5");
        (StatusCode::OK, r.body.clone())
    });
    let rolled = roll_web(
        RolloutKind::Deployment,
        Some(&mount()),
        vec![
            Exchange::get(
                DEPLOYMENT,
                workload(RolloutKind::Deployment, "5", "h2", "orders-00000000"),
            ),
            apply,
        ],
    )
    .await;
    assert_eq!(hash_of_web(rolled).as_deref(), Some("h2"));
}

/// A target that carries the hash and mounts the output is only read; one that is gone is
/// reported without a hash, not created.
#[tokio::test]
async fn a_current_target_is_not_written_and_a_missing_one_is_reported() {
    let current = workload(RolloutKind::Deployment, "5", "h2", "orders-0a1b2c3d");
    let rolled = roll_web(
        RolloutKind::Deployment,
        Some(&mount()),
        vec![Exchange::get(DEPLOYMENT, current.clone())],
    )
    .await;
    assert_eq!(hash_of_web(rolled).as_deref(), Some("h2"));
    let rolled = roll_web(
        RolloutKind::Deployment,
        None,
        vec![Exchange::get(DEPLOYMENT, current)],
    )
    .await;
    assert_eq!(hash_of_web(rolled).as_deref(), Some("h2"));
    let rolled = roll_web(
        RolloutKind::Deployment,
        None,
        vec![Exchange::get_absent(DEPLOYMENT)],
    )
    .await;
    assert_eq!(hash_of_web(rolled), None);
}

/// An Argo Rollout deleted between the read and the volume rename: the merge patch answers 404
/// (it does not create), and the target is reported missing.
#[tokio::test]
async fn a_rollout_deleted_before_its_volume_rename_is_reported_missing() {
    let rename = Exchange::new(Method::PATCH, ROLLOUT, |_: &Received| {
        (
            StatusCode::NOT_FOUND,
            api_status(404, "NotFound", "rollouts.argoproj.io \"web\" not found"),
        )
    });
    let rolled = roll_web(
        RolloutKind::Rollout,
        Some(&mount()),
        vec![rollout_at("5"), rename],
    )
    .await;
    assert_eq!(hash_of_web(rolled), None);
}
