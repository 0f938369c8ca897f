//! `reconcile::reconcile` against a mocked API server (see `fixtures.rs`): each test lists the
//! requests one reconcile must send, in order, and the answers; a request not listed fails it.

use std::sync::Arc;
use std::time::Duration;

use http::{Method, StatusCode};
use kube::runtime::controller::Action;
use serde_json::{Value, json};

use crate::operator::context::{Error, ScopeVersions};
use crate::operator::crd::KafkaToolConfig;
use crate::operator::fixtures::{self, Exchange, Received, api_status};
use crate::operator::reconcile::reconcile;
use crate::output::{HASH_ANNOTATION, MANAGER};
use crate::status::KafkaToolConfigStatus;

const UID: &str = "0f4d2c1e-orders";
const SOURCE: &str = "/api/v1/namespaces/team-a/configmaps/base-client";
/// The output, named by the spec (`output.name`).
const OUTPUT: &str = "/api/v1/namespaces/team-a/configmaps/orders-client";
const CONFIG_MAPS: &str = "/api/v1/namespaces/team-a/configmaps";
const STATUS: &str =
    "/apis/kafkaconfig.dev/v1alpha1/namespaces/team-a/kafkatoolconfigs/orders/status";
const EVENTS: &str = "/apis/events.k8s.io/v1/namespaces/team-a/events";

/// A console producer whose connection settings come from ConfigMap base-client, written to
/// ConfigMap orders-client; `status` as the API server stores it (None: never reconciled).
fn config(status: Option<Value>) -> KafkaToolConfig {
    let mut object = json!({
        "apiVersion": "kafkaconfig.dev/v1alpha1",
        "kind": "KafkaToolConfig",
        "metadata": {
            "name": "orders", "namespace": "team-a", "uid": UID,
            "generation": 1, "resourceVersion": "100"
        },
        "spec": {
            "tool": "kafka-console-producer",
            "args": {"topic": "orders"},
            "configFiles": [{"configMapKeyRef": {"name": "base-client", "key": "client.properties"}}],
            "output": {"kind": "ConfigMap", "name": "orders-client"}
        }
    });
    if let Some(status) = status {
        object["status"] = status;
    }
    serde_json::from_value(object).expect("a valid KafkaToolConfig")
}

/// The config as the controller's cache holds it: status compacted
/// (`KafkaToolConfigStatus::cached`, as the reflector's `compact_status` does).
fn cached(mut config: KafkaToolConfig) -> KafkaToolConfig {
    config.status = config.status.take().map(KafkaToolConfigStatus::cached);
    config
}

fn source() -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "base-client", "namespace": "team-a", "resourceVersion": "41"},
        "data": {"client.properties": "bootstrap.servers=kafka-0.kafka:9092\nlinger.ms=20\n"}
    })
}

/// `object`'s metadata as the API server answers a metadata-only GET.
fn partial_metadata(object: &Value) -> Value {
    json!({
        "apiVersion": "meta.k8s.io/v1",
        "kind": "PartialObjectMetadata",
        "metadata": object["metadata"].clone(),
    })
}

/// What the API server answers a create: the object, with a resourceVersion.
fn created(request: &Received) -> (StatusCode, Value) {
    let mut object = request.body.clone();
    object["metadata"]["resourceVersion"] = json!("42");
    (StatusCode::CREATED, object)
}

/// What the API server answers a server-side apply of the status: the config with that status.
fn status_applied(request: &Received) -> (StatusCode, Value) {
    assert!(
        request.query.contains(&format!("fieldManager={MANAGER}")),
        "status written without our field manager: {}",
        request.query
    );
    let mut object = serde_json::to_value(config(None)).expect("JSON");
    object["status"] = request.body["status"].clone();
    object["metadata"]["resourceVersion"] = json!("101");
    (StatusCode::OK, object)
}

/// An Event is stored as sent.
fn event_stored(request: &Received) -> (StatusCode, Value) {
    (StatusCode::CREATED, request.body.clone())
}

/// The Warning Event of a transition, for `reason`.
fn warning_event(reason: &'static str) -> Exchange {
    Exchange::new(Method::POST, EVENTS, move |request| {
        assert_eq!(request.body["type"], "Warning");
        assert_eq!(request.body["reason"], reason);
        event_stored(request)
    })
}

fn condition<'a>(status: &'a Value, type_: &str) -> &'a Value {
    status["conditions"]
        .as_array()
        .expect("status.conditions is a list")
        .iter()
        .find(|c| c["type"] == type_)
        .unwrap_or_else(|| panic!("no {type_} condition in {status}"))
}

/// A condition that may be absent (kstatus's are present only while True).
fn kstatus_condition<'a>(status: &'a Value, type_: &str) -> Option<&'a Value> {
    status["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == type_)
}

fn writes(received: &[Received]) -> Vec<String> {
    received
        .iter()
        .filter(|r| r.method != Method::GET)
        .map(ToString::to_string)
        .collect()
}

/// Reconciles `config` once against `scenario`, with the version caches `versions`; returns the
/// result and what the API server got.
async fn reconcile_once(
    config: KafkaToolConfig,
    versions: Vec<ScopeVersions>,
    scenario: Vec<Exchange>,
) -> (Result<Action, Error>, Vec<Received>) {
    let (ctx, api_server) = fixtures::context(std::slice::from_ref(&config), versions);
    let scenario = api_server.run(scenario);
    let result = reconcile(Arc::new(config), ctx).await;
    // `reconcile` held the last clone of the context: its client is gone, the scenario ends.
    (result, fixtures::finish(scenario).await)
}

/// A new config's first reconcile: reads the source, finds no output, creates it, writes status
/// and a Rendered event. Returns the status written and the output as stored.
async fn first_render() -> (Value, Value) {
    let (result, received) = reconcile_once(
        config(None),
        Vec::new(),
        vec![
            Exchange::get(SOURCE, source()),
            Exchange::get_absent(OUTPUT),
            Exchange::new(Method::POST, CONFIG_MAPS, created),
            Exchange::new(Method::PATCH, STATUS, status_applied),
            Exchange::new(Method::POST, EVENTS, |request| {
                assert_eq!(request.body["reason"], "Rendered");
                event_stored(request)
            }),
        ],
    )
    .await;
    assert_eq!(result.expect("the first reconcile"), Action::await_change());
    // Created under the manager name its later applies use: a different one would own the
    // files as "somebody else's edit" (`foreign_content_owner`).
    let manager = format!("fieldManager={MANAGER}");
    assert!(
        received[2].query.split('&').any(|p| p == manager),
        "{}",
        received[2]
    );
    let output = created(&received[2]).1;
    let status = received[3].body["status"].clone();
    assert_eq!(condition(&status, "Ready")["status"], "True", "{status}");
    assert_eq!(
        status["configHash"], output["metadata"]["annotations"][HASH_ANNOTATION],
        "status and output name the same content"
    );
    let hash = status["configHash"].as_str().expect("a hash");
    assert!(hash.starts_with("hmac-sha256:"), "keyed: {hash}");
    assert_eq!(
        status["inputs"]["hashKey"],
        fixtures::test_hash_key().id(),
        "{status}"
    );
    (status, output)
}

#[tokio::test]
async fn a_second_reconcile_with_unchanged_inputs_reads_and_writes_nothing() {
    let (status, output) = first_render().await;
    // The same inputs again (a restart: a fresh context, no version caches, the stored status in
    // the cache): the sources and the output are read, nothing is written.
    let (result, second) = reconcile_once(
        cached(config(Some(status))),
        Vec::new(),
        vec![
            Exchange::get(SOURCE, source()),
            Exchange::get(OUTPUT, partial_metadata(&output)),
        ],
    )
    .await;
    assert_eq!(
        result.expect("the second reconcile"),
        Action::await_change()
    );
    assert_eq!(writes(&second), Vec::<String>::new());
    assert_eq!(second.len(), 2, "{second:?}");
}

#[tokio::test]
async fn unchanged_inputs_proven_by_the_version_caches_cost_no_request_at_all() {
    let (status, output) = first_render().await;
    // A restart whose watches listed the source and the output at the versions the status
    // recorded: the caches prove nothing changed, so the API server hears nothing.
    restart_sends_nothing(status, output).await;
}

/// A restart's reconcile of a config with `status` whose watches listed the source and `output`
/// at their stored versions: it sends no request at all.
async fn restart_sends_nothing(status: Value, output: Value) {
    let (result, received) = reconcile_once(
        cached(config(Some(status))),
        fixtures::listed_versions(&[source(), output]),
        Vec::new(),
    )
    .await;
    assert_eq!(result.expect("the reconcile"), Action::await_change());
    assert!(received.is_empty(), "{received:?}");
}

/// A restart in a world of configs that roll a Deployment (issue 30: 20,086 GETs at N = 10,000):
/// when the pods watch shows the target carrying the recorded hash with its pods as the status
/// counts them, the reconcile sends nothing at all.
#[tokio::test]
async fn a_current_rollout_proven_by_the_pods_watch_costs_no_request_at_all() {
    let (mut status, output) = first_render().await;
    let hash = status["configHash"].clone();
    status["rollout"] = json!([{"kind": "Deployment", "name": "api", "hash": hash,
                                "updated": 1, "ready": 1, "total": 1}]);
    status["conditions"]
        .as_array_mut()
        .expect("conditions")
        .push(
            json!({"type": "Synced", "status": "True", "reason": "AllPodsCurrent",
                     "message": "the pods of all 1 targets run the current hash",
                     "observedGeneration": 1, "lastTransitionTime": "2026-12-06T00:00:00Z"}),
        );
    let mut rolling = serde_json::to_value(config(Some(status))).expect("JSON");
    rolling["spec"]["rollout"] = json!({"targets": [{"kind": "Deployment", "name": "api"}]});
    let rolling: KafkaToolConfig = serde_json::from_value(rolling).expect("a valid config");
    let rolling = cached(rolling);

    let (ctx, api_server) = fixtures::context(
        std::slice::from_ref(&rolling),
        fixtures::listed_versions(&[source(), output]),
    );
    let deployment: k8s_openapi::api::apps::v1::Deployment = serde_json::from_value(json!({
        "metadata": {"name": "api", "namespace": "team-a", "generation": 3},
        "spec": {"replicas": 1, "selector": {},
                 "template": {"metadata": {"annotations": {HASH_ANNOTATION: hash}}}},
        "status": {"observedGeneration": 3, "replicas": 1, "updatedReplicas": 1, "readyReplicas": 1}
    }))
    .expect("a Deployment");
    ctx.pods.observe(
        ("Deployment", "team-a".into(), "api".into()),
        crate::operator::pods::deployment(&deployment),
    );
    let scenario = api_server.run(Vec::new());
    let result = reconcile(Arc::new(rolling), ctx).await;
    let received = fixtures::finish(scenario).await;
    assert_eq!(result.expect("the reconcile"), Action::await_change());
    assert!(received.is_empty(), "{received:?}");
}

/// Another config's output under this output's name: not controlled by this config.
fn foreign_output() -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": "orders-client", "namespace": "team-a", "resourceVersion": "7",
            "ownerReferences": [{
                "apiVersion": "kafkaconfig.dev/v1alpha1", "kind": "KafkaToolConfig",
                "name": "other", "uid": "uid-of-another-config", "controller": true
            }]
        }
    })
}

/// `output` with its controller reference replaced by another config's.
fn controlled_by_another(mut output: Value) -> Value {
    output["metadata"]["ownerReferences"] = foreign_output()["metadata"]["ownerReferences"].take();
    output
}

/// The status write of a config whose output name another object holds.
fn conflict_reported(request: &Received) -> (StatusCode, Value) {
    let status = &request.body["status"];
    let ready = condition(status, "Ready");
    assert_eq!(ready["status"], "False", "{status}");
    assert_eq!(ready["reason"], "OutputConflict", "{status}");
    let message = ready["message"].as_str().expect("a message");
    assert!(
        message.contains("ConfigMap orders-client")
            && message.contains("not controlled by this KafkaToolConfig"),
        "{message}"
    );
    assert_eq!(ready["observedGeneration"], 1, "{status}");
    assert!(status.get("configHash").is_none(), "{status}");
    // kstatus: InProgress (checked again in a minute), not Failed.
    assert_eq!(condition(status, "Reconciling")["status"], "True");
    assert!(kstatus_condition(status, "Stalled").is_none(), "{status}");
    status_applied(request)
}

/// Reconciles a new config whose output name `holder` holds, expecting `before_status` (the
/// requests up to the read of `holder`), then the conflict's status and Warning: no write to the
/// output, a check again in a minute.
async fn an_output_conflict(versions: Vec<ScopeVersions>, before_status: Vec<Exchange>) {
    let mut scenario = before_status;
    scenario.push(Exchange::new(Method::PATCH, STATUS, conflict_reported));
    scenario.push(warning_event("OutputConflict"));
    let (result, received) = reconcile_once(config(None), versions, scenario).await;
    // Checked again in a minute: the other owner may clean up.
    assert_eq!(
        result.expect("a conflict is a status, not an error"),
        Action::requeue(Duration::from_secs(60))
    );
    let writes_to_output: Vec<&Received> = received
        .iter()
        .filter(|r| r.method != Method::GET && r.path == OUTPUT)
        .collect();
    assert!(writes_to_output.is_empty(), "{writes_to_output:?}");
}

#[tokio::test]
async fn an_output_name_held_by_a_foreign_object_is_an_output_conflict_and_left_alone() {
    an_output_conflict(
        Vec::new(),
        vec![
            Exchange::get(SOURCE, source()),
            Exchange::get(OUTPUT, partial_metadata(&foreign_output())),
        ],
    )
    .await;
}

/// A copy of this config's output, the same content and hash, that another config controls: the
/// watch cache's controller uid does not make it ours. The API server's copy decides.
#[tokio::test]
async fn a_foreign_copy_of_the_output_in_the_watch_cache_is_a_conflict_too() {
    let (_, output) = first_render().await;
    let copy = controlled_by_another(output);
    an_output_conflict(
        fixtures::listed_versions(&[source(), copy.clone()]),
        vec![
            Exchange::get(SOURCE, source()),
            Exchange::get(OUTPUT, partial_metadata(&copy)),
        ],
    )
    .await;
}

/// The watch cache still lists this config's output, but the object the API server has under
/// that name now is another's (deleted and created again since): the read before the update
/// decides, and it is not overwritten.
#[tokio::test]
async fn an_output_replaced_since_the_watch_listed_it_is_a_conflict_not_overwritten() {
    let (_, output) = first_render().await;
    let mut edited = source();
    edited["data"]["client.properties"] =
        json!("bootstrap.servers=kafka-0.kafka:9092\nlinger.ms=30\n");
    let replaced = controlled_by_another(output.clone());
    an_output_conflict(
        fixtures::listed_versions(&[edited.clone(), output]),
        vec![
            Exchange::get(SOURCE, edited),
            Exchange::get(OUTPUT, replaced),
        ],
    )
    .await;
}

/// The watch listed no output, and the create finds the name taken since: the object there is
/// read, and it is not ours.
#[tokio::test]
async fn a_name_taken_after_the_watch_listed_it_absent_is_a_conflict() {
    an_output_conflict(
        fixtures::listed_versions(&[source()]),
        vec![
            Exchange::get(SOURCE, source()),
            Exchange::new(Method::POST, CONFIG_MAPS, |_| {
                let taken = api_status(
                    409,
                    "AlreadyExists",
                    "configmaps \"orders-client\" already exists",
                );
                (StatusCode::CONFLICT, taken)
            }),
            Exchange::get(OUTPUT, partial_metadata(&foreign_output())),
        ],
    )
    .await;
}

/// The output's create fails with `code`: Ready=False names the refusal (reason
/// `OutputWriteFailed`, the API server's code, reason and message), no hash is claimed, and the
/// error is returned (kube-runtime retries with backoff). `listed`: the watch cache lists the
/// namespace without the output (no read before the create, and none after the refusal).
async fn a_failed_output_write_is_returned_and_reported(
    code: u16,
    reason: &'static str,
    listed: bool,
) {
    let (versions, mut scenario) = if listed {
        (fixtures::listed_versions(&[source()]), Vec::new())
    } else {
        (Vec::new(), vec![Exchange::get_absent(OUTPUT)])
    };
    scenario.insert(0, Exchange::get(SOURCE, source()));
    scenario.extend(vec![
        Exchange::new(Method::POST, CONFIG_MAPS, move |request| {
            assert_eq!(request.body["metadata"]["name"], "orders-client");
            (
                StatusCode::from_u16(code).expect("a status code"),
                api_status(code, reason, "the write failed"),
            )
        }),
        Exchange::new(Method::PATCH, STATUS, move |request| {
            let status = &request.body["status"];
            let ready = condition(status, "Ready");
            assert_eq!(ready["status"], "False", "{status}");
            assert_eq!(ready["reason"], "OutputWriteFailed", "{status}");
            assert_eq!(
                ready["message"],
                format!(
                    "cannot write ConfigMap team-a/orders-client: {code} {reason}: the write failed"
                ),
                "{status}"
            );
            assert_eq!(condition(status, "Valid")["status"], "True", "{status}");
            assert_eq!(status["observedGeneration"], 1, "{status}");
            // kstatus: a 422 comes back on every retry (Stalled: Failed); a 500 may pass
            // (Reconciling: InProgress). Never both.
            let (set, absent) = if code == 422 {
                ("Stalled", "Reconciling")
            } else {
                ("Reconciling", "Stalled")
            };
            assert_eq!(condition(status, set)["status"], "True", "{status}");
            assert!(kstatus_condition(status, absent).is_none(), "{status}");
            assert!(status.get("configHash").is_none(), "{status}");
            status_applied(request)
        }),
        warning_event("OutputWriteFailed"),
    ]);
    let (result, received) = reconcile_once(config(None), versions, scenario).await;
    match result {
        Err(Error::OutputRefused(kube::Error::Api(status))) => {
            assert_eq!((status.code, status.reason.as_str()), (code, reason))
        }
        other => panic!("expected the refused output {code} {reason}, got {other:?}"),
    }
    // One status write (the failure), not a "Reconciling" one on top of it.
    let writes: Vec<String> = writes(&received)
        .into_iter()
        .map(|w| w.split('?').next().unwrap_or_default().to_string())
        .collect();
    assert_eq!(
        writes,
        [
            format!("POST {CONFIG_MAPS}"),
            format!("PATCH {STATUS}"),
            format!("POST {EVENTS}")
        ]
    );
}

#[tokio::test]
async fn an_output_write_failing_with_500_is_returned_and_the_status_says_so() {
    a_failed_output_write_is_returned_and_reported(500, "InternalError", false).await;
}

#[tokio::test]
async fn an_output_write_rejected_with_422_is_returned_and_the_status_says_so() {
    a_failed_output_write_is_returned_and_reported(422, "Invalid", true).await;
}

/// An output and status as an operator before the keyed hash wrote them: `sha256:` and no
/// `inputs.hashKey`.
fn unkeyed(mut status: Value, mut output: Value) -> (Value, Value) {
    let old = format!("sha256:{}", "ab".repeat(32));
    status["configHash"] = json!(old);
    status["history"][0]["hash"] = json!(old);
    status["inputs"]
        .as_object_mut()
        .expect("inputs")
        .remove("hashKey");
    output["metadata"]["annotations"][HASH_ANNOTATION] = json!(old);
    (status, output)
}

#[tokio::test]
async fn an_upgrade_to_the_keyed_hash_rewrites_the_output_once_and_then_rests() {
    let (status, output) = first_render().await;
    let new_hash = status["configHash"].clone();
    let (old_status, old_output) = unkeyed(status, output.clone());
    // The caches prove the sources and the output unchanged, but the status was hashed without
    // the key: rendered again, the output rewritten with the keyed hash (one rollout).
    let (result, received) = reconcile_once(
        cached(config(Some(old_status))),
        fixtures::listed_versions(&[source(), old_output.clone()]),
        vec![
            Exchange::get(SOURCE, source()),
            Exchange::get(OUTPUT, old_output),
            Exchange::new(Method::PATCH, OUTPUT, |request| {
                let mut object = request.body.clone();
                object["metadata"]["resourceVersion"] = json!("43");
                (StatusCode::OK, object)
            }),
            Exchange::new(Method::PATCH, STATUS, status_applied),
            Exchange::new(Method::POST, EVENTS, event_stored),
        ],
    )
    .await;
    assert_eq!(result.expect("the reconcile"), Action::await_change());
    let applied = &received[2].body;
    assert_eq!(
        applied["metadata"]["annotations"][HASH_ANNOTATION],
        new_hash
    );
    let written = received[3].body["status"].clone();
    assert_eq!(written["configHash"], new_hash);
    let history = written["history"].as_array().expect("history");
    assert_eq!(history.len(), 2, "{written}");
    assert_eq!(history[1]["hash"], new_hash);
    assert_eq!(history[1]["cause"], crate::operator::history::KEY_CHANGED);
    assert_eq!(
        history[1]["changedKeys"],
        json!([]),
        "no key changed: {written}"
    );
    // The next reconcile (a restart) finds everything current: no request, no second rollout.
    let mut stored = applied.clone();
    stored["metadata"]["resourceVersion"] = json!("43");
    restart_sends_nothing(written, stored).await;
}

#[tokio::test]
async fn another_key_renders_again_although_the_caches_prove_nothing_else_changed() {
    let (mut status, output) = first_render().await;
    // Rendered with another key (the Secret was deleted and the operator restarted).
    status["inputs"]["hashKey"] = json!("00000000000000ff");
    let (result, received) = reconcile_once(
        cached(config(Some(status))),
        fixtures::listed_versions(&[source(), output.clone()]),
        vec![
            Exchange::get(SOURCE, source()),
            Exchange::new(Method::PATCH, STATUS, status_applied),
        ],
    )
    .await;
    assert_eq!(result.expect("the reconcile"), Action::await_change());
    // Same key in this test context, so the same hash: only inputs.hashKey is written back.
    assert_eq!(writes(&received).len(), 1, "{received:?}");
    assert_eq!(
        received[1].body["status"]["inputs"]["hashKey"],
        fixtures::test_hash_key().id()
    );
}

mod stale_status;
