//! Governance on the real control plane (issue 27): who changed what (field managers recorded in
//! `status.history[].by`), why (`kafkaconfig.dev/change-cause` for one revision only), the trail
//! outside status (`Rendered` Events, `kubectl kafkaconfig history`), and which pods run it
//! (`status.rollout[]` counts and the `Synced` condition, moved by pods marked ready through the
//! API as a kubelet would). Needs `KCO_E2E_KUBECONFIG` (e2e/controlplane/up.sh).

mod support;

use std::process::Command;
use std::time::Duration;

use support::{Cluster, LEASE, OPERATOR_NS, Operator, SA, condition, eventually, step};

const NS: &str = "kco-gov";
const GLOBAL: &str = "kco-gov-defaults";
const WAIT: Duration = Duration::from_secs(60);

const WORLD: &str = r#"
apiVersion: v1
kind: Namespace
metadata:
  name: kco-gov
  labels: {kafka-cluster: gov}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: base, namespace: kco-gov}
data:
  client.properties: |
    bootstrap.servers=kafka-0.kafka:9092
    linger.ms=5
---
apiVersion: kafkaconfig.dev/v1alpha1
kind: GlobalClientDefaults
metadata: {name: kco-gov-defaults}
spec:
  selector:
    namespaceSelector: {matchLabels: {kafka-cluster: gov}}
  defaults:
    producer: {delivery.timeout.ms: "120000"}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: api, namespace: kco-gov}
spec:
  replicas: 3
  # All old pods go before the new ones come: with no kubelet no pod ever becomes ready by
  # itself, and a rolling update would wait for them.
  strategy: {type: Recreate}
  selector: {matchLabels: {app: api}}
  template:
    metadata: {labels: {app: api}}
    spec:
      containers:
        - name: app
          image: registry.example/api:1
"#;

/// The config as a person applies it with `kubectl apply`, with a change-cause.
const CONFIG: &str = r#"
apiVersion: kafkaconfig.dev/v1alpha1
kind: KafkaToolConfig
metadata:
  name: orders
  namespace: kco-gov
  annotations: {kafkaconfig.dev/change-cause: "ticket 42: first producer settings"}
spec:
  tool: kafka-console-producer
  args: {topic: orders}
  properties:
    producer: {acks: all}
  configFiles:
    - configMapKeyRef: {name: base, key: client.properties}
  rollout:
    targets: [{kind: Deployment, name: api}]
"#;

/// The same config as Argo CD would apply it (server-side apply, its own field manager), with
/// another `acks` and without touching the annotation.
const CONFIG_BY_ARGO: &str = r#"
apiVersion: kafkaconfig.dev/v1alpha1
kind: KafkaToolConfig
metadata: {name: orders, namespace: kco-gov}
spec:
  tool: kafka-console-producer
  args: {topic: orders}
  properties:
    producer: {acks: "1"}
  configFiles:
    - configMapKeyRef: {name: base, key: client.properties}
  rollout:
    targets: [{kind: Deployment, name: api}]
"#;

fn config(cluster: &Cluster) -> serde_json::Value {
    cluster
        .json(&["get", "kafkatoolconfig", "orders", "-n", NS])
        .unwrap_or_default()
}

/// The history once it has `revisions` entries and the config is Ready for its generation.
fn history(cluster: &Cluster, revisions: usize) -> Vec<serde_json::Value> {
    eventually(&format!("{revisions} revisions"), WAIT, || {
        let c = config(cluster);
        let ready = condition(&c, "Ready").map(|r| r["status"].clone());
        let history = c["status"]["history"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        if c["status"]["observedGeneration"] == c["metadata"]["generation"]
            && ready == Some("True".into())
            && history.len() == revisions
        {
            Ok(history)
        } else {
            Err(format!("ready {ready:?}, history {history:?}"))
        }
    })
}

fn by(entry: &serde_json::Value) -> (String, String, String) {
    let s = |k: &str| entry["by"][k].as_str().unwrap_or_default().to_string();
    (s("kind"), s("name"), s("manager"))
}

fn synced(cluster: &Cluster) -> (String, String, serde_json::Value) {
    let c = config(cluster);
    let synced = condition(&c, "Synced").cloned().unwrap_or_default();
    (
        synced["status"].as_str().unwrap_or_default().to_string(),
        synced["message"].as_str().unwrap_or_default().to_string(),
        c["status"]["rollout"][0].clone(),
    )
}

/// The pods of the Deployment's current ReplicaSet, marked Running and Ready through the status
/// subresource, as a kubelet reports them (the control plane has none).
fn mark_pods_ready(cluster: &Cluster) -> usize {
    let pods = cluster
        .json(&["get", "pods", "-n", NS, "-l", "app=api"])
        .unwrap_or_default();
    let mut marked = 0;
    for pod in pods["items"].as_array().into_iter().flatten() {
        if !pod["metadata"]["deletionTimestamp"].is_null() {
            continue;
        }
        let name = pod["metadata"]["name"].as_str().unwrap_or_default();
        let now = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
        let patch = serde_json::json!({"status": {
            "phase": "Running",
            "conditions": [
                {"type": "Ready", "status": "True", "lastTransitionTime": now},
                {"type": "ContainersReady", "status": "True", "lastTransitionTime": now},
            ],
        }})
        .to_string();
        cluster.kubectl(&[
            "patch",
            "pod",
            name,
            "-n",
            NS,
            "--subresource=status",
            "--type=merge",
            "-p",
            &patch,
        ]);
        marked += 1;
    }
    marked
}

#[test]
#[ignore = "needs KCO_E2E_KUBECONFIG"]
fn authors_causes_events_history_and_sync_status() {
    let cluster = Cluster::from_env();
    cluster.install_crds_and_rbac();
    cluster.fresh_namespace(NS);
    cluster.delete_lease(LEASE);
    let _ = cluster.run(
        &[
            "delete",
            "globalclientdefaults",
            GLOBAL,
            "--ignore-not-found",
        ],
        None,
    );
    step(
        "a namespace, a ConfigMap, a GlobalClientDefaults and a 3-replica Deployment (kubectl apply)",
    );
    cluster.apply_yaml(WORLD);
    step("the config, applied with kubectl and a change-cause");
    cluster.apply_yaml(CONFIG);
    let sa = cluster.impersonating_kubeconfig(OPERATOR_NS, SA);
    let operator = Operator::start(&cluster, &sa, "gov");

    let first = history(&cluster, 1);
    assert_eq!(first[0]["cause"], "ticket 42: first producer settings");
    assert_eq!(
        by(&first[0]),
        (
            "KafkaToolConfig".into(),
            "orders".into(),
            "kubectl-client-side-apply".into()
        ),
        "{first:?}"
    );

    step("Argo CD's field manager changes acks (server-side apply): its author, not the old cause");
    cluster.kubectl_stdin(
        &[
            "apply",
            "--server-side",
            "--field-manager=argocd-controller",
            "--force-conflicts",
            "-f",
            "-",
        ],
        CONFIG_BY_ARGO,
    );
    let second = history(&cluster, 2);
    assert_eq!(
        by(&second[1]),
        (
            "KafkaToolConfig".into(),
            "orders".into(),
            "argocd-controller".into()
        ),
        "{second:?}"
    );
    assert_eq!(second[1]["by"]["operation"], "Apply");
    assert_eq!(
        second[1]["cause"], "spec changed",
        "the annotation is used once"
    );
    assert_eq!(second[1]["changedKeys"], serde_json::json!(["acks"]));

    step("helm's field manager edits the ConfigMap: the ConfigMap and helm are the author");
    cluster.kubectl(&[
        "patch",
        "configmap",
        "base",
        "-n",
        NS,
        "--field-manager=helm",
        "--type=merge",
        "-p",
        r#"{"data":{"client.properties":"bootstrap.servers=kafka-0.kafka:9092\nlinger.ms=98765\n"}}"#,
    ]);
    let third = history(&cluster, 3);
    assert_eq!(
        by(&third[2]),
        ("ConfigMap".into(), "base".into(), "helm".into()),
        "{third:?}"
    );
    assert_eq!(third[2]["cause"], "ConfigMap base changed");
    assert_eq!(third[2]["changedKeys"], serde_json::json!(["linger.ms"]));

    step("each revision is a Rendered Event with revision, hash, keys and author, never values");
    let notes: Vec<String> = eventually("three Rendered events", WAIT, || {
        let events = cluster
            .json(&["get", "events.events.k8s.io", "-n", NS])
            .unwrap_or_default();
        let notes: Vec<String> = events["items"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|e| e["reason"] == "Rendered" && e["regarding"]["name"] == "orders")
            .filter_map(|e| e["note"].as_str().map(str::to_string))
            .collect();
        if notes.len() >= 3 {
            Ok(notes)
        } else {
            Err(format!("{notes:?}"))
        }
    });
    let third_note = notes
        .iter()
        .find(|n| n.starts_with("revision 3 "))
        .unwrap_or_else(|| panic!("no note of revision 3: {notes:?}"));
    let hash = third[2]["hash"].as_str().unwrap_or_default();
    let prefix: String = hash
        .rsplit(':')
        .next()
        .unwrap_or_default()
        .chars()
        .take(12)
        .collect();
    assert!(
        third_note.contains(&format!("ConfigMap orders-kafka: {hash};"))
            && third_note.contains("changed keys: linger.ms")
            && third_note.contains("by helm (ConfigMap base)"),
        "{third_note}"
    );
    assert!(
        notes
            .iter()
            .any(|n| n.starts_with("revision 2 ") && n.contains("by argocd-controller")),
        "{notes:?}"
    );
    assert!(
        notes.iter().all(|n| !n.contains("98765")),
        "a value in an event: {notes:?}"
    );

    step("kubectl kafkaconfig history -n NS NAME prints the revisions as a table");
    let path = cluster.plugin_path();
    let out = Command::new(&cluster.kubectl)
        .args(["kafkaconfig", "history", "-n", NS, "orders"])
        .env("KUBECONFIG", &cluster.kubeconfig)
        .env("PATH", &path)
        .output()
        .expect("run kubectl kafkaconfig history");
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines: Vec<&str> = table.lines().collect();
    assert_eq!(lines.len(), 4, "{table}");
    assert!(
        lines[0].starts_with("REVISION") && lines[0].contains("AUTHOR"),
        "{table}"
    );
    assert!(
        lines[1].contains("kubectl-client-side-apply") && lines[1].contains("ticket 42"),
        "{table}"
    );
    assert!(
        lines[2].contains("argocd-controller") && lines[2].contains("acks"),
        "{table}"
    );
    assert!(
        lines[3].contains("helm (ConfigMap base)") && lines[3].contains(&prefix),
        "{table}"
    );

    step("no pod is ready yet: Synced is False with 0/3 ready, and Ready is unaffected");
    let (status, message, rollout) = eventually("Synced False 0/3", WAIT, || {
        let (status, message, rollout) = synced(&cluster);
        if status == "False" && rollout["total"] == 3 && rollout["updated"] == 3 {
            Ok((status, message, rollout))
        } else {
            Err(format!("{status} {message} {rollout}"))
        }
    });
    assert_eq!(rollout["ready"], 0, "{rollout}");
    assert!(message.contains("0/3 ready"), "{status}: {message}");
    assert_eq!(
        condition(&config(&cluster), "Ready").map(|c| c["status"].clone()),
        Some("True".into())
    );
    let columns = cluster.kubectl(&["get", "kafkatoolconfig", "orders", "-n", NS]);
    assert!(
        columns.lines().next().is_some_and(|h| h.contains("SYNCED"))
            && columns.lines().nth(1).is_some_and(|l| l.contains("False")),
        "{columns}"
    );

    step("the pods are marked ready through the API, as a kubelet would: Synced True, 3/3");
    let (_, message, rollout) = eventually("Synced True 3/3", WAIT, || {
        // Again on each try: a pod the ReplicaSet creates later needs it too.
        mark_pods_ready(&cluster);
        let (status, message, rollout) = synced(&cluster);
        if status == "True" && rollout["ready"] == 3 {
            Ok((status, message, rollout))
        } else {
            Err(format!("{status} {message} {rollout}"))
        }
    });
    assert_eq!(rollout["updated"], 3, "{message}");
    assert_eq!(rollout["hash"], hash, "{rollout}");

    step("GlobalClientDefaults: history with its author, selectedConfigs and syncedConfigs");
    let global = |cluster: &Cluster| {
        cluster
            .json(&["get", "globalclientdefaults", GLOBAL])
            .unwrap_or_default()
    };
    eventually("the GlobalClientDefaults status", WAIT, || {
        let g = global(&cluster);
        let s = &g["status"];
        if s["selectedConfigs"] == 1
            && s["syncedConfigs"] == 1
            && s["history"][0]["by"]["manager"] == "kubectl-client-side-apply"
        {
            Ok(())
        } else {
            Err(format!("{s}"))
        }
    });
    cluster.kubectl_stdin(
        &[
            "apply",
            "--server-side",
            "--field-manager=platform-team",
            "--force-conflicts",
            "-f",
            "-",
        ],
        r#"{"apiVersion": "kafkaconfig.dev/v1alpha1", "kind": "GlobalClientDefaults",
            "metadata": {"name": "kco-gov-defaults"},
            "spec": {"selector": {"namespaceSelector": {"matchLabels": {"kafka-cluster": "gov"}}},
                     "defaults": {"producer": {"delivery.timeout.ms": "90000"}}}}"#,
    );
    let fourth = history(&cluster, 4);
    assert_eq!(
        by(&fourth[3]),
        (
            "GlobalClientDefaults".into(),
            GLOBAL.into(),
            "platform-team".into()
        ),
        "{fourth:?}"
    );
    eventually("the edit to propagate", WAIT, || {
        let g = global(&cluster);
        let s = &g["status"];
        let history = s["history"].as_array().cloned().unwrap_or_default();
        if s["syncedConfigs"] == 1
            && history.len() == 2
            && history[1]["by"]["manager"] == "platform-team"
        {
            Ok(())
        } else {
            Err(format!("{s}"))
        }
    });
    operator.terminate();
}
