//! Tests of an output update against a mocked API server (`fixtures.rs`): the apply carries the
//! resourceVersion read, and a 409 sends the decision back to a fresh read.

use http::{Method, StatusCode};
use serde_json::{Value, json};

use super::*;
use crate::engine::spec::OutputKind;
use crate::operator::fixtures::{self, Exchange, Received, api_status};

const OUTPUT: &str = "/api/v1/namespaces/team-a/configmaps/orders-out";

/// ConfigMap `orders-out` at `version`, controlled by the config with uid `controller`, holding
/// the previous render.
fn output(controller: &str, version: &str) -> Value {
    json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {
            "name": "orders-out", "namespace": "team-a", "uid": format!("cm-{controller}"),
            "resourceVersion": version,
            "annotations": {HASH_ANNOTATION: "sha256:old"},
            "ownerReferences": [{
                "apiVersion": "kafkaconfig.dev/v1alpha1", "kind": "KafkaToolConfig",
                "name": "orders", "uid": controller, "controller": true
            }]
        },
        "data": {"producer.properties": "linger.ms=1\n"}
    })
}

/// A read of the whole output: the latest (a quorum read, no resourceVersion asked for).
fn read_latest(object: Value) -> Exchange {
    Exchange::new(Method::GET, OUTPUT, move |r: &Received| {
        assert!(!r.query.contains("resourceVersion"), "{}", r.query);
        (StatusCode::OK, object)
    })
}

/// The apply of the new content, which must be guarded by our output's uid and `version`;
/// answered with `status`.
fn apply_onto(version: &'static str, status: StatusCode) -> Exchange {
    Exchange::new(Method::PATCH, OUTPUT, move |r: &Received| {
        assert_eq!(r.body["metadata"]["uid"], "cm-config-uid", "{}", r.body);
        assert_eq!(r.body["metadata"]["resourceVersion"], version, "{}", r.body);
        assert_eq!(r.body["data"]["producer.properties"], "linger.ms=5\n");
        match status {
            StatusCode::OK => (status, output("config-uid", "100")),
            _ => (
                status,
                api_status(409, "Conflict", "the object has been modified"),
            ),
        }
    })
}

/// `ensure_output` of a new render of config `orders` (uid `config-uid`) over an output the
/// cache does not know, against `exchanges`.
async fn update(exchanges: Vec<Exchange>) -> (Result<OutputState, Error>, Vec<Received>) {
    let (client, api_server) = fixtures::client();
    let scenario = api_server.run(exchanges);
    let spec: ToolConfigSpec = serde_json::from_value(json!({
        "tool": "kafka-console-producer",
        "output": {"name": "orders-out"}
    }))
    .expect("a valid spec");
    let rendered = Rendered {
        kind: OutputKind::ConfigMap,
        name: "orders-out".into(),
        files: BTreeMap::from([("producer.properties".into(), "linger.ms=5\n".into())]),
        hash: "sha256:new".into(),
        secret_mounts: Vec::new(),
    };
    let owner = Owner {
        name: "orders",
        namespace: "team-a",
        uid: Some("config-uid"),
    };
    let state = ensure_output(
        &client,
        &Metrics::new(),
        &owner,
        &spec,
        &rendered,
        None,
        Cached::Unknown,
    )
    .await;
    drop(client);
    (state, fixtures::finish(scenario).await)
}

/// The owner check happens on a read; the apply comes milliseconds later. Had the output been
/// deleted and created again by another owner in between, an unguarded apply would have written
/// into that object. The apply carries the uid and version read, is refused, and the fresh read
/// finds the new owner: a conflict, not a write.
#[tokio::test]
async fn an_output_replaced_between_its_read_and_the_apply_is_not_written() {
    let (state, received) = update(vec![
        Exchange::get(OUTPUT, output("config-uid", "5")),
        read_latest(output("config-uid", "5")),
        apply_onto("5", StatusCode::CONFLICT),
        read_latest(output("another-config", "9")),
    ])
    .await;
    let state = state.expect("a conflict is a state, not an error");
    assert!(!state.wrote);
    assert!(state.conflict.is_some(), "{state:?}");
    assert_eq!(received.len(), 4);
}

/// Our output read at version 5 and its apply there refused (changed since), read again at 7 and
/// applied there, answered with `second`.
fn refused_once_then(second: StatusCode) -> Vec<Exchange> {
    vec![
        Exchange::get(OUTPUT, output("config-uid", "5")),
        read_latest(output("config-uid", "5")),
        apply_onto("5", StatusCode::CONFLICT),
        read_latest(output("config-uid", "7")),
        apply_onto("7", second),
    ]
}

/// A change of our own output between the read and the apply (a label someone added): read
/// again, and applied onto that version.
#[tokio::test]
async fn an_output_changed_between_its_read_and_the_apply_is_applied_onto_the_new_version() {
    let (state, _) = update(refused_once_then(StatusCode::OK)).await;
    let state = state.expect("written");
    assert!(state.wrote);
    assert_eq!(state.hash.as_deref(), Some("sha256:new"));
    assert_eq!(
        state.previous_files.expect("the files before the write")["producer.properties"],
        "linger.ms=1\n"
    );
}

/// A second refusal in a row is returned (the reconcile retries with backoff) instead of reading
/// and applying without end against an object that keeps changing.
#[tokio::test]
async fn a_second_refused_apply_is_returned_as_an_error() {
    let (state, _) = update(refused_once_then(StatusCode::CONFLICT)).await;
    match state {
        Err(Error::Kube(kube::Error::Api(status))) => assert!(status.is_conflict()),
        other => panic!("expected the 409, got {other:?}"),
    }
}
