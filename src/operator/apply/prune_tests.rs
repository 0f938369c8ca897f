//! Tests of `prune.rs`: the pure plan, and which outputs the rollout targets hold and which are
//! deleted against a mocked API server (`fixtures.rs`).

use http::{Method, StatusCode};
use serde_json::{Value, json};

use super::*;
use crate::operator::fixtures::{self, Exchange, Received, api_status};

const CONFIG_MAPS: &str = "/api/v1/namespaces/team-a/configmaps";

/// An old immutable output of config `orders` (uid `config-uid`), as a metadata list has it.
fn listed(name: &str, uid: &str, second: u32) -> Value {
    listed_under("config-uid", name, uid, second)
}

/// An output labelled for config `orders`, controlled by `controller`.
fn listed_under(controller: &str, name: &str, uid: &str, second: u32) -> Value {
    json!({
        "apiVersion": "meta.k8s.io/v1",
        "kind": "PartialObjectMetadata",
        "metadata": {
            "name": name, "namespace": "team-a", "uid": uid,
            "creationTimestamp": format!("2026-12-07T10:00:{second:02}Z"),
            "labels": {CONFIG_LABEL: "orders"},
            "annotations": {HASH_ANNOTATION: format!("hash-{name}")},
            "ownerReferences": [{
                "apiVersion": "kafkaconfig.dev/v1alpha1", "kind": "KafkaToolConfig",
                "name": "orders", "uid": controller, "controller": true
            }]
        }
    })
}

/// A delete of `name` that must name `uid` as its precondition; answered with `status`.
fn delete(name: &str, uid: &'static str, status: StatusCode) -> Exchange {
    Exchange::new(
        Method::DELETE,
        format!("{CONFIG_MAPS}/{name}"),
        move |r: &Received| {
            assert_eq!(r.body["preconditions"]["uid"], uid, "{}", r.body);
            match status {
                StatusCode::OK => (status, json!({"kind": "Status", "status": "Success"})),
                _ => (
                    status,
                    api_status(409, "Conflict", "Precondition failed: UID"),
                ),
            }
        },
    )
}

const DEPLOYMENT: &str = "/apis/apps/v1/namespaces/team-a/deployments/web";
const REPLICA_SETS: &str = "/apis/apps/v1/namespaces/team-a/replicasets";

/// A pod template mounting ConfigMap `volume`, annotated with `hash`.
fn template(hash: &str, volume: &str) -> Value {
    json!({
        "metadata": {"annotations": {HASH_ANNOTATION: hash}},
        "spec": {
            "containers": [{"name": "app", "image": "apache/kafka"}],
            "volumes": [{"name": "kafka-config", "configMap": {"name": volume}}]
        }
    })
}

/// Deployment `web` at `generation`, its controller at `observed` (None: not yet).
fn deployment(generation: i64, observed: Option<Value>) -> Value {
    let mut object = json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {
            "name": "web", "namespace": "team-a", "uid": "web-uid", "generation": generation
        },
        "spec": {
            "selector": {"matchLabels": {"app": "web"}},
            "template": template("h3", "orders-out-3")
        }
    });
    if let Some(observed) = observed {
        object["status"] = json!({"observedGeneration": observed});
    }
    object
}

/// A ReplicaSet controlled by `owner`, with `desired` and `actual` replicas.
fn replica_set(name: &str, owner: &str, hash: &str, [desired, actual]: [i32; 2]) -> Value {
    json!({
        "metadata": {
            "name": name, "namespace": "team-a",
            "ownerReferences": [{
                "apiVersion": "apps/v1", "kind": "Deployment", "name": "web",
                "uid": owner, "controller": true
            }]
        },
        "spec": {
            "replicas": desired,
            "selector": {"matchLabels": {"app": "web"}},
            "template": template(hash, &format!("orders-out-{hash}"))
        },
        "status": {"replicas": actual}
    })
}

/// `hashes_in_use` of `targets` against a scenario of `exchanges`.
async fn in_use_of(targets: &[Target], exchanges: Vec<Exchange>) -> Result<InUse, Error> {
    let (client, api_server) = fixtures::client();
    let scenario = api_server.run(exchanges);
    let in_use = hashes_in_use(&client, "team-a", targets).await;
    drop(client);
    fixtures::finish(scenario).await;
    in_use
}

fn web() -> Vec<Target> {
    vec![Target {
        kind: RolloutKind::Deployment,
        name: "web".into(),
        opted_in: false,
    }]
}

#[tokio::test]
async fn a_deployment_holds_its_template_and_every_replica_set_of_its_with_pods() {
    let replica_sets = json!({
        "apiVersion": "apps/v1", "kind": "ReplicaSetList", "metadata": {},
        "items": [
            replica_set("web-2", "web-uid", "h2", [0, 1]),
            replica_set("web-1", "web-uid", "h1", [0, 0]),
            replica_set("other", "other-uid", "h0", [1, 1]),
            replica_set("web-4", "web-uid", "h4", [1, 0]),
        ]
    });
    let scenario = vec![
        Exchange::get(DEPLOYMENT, deployment(2, Some(json!(2)))),
        Exchange::new(Method::GET, REPLICA_SETS, move |r: &Received| {
            assert!(r.query.contains("labelSelector=app%3Dweb"), "{}", r.query);
            (StatusCode::OK, replica_sets)
        }),
    ];
    let in_use = in_use_of(&web(), scenario).await.expect("the targets read");
    // The template, the ReplicaSet still scaling down and the one scaling up; not the
    // scaled-down one, nor one that another Deployment controls.
    assert_eq!(in_use.hashes, ["h2", "h3", "h4"].map(String::from).into());
    assert_eq!(
        in_use.names,
        ["orders-out-3", "orders-out-h2", "orders-out-h4"]
            .map(String::from)
            .into()
    );
}

#[tokio::test]
async fn a_stateful_set_or_daemon_set_is_known_to_hold_only_its_template_once_settled() {
    let stateful_set = |updated: i32| {
        json!({
            "apiVersion": "apps/v1", "kind": "StatefulSet",
            "metadata": {"name": "db", "namespace": "team-a", "generation": 1},
            "spec": {
                "replicas": 2, "serviceName": "db",
                "selector": {"matchLabels": {"app": "db"}},
                "template": template("h5", "orders-out-5")
            },
            "status": {
                "observedGeneration": 1, "replicas": 2, "updatedReplicas": updated,
                "currentRevision": "db-1", "updateRevision": "db-1"
            }
        })
    };
    let daemon_set = |unavailable: i32| {
        json!({
            "apiVersion": "apps/v1", "kind": "DaemonSet",
            "metadata": {"name": "agent", "namespace": "team-a", "generation": 1},
            "spec": {
                "selector": {"matchLabels": {"app": "agent"}},
                "template": template("h6", "orders-out-6")
            },
            "status": {
                "observedGeneration": 1, "desiredNumberScheduled": 3,
                "currentNumberScheduled": 3, "numberMisscheduled": 0, "numberReady": 3,
                "updatedNumberScheduled": 3, "numberUnavailable": unavailable
            }
        })
    };
    let targets = [
        (RolloutKind::StatefulSet, "db", "statefulsets"),
        (RolloutKind::DaemonSet, "agent", "daemonsets"),
    ]
    .map(|(kind, name, plural)| {
        let target = Target {
            kind,
            name: name.into(),
            opted_in: false,
        };
        (
            target,
            format!("/apis/apps/v1/namespaces/team-a/{plural}/{name}"),
        )
    });
    let both: Vec<Target> = targets.iter().map(|(t, _)| t.clone()).collect();
    let ask = |[db, agent]: [Value; 2]| {
        let exchanges = vec![
            Exchange::get(targets[0].1.clone(), db),
            Exchange::get(targets[1].1.clone(), agent),
        ];
        in_use_of(&both, exchanges)
    };
    let in_use = ask([stateful_set(2), daemon_set(0)])
        .await
        .expect("settled");
    assert_eq!(in_use.hashes, ["h5", "h6"].map(String::from).into());
    // Rolling: which ControllerRevision each pod runs is not known, so nothing is pruned.
    let rolling = ask([stateful_set(2), daemon_set(1)]).await;
    assert_eq!(
        rolling.map_err(|e| e.metric_label()),
        Err("RolloutInProgress")
    );
    let exchanges = vec![Exchange::get(targets[0].1.clone(), stateful_set(1))];
    let rolling = in_use_of(&both[..1], exchanges).await;
    assert_eq!(
        rolling.map_err(|e| e.metric_label()),
        Err("RolloutInProgress")
    );
}

#[tokio::test]
async fn nothing_is_known_in_use_while_a_deployment_is_unobserved_or_unreadable() {
    for (answer, expected) in [
        (deployment(2, None), "RolloutInProgress"),
        (deployment(3, Some(json!(2))), "NotObserved"),
        // An Argo Rollout's observedGeneration is a string.
        (deployment(3, Some(json!("2"))), "NotObserved"),
    ] {
        let in_use = in_use_of(&web(), vec![Exchange::get(DEPLOYMENT, answer)]).await;
        let error = in_use.expect_err("not known");
        assert_eq!(error.metric_label(), expected, "{error}");
    }
    let forbidden = Exchange::new(Method::GET, DEPLOYMENT, |_| {
        (StatusCode::FORBIDDEN, api_status(403, "Forbidden", "no"))
    });
    let in_use = in_use_of(&web(), vec![forbidden]).await;
    assert_eq!(in_use.expect_err("unreadable").metric_label(), "Forbidden");
}

#[tokio::test]
async fn an_old_output_is_deleted_only_under_the_uid_it_was_listed_with() {
    let (client, api_server) = fixtures::client();
    let scenario = api_server.run(vec![
        Exchange::get(
            CONFIG_MAPS,
            json!({
                "apiVersion": "meta.k8s.io/v1", "kind": "PartialObjectMetadataList",
                "metadata": {},
                "items": [
                    listed("orders-out-4", "uid-4", 4),
                    listed("orders-out-3", "uid-3", 3),
                    listed("orders-out-2", "uid-2", 2),
                    listed("orders-out-1", "uid-1", 1),
                    // Labelled for this config, but an earlier config of the same name's.
                    listed_under("earlier-uid", "orders-out-0", "uid-0", 0),
                ]
            }),
        ),
        delete("orders-out-3", "uid-3", StatusCode::OK),
        // Replaced under the same name since the list: refused, and not an error.
        delete("orders-out-2", "uid-2", StatusCode::CONFLICT),
    ]);
    // The history orders before creation times: out-1's content was made current last.
    let history =
        [("hash-orders-out-3", 4), ("hash-orders-out-1", 5)].map(|(hash, revision)| HistoryEntry {
            revision,
            hash: hash.to_string(),
            time: String::new(),
            changed_keys: Vec::new(),
            cause: String::new(),
            by: None,
        });
    let spec: ToolConfigSpec = serde_json::from_value(json!({
        "tool": "kafka-console-producer",
        "output": {"name": "orders-out", "immutable": true, "keep": 1}
    }))
    .expect("a valid spec");
    let owner = Owner {
        name: "orders",
        namespace: "team-a",
        uid: Some("config-uid"),
    };
    let pending = prune_immutable(
        &client,
        &Metrics::new(),
        &owner,
        &spec,
        "orders-out-4",
        &[],
        &history,
    )
    .await;
    drop(client);
    let received = fixtures::finish(scenario).await;
    assert_eq!(pending.expect("pruned"), GcPending::No);
    assert_eq!(received.len(), 3);
}

fn old(name: &str, hash: &str, secs: i64) -> OldOutput {
    OldOutput {
        name: name.to_string(),
        hash: Some(hash.to_string()),
        revision: None,
        created: Some(Timestamp::from_second(secs).expect("valid timestamp")),
    }
}

fn set(hashes: &[&str]) -> InUse {
    InUse {
        hashes: hashes.iter().map(|h| h.to_string()).collect(),
        names: BTreeSet::new(),
    }
}

#[test]
fn outputs_written_within_one_second_are_ordered_by_their_history_revision() {
    // creationTimestamp has whole seconds: h1 and h2 tie on it, and the name alone would
    // call h1 ("…-d7…") the newer one and delete h2 (the CI flake of 2026-12-06).
    let revised = |name: &str, hash: &str, revision: i64| OldOutput {
        revision: Some(revision),
        ..old(name, hash, 30)
    };
    let plan = plan_prune(
        vec![
            revised("c-d710bed5", "h1", 1),
            revised("c-aedb5ed9", "h2", 2),
        ],
        1,
        &set(&[]),
    );
    assert_eq!(plan.delete, vec!["c-d710bed5"]);
    // A hash no longer in history is older than every one still listed.
    let plan = plan_prune(
        vec![old("c-ffffffff", "h0", 40), revised("c-00000000", "h9", 9)],
        1,
        &set(&[]),
    );
    assert_eq!(plan.delete, vec!["c-ffffffff"]);
}

#[test]
fn an_output_a_volume_still_names_is_held_whatever_its_hash() {
    let in_use = InUse {
        hashes: BTreeSet::new(),
        names: ["c-1".to_string()].into(),
    };
    let plan = plan_prune(vec![old("c-1", "h1", 1), old("c-2", "h2", 2)], 0, &in_use);
    assert_eq!(plan.held, vec!["c-1"]);
    assert_eq!(plan.delete, vec!["c-2"]);
}

#[test]
fn keeps_the_newest_and_deletes_unused_older_ones() {
    let plan = plan_prune(
        vec![
            old("c-1", "h1", 1),
            old("c-3", "h3", 3),
            old("c-2", "h2", 2),
        ],
        1,
        &set(&[]),
    );
    assert_eq!(plan.delete, vec!["c-2", "c-1"]);
    assert!(plan.held.is_empty());
}

#[test]
fn never_deletes_a_hash_a_target_still_uses() {
    let plan = plan_prune(
        vec![
            old("c-1", "h1", 1),
            old("c-2", "h2", 2),
            old("c-3", "h3", 3),
        ],
        1,
        &set(&["h1"]),
    );
    assert_eq!(plan.delete, vec!["c-2"]);
    assert_eq!(plan.held, vec!["c-1"]);
    // keep 0: even the newest old one goes once unused
    let plan = plan_prune(vec![old("c-1", "h1", 1)], 0, &set(&[]));
    assert_eq!(plan.delete, vec!["c-1"]);
    let plan = plan_prune(vec![old("c-1", "h1", 1)], 0, &set(&["h1"]));
    assert_eq!(plan.held, vec!["c-1"]);
    assert!(plan.delete.is_empty());
}

#[test]
fn within_keep_nothing_is_deleted_and_missing_hashes_are_unused() {
    let plan = plan_prune(vec![old("c-1", "h1", 1), old("c-2", "h2", 2)], 3, &set(&[]));
    assert_eq!(plan, PrunePlan::default());
    let mut unannotated = old("c-0", "", 0);
    unannotated.hash = None;
    let plan = plan_prune(vec![unannotated, old("c-1", "h1", 1)], 1, &set(&["h1"]));
    assert_eq!(plan.delete, vec!["c-0"]);
    // same timestamp: the name decides, deterministically
    let plan = plan_prune(vec![old("c-a", "ha", 5), old("c-b", "hb", 5)], 1, &set(&[]));
    assert_eq!(plan.delete, vec!["c-a"]);
}
