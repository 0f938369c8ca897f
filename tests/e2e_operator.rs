//! End-to-end test of `kafka-config-operator run` against a real control plane
//! (e2e/controlplane/up.sh: etcd, kube-apiserver, kube-controller-manager).
//!
//! The operator runs as a process with the ServiceAccount identity of e2e/rbac/cluster.yaml
//! (an impersonating kubeconfig), so RBAC is tested for real. Needs `KCO_E2E_KUBECONFIG` (an
//! admin kubeconfig). Plain `cargo test` leaves it out (`#[ignore]`); run with `--include-ignored`
//! (as scripts/test.sh does), it FAILS without the variable rather than skips, so a CI run can
//! never pass by testing nothing. `KCO_E2E_KUBECTL` overrides the kubectl binary (default e2e/.bin/kubectl).
//!
//! Run: `KCO_E2E_KUBECONFIG=e2e/.run/kubeconfig cargo test --test e2e_operator -- --include-ignored --nocapture`

mod support;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use support::audit::{self, AuditLog};
use support::*;

fn output_hash(cluster: &Cluster, name: &str) -> Result<(String, String), String> {
    let cm = cluster
        .json(&["get", "configmap", name, "-n", NS])
        .ok_or_else(|| format!("ConfigMap {name} not found"))?;
    let hash = annotation(&cm, "/metadata/annotations").ok_or("no hash annotation")?;
    let rv = cm["metadata"]["resourceVersion"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    Ok((hash, rv))
}

fn ready_config(cluster: &Cluster, name: &str) -> Result<serde_json::Value, String> {
    let config = cluster
        .json(&["get", "kafkatoolconfig", name, "-n", NS])
        .ok_or_else(|| format!("KafkaToolConfig {name} not found"))?;
    let ready = condition(&config, "Ready").ok_or("no Ready condition")?;
    if ready["status"] != "True" {
        return Err(format!("Ready={} {}", ready["status"], ready["message"]));
    }
    if config["status"]["observedGeneration"] != config["metadata"]["generation"] {
        return Err("observedGeneration lags".into());
    }
    Ok(config)
}

/// orders-producer's output (hash, resourceVersion) once its status reports that hash.
fn settled_output(cluster: &Cluster) -> (String, String) {
    eventually("orders output", Duration::from_secs(10), || {
        let c = ready_config(cluster, "orders-producer")?;
        let (hash, rv) = output_hash(cluster, "orders-producer-kafka")?;
        (c["status"]["configHash"] == hash.as_str())
            .then_some((hash, rv))
            .ok_or("status lags".into())
    })
}

/// The desired replicas of each ReplicaSet of `app`, by the config hash on its pod template.
fn replica_sets_by_hash(cluster: &Cluster, app: &str) -> BTreeMap<String, i64> {
    let selector = format!("app={app}");
    let list = cluster
        .json(&["get", "replicasets", "-n", NS, "-l", &selector])
        .unwrap_or_default();
    list["items"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|rs| {
            Some((
                annotation(rs, "/spec/template/metadata/annotations")?,
                rs["spec"]["replicas"].as_i64().unwrap_or(1),
            ))
        })
        .collect()
}

/// Edits imm-client and waits for imm-producer to be Ready on a new hash; returns it.
fn edit_immutable_source(cluster: &Cluster, linger: u32, previous: &str) -> String {
    cluster.merge_patch(
        "configmap",
        "imm-client",
        Some(NS),
        serde_json::json!({"data": {"client.properties": format!("bootstrap.servers=kafka-0.kafka:9092\nlinger.ms={linger}\n")}}),
    );
    eventually(
        "imm-producer on a new hash",
        Duration::from_secs(20),
        || {
            let c = ready_config(cluster, "imm-producer")?;
            let hash = c["status"]["configHash"].as_str().unwrap_or_default();
            (hash != previous && c["status"]["rollout"][0]["hash"] == hash)
                .then(|| hash.to_string())
                .ok_or(format!("{}", c["status"]))
        },
    )
}

fn setup(cluster: &Cluster) {
    step("installing the CRDs and the operator's RBAC");
    cluster.kubectl(&["apply", "-f", "crds/"]);
    cluster.kubectl(&[
        "wait",
        "--for=condition=Established",
        "--timeout=60s",
        "crd/kafkatoolconfigs.kafkaconfig.dev",
        "crd/globalclientdefaults.kafkaconfig.dev",
    ]);
    cluster.kubectl(&["apply", "-f", "e2e/rbac/cluster.yaml"]);
    step(&format!("starting from a clean namespace {NS}"));
    let _ = cluster.run(
        &[
            "delete",
            "namespace",
            NS,
            "--ignore-not-found",
            "--wait=true",
            "--timeout=90s",
        ],
        None,
    );
    // No content-hash key either: the operator's first start creates it.
    let _ = cluster.run(
        &[
            "delete",
            "secret",
            HASH_KEY_SECRET,
            "-n",
            OPERATOR_NS,
            "--ignore-not-found",
        ],
        None,
    );
    cluster.delete_lease(LEASE);
    // the CRDs may have just been created: retry while discovery catches up
    eventually("the fixtures to apply", Duration::from_secs(30), || {
        cluster.run(&["apply", "-f", "e2e/operator/fixtures/world.yaml"], None)
    });
}

#[test]
#[ignore = "needs KCO_E2E_KUBECONFIG"]
fn operator_end_to_end() {
    let started = Instant::now();
    let cluster = Cluster::from_env();
    setup(&cluster);
    let sa = cluster.impersonating_kubeconfig(OPERATOR_NS, SA);

    step("operator A starts as the ServiceAccount");
    let a = Operator::start(&cluster, &sa, "e2e-a");
    eventually("A to lead", Duration::from_secs(30), || {
        a.is_leader().then_some(()).ok_or("not leader".to_string())
    });

    step("render on create: output with hash annotation, Ready=True at the current generation");
    let (orders_hash, _) = eventually("orders-producer-kafka", Duration::from_secs(30), || {
        output_hash(&cluster, "orders-producer-kafka")
    });
    let config = eventually("orders-producer Ready", Duration::from_secs(30), || {
        ready_config(&cluster, "orders-producer")
    });
    assert_eq!(config["status"]["configHash"], orders_hash.as_str());
    eventually("audit-producer-kafka", Duration::from_secs(30), || {
        output_hash(&cluster, "audit-producer-kafka")
    });
    let cm = cluster
        .json(&["get", "configmap", "orders-producer-kafka", "-n", NS])
        .expect("output");
    let owner = &cm["metadata"]["ownerReferences"][0];
    assert_eq!(owner["kind"], "KafkaToolConfig");
    assert_eq!(owner["controller"], true);
    assert_eq!(
        cm["metadata"]["labels"]["app.kubernetes.io/managed-by"],
        "kafka-config-operator"
    );
    let producer = cm["data"]["producer.properties"]
        .as_str()
        .expect("producer.properties");
    assert!(
        producer.contains("delivery.timeout.ms=120000"),
        "GlobalClientDefaults default applied:\n{producer}"
    );
    println!("    ok: {orders_hash}");

    step("the first start created the content-hash key Secret; hashes are keyed and reproducible");
    let key_secret = cluster
        .json(&["get", "secret", HASH_KEY_SECRET, "-n", OPERATOR_NS])
        .expect("the operator created its content-hash key Secret");
    assert_eq!(key_secret["immutable"], true, "{key_secret}");
    assert_eq!(
        key_secret["metadata"]["labels"]["app.kubernetes.io/managed-by"],
        "kafka-config-operator"
    );
    let key = {
        use base64::Engine as _;
        base64::engine::general_purpose::STANDARD
            .decode(key_secret["data"]["key"].as_str().expect("data.key"))
            .expect("base64")
    };
    assert_eq!(key.len(), 32, "32 random bytes");
    assert!(
        orders_hash.starts_with("hmac-sha256:") && orders_hash.len() == 76,
        "the output annotation is keyed: {orders_hash}"
    );
    let log = std::fs::read_to_string(&a.log).unwrap_or_default();
    let key_b64 = key_secret["data"]["key"].as_str().unwrap_or_default();
    assert!(!log.contains(key_b64), "the key is never logged");
    assert!(
        log.contains("created the content-hash key"),
        "the start says it created the key (by id):\n{log}"
    );
    // With the cluster's key, the offline CLI reproduces the annotation (a pipeline's gate).
    let offline = render_offline(&[&repo().join("e2e/operator/fixtures/world.yaml")]);
    assert_eq!(
        offline
            .get("orders-producer-kafka")
            .map(|expected| expected.hash.as_str()),
        Some(orders_hash.as_str()),
        "render --hash-key-file gives the cluster's hash"
    );

    step("explain -n NS NAME reads the live config, also as `kubectl kafkaconfig`");
    let path = cluster.plugin_path();
    for (program, prefix) in [
        (
            PathBuf::from(env!("CARGO_BIN_EXE_kafka-config-operator")),
            vec![],
        ),
        (cluster.kubectl.clone(), vec!["kafkaconfig"]),
    ] {
        let out = Command::new(&program)
            .args(&prefix)
            .args([
                "explain",
                "-n",
                NS,
                "orders-producer",
                "--key",
                "acks",
                "-o",
                "json",
            ])
            .env("KUBECONFIG", &cluster.kubeconfig)
            .env("PATH", &path)
            .output()
            .expect("run explain");
        assert!(
            out.status.success(),
            "{}: {}",
            program.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        let entries: serde_json::Value =
            serde_json::from_slice(&out.stdout).expect("explain -o json");
        assert_eq!(entries[0]["key"], "acks", "{entries}");
        assert_eq!(entries[0]["value"], "all", "{entries}");
        assert_eq!(entries[0]["layer"], "properties", "{entries}");
        assert!(
            entries[0]["overridden"]
                .as_array()
                .is_some_and(|o| !o.is_empty()),
            "the values acks overrode are listed: {entries}"
        );
    }
    println!("    ok");

    step("rollout: the Deployment's pod template carries the hash");
    eventually("rollout annotation", Duration::from_secs(20), || {
        let d = cluster
            .json(&["get", "deployment", "orders-api", "-n", NS])
            .ok_or("no deployment")?;
        let hash = annotation(&d, "/spec/template/metadata/annotations").ok_or("no annotation")?;
        (hash == orders_hash)
            .then_some(())
            .ok_or(format!("template has {hash}"))
    });
    eventually("status.rollout", Duration::from_secs(20), || {
        let c = cluster
            .json(&["get", "kafkatoolconfig", "orders-producer", "-n", NS])
            .ok_or("gone")?;
        (c["status"]["rollout"][0]["hash"] == orders_hash.as_str())
            .then_some(())
            .ok_or(format!("{}", c["status"]["rollout"]))
    });

    step("GlobalClientDefaults status: Valid=True, selectedConfigs");
    eventually("gcd status", Duration::from_secs(20), || {
        let g = cluster
            .json(&["get", "globalclientdefaults", "kco-e2e-defaults"])
            .ok_or("gone")?;
        let valid = condition(&g, "Valid").ok_or("no Valid")?;
        let selected = g["status"]["selectedConfigs"].as_i64().unwrap_or(0);
        (valid["status"] == "True" && selected >= 2)
            .then_some(())
            .ok_or(format!("{}", g["status"]))
    });

    step("a source ConfigMap edit re-renders only its dependant");
    let (_, audit_rv) = output_hash(&cluster, "audit-producer-kafka").expect("audit output");
    let edit = Instant::now();
    cluster.merge_patch(
        "configmap",
        "base-client",
        Some(NS),
        serde_json::json!({"data": {"client.properties": "bootstrap.servers=kafka-0.kafka:9092\nlinger.ms=25\n"}}),
    );
    let (edited_hash, _) = eventually(
        "re-render after the source edit",
        Duration::from_secs(10),
        || {
            let (hash, rv) = output_hash(&cluster, "orders-producer-kafka")?;
            if hash == orders_hash {
                Err("hash unchanged".into())
            } else {
                Ok((hash, rv))
            }
        },
    );
    println!("    re-rendered in {:?}", edit.elapsed());
    let cm = cluster
        .json(&["get", "configmap", "orders-producer-kafka", "-n", NS])
        .expect("output");
    assert!(
        cm["data"]["producer.properties"]
            .as_str()
            .unwrap_or_default()
            .contains("linger.ms=25")
    );
    let config = eventually("history entry", Duration::from_secs(10), || {
        let c = ready_config(&cluster, "orders-producer")?;
        (c["status"]["configHash"] == edited_hash.as_str())
            .then_some(c)
            .ok_or("status lags".into())
    });
    let last = config["status"]["history"]
        .as_array()
        .and_then(|h| h.last())
        .cloned()
        .expect("history");
    assert_eq!(last["cause"], "ConfigMap base-client changed", "{last}");
    assert_eq!(
        last["changedKeys"],
        serde_json::json!(["linger.ms"]),
        "{last}"
    );
    std::thread::sleep(Duration::from_secs(2));
    let (_, audit_rv_after) = output_hash(&cluster, "audit-producer-kafka").expect("audit output");
    assert_eq!(
        audit_rv, audit_rv_after,
        "the config that does not read base-client was rewritten"
    );

    step("a GlobalClientDefaults edit propagates to the configs it selects");
    cluster.merge_patch(
        "globalclientdefaults",
        "kco-e2e-defaults",
        None,
        serde_json::json!({"spec": {"defaults": {"producer": {"delivery.timeout.ms": "90000"}}}}),
    );
    for name in ["orders-producer-kafka", "audit-producer-kafka"] {
        eventually(
            &format!("{name} with delivery.timeout.ms=90000"),
            Duration::from_secs(15),
            || {
                let cm = cluster
                    .json(&["get", "configmap", name, "-n", NS])
                    .ok_or("gone")?;
                let text = cm["data"]["producer.properties"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string();
                text.contains("delivery.timeout.ms=90000")
                    .then_some(())
                    .ok_or(text)
            },
        );
    }

    step("an invalid GlobalClientDefaults stops the configs it selects; their outputs stay");
    let (held_hash, held_rv) = settled_output(&cluster);
    cluster.merge_patch(
        "globalclientdefaults",
        "kco-e2e-defaults",
        None,
        serde_json::json!({"spec": {"defaults": {"producer": {"delivery.timeout.ms": "soon"}}}}),
    );
    eventually(
        "GlobalClientDefaults Valid=False",
        Duration::from_secs(20),
        || {
            let g = cluster
                .json(&["get", "globalclientdefaults", "kco-e2e-defaults"])
                .ok_or("gone")?;
            let valid = condition(&g, "Valid").ok_or("no Valid")?;
            (valid["status"] == "False"
                && valid["reason"] == "InvalidValue"
                && valid["message"]
                    .as_str()
                    .is_some_and(|m| m.contains("spec.defaults.producer.delivery.timeout.ms")))
            .then_some(())
            .ok_or(format!("{valid}"))
        },
    );
    eventually(
        "orders-producer Ready=False GlobalDefaultsInvalid",
        Duration::from_secs(20),
        || {
            let c = cluster
                .json(&["get", "kafkatoolconfig", "orders-producer", "-n", NS])
                .ok_or("gone")?;
            let ready = condition(&c, "Ready").ok_or("no Ready")?;
            (ready["status"] == "False"
                && ready["reason"] == "GlobalDefaultsInvalid"
                && c["status"]["configHash"] == held_hash.as_str())
            .then_some(())
            .ok_or(format!("{}", c["status"]))
        },
    );
    assert_eq!(
        output_hash(&cluster, "orders-producer-kafka").expect("output"),
        (held_hash.clone(), held_rv),
        "the last good output was touched while platform policy could not be applied"
    );
    cluster.merge_patch(
        "globalclientdefaults",
        "kco-e2e-defaults",
        None,
        serde_json::json!({"spec": {"defaults": {"producer": {"delivery.timeout.ms": "90000"}}}}),
    );
    eventually(
        "Ready again once the GlobalClientDefaults is fixed",
        Duration::from_secs(20),
        || ready_config(&cluster, "orders-producer"),
    );

    step("an invalid edit keeps the last good output and sets Valid=False");
    let (good_hash, good_rv) = settled_output(&cluster);
    cluster.merge_patch(
        "kafkatoolconfig",
        "orders-producer",
        Some(NS),
        serde_json::json!({"spec": {"properties": {"producer": {"acks": "sometimes"}}}}),
    );
    eventually("Valid=False", Duration::from_secs(15), || {
        let c = cluster
            .json(&["get", "kafkatoolconfig", "orders-producer", "-n", NS])
            .ok_or("gone")?;
        let valid = condition(&c, "Valid").ok_or("no Valid")?;
        let ready = condition(&c, "Ready").ok_or("no Ready")?;
        if valid["status"] == "False"
            && ready["status"] == "False"
            && c["status"]["observedGeneration"] == c["metadata"]["generation"]
            && c["status"]["configHash"] == good_hash.as_str()
        {
            Ok(())
        } else {
            Err(format!("{}", c["status"]))
        }
    });
    assert_eq!(
        output_hash(&cluster, "orders-producer-kafka").expect("output"),
        (good_hash.clone(), good_rv)
    );
    cluster.merge_patch(
        "kafkatoolconfig",
        "orders-producer",
        Some(NS),
        serde_json::json!({"spec": {"properties": {"producer": {"acks": "all"}}}}),
    );
    eventually("Ready again after the fix", Duration::from_secs(15), || {
        ready_config(&cluster, "orders-producer")
    });

    step("OutputConflict on a pre-existing ConfigMap the operator does not own");
    cluster.kubectl(&["apply", "-f", "e2e/operator/fixtures/conflict.yaml"]);
    eventually("OutputConflict", Duration::from_secs(15), || {
        let c = cluster
            .json(&["get", "kafkatoolconfig", "billing-producer", "-n", NS])
            .ok_or("gone")?;
        let ready = condition(&c, "Ready").ok_or("no Ready")?;
        (ready["status"] == "False" && ready["reason"] == "OutputConflict")
            .then_some(())
            .ok_or(format!("{ready}"))
    });
    let cm = cluster
        .json(&["get", "configmap", "billing-producer-kafka", "-n", NS])
        .expect("hand-made");
    assert_eq!(cm["data"]["note"], "hand-made, not the operator's");
    assert!(
        cm["metadata"]["ownerReferences"].is_null(),
        "the operator took over an object it does not own"
    );

    step("zero writes on a resync of an unchanged world (restart the operator)");
    eventually("the world to settle", Duration::from_secs(15), || {
        ready_config(&cluster, "orders-producer").map(|_| ())
    });
    // Every config in the namespace is selected; the count must include billing-producer.
    eventually(
        "GlobalClientDefaults status to count every config",
        Duration::from_secs(15),
        || {
            let configs = cluster
                .json(&["get", "kafkatoolconfig", "-n", NS])
                .ok_or("no list")?;
            let want = configs["items"].as_array().map_or(0, Vec::len) as i64;
            let g = cluster
                .json(&["get", "globalclientdefaults", "kco-e2e-defaults"])
                .ok_or("gone")?;
            let selected = g["status"]["selectedConfigs"].as_i64().unwrap_or(-1);
            (selected == want)
                .then_some(())
                .ok_or(format!("selectedConfigs {selected}, configs {want}"))
        },
    );
    std::thread::sleep(Duration::from_secs(2));
    a.terminate();
    let audit = AuditLog::from_now(&cluster);
    let b = Operator::start(&cluster, &sa, "e2e-b");
    eventually("B to lead", Duration::from_secs(30), || {
        b.is_leader().then_some(()).ok_or("not leader".to_string())
    });
    eventually(
        "B to reconcile every config",
        Duration::from_secs(30),
        || {
            let n = b.metric_sum("kafka_config_reconciles_total");
            (n >= 3.0).then_some(()).ok_or(format!("{n} reconciles"))
        },
    );
    // Every Ready config without rollout targets (their workloads are checked on the API server)
    // is proven unchanged from the watch caches alone (status.inputs, the ConfigMap/Secret
    // versions, the cached output's hash): no read, no render, no write.
    let ready_configs = cluster
        .json(&["get", "kafkatoolconfig", "-n", NS])
        .and_then(|l| l["items"].as_array().cloned())
        .unwrap_or_default()
        .iter()
        .filter(|c| condition(c, "Ready").is_some_and(|r| r["status"] == "True"))
        .filter(|c| {
            c["spec"]["rollout"]["targets"]
                .as_array()
                .is_none_or(Vec::is_empty)
        })
        .count() as f64;
    assert!(
        ready_configs >= 1.0,
        "expected Ready configs to restart over"
    );
    eventually(
        "B to find every Ready config unchanged without reading it",
        Duration::from_secs(30),
        || {
            let n = b.metric_sum("kafka_config_reconciles_unchanged_total");
            (n >= ready_configs)
                .then_some(())
                .ok_or(format!("{n} of {ready_configs} unchanged"))
        },
    );
    std::thread::sleep(Duration::from_secs(6)); // a GlobalClientDefaults status round too
    // Counted on the API server: B's metric counts the one write a restart may make, a `Synced`
    // condition following a rollout target that Kubernetes' own controllers changed meanwhile.
    let writes = b.metric_sum("kafka_config_writes_total");
    let reconciles = b.metric_sum("kafka_config_reconciles_total");
    let entries = audit.writes_in(NS);
    let seen = entries
        .iter()
        .filter(|e| audit::by_user(e, SA_USER))
        .count();
    assert!(
        seen as f64 >= writes,
        "the audit log shows {seen} of B's {writes} writes"
    );
    let unexplained = audit::unexplained_writes(&entries, 0, SA_USER);
    assert!(
        unexplained.is_empty(),
        "a restart over an unchanged world wrote {unexplained:?}:\n{:?}",
        b.metrics()
    );
    println!(
        "    ok: {reconciles} reconciles, {writes} writes, each following a rollout target's change"
    );

    step("leader takeover: a standby takes over when the leader dies");
    let c = Operator::start(&cluster, &sa, "e2e-c");
    std::thread::sleep(Duration::from_secs(3));
    assert!(!c.is_leader(), "two leaders at once");
    assert!(b.is_leader(), "B lost the lease while alive");
    let kill = Instant::now();
    b.crash();
    eventually("C to take over", Duration::from_secs(25), || {
        c.is_leader().then_some(()).ok_or("standby".to_string())
    });
    println!("    took over {:?} after the leader died", kill.elapsed());
    cluster.merge_patch(
        "configmap",
        "base-client",
        Some(NS),
        serde_json::json!({"data": {"client.properties": "bootstrap.servers=kafka-0.kafka:9092\nlinger.ms=40\n"}}),
    );
    eventually("the new leader renders", Duration::from_secs(15), || {
        let cm = cluster
            .json(&["get", "configmap", "orders-producer-kafka", "-n", NS])
            .ok_or("gone")?;
        let text = cm["data"]["producer.properties"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        text.contains("linger.ms=40").then_some(()).ok_or(text)
    });

    step("immutable outputs: kept while a rollout target still uses them, then collected");
    cluster.kubectl(&["apply", "-f", "e2e/operator/fixtures/immutable.yaml"]);
    let h1 = eventually("imm-producer Ready", Duration::from_secs(30), || {
        let c = ready_config(&cluster, "imm-producer")?;
        let hash = c["status"]["configHash"].as_str().ok_or("no hash")?;
        (c["status"]["rollout"][0]["hash"] == hash)
            .then(|| hash.to_string())
            .ok_or(format!("{}", c["status"]))
    });
    let first = immutable_outputs(&cluster, NS, "imm-producer");
    let name1 = first.get(&h1).cloned().expect("the output of h1");
    assert!(name1.starts_with("imm-producer-"), "{name1}");
    let cm = cluster
        .json(&["get", "configmap", &name1, "-n", NS])
        .expect("h1 output");
    assert_eq!(cm["immutable"], true, "{cm}");
    eventually("a ReplicaSet running h1", Duration::from_secs(30), || {
        let sets = replica_sets_by_hash(&cluster, "imm-api");
        (sets.get(&h1) == Some(&1))
            .then_some(())
            .ok_or(format!("{sets:?}"))
    });
    // Paused, the Deployment takes our template edits but keeps the h1 ReplicaSet running.
    cluster.merge_patch(
        "deployment",
        "imm-api",
        Some(NS),
        serde_json::json!({"spec": {"paused": true}}),
    );
    let h2 = edit_immutable_source(&cluster, 2, &h1);
    let h3 = edit_immutable_source(&cluster, 3, &h2);
    let d = cluster
        .json(&["get", "deployment", "imm-api", "-n", NS])
        .expect("deployment");
    assert_eq!(
        annotation(&d, "/spec/template/metadata/annotations").as_deref(),
        Some(h3.as_str())
    );
    let outputs = immutable_outputs(&cluster, NS, "imm-producer");
    assert_eq!(
        d["spec"]["template"]["spec"]["volumes"][0]["configMap"]["name"].as_str(),
        outputs.get(&h3).map(String::as_str),
        "the rollout points the volume at the new immutable output"
    );
    // Pruning waits for the Deployment controller to observe the latest template: wait for it
    // too, and for a GC round after it, before checking what was kept.
    eventually(
        "imm-api's controller to observe the h3 template",
        Duration::from_secs(20),
        || {
            let d = cluster
                .json(&["get", "deployment", "imm-api", "-n", NS])
                .ok_or("gone")?;
            (d["status"]["observedGeneration"] == d["metadata"]["generation"])
                .then_some(())
                .ok_or(format!("{}", d["status"]))
        },
    );
    std::thread::sleep(Duration::from_secs(2));
    let outputs = immutable_outputs(&cluster, NS, "imm-producer");
    assert!(
        outputs.contains_key(&h1) && outputs.contains_key(&h2) && outputs.contains_key(&h3),
        "keep 1, and h1 is still used by a ReplicaSet with replicas: {outputs:?}"
    );
    assert_eq!(
        replica_sets_by_hash(&cluster, "imm-api").get(&h1),
        Some(&1),
        "the paused Deployment scaled the h1 ReplicaSet"
    );
    let unpaused = Instant::now();
    cluster.merge_patch(
        "deployment",
        "imm-api",
        Some(NS),
        serde_json::json!({"spec": {"paused": false}}),
    );
    eventually(
        "the h1 output to be collected once no ReplicaSet runs it",
        Duration::from_secs(60),
        || {
            let outputs = immutable_outputs(&cluster, NS, "imm-producer");
            if outputs.contains_key(&h1) {
                return Err(format!("{outputs:?}"));
            }
            Ok(())
        },
    );
    let outputs = immutable_outputs(&cluster, NS, "imm-producer");
    assert_eq!(
        outputs.len(),
        2,
        "the current (h3) and keep 1 (h2): {outputs:?}"
    );
    assert!(
        outputs.contains_key(&h2) && outputs.contains_key(&h3),
        "{outputs:?}"
    );
    println!(
        "    ok: h1 collected {:?} after the rollout moved on",
        unpaused.elapsed()
    );

    step("a KafkaToolConfig the operator cannot decode gets Ready=False InvalidSpec, others go on");
    // `args` values are free-form in the schema (a string, number or boolean is meant); an object
    // passes the API server and fails the operator's types.
    cluster.run(
        &["apply", "-f", "-"],
        Some(&format!(
            "apiVersion: kafkaconfig.dev/v1alpha1\nkind: KafkaToolConfig\nmetadata: {{name: undecodable, namespace: {NS}}}\n\
             spec: {{tool: kafka-console-producer, args: {{topic: {{nested: true}}}}, \
             configFiles: [{{configMapKeyRef: {{name: base-client, key: client.properties}}}}]}}\n"
        )),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    eventually("InvalidSpec status", Duration::from_secs(20), || {
        let c = cluster
            .json(&["get", "kafkatoolconfig", "undecodable", "-n", NS])
            .ok_or("gone")?;
        let ready = condition(&c, "Ready").ok_or(format!("no Ready: {}", c["status"]))?;
        (ready["status"] == "False"
            && ready["reason"] == "InvalidSpec"
            && c["status"]["observedGeneration"] == c["metadata"]["generation"])
            .then_some(())
            .ok_or(format!("{}", c["status"]))
    });
    ready_config(&cluster, "orders-producer").expect("other configs unaffected");
    cluster.merge_patch(
        "kafkatoolconfig",
        "undecodable",
        Some(NS),
        serde_json::json!({"spec": {"args": {"topic": "fixed"}}}),
    );
    eventually("Ready after the fix", Duration::from_secs(20), || {
        ready_config(&cluster, "undecodable")
    });
    cluster.kubectl(&["delete", "kafkatoolconfig", "undecodable", "-n", NS]);

    step("a ConfigMap and a Secret applied together render once (debounce)");
    let pair = |linger: u32, batch: u32| {
        format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: pair-client, namespace: {NS}}}\n\
             data: {{client.properties: \"bootstrap.servers=kafka-0:9092\\nlinger.ms={linger}\\n\"}}\n---\n\
             apiVersion: v1\nkind: Secret\nmetadata: {{name: pair-tuning, namespace: {NS}}}\n\
             stringData: {{client.properties: \"batch.size={batch}\\n\"}}\n"
        )
    };
    cluster
        .run(
            &["apply", "--server-side", "-f", "-"],
            Some(&format!(
                "{}---\napiVersion: kafkaconfig.dev/v1alpha1\nkind: KafkaToolConfig\n\
                 metadata: {{name: pair, namespace: {NS}}}\n\
                 spec: {{tool: kafka-console-producer, args: {{topic: pair}}, output: {{kind: Secret}}, \
                 configFiles: [{{configMapKeyRef: {{name: pair-client, key: client.properties}}}}, \
                 {{secretKeyRef: {{name: pair-tuning, key: client.properties}}}}]}}\n",
                pair(1, 1000)
            )),
        )
        .unwrap_or_else(|e| panic!("{e}"));
    let before = eventually("pair Ready", Duration::from_secs(20), || {
        ready_config(&cluster, "pair")
    });
    let revisions = |c: &serde_json::Value| c["status"]["history"].as_array().map_or(0, Vec::len);
    let revisions_before = revisions(&before);
    // One apply call: the two objects are written a round trip apart.
    cluster
        .run(&["apply", "--server-side", "-f", "-"], Some(&pair(2, 2000)))
        .unwrap_or_else(|e| panic!("{e}"));
    let after = eventually("pair re-rendered", Duration::from_secs(20), || {
        let c = ready_config(&cluster, "pair")?;
        (c["status"]["configHash"] != before["status"]["configHash"])
            .then_some(c)
            .ok_or("not yet".to_string())
    });
    std::thread::sleep(Duration::from_secs(2)); // a second render would show by now
    let settled = ready_config(&cluster, "pair").expect("pair Ready");
    assert_eq!(
        settled["status"]["configHash"], after["status"]["configHash"],
        "a second render followed"
    );
    assert_eq!(
        revisions(&settled),
        revisions_before + 1,
        "two edits applied together made more than one revision: {}",
        settled["status"]["history"]
    );
    let latest = settled["status"]["history"]
        .as_array()
        .and_then(|h| h.iter().max_by_key(|e| e["revision"].as_i64()))
        .cloned()
        .unwrap_or_default();
    let changed = latest["changedKeys"].to_string();
    assert!(
        changed.contains("linger.ms") && changed.contains("batch.size"),
        "the one revision should carry both edits: {latest}"
    );
    cluster.kubectl(&["delete", "kafkatoolconfig", "pair", "-n", NS]);

    step("Events: Normal Rendered on renders, a Warning naming the reason on failures");
    eventually("events of orders-producer", Duration::from_secs(15), || {
        let events = cluster
            .json(&[
                "get",
                "events",
                "-n",
                NS,
                "--field-selector",
                "involvedObject.name=orders-producer",
            ])
            .ok_or("no events list")?;
        let items = events["items"].as_array().cloned().unwrap_or_default();
        let rendered = items
            .iter()
            .any(|e| e["type"] == "Normal" && e["reason"] == "Rendered");
        // The invalid edit (acks=sometimes) must have produced a Warning whose message says why.
        let failure = items.iter().any(|e| {
            e["type"] == "Warning"
                && e["reason"] != "Rendered"
                && e["message"].as_str().is_some_and(|m| m.contains("acks"))
        });
        let kinds: Vec<String> = items
            .iter()
            .map(|e| format!("{}/{}", e["type"], e["reason"]))
            .collect();
        (rendered && failure)
            .then_some(())
            .ok_or(format!("events: {kinds:?}"))
    });

    step("garbage collection after deleting a KafkaToolConfig");
    cluster.kubectl(&["delete", "kafkatoolconfig", "audit-producer", "-n", NS]);
    eventually(
        "audit-producer-kafka to be collected",
        Duration::from_secs(60),
        || match cluster.json(&["get", "configmap", "audit-producer-kafka", "-n", NS]) {
            None => Ok(()),
            Some(_) => Err("still there".to_string()),
        },
    );

    step("cleaning up");
    c.terminate();
    let _ = cluster.run(&["delete", "namespace", NS, "--wait=false"], None);
    let _ = cluster.run(
        &[
            "delete",
            "globalclientdefaults",
            "kco-e2e-defaults",
            "--ignore-not-found",
        ],
        None,
    );
    println!("operator e2e passed in {:?}", started.elapsed());
}
