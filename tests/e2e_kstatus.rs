//! kstatus, the library Flux (and kpt, cli-utils, `kstatus`-based CI scripts) read health with,
//! on live KafkaToolConfigs in each state: `sigs.k8s.io/cli-utils/pkg/kstatus/status.Compute`
//! itself, in a small Go program built from the Go module proxy (e2e/kstatus, built by
//! e2e/go-tool.sh), reads `kubectl get -o json` of the objects on the real control plane. The
//! expected results are the table of docs/flux.md.
//!
//! Run: `KCO_E2E_KUBECONFIG=e2e/.run/kubeconfig cargo test --test e2e_kstatus -- --include-ignored --nocapture`

mod support;

use std::collections::BTreeMap;
use std::process::{Command, Stdio};
use std::time::Duration;

use support::*;

const NS_KSTATUS: &str = "kco-kstatus";
const LEASE_KSTATUS: &str = "kco-kstatus";

/// What kstatus says of one object.
#[derive(Debug, Clone)]
struct Computed {
    status: String,
    message: String,
}

/// The kstatus program (built once, cached under e2e/.bin like the control plane).
fn kstatus_program() -> std::path::PathBuf {
    let out = Command::new("bash")
        .arg(repo().join("e2e/go-tool.sh"))
        .arg("kstatus")
        .stderr(Stdio::inherit())
        .output()
        .expect("run e2e/go-tool.sh");
    assert!(out.status.success(), "e2e/go-tool.sh kstatus failed");
    std::path::PathBuf::from(String::from_utf8_lossy(&out.stdout).trim())
}

/// kstatus's result for every KafkaToolConfig of the namespace, by name.
fn compute(cluster: &Cluster, program: &std::path::Path) -> BTreeMap<String, Computed> {
    let objects = cluster.kubectl(&["get", "kafkatoolconfigs", "-n", NS_KSTATUS, "-o", "json"]);
    let mut child = Command::new(program)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the kstatus program");
    {
        use std::io::Write as _;
        let mut stdin = child.stdin.take().expect("stdin");
        stdin.write_all(objects.as_bytes()).expect("write objects");
    }
    let out = child.wait_with_output().expect("kstatus output");
    assert!(
        out.status.success(),
        "kstatus failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|line| {
            let v: serde_json::Value = serde_json::from_str(line).expect("a JSON line");
            (
                v["name"].as_str().unwrap_or_default().to_string(),
                Computed {
                    status: v["status"].as_str().unwrap_or_default().to_string(),
                    message: v["message"].as_str().unwrap_or_default().to_string(),
                },
            )
        })
        .collect()
}

/// Waits until kstatus says `status` of `name` with a message containing `message`.
fn expect_state(
    cluster: &Cluster,
    program: &std::path::Path,
    name: &str,
    status: &str,
    message: &str,
) -> Computed {
    let computed = eventually(
        &format!("kstatus {status} for {name}"),
        Duration::from_secs(60),
        || {
            let all = compute(cluster, program);
            let got = all.get(name).cloned().ok_or(format!("no {name}"))?;
            if got.status == status && got.message.contains(message) {
                Ok(got)
            } else {
                Err(format!("{name}: {got:?}"))
            }
        },
    );
    println!("    ok: {name}: {} '{}'", computed.status, computed.message);
    computed
}

/// The config's conditions as `type=status/reason` (kstatus's two are present only while True).
fn conditions(cluster: &Cluster, name: &str) -> Vec<String> {
    let config = cluster
        .json(&["get", "kafkatoolconfig", name, "-n", NS_KSTATUS])
        .expect("the config");
    config["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| {
            format!(
                "{}={}/{}",
                c["type"].as_str().unwrap_or_default(),
                c["status"].as_str().unwrap_or_default(),
                c["reason"].as_str().unwrap_or_default()
            )
        })
        .collect()
}

fn ready_message(cluster: &Cluster, name: &str) -> String {
    let config = cluster
        .json(&["get", "kafkatoolconfig", name, "-n", NS_KSTATUS])
        .expect("the config");
    condition(&config, "Ready")
        .and_then(|c| c["message"].as_str())
        .unwrap_or_default()
        .to_string()
}

/// An operator (as the ServiceAccount of e2e/rbac) that is ready and holds this test's Lease.
fn leading_operator(cluster: &Cluster, sa: &std::path::Path, name: &str) -> Operator {
    let mut op = Operator::spawn(cluster, sa, name, Some(LEASE_KSTATUS), "info,kube=warn");
    op.wait_ready(Duration::from_secs(60))
        .expect("the operator to be ready");
    eventually("the operator to lead", Duration::from_secs(60), || {
        op.is_leader().then_some(()).ok_or("not leader".to_string())
    });
    op
}

#[test]
#[ignore = "needs KCO_E2E_KUBECONFIG"]
fn kstatus_reads_each_state_as_documented() {
    let cluster = Cluster::from_env();
    step("building the kstatus program (sigs.k8s.io/cli-utils, cached)");
    let program = kstatus_program();
    cluster.install_crds_and_rbac();
    cluster.fresh_namespace(NS_KSTATUS);
    let _ = cluster.run(
        &[
            "delete",
            "lease",
            LEASE_KSTATUS,
            "-n",
            OPERATOR_NS,
            "--ignore-not-found",
        ],
        None,
    );
    step("one config per state, and a policy that refuses two outputs (e2e/kstatus/states.yaml)");
    eventually("the states to apply", Duration::from_secs(30), || {
        cluster.run(&["apply", "-f", "e2e/kstatus/states.yaml"], None)
    });
    // The API server loads a new policy asynchronously: wait until it refuses, with its reasons.
    let denied = |name: &str| {
        let object = format!(
            "{{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{{\"name\":\"{name}\",\"namespace\":\"{NS_KSTATUS}\"}}}}"
        );
        cluster
            .run(&["create", "--dry-run=server", "-f", "-"], Some(&object))
            .err()
            .ok_or(format!("{name} still accepted"))
    };
    let refusal = eventually("the policy to refuse", Duration::from_secs(30), || {
        denied("refused-kafka")
    });
    assert!(refusal.contains("is invalid"), "a 422: {refusal}");
    eventually("the policy's 403", Duration::from_secs(30), || {
        denied("retried-kafka")
    });

    step("new, before the operator has written a status: kstatus cannot tell (its documented gap)");
    // No status and no conditions: kstatus assumes Current (docs/flux.md says how Flux's
    // healthCheckExprs close the gap).
    expect_state(
        &cluster,
        &program,
        "rendered",
        "Current",
        "Resource is current",
    );

    // Rendered for the spec the operator saw last: kstatus's Ready rule.
    let current =
        |name: &str| expect_state(&cluster, &program, name, "Current", "Resource is Ready");

    step("the operator starts");
    let sa = cluster.impersonating_kubeconfig(OPERATOR_NS, SA);
    let op = leading_operator(&cluster, &sa, "kstatus");

    step("rendered: Current");
    current("rendered");
    assert_eq!(
        conditions(&cluster, "rendered"),
        [
            "Ready=True/Rendered",
            "SourcesResolved=True/AllFound",
            "Valid=True/Valid"
        ]
    );

    step("invalid spec: Stalled, Failed, with Ready's message");
    let invalid = expect_state(&cluster, &program, "invalid", "Failed", "bootstrap");
    assert_eq!(invalid.message, ready_message(&cluster, "invalid"));
    assert!(
        conditions(&cluster, "invalid").contains(&"Stalled=True/MissingRequired".to_string()),
        "{:?}",
        conditions(&cluster, "invalid")
    );

    step("a source that does not exist: Stalled, Failed");
    expect_state(
        &cluster,
        &program,
        "missing-source",
        "Failed",
        "not-there-yet",
    );

    step(
        "API error 422 on the first write of the output: Stalled, Failed, the API server's words in Ready",
    );
    let refused = expect_state(&cluster, &program, "refused", "Failed", "422 Invalid");
    assert!(
        refused
            .message
            .contains("refused-kafka is not allowed here"),
        "{refused:?}"
    );
    assert!(
        ready_message(&cluster, "refused").contains("refused-kafka is not allowed here"),
        "{}",
        ready_message(&cluster, "refused")
    );

    step("API error 403 on the first write (retried): Reconciling, InProgress");
    let retried = expect_state(&cluster, &program, "retried", "InProgress", "403 Forbidden");
    assert!(
        retried.message.starts_with("the operator tries again: "),
        "{retried:?}"
    );
    let retried_conditions = conditions(&cluster, "retried");
    assert!(
        retried_conditions.contains(&"Ready=False/OutputWriteFailed".to_string())
            && retried_conditions.contains(&"Reconciling=True/ProgressingWithRetry".to_string())
            && !retried_conditions.iter().any(|c| c.starts_with("Stalled")),
        "{retried_conditions:?}"
    );

    step("stale generation: a spec edit the operator has not seen yet is InProgress");
    op.terminate();
    cluster.merge_patch(
        "kafkatoolconfig",
        "rendered",
        Some(NS_KSTATUS),
        serde_json::json!({"spec":{"args":{"topic":"payments"}}}),
    );
    expect_state(
        &cluster,
        &program,
        "rendered",
        "InProgress",
        "generation is 2, but latest observed generation is 1",
    );

    step("the operator is back: every fixed config turns Current, nothing else changes");
    let op = leading_operator(&cluster, &sa, "kstatus-2");
    current("rendered");
    cluster.merge_patch(
        "kafkatoolconfig",
        "invalid",
        Some(NS_KSTATUS),
        serde_json::json!({"spec":{"args":{"bootstrap-server":"kafka-0.kafka:9092"}}}),
    );
    current("invalid");
    cluster.kubectl(&[
        "create",
        "configmap",
        "not-there-yet",
        "-n",
        NS_KSTATUS,
        "--from-literal=client.properties=bootstrap.servers=kafka-0.kafka:9092",
    ]);
    current("missing-source");
    cluster.merge_patch(
        "kafkatoolconfig",
        "refused",
        Some(NS_KSTATUS),
        serde_json::json!({"spec":{"output":{"name":"accepted-kafka"}}}),
    );
    current("refused");
    for name in ["invalid", "missing-source", "refused"] {
        let left = conditions(&cluster, name);
        assert!(
            !left
                .iter()
                .any(|c| c.starts_with("Stalled") || c.starts_with("Reconciling")),
            "{name}: {left:?}"
        );
    }
    // Still refused with 403, still retried: kstatus keeps waiting rather than failing.
    expect_state(&cluster, &program, "retried", "InProgress", "403 Forbidden");
    op.terminate();
    let _ = cluster.run(
        &[
            "delete",
            "validatingadmissionpolicybinding,validatingadmissionpolicy",
            "kco-kstatus-refuse-outputs",
            "--ignore-not-found",
        ],
        None,
    );
}
