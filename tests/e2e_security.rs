//! Security on the real control plane (e2e/controlplane), the operator running as its
//! ServiceAccount (impersonating kubeconfig, e2e/rbac/cluster.yaml):
//!
//! - `canary_secret_value_never_leaks`: a random canary value lives only in a Secret, read through
//!   `secretKeyRef` (env) and as a config file, in a world that also has failures (invalid values
//!   taken from the Secret, a parse error in a Secret file, sensitive content aimed at a ConfigMap,
//!   an OutputConflict, a missing key, a rotation). The canary must never appear in any ConfigMap,
//!   KafkaToolConfig (spec or status), Event, operator log line (at `debug`), `/metrics` or
//!   `explain -n NS NAME` output — while the Secret output holds it (the positive control: the scan
//!   would see it).
//! - `no_cross_namespace_reads_no_foreign_overwrites`: a reference to another namespace is
//!   `CrossNamespaceReference` and nothing of that namespace is read into an output; an object the
//!   operator does not control (hand-made, or another config's output) is never overwritten.
//! - `rbac_is_least_privilege`: every (group, resource, verb) of e2e/rbac/cluster.yaml is removed in
//!   turn; a short operator run against one small world must then fail a named check (and the full
//!   role passes them all). A permission whose removal fails nothing is reported as unneeded.
//!
//! Needs `KCO_E2E_KUBECONFIG`. Plain `cargo test` leaves these tests out (`#[ignore]`); run with
//! `--include-ignored` (as scripts/test.sh does), they FAIL without the variable, they never skip.
//! Run: `KCO_E2E_KUBECONFIG=e2e/.run/kubeconfig cargo test --test e2e_security -- --include-ignored --test-threads=1 --nocapture`

mod support;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use base64::Engine as _;
use serde_json::{Value, json};
use support::*;

static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn b64(text: &str) -> String {
    base64::engine::general_purpose::STANDARD.encode(text)
}

fn random_hex() -> String {
    let mut bytes = [0u8; 8];
    let ok = std::fs::File::open("/dev/urandom")
        .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut bytes))
        .is_ok();
    assert!(ok, "read /dev/urandom");
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn ktc(ns: &str, name: &str, spec: Value) -> Value {
    json!({"apiVersion": "kafkaconfig.dev/v1alpha1", "kind": "KafkaToolConfig",
           "metadata": {"name": name, "namespace": ns}, "spec": spec})
}

fn ready_reason(cluster: &Cluster, ns: &str, name: &str) -> Result<(String, String), String> {
    let c = cluster
        .json(&["get", "kafkatoolconfig", name, "-n", ns])
        .ok_or(format!("{name} not found"))?;
    if c["status"]["observedGeneration"] != c["metadata"]["generation"] {
        return Err(format!("{name}: observedGeneration lags"));
    }
    let ready = condition(&c, "Ready").ok_or(format!("{name}: no Ready"))?;
    if ready["status"] == "Unknown" {
        return Err(format!("{name}: still Reconciling"));
    }
    Ok((
        ready["status"].as_str().unwrap_or_default().to_string(),
        ready["reason"].as_str().unwrap_or_default().to_string(),
    ))
}

/// The reason of the first condition that is False (Valid, SourcesResolved or Ready).
fn failing_reason(cluster: &Cluster, ns: &str, name: &str) -> Result<String, String> {
    let c = cluster
        .json(&["get", "kafkatoolconfig", name, "-n", ns])
        .ok_or(format!("{name} not found"))?;
    if c["status"]["observedGeneration"] != c["metadata"]["generation"] {
        return Err(format!("{name}: observedGeneration lags"));
    }
    for t in ["SourcesResolved", "Valid", "Ready"] {
        if let Some(cond) = condition(&c, t)
            && cond["status"] == "False"
        {
            return Ok(cond["reason"].as_str().unwrap_or_default().to_string());
        }
    }
    Err(format!("{name}: nothing False yet: {}", c["status"]))
}

fn explain_live(cluster: &Cluster, ns: &str, name: &str, json_out: bool) -> String {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_kafka-config-operator"));
    cmd.args(["explain", "-n", ns, name]);
    if json_out {
        cmd.args(["-o", "json"]);
    }
    let out = cmd
        .env("KUBECONFIG", &cluster.kubeconfig)
        .output()
        .expect("explain -n");
    format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

// ---------------------------------------------------------------- canary

#[test]
#[ignore = "needs KCO_E2E_KUBECONFIG"]
fn canary_secret_value_never_leaks() {
    let _serial = serial();
    let cluster = Cluster::from_env();
    cluster.install_crds_and_rbac();
    let ns = "kco-sec-canary";
    let lease = "kco-sec-canary";
    cluster.fresh_namespace(ns);
    let _ = cluster.run(
        &[
            "delete",
            "lease",
            lease,
            "-n",
            OPERATOR_NS,
            "--ignore-not-found",
        ],
        None,
    );
    let canary = format!("kcoCanary{}", random_hex());
    let rotated = format!("kcoCanary{}", random_hex());
    println!("    canaries {canary} (then rotated to {rotated})");
    let secret = |value: &str| {
        json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "canary", "namespace": ns},
        "stringData": {
            "password": value,
            "sasl.properties": format!(
                "sasl.mechanism=SCRAM-SHA-512\nsasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username=\"u\" password=\"{value}\";\nssl.key.password={value}\n"),
            "bad-values.properties": format!("batch.size={value}\nacks={value}\nenable.idempotence={value}\n"),
            "broken.properties": format!("ok=1\npw={value}\nbroken=\\u{value}\n"),
            // A PEM body pasted without line continuations: each line becomes a "key". Also
            // lowercase ones, shaped like config names: a lone token, a `token=x` line and a
            // dotted one (scanned for in lowercase too).
            "pem.properties": format!(
                "bootstrap.servers=k:9092\nMIIB{value}Ab+/=\n{lower}\n{lower}k=x\nkco.{lower}.d=x\n",
                lower = value.to_lowercase()
            ),
            // A reference body inside a Secret file value.
            "ref.properties": format!("bootstrap.servers=k:9092\ncustom.ref=${{{value}}}\n"),
        }})
    };
    let jaas = "org.apache.kafka.common.security.scram.ScramLoginModule required username=\"u\" password=\"${env.PW}\";";
    let env_pw = json!([{"name": "PW", "valueFrom": {"secretKeyRef": {"name": "canary", "key": "password"}}}]);
    let file = |key: &str| json!([{"secretKeyRef": {"name": "canary", "key": key}}]);
    let mut objects = vec![
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}),
        secret(&canary),
        // someone else's Secret at the output name of sec-conflict
        json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "sec-conflict-kafka", "namespace": ns},
               "stringData": {"note": "hand-made"}}),
    ];
    let configs = [
        // Ready: the canary goes into a Secret (positive control)
        (
            "sec-good",
            json!({"tool": "kafka-console-producer", "args": {"topic": "t", "bootstrap-server": "k:9092"},
            "configFiles": file("sasl.properties"), "env": env_pw,
            "properties": {"producer": {"ssl.truststore.password": "${env.PW}"}},
            "output": {"kind": "Secret"}}),
        ),
        // Ready: Deferred keeps it out of the ConfigMap
        (
            "sec-deferred",
            json!({"tool": "client", "roles": ["producer"], "env": env_pw,
            "properties": {"common": {"bootstrap.servers": "k:9093", "sasl.jaas.config": jaas}},
            "output": {"secrets": "Deferred"}}),
        ),
        // SensitiveValueInConfigMap
        (
            "sec-cm",
            json!({"tool": "kafka-console-producer", "args": {"topic": "t", "bootstrap-server": "k:9092"},
            "configFiles": file("sasl.properties"), "env": env_pw,
            "properties": {"producer": {"sasl.jaas.config": jaas}}}),
        ),
        // InvalidValue with values from env (secretKeyRef)
        (
            "sec-invalid-env",
            json!({"tool": "kafka-console-producer", "args": {"topic": "t", "bootstrap-server": "k:9092"}, "env": env_pw,
            "properties": {"producer": {"linger.ms": "${env.PW}", "acks": "${env.PW}",
                                        "compression.type": "${env.PW}", "client.id": "x-${env.PW}"}},
            "output": {"kind": "Secret"}}),
        ),
        // InvalidValue with values from a Secret file
        (
            "sec-invalid-file",
            json!({"tool": "kafka-console-producer", "args": {"topic": "t", "bootstrap-server": "k:9092"},
            "configFiles": file("bad-values.properties"), "output": {"kind": "Secret"}}),
        ),
        // ParseError in a Secret file
        (
            "sec-parse",
            json!({"tool": "kafka-console-producer", "args": {"topic": "t", "bootstrap-server": "k:9092"},
            "configFiles": file("broken.properties"), "output": {"kind": "Secret"}}),
        ),
        // KeyNotFound
        (
            "sec-missing-key",
            json!({"tool": "kafka-console-producer", "args": {"topic": "t", "bootstrap-server": "k:9092"},
            "configFiles": file("nope.properties"), "env": env_pw, "output": {"kind": "Secret"}}),
        ),
        // Ready: a Secret-file line read as a key is never shown (issue 24)
        (
            "sec-pem",
            json!({"tool": "kafka-console-producer", "args": {"topic": "t"},
            "configFiles": file("pem.properties"), "output": {"kind": "Secret"}}),
        ),
        // UnresolvedReference inside a Secret-file value: the reference is not quoted
        (
            "sec-ref-body",
            json!({"tool": "kafka-console-producer", "args": {"topic": "t"},
            "configFiles": file("ref.properties"), "output": {"kind": "Secret"}}),
        ),
        // Ready: an argument from a Secret goes to a Secret output
        (
            "sec-arg",
            json!({"tool": "kafka-console-producer", "args": {"topic": "${env.PW}", "bootstrap-server": "k:9092"},
            "env": env_pw, "output": {"kind": "Secret"}}),
        ),
        // SensitiveArgument: Deferred keeps a Secret-sourced argument out of the ConfigMap
        (
            "sec-deferred-arg",
            json!({"tool": "kafka-console-producer", "args": {"topic": "${env.PW}", "bootstrap-server": "k:9092"},
            "env": env_pw, "output": {"secrets": "Deferred"}}),
        ),
        // OutputConflict while reading the canary
        (
            "sec-conflict",
            json!({"tool": "kafka-console-producer", "args": {"topic": "t", "bootstrap-server": "k:9092"},
            "configFiles": file("sasl.properties"), "output": {"kind": "Secret"}}),
        ),
    ];
    for (name, spec) in &configs {
        objects.push(ktc(ns, name, spec.clone()));
    }
    cluster.apply_yaml(&to_yaml(&objects));

    let sa = cluster.impersonating_kubeconfig(OPERATOR_NS, SA);
    // Two replicas; the first leads, and is killed once below.
    let mut first = Operator::spawn(&cluster, &sa, "sec-canary-a", Some(lease), "debug");
    first
        .wait_ready(Duration::from_secs(30))
        .expect("operator ready");
    eventually("replica a to lead", Duration::from_secs(30), || {
        first
            .is_leader()
            .then_some(())
            .ok_or("not leader".to_string())
    });
    let mut op = Operator::spawn(&cluster, &sa, "sec-canary", Some(lease), "debug");
    op.wait_ready(Duration::from_secs(30))
        .expect("operator ready");

    step("every config reaches its expected outcome");
    let want = [
        ("sec-good", "Ready"),
        ("sec-deferred", "Ready"),
        ("sec-cm", "SensitiveValueInConfigMap"),
        ("sec-invalid-env", "InvalidValue"),
        ("sec-invalid-file", "InvalidValue"),
        ("sec-parse", "ParseError"),
        ("sec-missing-key", "KeyNotFound"),
        ("sec-conflict", "OutputConflict"),
        ("sec-pem", "Ready"),
        ("sec-ref-body", "UnresolvedReference"),
        ("sec-arg", "Ready"),
        ("sec-deferred-arg", "SensitiveArgument"),
    ];
    let check_outcomes = |cluster: &Cluster| {
        for (name, outcome) in want {
            eventually(
                &format!("{name}: {outcome}"),
                Duration::from_secs(30),
                || {
                    if outcome == "Ready" {
                        let (status, reason) = ready_reason(cluster, ns, name)?;
                        (status == "True")
                            .then_some(())
                            .ok_or(format!("{status} {reason}"))
                    } else {
                        let reason = failing_reason(cluster, ns, name)?;
                        (reason == outcome).then_some(()).ok_or(reason)
                    }
                },
            );
        }
    };
    check_outcomes(&cluster);

    step("the leader is killed; the other replica takes over");
    let first_log = first.log.clone();
    first.crash();
    eventually(
        "the second replica to lead",
        Duration::from_secs(60),
        || op.is_leader().then_some(()).ok_or("not leader".to_string()),
    );

    step("rotation: the Secret gets a new canary; the world re-renders");
    let before = cluster
        .json(&["get", "secret", "sec-good-kafka", "-n", ns])
        .and_then(|s| annotation(&s, "/metadata/annotations"))
        .expect("sec-good output");
    cluster.apply_yaml(&to_yaml(&[secret(&rotated)]));
    eventually("sec-good re-rendered", Duration::from_secs(30), || {
        let s = cluster
            .json(&["get", "secret", "sec-good-kafka", "-n", ns])
            .ok_or("gone")?;
        let h = annotation(&s, "/metadata/annotations").ok_or("no hash")?;
        (h != before).then_some(()).ok_or("same hash".to_string())
    });
    // Deferred: the hash follows the Secret although no byte of it is in the ConfigMap
    eventually(
        "sec-deferred Ready on the rotated Secret",
        Duration::from_secs(30),
        || {
            let (status, _) = ready_reason(&cluster, ns, "sec-deferred")?;
            let c = cluster
                .json(&["get", "kafkatoolconfig", "sec-deferred", "-n", ns])
                .ok_or("gone")?;
            let history = c["status"]["history"].as_array().map_or(0, Vec::len);
            (status == "True" && history >= 2)
                .then_some(())
                .ok_or(format!("history {history}"))
        },
    );
    // The keys read from pem.properties changed with the canary: status.history names them
    // (the new ones by line, the old ones as no longer set), never their text.
    eventually(
        "sec-pem history records the rotation",
        Duration::from_secs(30),
        || {
            let c = cluster
                .json(&["get", "kafkatoolconfig", "sec-pem", "-n", ns])
                .ok_or("gone")?;
            let history = c["status"]["history"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            let last = history
                .last()
                .map(|e| e["changedKeys"].to_string())
                .unwrap_or_default();
            (history.len() >= 2
                && last.contains("[key from Secret")
                && last.contains("[a key no longer set, not shown]"))
            .then_some(())
            .ok_or(format!("history {history:?}"))
        },
    );
    check_outcomes(&cluster);
    std::thread::sleep(Duration::from_secs(2));

    step("positive control: the Secret output holds the canary (the scan can see it)");
    let output = cluster
        .json(&["get", "secret", "sec-good-kafka", "-n", ns])
        .expect("sec-good-kafka");
    let decoded: String = output["data"]
        .as_object()
        .into_iter()
        .flatten()
        .filter_map(|(_, v)| {
            base64::engine::general_purpose::STANDARD
                .decode(v.as_str()?)
                .ok()
        })
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .collect();
    assert!(
        decoded.contains(&rotated),
        "the Secret output lacks the canary"
    );

    step("scan: ConfigMaps, KafkaToolConfigs, Events, operator log, /metrics, explain -n");
    let mut corpus: Vec<(String, String)> = vec![
        (
            "every ConfigMap".into(),
            cluster.kubectl(&["get", "configmaps", "-A", "-o", "json"]),
        ),
        (
            "every KafkaToolConfig".into(),
            cluster.kubectl(&["get", "kafkatoolconfigs", "-A", "-o", "json"]),
        ),
        (
            "every GlobalClientDefaults".into(),
            cluster.kubectl(&["get", "globalclientdefaults", "-o", "json"]),
        ),
        (
            "every workload (pod-template annotations)".into(),
            cluster.kubectl(&[
                "get",
                "deployments,statefulsets,daemonsets",
                "-A",
                "-o",
                "json",
            ]),
        ),
        (
            "core Events".into(),
            cluster.kubectl(&["get", "events", "-A", "-o", "json"]),
        ),
        (
            "events.k8s.io Events".into(),
            cluster.kubectl(&["get", "events.events.k8s.io", "-A", "-o", "json"]),
        ),
        (
            "/metrics".into(),
            http_get(op.port, "/metrics")
                .map(|(_, b)| b)
                .expect("metrics"),
        ),
    ];
    for (name, _) in &configs {
        corpus.push((
            format!("explain -n {ns} {name}"),
            explain_live(&cluster, ns, name, false),
        ));
        corpus.push((
            format!("explain -n {ns} {name} -o json"),
            explain_live(&cluster, ns, name, true),
        ));
    }
    op.terminate();
    let log = std::fs::read_to_string(cluster.work.path().join("sec-canary-0.log")).expect("log");
    corpus.push(("operator log (RUST_LOG=debug)".into(), log.clone()));
    corpus.push((
        "killed leader's log (RUST_LOG=debug)".into(),
        std::fs::read_to_string(&first_log).expect("first replica's log"),
    ));
    let mut leaks = Vec::new();
    let mut scanned = 0usize;
    for (what, text) in &corpus {
        scanned += text.len();
        let lowered = [canary.to_lowercase(), rotated.to_lowercase()];
        for c in [&canary, &rotated, &lowered[0], &lowered[1]] {
            for needle in [c.clone(), b64(c), c.chars().rev().collect()] {
                if text.contains(&needle) {
                    let at = text.find(&needle).unwrap_or(0);
                    let from = text[..at]
                        .char_indices()
                        .rev()
                        .nth(120)
                        .map_or(0, |(i, _)| i);
                    leaks.push(format!(
                        "{what}: …{}…",
                        &text[from..(at + needle.len()).min(text.len())]
                    ));
                }
            }
        }
    }
    // the log really covers the failing configs (it is not an empty file)
    for (name, _) in &configs {
        assert!(
            log.contains(&format!("\"{name}\"")),
            "the operator log never mentions {name}"
        );
    }
    println!(
        "SECURITY-FIGURES canary: {} sources scanned ({} bytes), {} log lines, leaks {}",
        corpus.len(),
        scanned,
        log.lines().count(),
        leaks.len()
    );
    assert!(leaks.is_empty(), "the canary leaked:\n{}", leaks.join("\n"));
    let _ = cluster.run(&["delete", "namespace", ns, "--wait=false"], None);
}

// ---------------------------------------------------------------- tenancy

#[test]
#[ignore = "needs KCO_E2E_KUBECONFIG"]
fn no_cross_namespace_reads_no_foreign_overwrites() {
    let _serial = serial();
    let cluster = Cluster::from_env();
    cluster.install_crds_and_rbac();
    let (ns, other) = ("kco-sec-tenant", "kco-sec-other");
    let lease = "kco-sec-tenant";
    cluster.fresh_namespace(ns);
    cluster.fresh_namespace(other);
    let _ = cluster.run(
        &[
            "delete",
            "lease",
            lease,
            "-n",
            OPERATOR_NS,
            "--ignore-not-found",
        ],
        None,
    );
    let other_secret = format!("kcoOther{}", random_hex());
    let other_value = format!("otherValue{}", random_hex());
    let producer = |extra: Value| {
        let mut spec = json!({"tool": "kafka-console-producer", "args": {"topic": "t", "bootstrap-server": "k:9092"}});
        for (k, v) in extra.as_object().into_iter().flatten() {
            spec[k] = v.clone();
        }
        spec
    };
    let objects = vec![
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}),
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": other}}),
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "shared", "namespace": other},
               "data": {"client.properties": format!("bootstrap.servers=k:9092\nclient.id={other_value}\n")}}),
        json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "shared-secret", "namespace": other},
               "stringData": {"password": other_secret}}),
        // hand-made object at an output name
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "handmade", "namespace": ns},
               "data": {"note": "not the operator's"}}),
        ktc(
            ns,
            "xns-cm",
            producer(
                json!({"configFiles": [{"configMapKeyRef": {"name": "shared", "namespace": other, "key": "client.properties"}}]}),
            ),
        ),
        ktc(
            ns,
            "xns-secret",
            producer(
                json!({"env": [{"name": "PW", "valueFrom": {"secretKeyRef": {"name": "shared-secret", "namespace": other, "key": "password"}}}],
            "properties": {"producer": {"ssl.key.password": "${env.PW}"}}, "output": {"kind": "Secret"}}),
            ),
        ),
        // same names without a namespace: looked up in its own namespace only
        ktc(
            ns,
            "same-name",
            producer(
                json!({"configFiles": [{"configMapKeyRef": {"name": "shared", "key": "client.properties"}}]}),
            ),
        ),
        ktc(
            ns,
            "victim",
            producer(json!({"properties": {"producer": {"client.id": "victim"}}})),
        ),
        ktc(
            ns,
            "squatter",
            producer(json!({"output": {"name": "handmade"}})),
        ),
    ];
    cluster.apply_yaml(&to_yaml(&objects));
    let sa = cluster.impersonating_kubeconfig(OPERATOR_NS, SA);
    let mut op = Operator::spawn(&cluster, &sa, "sec-tenant", Some(lease), "info,kube=warn");
    op.wait_ready(Duration::from_secs(30))
        .expect("operator ready");

    // the victim's output exists first; then another config claims its name
    eventually("victim Ready", Duration::from_secs(30), || {
        let (s, r) = ready_reason(&cluster, ns, "victim")?;
        (s == "True").then_some(()).ok_or(r)
    });
    let victim = cluster
        .json(&["get", "configmap", "victim-kafka", "-n", ns])
        .expect("victim output");
    cluster.apply_yaml(&to_yaml(&[ktc(
        ns,
        "thief",
        producer(json!({"properties": {"producer": {"client.id": "thief"}}, "output": {"name": "victim-kafka"}})),
    )]));
    for (name, reason, field) in [
        ("xns-cm", "CrossNamespaceReference", "configFiles"),
        ("xns-secret", "CrossNamespaceReference", "env"),
        ("same-name", "ConfigMapNotFound", ""),
        ("thief", "OutputConflict", ""),
        ("squatter", "OutputConflict", ""),
    ] {
        let got = eventually(
            &format!("{name}: {reason}"),
            Duration::from_secs(30),
            || {
                let r = failing_reason(&cluster, ns, name)?;
                (r == reason).then_some(r.clone()).ok_or(r)
            },
        );
        let c = cluster
            .json(&["get", "kafkatoolconfig", name, "-n", ns])
            .expect("config");
        let text = c["status"].to_string();
        assert!(text.contains(field), "{name}: {got} names {field}: {text}");
        println!("    ok: {name} → {got}");
    }
    let handmade_before = cluster
        .json(&["get", "configmap", "handmade", "-n", ns])
        .expect("handmade");
    std::thread::sleep(Duration::from_secs(3));

    step("nothing of the other namespace was read into an output; foreign objects untouched");
    let victim_after = cluster
        .json(&["get", "configmap", "victim-kafka", "-n", ns])
        .expect("victim output");
    assert_eq!(
        victim["metadata"]["resourceVersion"], victim_after["metadata"]["resourceVersion"],
        "thief rewrote victim's output"
    );
    assert!(
        victim_after["data"]["producer.properties"]
            .as_str()
            .unwrap_or_default()
            .contains("client.id=victim"),
        "{victim_after}"
    );
    let handmade = cluster
        .json(&["get", "configmap", "handmade", "-n", ns])
        .expect("handmade");
    assert_eq!(
        handmade_before["metadata"]["resourceVersion"], handmade["metadata"]["resourceVersion"],
        "the hand-made object was written"
    );
    assert!(handmade["metadata"]["ownerReferences"].is_null());
    assert_eq!(handmade["data"], json!({"note": "not the operator's"}));
    for kind in ["configmaps", "secrets"] {
        let all = cluster.kubectl(&["get", kind, "-n", ns, "-o", "json"]);
        assert!(
            !all.contains(&other_value)
                && !all.contains(&other_secret)
                && !all.contains(&b64(&other_secret)),
            "a value of namespace {other} reached {kind} of {ns}"
        );
    }
    // the operator wrote nothing in the other namespace (audit log: every write verb)
    let audit = std::fs::read_to_string(cluster.run_dir().join("audit.log")).unwrap_or_default();
    let writes_in_other = audit
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|e| {
            e["impersonatedUser"]["username"] == format!("system:serviceaccount:{OPERATOR_NS}:{SA}")
        })
        .filter(|e| e["objectRef"]["namespace"] == other)
        .count();
    assert_eq!(writes_in_other, 0, "the operator wrote in {other}");
    println!(
        "SECURITY-FIGURES tenancy: 2 cross-namespace references refused, 0 values of {other} in {ns}, 0 writes in {other}; 2 foreign objects untouched (resourceVersion unchanged)"
    );
    op.terminate();
    let _ = cluster.run(&["delete", "namespace", ns, other, "--wait=false"], None);
}

// ---------------------------------------------------------------- least privilege

const RBAC_NS: &str = "kco-rbac";
const RBAC_LEASE: &str = "kco-rbac";

type Triple = (String, String, String); // (apiGroup, resource, verb)

/// The ClusterRole and the leader-election Role of e2e/rbac/cluster.yaml, as JSON objects.
fn rbac_roles(cluster: &Cluster) -> (Value, Value) {
    let list: Value = serde_json::from_str(&cluster.kubectl(&[
        "apply",
        "--dry-run=client",
        "-o",
        "json",
        "-f",
        "e2e/rbac/cluster.yaml",
    ]))
    .expect("rbac json");
    let find = |kind: &str| {
        list["items"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|o| o["kind"] == kind)
            .cloned()
            .unwrap_or_else(|| panic!("no {kind} in e2e/rbac/cluster.yaml"))
    };
    (find("ClusterRole"), find("Role"))
}

fn triples(role: &Value) -> Vec<Triple> {
    let mut out = Vec::new();
    for rule in role["rules"].as_array().into_iter().flatten() {
        for g in rule["apiGroups"].as_array().into_iter().flatten() {
            for r in rule["resources"].as_array().into_iter().flatten() {
                for v in rule["verbs"].as_array().into_iter().flatten() {
                    out.push((
                        g.as_str().unwrap_or_default().to_string(),
                        r.as_str().unwrap_or_default().to_string(),
                        v.as_str().unwrap_or_default().to_string(),
                    ));
                }
            }
        }
    }
    out
}

/// The role with its rules rewritten one rule per triple, without `removed`.
fn without(role: &Value, removed: Option<&Triple>) -> Value {
    let mut role = role.clone();
    let rules: Vec<Value> = triples(&role)
        .into_iter()
        .filter(|t| Some(t) != removed)
        .map(|(g, r, v)| json!({"apiGroups": [g], "resources": [r], "verbs": [v]}))
        .collect();
    role["rules"] = json!(rules);
    if let Some(meta) = role["metadata"].as_object_mut() {
        meta.remove("annotations");
        meta.remove("resourceVersion");
    }
    role
}

fn can_i(cluster: &Cluster, t: &Triple) -> bool {
    let (group, resource, verb) = t;
    let (base, sub) = match resource.split_once('/') {
        Some((b, s)) => (b.to_string(), Some(s.to_string())),
        None => (resource.clone(), None),
    };
    let target = if group.is_empty() {
        base
    } else {
        format!("{base}.{group}")
    };
    let user = format!("system:serviceaccount:{OPERATOR_NS}:{SA}");
    let mut args = vec![
        "auth",
        "can-i",
        verb.as_str(),
        target.as_str(),
        "--as",
        user.as_str(),
    ];
    let sub_arg;
    if let Some(s) = sub {
        sub_arg = format!("--subresource={s}");
        args.push(&sub_arg);
    }
    let ns = if resource == "leases" {
        OPERATOR_NS
    } else {
        RBAC_NS
    };
    if !matches!(
        resource.as_str(),
        "namespaces" | "globalclientdefaults" | "globalclientdefaults/status"
    ) {
        args.extend(["-n", ns]);
    }
    matches!(cluster.run(&args, None), Ok(out) if out.trim() == "yes")
}

fn rbac_world(run: u32) -> Vec<Value> {
    let ns = RBAC_NS;
    let producer = |extra: Value| {
        let mut spec = json!({"tool": "kafka-console-producer", "args": {"topic": "t", "bootstrap-server": "k:9092"}});
        for (k, v) in extra.as_object().into_iter().flatten() {
            spec[k] = v.clone();
        }
        spec
    };
    let env_pw =
        json!([{"name": "PW", "valueFrom": {"secretKeyRef": {"name": "sec", "key": "password"}}}]);
    let jaas = "org.apache.kafka.common.security.scram.ScramLoginModule required username=\"u\" password=\"${env.PW}\";";
    let src = json!([{"configMapKeyRef": {"name": "src", "key": "client.properties"}}]);
    vec![
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns, "labels": {"kafka-cluster": ns}}}),
        json!({"apiVersion": "kafkaconfig.dev/v1alpha1", "kind": "GlobalClientDefaults",
               "metadata": {"name": "kco-rbac-defaults"},
               "spec": {"selector": {"namespaceSelector": {"matchLabels": {"kafka-cluster": ns}}},
                        "defaults": {"producer": {"delivery.timeout.ms": format!("{}", 100_000 + run)}}}}),
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "src", "namespace": ns},
               "data": {"client.properties": format!("bootstrap.servers=k:9092\nlinger.ms={run}\n")}}),
        json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "sec", "namespace": ns},
               "stringData": {"password": format!("pw-{run}")}}),
        ktc(
            ns,
            "cm-out",
            producer(json!({"configFiles": src, "rollout": {"targets": [
            {"kind": "Deployment", "name": "dep"}, {"kind": "StatefulSet", "name": "sts"}, {"kind": "DaemonSet", "name": "ds"},
            {"kind": "Rollout", "name": "ro"}]}})),
        ),
        ktc(
            ns,
            "secret-out",
            producer(
                json!({"env": env_pw, "properties": {"producer": {"sasl.jaas.config": jaas}},
            "output": {"kind": "Secret"}}),
            ),
        ),
        ktc(
            ns,
            "imm-cm",
            producer(
                json!({"configFiles": src, "output": {"immutable": true, "keep": 1},
            "rollout": {"targets": [{"kind": "Deployment", "name": "dep-imm"}]}}),
            ),
        ),
        ktc(
            ns,
            "imm-secret",
            producer(
                json!({"env": env_pw, "properties": {"producer": {"sasl.jaas.config": jaas}},
            "output": {"kind": "Secret", "immutable": true, "keep": 1}}),
            ),
        ),
        ktc(
            ns,
            "evt",
            producer(json!({"properties": {"producer": {"client.id": "evt"}}})),
        ),
    ]
}

fn workloads() -> Vec<Value> {
    let ns = RBAC_NS;
    let template = |app: &str| {
        json!({"metadata": {"labels": {"app": app}},
               "spec": {"containers": [{"name": "app", "image": "registry.example/app:1"}]}})
    };
    let selector = |app: &str| json!({"matchLabels": {"app": app}});
    vec![
        json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "dep", "namespace": ns},
               "spec": {"replicas": 0, "selector": selector("dep"), "template": template("dep")}}),
        json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "dep-imm", "namespace": ns},
               "spec": {"replicas": 0, "selector": selector("dep-imm"), "template": template("dep-imm")}}),
        json!({"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "sts", "namespace": ns},
               "spec": {"replicas": 0, "serviceName": "sts", "selector": selector("sts"), "template": template("sts")}}),
        json!({"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "ds", "namespace": ns},
               "spec": {"selector": selector("ds"), "template": template("ds")}}),
        // An Argo Rollout (the stand-in CRD of e2e/testdata/argo-rollouts-crd.yaml).
        json!({"apiVersion": "argoproj.io/v1alpha1", "kind": "Rollout", "metadata": {"name": "ro", "namespace": ns},
               "spec": {"replicas": 0, "selector": selector("ro"), "template": template("ro")}}),
    ]
}

/// The checks of one run, in a fixed order (their names are what a removal must make fail).
const CHECKS: &[&str] = &[
    "operator becomes ready",
    "takes the leader Lease",
    "renews the leader Lease",
    "cm-out: ConfigMap output at the offline hash, Ready",
    "secret-out: Secret output at the offline hash, Ready",
    "imm-cm: immutable ConfigMap at the hash, older ones pruned",
    "imm-secret: immutable Secret at the hash, older ones pruned",
    "rollout: Deployment dep carries the hash",
    "rollout: StatefulSet sts carries the hash",
    "rollout: DaemonSet ds carries the hash",
    "rollout: Rollout ro carries the hash",
    "GlobalClientDefaults status current (Valid, selectedConfigs 5)",
    "Rendered Event published",
    "each repair of evt is an Event of its own, naming the hash",
    "evt: drift of its output's hash annotation is repaired",
    "no authorization error in the operator log",
];

struct RunState<'a> {
    cluster: &'a Cluster,
    expected: BTreeMap<String, Expected>,
    identity: String,
    op: Operator,
    passed: BTreeSet<&'static str>,
    drifts: u32,
    drift_pending: bool,
}

impl RunState<'_> {
    fn expected_hash(&self, config: &str) -> String {
        self.expected
            .values()
            .find(|e| {
                e.name == format!("{config}-kafka")
                    || e.name.starts_with(&format!("{config}-kafka-"))
            })
            .map(|e| e.hash.clone())
            .unwrap_or_else(|| panic!("no offline render of {config}"))
    }

    fn status_at(&self, config: &str, hash: &str) -> Result<(), String> {
        let c = self
            .cluster
            .json(&["get", "kafkatoolconfig", config, "-n", RBAC_NS])
            .ok_or("gone")?;
        let ready = condition(&c, "Ready").ok_or("no Ready")?;
        (c["status"]["configHash"] == hash
            && ready["status"] == "True"
            && c["status"]["observedGeneration"] == c["metadata"]["generation"])
            .then_some(())
            .ok_or(format!("{config} status {}", c["status"]["configHash"]))
    }

    fn output(&self, config: &str, kind: &str) -> Result<(), String> {
        let hash = self.expected_hash(config);
        let o = self
            .cluster
            .json(&["get", kind, &format!("{config}-kafka"), "-n", RBAC_NS])
            .ok_or("no output")?;
        if annotation(&o, "/metadata/annotations").as_deref() != Some(hash.as_str()) {
            return Err("output hash".into());
        }
        self.status_at(config, &hash)
    }

    fn immutable(&self, config: &str, kind: &str) -> Result<(), String> {
        let hash = self.expected_hash(config);
        let list = self
            .cluster
            .json(&[
                "get",
                kind,
                "-n",
                RBAC_NS,
                "-l",
                &format!("kafkaconfig.dev/config={config}"),
            ])
            .ok_or("cannot list")?;
        let hashes: Vec<String> = list["items"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|o| annotation(o, "/metadata/annotations"))
            .collect();
        if !hashes.contains(&hash) || hashes.len() != 2 {
            return Err(format!(
                "{} outputs, current present {}",
                hashes.len(),
                hashes.contains(&hash)
            ));
        }
        self.status_at(config, &hash)
    }

    fn rollout(&self, kind: &str, name: &str) -> Result<(), String> {
        let hash = self.expected_hash("cm-out");
        let w = self
            .cluster
            .json(&["get", kind, name, "-n", RBAC_NS])
            .ok_or("no workload")?;
        (annotation(&w, "/spec/template/metadata/annotations").as_deref() == Some(hash.as_str()))
            .then_some(())
            .ok_or("template hash".into())
    }

    fn lease(&self) -> Result<Value, String> {
        let l = self
            .cluster
            .json(&["get", "lease", RBAC_LEASE, "-n", OPERATOR_NS])
            .ok_or("no lease")?;
        (l["spec"]["holderIdentity"] == self.identity.as_str())
            .then_some(l.clone())
            .ok_or(format!("held by {}", l["spec"]["holderIdentity"]))
    }

    fn events(&self) -> Vec<Value> {
        self.cluster
            .json(&["get", "events.events.k8s.io", "-n", RBAC_NS])
            .and_then(|l| l["items"].as_array().cloned())
            .unwrap_or_default()
            .into_iter()
            .filter(|e| {
                e["reportingInstance"] == self.identity.as_str() && e["reason"] == "Rendered"
            })
            .collect()
    }

    fn check(&mut self, name: &'static str) -> Result<(), String> {
        match name {
            "operator becomes ready" => match http_get(self.op.port, "/readyz") {
                Ok((200, _)) => Ok(()),
                other => Err(format!("{other:?}")),
            },
            "takes the leader Lease" => self.lease().map(|_| ()),
            "renews the leader Lease" => {
                let l = self.lease()?;
                (l["spec"]["renewTime"] != l["spec"]["acquireTime"])
                    .then_some(())
                    .ok_or("not renewed".into())
            }
            "cm-out: ConfigMap output at the offline hash, Ready" => {
                self.output("cm-out", "configmap")
            }
            "secret-out: Secret output at the offline hash, Ready" => {
                self.output("secret-out", "secret")
            }
            "imm-cm: immutable ConfigMap at the hash, older ones pruned" => {
                self.immutable("imm-cm", "configmaps")
            }
            "imm-secret: immutable Secret at the hash, older ones pruned" => {
                self.immutable("imm-secret", "secrets")
            }
            "rollout: Deployment dep carries the hash" => self.rollout("deployment", "dep"),
            "rollout: StatefulSet sts carries the hash" => self.rollout("statefulset", "sts"),
            "rollout: DaemonSet ds carries the hash" => self.rollout("daemonset", "ds"),
            "rollout: Rollout ro carries the hash" => self.rollout("rollouts.argoproj.io", "ro"),
            "GlobalClientDefaults status current (Valid, selectedConfigs 5)" => {
                let g = self
                    .cluster
                    .json(&["get", "globalclientdefaults", "kco-rbac-defaults"])
                    .ok_or("gone")?;
                let valid = condition(&g, "Valid").ok_or("no Valid")?;
                (g["status"]["observedGeneration"] == g["metadata"]["generation"]
                    && valid["status"] == "True"
                    && g["status"]["selectedConfigs"] == 5)
                    .then_some(())
                    .ok_or(format!("{}", g["status"]))
            }
            "Rendered Event published" => {
                let hash = self.expected_hash("cm-out");
                self.events()
                    .iter()
                    .any(|e| {
                        e["regarding"]["name"] == "cm-out"
                            && e["note"].as_str().unwrap_or_default().contains(&hash)
                    })
                    .then_some(())
                    .ok_or("no event".into())
            }
            "each repair of evt is an Event of its own, naming the hash" => {
                // The first render and two repairs: three Rendered events, none a series that
                // would repeat the first one's note.
                let hash = self.expected_hash("evt");
                let rendered: Vec<Value> = self
                    .events()
                    .into_iter()
                    .filter(|e| e["regarding"]["name"] == "evt" && e["reason"] == "Rendered")
                    .collect();
                (rendered.len() >= 3
                    && rendered.iter().all(|e| {
                        e["series"].is_null()
                            && e["note"].as_str().unwrap_or_default().contains(&hash)
                    }))
                .then_some(())
                .ok_or(format!("{} Rendered events for evt", rendered.len()))
            }
            "evt: drift of its output's hash annotation is repaired" => self.drive_drift(),
            // judged once, when the run is over (see `rbac_run`)
            "no authorization error in the operator log" => Err("judged at the end".into()),
            other => Err(format!("unknown check {other}")),
        }
    }

    /// Twice: set evt's output hash annotation to a wrong value, wait until the operator puts the
    /// right one back (each repair publishes a Rendered Event of its own).
    fn drive_drift(&mut self) -> Result<(), String> {
        let hash = self.expected_hash("evt");
        let o = self
            .cluster
            .json(&["get", "configmap", "evt-kafka", "-n", RBAC_NS])
            .ok_or("no evt output")?;
        let live = annotation(&o, "/metadata/annotations");
        if live.as_deref() != Some(hash.as_str()) {
            return Err(format!("evt output at {live:?}"));
        }
        self.status_at("evt", &hash)?;
        if self.drift_pending {
            self.drift_pending = false; // repaired
        }
        if self.drifts >= 2 {
            return Ok(());
        }
        self.drifts += 1;
        self.drift_pending = true;
        self.cluster.merge_patch(
            "configmap",
            "evt-kafka",
            Some(RBAC_NS),
            json!({"metadata": {"annotations": {HASH: format!("sha256:drift{}", self.drifts)}}}),
        );
        Err("drifted; waiting for the repair".into())
    }
}

/// The first log line that reports a denied request. Not a bare "403": hashes and names in the
/// log contain those digits by chance.
fn authorization_error(log: &str) -> Option<&str> {
    log.lines().find(|l| {
        let lower = l.to_lowercase();
        lower.contains("forbidden") || lower.contains("code: 403") || lower.contains("\"code\":403")
    })
}

/// One operator run against world `run`; returns the checks that did not pass by the deadline,
/// the run's length, and when each check passed (from the operator's start).
fn rbac_run(
    cluster: &Cluster,
    sa: &Path,
    run: u32,
    expect_fail: Option<&str>,
    deadline: Duration,
) -> (
    Vec<&'static str>,
    Duration,
    BTreeMap<&'static str, Duration>,
) {
    let dir = cluster.work.path().join("rbac");
    std::fs::create_dir_all(&dir).expect("dir");
    let path = dir.join(format!("world-{run}.yaml"));
    let objects = rbac_world(run);
    std::fs::write(&path, to_yaml(&objects)).expect("write");
    let expected = render_offline(&[&path]);
    cluster.apply_yaml(&to_yaml(&objects));
    let _ = cluster.run(
        &[
            "delete",
            "lease",
            RBAC_LEASE,
            "-n",
            OPERATOR_NS,
            "--ignore-not-found",
        ],
        None,
    );
    let identity = format!("rbac-{run}");
    let op = Operator::spawn(cluster, sa, &identity, Some(RBAC_LEASE), "info,kube=warn");
    let mut state = RunState {
        cluster,
        expected,
        identity,
        op,
        passed: BTreeSet::new(),
        drifts: 0,
        drift_pending: false,
    };
    let start = Instant::now();
    let mut when = BTreeMap::new();
    while start.elapsed() < deadline && state.passed.len() + 1 < CHECKS.len() {
        for name in CHECKS {
            if !state.passed.contains(name) && state.check(name).is_ok() {
                state.passed.insert(name);
                when.insert(*name, start.elapsed());
            }
        }
        // stop early once the expected failure is certain: the process exited, or a 403 is logged
        if let Some(want) = expect_fail {
            let exited = state.op.exited();
            let logged = want == "no authorization error in the operator log"
                && authorization_error(&state.op.log_text()).is_some();
            if exited || logged {
                break;
            }
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    let took = start.elapsed();
    match authorization_error(&state.op.log_text()) {
        None => {
            state
                .passed
                .insert("no authorization error in the operator log");
        }
        Some(line) if expect_fail.is_none() => println!("    authorization error: {line}"),
        Some(_) => {}
    }
    state.op.terminate();
    let failed = CHECKS
        .iter()
        .copied()
        .filter(|c| !state.passed.contains(c))
        .collect();
    (failed, took, when)
}

/// For each permission: the check that must fail without it (others may fail too).
fn expected_failure(t: &Triple) -> &'static str {
    match (t.0.as_str(), t.1.as_str(), t.2.as_str()) {
        ("kafkaconfig.dev", "kafkatoolconfigs" | "globalclientdefaults", "list") => {
            "operator becomes ready"
        }
        ("kafkaconfig.dev", _, "watch") | ("", _, "watch") => {
            "no authorization error in the operator log"
        }
        ("kafkaconfig.dev", "kafkatoolconfigs/status", _) => {
            "cm-out: ConfigMap output at the offline hash, Ready"
        }
        ("kafkaconfig.dev", "globalclientdefaults/status", _) => {
            "GlobalClientDefaults status current (Valid, selectedConfigs 5)"
        }
        ("", "configmaps", "get" | "patch") => {
            "cm-out: ConfigMap output at the offline hash, Ready"
        }
        ("", "configmaps", "list" | "create" | "delete") => {
            "imm-cm: immutable ConfigMap at the hash, older ones pruned"
        }
        ("", "secrets", "get" | "patch") => "secret-out: Secret output at the offline hash, Ready",
        ("", "secrets", "list" | "create" | "delete") => {
            "imm-secret: immutable Secret at the hash, older ones pruned"
        }
        ("", "namespaces", "list") => "operator becomes ready",
        // The workload watches (workloads.rs; Rollouts too, the stand-in CRD being installed):
        // without list they never sync and nothing rolls;
        // without watch the list still syncs them and each watch attempt is refused.
        ("apps" | "argoproj.io", _, "watch") => "no authorization error in the operator log",
        ("apps", "deployments", _) => "rollout: Deployment dep carries the hash",
        ("apps", "statefulsets", _) => "rollout: StatefulSet sts carries the hash",
        ("apps", "daemonsets", _) => "rollout: DaemonSet ds carries the hash",
        ("apps", "replicasets", "list") => {
            "imm-cm: immutable ConfigMap at the hash, older ones pruned"
        }
        ("argoproj.io", "rollouts", _) => "rollout: Rollout ro carries the hash",
        ("events.k8s.io", "events", "create") => "Rendered Event published",
        // kube-lease-manager takes and renews the Lease with patches (server-side apply).
        ("coordination.k8s.io", "leases", "get" | "create" | "patch") => "takes the leader Lease",
        _ => "(none expected)",
    }
}

struct RestoreRbac<'a>(&'a Cluster);
impl Drop for RestoreRbac<'_> {
    fn drop(&mut self) {
        let (cr, role) = rbac_roles(self.0);
        let _ = self.0.run(
            &["replace", "-f", "-"],
            Some(&to_yaml(&[without(&cr, None), without(&role, None)])),
        );
        let _ = self.0.run(&["apply", "-f", "e2e/rbac/cluster.yaml"], None);
    }
}

#[test]
#[ignore = "needs KCO_E2E_KUBECONFIG"]
fn rbac_is_least_privilege() {
    let _serial = serial();
    let cluster = Cluster::from_env();
    cluster.install_crds_and_rbac();
    cluster.fresh_namespace(RBAC_NS);
    let _restore = RestoreRbac(&cluster);
    let (cluster_role, role) = rbac_roles(&cluster);
    let all: Vec<(bool, Triple)> = triples(&cluster_role)
        .into_iter()
        .map(|t| (true, t))
        .chain(triples(&role).into_iter().map(|t| (false, t)))
        .collect();
    let sa = cluster.impersonating_kubeconfig(OPERATOR_NS, SA);
    let started = Instant::now();

    step("warm-up and baseline: the full role passes every check");
    cluster.apply_yaml(&to_yaml(&rbac_world(0)));
    cluster.install_argo_rollouts_crd();
    cluster.apply_yaml(&to_yaml(&workloads()));
    let _ = rbac_run(&cluster, &sa, 1, None, Duration::from_secs(20));
    let (failed, took, base) = rbac_run(&cluster, &sa, 2, None, Duration::from_secs(20));
    assert!(
        failed.is_empty(),
        "with the full role these checks fail: {failed:?}"
    );
    println!(
        "    baseline: {} checks pass in {took:?}: {base:?}",
        CHECKS.len()
    );
    // A run without a permission lasts until its expected check would have passed with the full
    // role, with margin (1.5x + 3 s); it stops earlier when the process exits or logs a 403
    // that is the expected failure.
    let deadline_for = |check: &str| {
        base.get(check)
            .map_or(Duration::from_secs(6), |t| {
                t.mul_f64(1.5) + Duration::from_secs(3)
            })
            .min(Duration::from_secs(12))
    };

    step(&format!(
        "removing each of {} permissions in turn",
        all.len()
    ));
    let mut table = Vec::new();
    let mut unneeded = Vec::new();
    let mut wrong = Vec::new();
    for (i, (in_cluster_role, t)) in all.iter().enumerate() {
        let run = 10 + i as u32;
        let (cr, r) = if *in_cluster_role {
            (without(&cluster_role, Some(t)), without(&role, None))
        } else {
            (without(&cluster_role, None), without(&role, Some(t)))
        };
        cluster.kubectl_stdin(&["replace", "-f", "-"], &to_yaml(&[cr, r]));
        eventually(
            &format!("{t:?} to be denied"),
            Duration::from_secs(10),
            || {
                (!can_i(&cluster, t))
                    .then_some(())
                    .ok_or("still allowed".to_string())
            },
        );
        let want = expected_failure(t);
        let (failed, took, _) = rbac_run(&cluster, &sa, run, Some(want), deadline_for(want));
        let line = format!(
            "{}/{} {}: {} failed in {:.1}s: {}",
            if t.0.is_empty() { "core" } else { &t.0 },
            t.1,
            t.2,
            failed.len(),
            took.as_secs_f64(),
            failed.join("; ")
        );
        println!("    {line}");
        if failed.is_empty() {
            unneeded.push(format!("{t:?}"));
        } else if !failed.contains(&want) {
            wrong.push(format!(
                "{t:?}: expected '{want}' to fail, failed {failed:?}"
            ));
        }
        table.push(line);
    }
    // full role back, and a last run proves the world recovers
    cluster.kubectl_stdin(
        &["replace", "-f", "-"],
        &to_yaml(&[without(&cluster_role, None), without(&role, None)]),
    );
    // The authorizer sees the restored role a moment later; the last removal was denied, so
    // wait until every permission is granted again before the proof run.
    eventually(
        "every permission to be granted again",
        Duration::from_secs(30),
        || match all.iter().find(|(_, t)| !can_i(&cluster, t)) {
            None => Ok(()),
            Some((_, t)) => Err(format!("{t:?} still denied")),
        },
    );
    let (failed, _, _) = rbac_run(&cluster, &sa, 1000, None, Duration::from_secs(20));
    assert!(failed.is_empty(), "after restoring the role: {failed:?}");
    println!(
        "SECURITY-FIGURES rbac: {} permissions removed in turn in {:?}; unneeded {}; unexpected {}",
        all.len(),
        started.elapsed(),
        unneeded.len(),
        wrong.len()
    );
    for line in &table {
        println!("RBAC-TABLE {line}");
    }
    assert!(
        unneeded.is_empty(),
        "removing these permissions fails no check (unneeded, or a check is missing): {unneeded:?}"
    );
    assert!(wrong.is_empty(), "{wrong:?}");
    let _ = cluster.run(&["delete", "namespace", RBAC_NS, "--wait=false"], None);
    let _ = cluster.run(
        &[
            "delete",
            "globalclientdefaults",
            "kco-rbac-defaults",
            "--ignore-not-found",
        ],
        None,
    );
}
