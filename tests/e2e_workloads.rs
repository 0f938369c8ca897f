//! From output to running workload, on the real control plane (e2e/controlplane: etcd,
//! kube-apiserver, kube-controller-manager; no kubelet, so pods are marked ready through the API
//! as a kubelet would). The operator runs as its ServiceAccount (e2e/rbac/cluster.yaml).
//!
//! - an opt-in Deployment (`kafkaconfig.dev/config`) created after its config from
//!   `render --workload` carries the hash at creation: generation 1, one ReplicaSet;
//! - one created from the Git manifest (no hash) is stamped at once, never later;
//! - a source edit makes exactly one new ReplicaSet, mounting `<name>-<newhash8>`; the old output
//!   stays while a ReplicaSet with replicas mounts it and goes once they scale to zero;
//! - a StatefulSet (`rollout.targets`, created late) and a DaemonSet (opt-in) are stamped at
//!   creation, with the immutable volume; a target deleted and re-created is stamped again;
//! - an Argo Rollout (`argoproj.io/v1alpha1`, a stand-in CRD) is rolled through the same path;
//! - Argo CD's view: a server-side-apply dry-run of the Git manifest shows no change once the
//!   fields the operator manages are ignored (docs/argocd.md), and shows the revert without.
//! - the API server's side of the operator's guarded writes: a server-side apply carrying the
//!   uid and resourceVersion read is refused with 409 once the object changed, was replaced or
//!   was deleted (with the resourceVersion alone, a deleted object is created again).
//!
//! Needs `KCO_E2E_KUBECONFIG`; `#[ignore]`d in plain `cargo test`, FAILS without the variable
//! under `--include-ignored` (scripts/test.sh). Run:
//! `KCO_E2E_KUBECONFIG=e2e/.run/kubeconfig cargo test --test e2e_workloads -- --include-ignored --nocapture`

mod support;

use std::collections::BTreeMap;
use std::process::Command;
use std::time::Duration;

use serde_json::{Value, json};
use support::*;

const WL_NS: &str = "kco-wl";
const WL_LEASE: &str = "kco-wl-operator";
const BASE: &str = "wl-consumer-kafka";

fn source(linger: u32) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "wl-client", "namespace": WL_NS},
        "data": {"client.properties": format!("bootstrap.servers=kafka-0.kafka:9092\nmax.poll.records={linger}\n")}})
}

fn config(name: &str, targets: Value) -> Value {
    json!({"apiVersion": "kafkaconfig.dev/v1alpha1", "kind": "KafkaToolConfig",
        "metadata": {"name": name, "namespace": WL_NS},
        "spec": {"tool": "kafka-console-consumer", "args": {"topic": "orders", "group": name},
            "configFiles": [{"configMapKeyRef": {"name": "wl-client", "key": "client.properties"}}],
            "output": {"immutable": true, "keep": 1},
            "rollout": {"targets": targets}}})
}

/// A workload as Git holds it: the output's base name in the volume, no hash.
fn git_workload(kind: &str, name: &str, opt_in: Option<&str>, base: &str) -> Value {
    let mut object = json!({
        "apiVersion": if kind == "Rollout" { "argoproj.io/v1alpha1" } else { "apps/v1" },
        "kind": kind,
        "metadata": {"name": name, "namespace": WL_NS},
        "spec": {
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {
                    "containers": [{"name": "tool", "image": "apache/kafka:4.3.1",
                        "volumeMounts": [{"name": "kafka-config", "mountPath": "/etc/kafka-config"}]}],
                    "volumes": [
                        {"name": "kafka-config", "configMap": {"name": base}},
                        {"name": "scratch", "emptyDir": {}}
                    ]
                }
            }
        }
    });
    if kind != "DaemonSet" {
        object["spec"]["replicas"] = json!(1);
    }
    if kind == "Deployment" {
        object["spec"]["strategy"] =
            json!({"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}});
    }
    if kind == "StatefulSet" {
        object["spec"]["serviceName"] = json!(name);
    }
    if let Some(config) = opt_in {
        object["metadata"]["annotations"] = json!({"kafkaconfig.dev/config": config});
    }
    object
}

/// What Argo CD (server-side apply, its field manager) would apply from Git.
fn apply_as_argo(cluster: &Cluster, object: &Value) {
    eventually("server-side apply", Duration::from_secs(30), || {
        cluster.run(
            &[
                "apply",
                "--server-side",
                "--field-manager=argocd-controller",
                "-f",
                "-",
            ],
            Some(&to_yaml(std::slice::from_ref(object))),
        )
    });
}

fn get(cluster: &Cluster, kind: &str, name: &str) -> Option<Value> {
    cluster.json(&["get", kind, name, "-n", WL_NS])
}

fn ready_hash(cluster: &Cluster, name: &str, not: &str) -> String {
    eventually(
        &format!("{name} Ready on a new hash"),
        Duration::from_secs(30),
        || {
            let c = get(cluster, "kafkatoolconfig", name).ok_or("no config")?;
            let ready = condition(&c, "Ready").ok_or("no Ready")?;
            let hash = c["status"]["configHash"].as_str().unwrap_or_default();
            (ready["status"] == "True"
                && c["status"]["observedGeneration"] == c["metadata"]["generation"]
                && !hash.is_empty()
                && hash != not)
                .then(|| hash.to_string())
                .ok_or(format!("{}", c["status"]))
        },
    )
}

fn immutable_name(hash: &str) -> String {
    let hex = hash.rsplit(':').next().unwrap_or(hash);
    format!("{BASE}-{}", &hex[..8])
}

/// The template's hash and the name its `kafka-config` volume mounts.
fn template_state(object: &Value) -> (Option<String>, Option<String>) {
    let volume = object["spec"]["template"]["spec"]["volumes"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|v| v["name"] == "kafka-config")
        .and_then(|v| v["configMap"]["name"].as_str())
        .map(str::to_string);
    (
        annotation(object, "/spec/template/metadata/annotations"),
        volume,
    )
}

/// The ReplicaSets of `app`: (hash, desired replicas, mounted name).
fn replica_sets(cluster: &Cluster, app: &str) -> Vec<(Option<String>, i64, Option<String>)> {
    let list = cluster
        .json(&[
            "get",
            "replicasets",
            "-n",
            WL_NS,
            "-l",
            &format!("app={app}"),
        ])
        .unwrap_or_default();
    list["items"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|rs| {
            let (hash, volume) = template_state(rs);
            (hash, rs["spec"]["replicas"].as_i64().unwrap_or(1), volume)
        })
        .collect()
}

fn outputs(cluster: &Cluster) -> BTreeMap<String, String> {
    immutable_outputs(cluster, WL_NS, "wl-consumer")
}

/// What a kubelet reports for a started pod: Running and Ready.
fn mark_pods_ready(cluster: &Cluster) {
    let pods = cluster
        .json(&["get", "pods", "-n", WL_NS])
        .unwrap_or_default();
    for pod in pods["items"].as_array().into_iter().flatten() {
        let ready = pod["status"]["conditions"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|c| c["type"] == "Ready" && c["status"] == "True");
        let Some(name) = pod["metadata"]["name"].as_str() else {
            continue;
        };
        if ready || pod["metadata"]["deletionTimestamp"].is_string() {
            continue;
        }
        let now = "2026-01-01T00:00:00Z";
        let status = json!({"status": {"phase": "Running", "conditions": [
            {"type": "Ready", "status": "True", "lastTransitionTime": now},
            {"type": "ContainersReady", "status": "True", "lastTransitionTime": now},
            {"type": "PodScheduled", "status": "True", "lastTransitionTime": now}]}});
        let _ = cluster.run(
            &[
                "patch",
                "pod",
                name,
                "-n",
                WL_NS,
                "--subresource=status",
                "--type=merge",
                "-p",
                &status.to_string(),
            ],
            None,
        );
    }
}

fn rollout_entry(cluster: &Cluster, config: &str, kind: &str, name: &str) -> Value {
    let c = get(cluster, "kafkatoolconfig", config).unwrap_or_default();
    c["status"]["rollout"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|r| r["kind"] == kind && r["name"] == name)
        .cloned()
        .unwrap_or(Value::Null)
}

/// `render --workload -o json` of the config, with the cluster's hash key.
fn fragment(cluster: &Cluster, objects: &[Value]) -> Value {
    let file = cluster.work.path().join("wl-config.yaml");
    std::fs::write(&file, to_yaml(objects)).expect("write");
    let key = hash_key_file();
    let out = Command::new(env!("CARGO_BIN_EXE_kafka-config-operator"))
        .args(["render", "--workload", "-o", "json", "--hash-key-file"])
        .arg(&key)
        .arg("-f")
        .arg(&file)
        .output()
        .expect("render --workload");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let list: Value = serde_json::from_slice(&out.stdout).expect("json");
    list[0]["workload"].clone()
}

fn setup(cluster: &Cluster) -> Operator {
    cluster.install_crds_and_rbac();
    cluster.install_argo_rollouts_crd();
    cluster.fresh_namespace(WL_NS);
    cluster.kubectl(&["create", "namespace", WL_NS]);
    let _ = cluster.run(
        &[
            "delete",
            "lease",
            WL_LEASE,
            "-n",
            OPERATOR_NS,
            "--ignore-not-found",
        ],
        None,
    );
    let sa = cluster.impersonating_kubeconfig(OPERATOR_NS, SA);
    let mut op = Operator::spawn(cluster, &sa, "wl", Some(WL_LEASE), "info,kube=warn");
    op.wait_ready(Duration::from_secs(60))
        .unwrap_or_else(|e| panic!("{e}\n{}", op.log_text()));
    op
}

#[test]
#[ignore = "needs KCO_E2E_KUBECONFIG"]
fn workloads_are_stamped_at_creation_and_mount_each_immutable_output() {
    let cluster = Cluster::from_env();
    let op = setup(&cluster);

    step("a config first, then a Deployment from `render --workload` (opt-in, hash, volume)");
    let objects = [source(1), config("wl-consumer", json!([]))];
    cluster.apply_yaml(&to_yaml(&objects));
    let h1 = ready_hash(&cluster, "wl-consumer", "");
    let fragment = fragment(&cluster, &objects);
    assert_eq!(
        fragment["spec"]["template"]["metadata"]["annotations"]["kafkaconfig.dev/config-hash"],
        h1.as_str(),
        "render --workload with the cluster's key prints the operator's hash"
    );
    let mut api = git_workload("Deployment", "wl-api", Some("wl-consumer"), BASE);
    api["metadata"]["annotations"] = fragment["metadata"]["annotations"].clone();
    api["spec"]["template"]["metadata"]["annotations"] =
        fragment["spec"]["template"]["metadata"]["annotations"].clone();
    api["spec"]["template"]["spec"] = fragment["spec"]["template"]["spec"].clone();
    apply_as_argo(&cluster, &api);
    eventually(
        "wl-api listed in status.rollout",
        Duration::from_secs(10),
        || {
            let entry = rollout_entry(&cluster, "wl-consumer", "Deployment", "wl-api");
            (entry["hash"] == h1.as_str() && entry["via"] == "Annotation")
                .then_some(())
                .ok_or(format!("{entry}"))
        },
    );
    eventually("one ReplicaSet", Duration::from_secs(10), || {
        let sets = replica_sets(&cluster, "wl-api");
        (sets.len() == 1).then_some(()).ok_or(format!("{sets:?}"))
    });
    std::thread::sleep(Duration::from_secs(2));
    let d = get(&cluster, "deployment", "wl-api").expect("wl-api");
    assert_eq!(
        d["metadata"]["generation"], 1,
        "no second rollout: the operator found the hash and the volume already right"
    );
    assert_eq!(replica_sets(&cluster, "wl-api").len(), 1);
    assert_eq!(
        template_state(&d),
        (Some(h1.clone()), Some(immutable_name(&h1)))
    );
    println!("    ok: created with {h1}, generation 1, one ReplicaSet");

    step("a Deployment from the Git manifest (base name, no hash) is stamped at once");
    apply_as_argo(
        &cluster,
        &git_workload("Deployment", "wl-late", Some("wl-consumer"), BASE),
    );
    eventually("wl-late stamped", Duration::from_secs(5), || {
        let d = get(&cluster, "deployment", "wl-late").ok_or("absent")?;
        (template_state(&d) == (Some(h1.clone()), Some(immutable_name(&h1))))
            .then_some(())
            .ok_or(format!("{:?}", template_state(&d)))
    });
    let generation =
        get(&cluster, "deployment", "wl-late").expect("wl-late")["metadata"]["generation"].clone();
    std::thread::sleep(Duration::from_secs(3));
    assert_eq!(
        get(&cluster, "deployment", "wl-late").expect("wl-late")["metadata"]["generation"],
        generation,
        "stamped once, right after creation"
    );

    step("a source edit: exactly one new ReplicaSet, mounting the new output");
    mark_pods_ready(&cluster);
    eventually("wl-api available", Duration::from_secs(20), || {
        mark_pods_ready(&cluster);
        let d = get(&cluster, "deployment", "wl-api").ok_or("absent")?;
        (d["status"]["availableReplicas"] == 1)
            .then_some(())
            .ok_or(format!("{}", d["status"]))
    });
    cluster.apply_yaml(&to_yaml(&[source(2)]));
    let h2 = ready_hash(&cluster, "wl-consumer", &h1);
    let sets = eventually("a ReplicaSet on h2", Duration::from_secs(20), || {
        let sets = replica_sets(&cluster, "wl-api");
        sets.iter()
            .any(|(h, _, _)| h.as_deref() == Some(h2.as_str()))
            .then(|| sets.clone())
            .ok_or(format!("{sets:?}"))
    });
    assert_eq!(sets.len(), 2, "exactly one new ReplicaSet: {sets:?}");
    let new = sets
        .iter()
        .find(|(h, _, _)| h.as_deref() == Some(h2.as_str()))
        .expect("the h2 ReplicaSet");
    assert_eq!(new.2.as_deref(), Some(immutable_name(&h2).as_str()));
    let old = sets
        .iter()
        .find(|(h, _, _)| h.as_deref() == Some(h1.as_str()))
        .expect("the h1 ReplicaSet");
    assert_eq!(old.2.as_deref(), Some(immutable_name(&h1).as_str()));
    assert!(
        old.1 >= 1,
        "the new pod is not ready: the old ReplicaSet keeps its replica"
    );

    step("a second edit: h1 is beyond keep 1 but a ReplicaSet with a replica mounts it");
    cluster.apply_yaml(&to_yaml(&[source(3)]));
    let h3 = ready_hash(&cluster, "wl-consumer", &h2);
    eventually("wl-api observed h3", Duration::from_secs(20), || {
        let d = get(&cluster, "deployment", "wl-api").ok_or("absent")?;
        (d["status"]["observedGeneration"] == d["metadata"]["generation"]
            && template_state(&d).0.as_deref() == Some(h3.as_str()))
        .then_some(())
        .ok_or(format!("{}", d["status"]))
    });
    // A GC round after the controller observed the template (the operator retries within 1 s).
    std::thread::sleep(Duration::from_secs(3));
    let now = outputs(&cluster);
    assert!(
        now.contains_key(&h1) && now.contains_key(&h2) && now.contains_key(&h3),
        "h1 held by a ReplicaSet with replicas, h2 kept (keep 1), h3 current: {now:?}"
    );
    assert!(
        replica_sets(&cluster, "wl-api")
            .iter()
            .any(|(h, n, _)| h.as_deref() == Some(h1.as_str()) && *n >= 1),
        "the h1 ReplicaSet still has a replica"
    );

    step("the new pods become ready, the old ReplicaSets scale to zero, h1 is collected");
    eventually("h1 collected", Duration::from_secs(60), || {
        mark_pods_ready(&cluster);
        let now = outputs(&cluster);
        (!now.contains_key(&h1))
            .then_some(())
            .ok_or(format!("{now:?} {:?}", replica_sets(&cluster, "wl-api")))
    });
    let now = outputs(&cluster);
    assert_eq!(
        now.keys().cloned().collect::<Vec<_>>().len(),
        2,
        "h3 and keep 1 (h2): {now:?}"
    );
    assert!(now.contains_key(&h2) && now.contains_key(&h3), "{now:?}");

    step("Argo CD's view: the Git manifest with the operator's fields ignored is in sync");
    argo_view(&cluster, "wl-late");

    step(
        "an Argo Rollout target; a StatefulSet named in rollout.targets and an opt-in DaemonSet, created late",
    );
    let base = "wl-brokers-kafka";
    let brokers = config(
        "wl-brokers",
        json!([{"kind": "StatefulSet", "name": "wl-sts"}, {"kind": "Rollout", "name": "wl-ro"}]),
    );
    cluster.apply_yaml(&to_yaml(&[brokers]));
    let hb = ready_hash(&cluster, "wl-brokers", "");
    let stamped = |kind: &str, name: &str| {
        let want = (
            Some(hb.clone()),
            Some(format!(
                "{base}-{}",
                &hb.rsplit(':').next().unwrap_or_default()[..8]
            )),
        );
        eventually(
            &format!("{kind} {name} stamped"),
            Duration::from_secs(5),
            || {
                let o = get(&cluster, kind, name).ok_or("absent")?;
                (template_state(&o) == want)
                    .then_some(o.clone())
                    .ok_or(format!("{:?}", template_state(&o)))
            },
        )
    };
    apply_as_argo(&cluster, &git_workload("StatefulSet", "wl-sts", None, base));
    apply_as_argo(
        &cluster,
        &git_workload("DaemonSet", "wl-ds", Some("wl-brokers"), base),
    );
    apply_as_argo(&cluster, &git_workload("Rollout", "wl-ro", None, base));
    stamped("statefulset", "wl-sts");
    stamped("daemonset", "wl-ds");
    let rollout = stamped("rollouts.argoproj.io", "wl-ro");
    assert_eq!(
        rollout["spec"]["template"]["spec"]["volumes"][1]["name"], "scratch",
        "the Rollout's other volumes are untouched"
    );
    eventually(
        "status.rollout lists all three",
        Duration::from_secs(10),
        || {
            let sts = rollout_entry(&cluster, "wl-brokers", "StatefulSet", "wl-sts");
            let ds = rollout_entry(&cluster, "wl-brokers", "DaemonSet", "wl-ds");
            let ro = rollout_entry(&cluster, "wl-brokers", "Rollout", "wl-ro");
            (sts["hash"] == hb.as_str()
                && sts.get("via").is_none()
                && ds["hash"] == hb.as_str()
                && ds["via"] == "Annotation"
                && ro["hash"] == hb.as_str())
            .then_some(())
            .ok_or(format!("{sts} {ds} {ro}"))
        },
    );

    step("a target deleted and re-created is stamped again at creation");
    cluster.kubectl(&[
        "delete",
        "statefulset",
        "wl-sts",
        "-n",
        WL_NS,
        "--wait=true",
    ]);
    eventually(
        "status.rollout without a hash for wl-sts",
        Duration::from_secs(10),
        || {
            let sts = rollout_entry(&cluster, "wl-brokers", "StatefulSet", "wl-sts");
            (sts.is_object() && sts.get("hash").is_none())
                .then_some(())
                .ok_or(format!("{sts}"))
        },
    );
    apply_as_argo(&cluster, &git_workload("StatefulSet", "wl-sts", None, base));
    stamped("statefulset", "wl-sts");
    println!("    ok: StatefulSet, DaemonSet and Rollout stamped at creation, re-creation too");
    drop(op);
    let _ = cluster.run(&["delete", "namespace", WL_NS, "--wait=false"], None);
}

/// Argo CD with `ignoreDifferences: [{managedFieldsManagers: [kafka-config-operator]}]` and
/// `RespectIgnoreDifferences=true` diffs (and syncs) the Git manifest with every field the
/// operator's manager owns taken from the live object. A server-side-apply dry-run of that, as
/// Argo's manager, must change nothing; of the plain Git manifest, it must revert the rollout
/// (which is why the ignoreDifferences is needed).
fn argo_view(cluster: &Cluster, name: &str) {
    let live = cluster
        .json(&[
            "get",
            "deployment",
            name,
            "-n",
            WL_NS,
            "--show-managed-fields",
        ])
        .expect("live");
    let git = git_workload("Deployment", name, Some("wl-consumer"), BASE);
    let managers = ignored_managers("Deployment");
    assert_eq!(
        managers,
        ["kafka-config-operator"],
        "the documented setting"
    );
    let ours = live["metadata"]["managedFields"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|m| {
            managers
                .iter()
                .any(|manager| m["manager"] == manager.as_str())
        })
        .map(|m| m["fieldsV1"].clone())
        .collect::<Vec<_>>();
    assert!(!ours.is_empty(), "the operator's manager owns fields");
    let mut normalized = git.clone();
    for fields in &ours {
        support::managed_fields::copy_managed_fields(fields, &live, &mut normalized);
    }
    let dry_run = |object: &Value| -> Value {
        let out = cluster
            .run(
                &[
                    "apply",
                    "--server-side",
                    "--force-conflicts",
                    "--field-manager=argocd-controller",
                    "--dry-run=server",
                    "-o",
                    "json",
                    "-f",
                    "-",
                ],
                Some(&to_yaml(std::slice::from_ref(object))),
            )
            .unwrap_or_else(|e| panic!("{e}"));
        serde_json::from_str(&out).expect("json")
    };
    let synced = dry_run(&normalized);
    assert_eq!(
        synced["spec"]["template"], live["spec"]["template"],
        "with the operator's fields ignored, a sync changes nothing"
    );
    let reverted = dry_run(&git);
    assert_ne!(
        template_state(&reverted),
        template_state(&live),
        "without ignoreDifferences a sync would revert the rollout"
    );
    println!(
        "    ok: in sync under managedFieldsManagers; the plain manifest would revert {:?}",
        template_state(&live)
    );
}

/// The `managedFieldsManagers` of `kind` in e2e/testdata/argocd-ignore-differences.yaml.
fn ignored_managers(kind: &str) -> Vec<String> {
    let text = std::fs::read_to_string(repo().join("e2e/testdata/argocd-ignore-differences.yaml"))
        .expect("the Argo CD fixture");
    let settings: Value = serde_saphyr::from_str(&text).expect("YAML");
    settings["ignoreDifferences"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|entry| entry["kind"] == kind)
        .flat_map(|entry| {
            entry["managedFieldsManagers"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        })
        .filter_map(|m| m.as_str().map(str::to_string))
        .collect()
}

#[test]
fn docs_argocd_shows_the_ignore_differences_the_view_check_uses() {
    let doc = std::fs::read_to_string(repo().join("docs/argocd.md")).expect("docs/argocd.md");
    let text = std::fs::read_to_string(repo().join("e2e/testdata/argocd-ignore-differences.yaml"))
        .expect("the Argo CD fixture");
    let settings: Value = serde_saphyr::from_str(&text).expect("YAML");
    for entry in settings["ignoreDifferences"]
        .as_array()
        .into_iter()
        .flatten()
    {
        let managers: Vec<&str> = entry["managedFieldsManagers"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        let block = format!(
            "    - group: {}\n      kind: {}\n      managedFieldsManagers: [{}]\n",
            entry["group"].as_str().unwrap_or_default(),
            entry["kind"].as_str().unwrap_or_default(),
            managers.join(", ")
        );
        assert!(doc.contains(&block), "docs/argocd.md lacks:\n{block}");
    }
    for option in settings["syncOptions"].as_array().into_iter().flatten() {
        let line = format!("      - {}\n", option.as_str().unwrap_or_default());
        assert!(
            doc.contains(&line),
            "docs/argocd.md lacks the sync option {line}"
        );
    }
}

/// The API server's side of the operator's guarded writes (`apply::update_tests` and
/// `apply::rollout::roll_tests` mock it): a server-side apply carrying the `metadata.uid` and
/// `metadata.resourceVersion` read applies while the object is unchanged, and is refused with
/// 409 once it changed, was replaced by another object under the same name, or was deleted.
/// With the resourceVersion alone, the apply onto a deleted object creates it: for an Argo
/// Rollout (its template has no schema) the patch alone passes as a whole object.
#[test]
#[ignore = "needs KCO_E2E_KUBECONFIG"]
fn a_server_side_apply_carrying_the_uid_and_version_read_is_refused_once_the_object_moved_on() {
    let cluster = Cluster::from_env();
    cluster.install_argo_rollouts_crd();
    let ns = "kco-wl-guarded";
    cluster.fresh_namespace(ns);
    cluster.kubectl(&["create", "namespace", ns]);
    let rollout = |hash: &str, read: Option<&Value>| {
        let mut object = json!({
            "apiVersion": "argoproj.io/v1alpha1", "kind": "Rollout",
            "metadata": {"name": "guarded", "namespace": ns},
            "spec": {"template": {"metadata": {"annotations": {HASH: hash}}}}
        });
        if let Some(read) = read {
            object["metadata"]["uid"] = read["metadata"]["uid"].clone();
            object["metadata"]["resourceVersion"] = read["metadata"]["resourceVersion"].clone();
        }
        object.to_string()
    };
    let apply = |manager: &str, body: &str| {
        cluster.run(
            &[
                "apply",
                "--server-side",
                "--force-conflicts",
                &format!("--field-manager={manager}"),
                "-f",
                "-",
            ],
            Some(body),
        )
    };
    let ours = |body: &str| apply("kafka-config-operator", body);
    let read = || cluster.json(&["get", "rollouts.argoproj.io", "guarded", "-n", ns]);
    let hash_now =
        || read().map(|o| o["spec"]["template"]["metadata"]["annotations"][HASH].clone());
    let refused = |body: &str, what: &str| {
        let error = ours(body).expect_err(what);
        assert!(
            error.contains("Operation cannot be fulfilled"),
            "{what}: {error}"
        );
        println!("  {what}: {}", error.lines().next().unwrap_or_default());
    };

    step("unchanged since the read: applied");
    eventually("the Rollout created", Duration::from_secs(30), || {
        apply("someone-else", &rollout("h0", None))
    });
    let first = read().expect("the Rollout");
    ours(&rollout("h1", Some(&first))).expect("the object read applies");
    assert_eq!(hash_now(), Some(json!("h1")));

    step("changed since the read: 409, nothing written");
    let second = read().expect("the Rollout");
    cluster.merge_patch(
        "rollouts.argoproj.io",
        "guarded",
        Some(ns),
        json!({"metadata": {"labels": {"edited-by": "someone-else"}}}),
    );
    refused(&rollout("h2", Some(&second)), "changed");
    assert_eq!(hash_now(), Some(json!("h1")));

    step("deleted and created again by someone else since the read: 409, theirs untouched");
    let third = read().expect("the Rollout");
    cluster.kubectl(&["delete", "rollouts.argoproj.io", "guarded", "-n", ns]);
    apply("someone-else", &rollout("theirs", None)).expect("their Rollout");
    refused(&rollout("h3", Some(&third)), "replaced");
    assert_eq!(hash_now(), Some(json!("theirs")));

    step("deleted since the read: 409, nothing created");
    let fourth = read().expect("the Rollout");
    cluster.kubectl(&["delete", "rollouts.argoproj.io", "guarded", "-n", ns]);
    refused(&rollout("h4", Some(&fourth)), "deleted");
    assert_eq!(hash_now(), None, "created from the patch alone");
    let mut version_only: Value =
        serde_json::from_str(&rollout("h4", Some(&fourth))).expect("JSON");
    version_only["metadata"]
        .as_object_mut()
        .expect("metadata")
        .remove("uid");
    ours(&version_only.to_string()).expect("without the uid, the apply creates the object");
    assert_eq!(
        hash_now(),
        Some(json!("h4")),
        "the reason the uid is sent: a resourceVersion alone does not stop a create"
    );
    cluster.kubectl(&["delete", "namespace", ns, "--wait=false"]);
}
