//! Real Kafka end to end (issue 28): two single-node KRaft clusters started from the
//! `server.properties` the operator renders on the real control plane, console clients and
//! MirrorMaker 2 configured only through KafkaToolConfigs, and a GlobalClientDefaults change rolled
//! through to a relaunched client and a restarted broker.
//!
//! Everything runs as a pod would run it: the operator (as its ServiceAccount) renders the
//! outputs; a "kubelet" (support/kubelet.rs) projects each output ConfigMap, and each Secret of
//! `status.output.secretMounts`, into a directory with the atomic writer's `..data` symlink swap and
//! re-projects on change; every Kafka JVM is started with the launcher line of docs/workloads.md
//! (`mapfile -t A < "$DIR/tool.args" && exec …`), `java -cp` with the 4.3.1 jars of
//! conformance/fetch.sh standing in for `bin/*.sh`. No containers.
//!
//! Needs `KCO_E2E_KUBECONFIG` (e2e/controlplane/up.sh), Java 17+, openssl and Maven (first run).
//! Run: `KCO_E2E_KUBECONFIG=e2e/.run/kubeconfig cargo test --test e2e_kafka -- --include-ignored --nocapture`

mod support;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use support::kafka::{
    Jvm, apply_secret, compare_logged, expected, explain_live, format_storage, logged_blocks,
    logged_value, main_class, mirror_clients_match, records, user_secret,
};
use support::kubelet::{Kube, Kubelet, Volume, mount, settled, wait_projected, wait_settled};
use support::*;

const A: &str = "kco-kafka-a";
const B: &str = "kco-kafka-b";
const APPS: &str = "kco-kafka-apps";
const GCD_BROKERS: &str = "kco-e2e-kafka-brokers";
const GCD_CONSUMERS: &str = "kco-e2e-kafka-consumers";
const GCD_PROTECTED: &str = "kco-e2e-kafka-protected";

/// What the test replaces in e2e/testdata/kafka/*.yaml.
struct World {
    vars: BTreeMap<&'static str, String>,
}

impl World {
    fn text(&self, file: &str) -> String {
        let path = repo().join("e2e/testdata/kafka").join(file);
        let mut text = std::fs::read_to_string(&path).expect("testdata");
        for (k, v) in &self.vars {
            text = text.replace(&format!("@@{k}@@"), v);
        }
        assert!(!text.contains("@@"), "{file}: a placeholder is left");
        text
    }

    fn mount(&self, name: &str) -> PathBuf {
        PathBuf::from(&self.vars["MOUNTS"]).join(name)
    }
}

#[test]
#[ignore = "needs KCO_E2E_KUBECONFIG"]
fn kafka_end_to_end() {
    let started = Instant::now();
    let cluster = Cluster::from_env();
    let classpath = support::kafka::classpath();
    step("installing the CRDs and RBAC; starting from clean namespaces");
    cluster.install_crds_and_rbac();
    for ns in [A, B, APPS] {
        cluster.fresh_namespace(ns);
    }
    for gcd in [GCD_BROKERS, GCD_CONSUMERS, GCD_PROTECTED] {
        let _ = cluster.run(
            &["delete", "globalclientdefaults", gcd, "--ignore-not-found"],
            None,
        );
    }
    // A short path under /tmp: it is in every rendered file (mount paths, log.dirs).
    let root = tempfile::Builder::new()
        .prefix("kco-kafka-")
        .tempdir_in("/tmp")
        .expect("temp dir");
    let logs = root.path().join("logs");
    std::fs::create_dir_all(&logs).expect("logs dir");
    let mut world = World {
        vars: BTreeMap::new(),
    };
    for (k, v) in [
        ("A_PORT", free_port().to_string()),
        ("A_CONTROLLER_PORT", free_port().to_string()),
        ("B_PORT", free_port().to_string()),
        ("B_CONTROLLER_PORT", free_port().to_string()),
        ("MOUNTS", root.path().join("mnt").display().to_string()),
        ("A_DATA", root.path().join("data-a").display().to_string()),
        ("B_DATA", root.path().join("data-b").display().to_string()),
        ("MESSAGE_MAX_BYTES", "2000000".into()),
        ("MAX_POLL_RECORDS", "50".into()),
        ("CLIENT_RACK", "rack-1".into()),
    ] {
        world.vars.insert(k, v);
    }

    step("cluster CA and broker certificate (openssl); SCRAM passwords; Secrets");
    let (ca, crt, key) = support::kafka::make_tls(&root.path().join("tls"));
    let read = |p: &PathBuf| std::fs::read_to_string(p).expect("tls file");
    let (ca, crt, key) = (read(&ca), read(&crt), read(&key));
    let admin_password = support::kafka::random_hex(16);
    let app_password = support::kafka::random_hex(16);
    cluster.apply_yaml(&world.text("brokers.yaml"));
    cluster.apply_yaml(&world.text("clients.yaml"));
    for ns in [A, B] {
        apply_secret(&cluster, ns, "cluster-ca-cert", &[("ca.crt", &ca)], "{}");
        apply_secret(
            &cluster,
            ns,
            "broker-tls",
            &[("tls.crt", &crt), ("tls.key", &key)],
            "{}",
        );
        apply_secret(
            &cluster,
            ns,
            "broker-admin",
            &[("password", &admin_password)],
            "{}",
        );
    }
    apply_secret(&cluster, APPS, "cluster-ca-cert", &[("ca.crt", &ca)], "{}");
    user_secret(&cluster, APPS, "admin", &admin_password);
    user_secret(&cluster, APPS, "app", &app_password);

    step("the operator renders every config (as its ServiceAccount)");
    let sa = cluster.impersonating_kubeconfig(OPERATOR_NS, SA);
    let mut operator = Operator::spawn(&cluster, &sa, "kafka-e2e", None, "info,kube=warn");
    operator
        .wait_ready(Duration::from_secs(30))
        .unwrap_or_else(|e| panic!("{e}\n{}", operator.log_text()));
    let kubelet = Kubelet::start(Kube::of(&cluster));

    step("brokers: kafka-storage format --standalone, then kafka.Kafka from the projected files");
    let mut brokers = Vec::new();
    for (ns, name) in [(A, "broker-a"), (B, "broker-b")] {
        let dir = world.mount(name);
        mount(&kubelet, &cluster, ns, "broker", &dir);
        format_storage(
            &classpath,
            &dir.join("broker.properties"),
            &[("admin", &admin_password), ("app", &app_password)],
        );
        let broker = Jvm::launch(
            &classpath,
            &main_class("kafka-server"),
            &dir,
            &logs,
            name,
            "512m",
            None,
        );
        brokers.push(broker);
    }
    for broker in &mut brokers {
        broker.wait_until("start", Duration::from_secs(120), |j| {
            j.stderr().contains("Kafka Server started")
        });
    }
    println!(
        "    both brokers up from the operator's server.properties ({:?} so far)",
        started.elapsed()
    );
    for (broker, ns) in brokers.iter().zip([A, B]) {
        let rows = explain_live(&cluster, ns, "broker");
        let blocks = logged_blocks(&broker.stderr(), "KafkaConfig");
        assert!(!blocks.is_empty(), "{} logged no KafkaConfig", broker.name);
        for (n, block) in blocks.iter().enumerate() {
            let c = compare_logged(&rows, "broker", block, &broker.name);
            assert!(c.equal.iter().any(|k| k == "message.max.bytes"), "{c:?}");
            if n > 0 {
                continue;
            }
            println!(
                "    explain = {}'s KafkaConfig ({} blocks): {} keys equal, {} hidden (Secret-sourced), not logged: {:?}",
                broker.name,
                blocks.len(),
                c.equal.len(),
                c.hidden.len(),
                c.not_logged
            );
        }
    }

    flow(
        &cluster,
        &world,
        &kubelet,
        &classpath,
        &logs,
        &mut brokers,
        &app_password,
    );
    for broker in &mut brokers {
        broker.terminate();
    }
    drop(kubelet);
    operator.child.kill().ok();
    for ns in [A, B, APPS] {
        let _ = cluster.run(&["delete", "namespace", ns, "--wait=false"], None);
    }
    for gcd in [GCD_BROKERS, GCD_CONSUMERS, GCD_PROTECTED] {
        let _ = cluster.run(
            &["delete", "globalclientdefaults", gcd, "--ignore-not-found"],
            None,
        );
    }
    println!("e2e_kafka: done in {:?}", started.elapsed());
}

/// The tools of the apps namespace, each with its projected directory.
struct Apps<'a> {
    cluster: &'a Cluster,
    world: &'a World,
    kubelet: &'a Kubelet,
    classpath: &'a str,
    logs: &'a Path,
    volumes: BTreeMap<&'static str, Vec<Volume>>,
}

impl Apps<'_> {
    fn launch(&self, config: &str, tool: &str, stdin: Option<&str>) -> Jvm {
        Jvm::launch(
            self.classpath,
            &main_class(tool),
            &self.world.mount(config),
            self.logs,
            config,
            "256m",
            stdin,
        )
    }

    /// The console producer sends `range`'s records, one per line of stdin, and exits 0.
    fn produce(&self, range: std::ops::Range<u32>) {
        let input = expected(range).join("\n") + "\n";
        let mut producer = self.launch("orders-producer", "kafka-console-producer", Some(&input));
        let code = producer.wait_exit(Duration::from_secs(90));
        assert_eq!(
            code,
            Some(0),
            "the console producer failed: {}",
            producer.complaint(15)
        );
    }

    /// `kafka-consumer-groups --describe`: the committed offset of orders-app on orders-0.
    fn committed_offset(&self) -> Result<u64, String> {
        let mut describe = self.launch("orders-groups", "kafka-consumer-groups", None);
        describe.wait_exit(Duration::from_secs(60));
        let out = describe.stdout();
        out.lines()
            .map(|l| l.split_whitespace().collect::<Vec<_>>())
            .find(|c| c.len() > 3 && c[0] == "orders-app" && c[1] == "orders" && c[2] == "0")
            .and_then(|c| c[3].parse().ok())
            .ok_or_else(|| format!("no committed offset in:\n{out}{}", describe.complaint(5)))
    }

    /// Waits until the kubelet shows the current objects of `config`'s volumes.
    fn synced(&self, config: &str) {
        wait_projected(self.kubelet, self.cluster, &self.volumes[config]);
    }
}

fn flow(
    cluster: &Cluster,
    world: &World,
    kubelet: &Kubelet,
    classpath: &str,
    logs: &Path,
    brokers: &mut [Jvm],
    app_password: &str,
) {
    let mut apps = Apps {
        cluster,
        world,
        kubelet,
        classpath,
        logs,
        volumes: BTreeMap::new(),
    };
    for config in [
        "orders-producer",
        "orders-consumer",
        "orders-groups",
        "broker-configs",
        "mirror",
        "mirrored-consumer",
    ] {
        let volumes = mount(kubelet, cluster, APPS, config, &world.mount(config));
        apps.volumes.insert(config, volumes);
    }

    step("console producer (SASL_SSL, SCRAM from the user Secret): 100 records to a");
    apps.produce(0..100);

    step("console consumer: exactly those 100, in order; its group comes from the config");
    let mut consumer = apps.launch("orders-consumer", "kafka-console-consumer", None);
    consumer.wait_until("print 100 records", Duration::from_secs(90), |j| {
        records(j).len() >= 100
    });
    assert_eq!(records(&consumer), expected(0..100));
    for (key, value) in [
        ("group.id", "orders-app"),
        ("max.poll.records", "50"),
        ("client.rack", "rack-1"),
    ] {
        assert_eq!(logged_value(&consumer, "ConsumerConfig", key), value);
    }

    step("kafka-consumer-groups --describe (rendered admin config) sees the group at offset 100");
    eventually(
        "the group's commit",
        Duration::from_secs(60),
        || match apps.committed_offset()? {
            100 => Ok(()),
            n => Err(format!("committed {n}")),
        },
    );

    step("the consumer is killed mid-stream (SIGKILL); restarted, it resumes from offset 100");
    assert!(consumer.running(), "the consumer should still be polling");
    consumer.kill();
    apps.produce(100..150);
    let mut resumed = apps.launch("orders-consumer", "kafka-console-consumer", None);
    resumed.wait_until("print 50 records", Duration::from_secs(90), |j| {
        records(j).len() >= 50
    });
    // a moment for anything beyond the 50 (a restart from 0 would print 150)
    std::thread::sleep(Duration::from_secs(2));
    assert_eq!(records(&resumed), expected(100..150));
    resumed.kill();

    step("negative control: a wrong password in the user Secret fails authentication");
    let (good_hash, _) = wait_settled(cluster, APPS, "orders-consumer");
    let wrong = format!("wrong-{}", support::kafka::random_hex(8));
    user_secret(cluster, APPS, "app", &wrong);
    eventually(
        "the consumer's hash to change",
        Duration::from_secs(30),
        || {
            let (hash, _) = settled(cluster, APPS, "orders-consumer")?;
            (hash != good_hash)
                .then_some(())
                .ok_or("same hash".to_string())
        },
    );
    apps.synced("orders-consumer");
    let projected = world.mount("orders-consumer").join("secrets/app/password");
    assert_eq!(std::fs::read_to_string(&projected).ok(), Some(wrong));
    let mut denied = apps.launch("orders-consumer", "kafka-console-consumer", None);
    denied.wait_until("fail to authenticate", Duration::from_secs(60), |j| {
        j.stderr().contains("SaslAuthenticationException")
    });
    denied.kill();
    assert!(
        records(&denied).is_empty(),
        "a record was read with a wrong password"
    );
    user_secret(cluster, APPS, "app", app_password);
    eventually(
        "the consumer's hash to return",
        Duration::from_secs(30),
        || {
            let (hash, _) = settled(cluster, APPS, "orders-consumer")?;
            (hash == good_hash)
                .then_some(())
                .ok_or("other hash".to_string())
        },
    );
    // every tool that mounts the user Secret, not only the consumer, sees the right one again
    for config in apps.volumes.keys() {
        apps.synced(config);
    }

    mirror_maker(&apps);
    policy_change(&apps, brokers);
}

/// MirrorMaker 2 replicates orders from a to b, and its clients log the per-cluster values
/// `explain` reports as effective (seed 003: `{cluster}.{role}.k` beats `{role}.override.k`).
fn mirror_maker(apps: &Apps) {
    step("MirrorMaker 2 (connect-mirror-maker) replicates a's orders to b's a.orders");
    let mut mm = Jvm::launch(
        apps.classpath,
        &main_class("connect-mirror-maker"),
        &apps.world.mount("mirror"),
        apps.logs,
        "mirror",
        "512m",
        None,
    );
    let mut mirrored = apps.launch("mirrored-consumer", "kafka-console-consumer", None);
    mirrored.wait_until(
        "receive 150 mirrored records",
        Duration::from_secs(180),
        |j| records(j).len() >= 150,
    );
    std::thread::sleep(Duration::from_secs(1));
    assert_eq!(records(&mirrored), expected(0..150));
    mirrored.kill();
    assert!(mm.running(), "MirrorMaker 2 exited: {}", mm.complaint(15));

    let rows = explain_live(apps.cluster, APPS, "mirror");
    let log = mm.stderr();
    // MirrorMakerConfig: the top-level keys (per-cluster keys are no key of its ConfigDef)
    let top = logged_blocks(&log, "MirrorMakerConfig");
    assert!(!top.is_empty(), "MirrorMaker 2 logged no MirrorMakerConfig");
    for block in &top {
        let c = compare_logged(&rows, "mirror-maker", block, "MirrorMakerConfig");
        println!(
            "    explain = MirrorMakerConfig: {} keys equal, {} hidden, {} of no ConfigDef",
            c.equal.len(),
            c.hidden.len(),
            c.not_logged.len()
        );
        assert!(c.equal.iter().any(|k| k == "clusters"), "{c:?}");
    }
    let ports = BTreeMap::from([
        ("a", apps.world.vars["A_PORT"].clone()),
        ("b", apps.world.vars["B_PORT"].clone()),
    ]);
    let mut compared = mirror_clients_match(&rows, &log, &ports);
    compared.sort();
    compared.dedup();
    println!(
        "    explain = MirrorMaker's clients ({} values): {}",
        compared.len(),
        compared.join(", ")
    );
    for must in [
        "mirror-maker/b/producer linger.ms=13",
        "mirror-maker/a/producer linger.ms=7",
        "mirror-maker/a/consumer max.poll.records=123",
        "mirror-maker/a/consumer fetch.min.bytes=2",
        "mirror-maker/a/admin request.timeout.ms=41000",
    ] {
        assert!(
            compared.iter().any(|c| c == must),
            "{must} was not compared"
        );
    }
    mm.terminate();
}

/// A GlobalClientDefaults edit rolls through: new hashes, re-projected files, a relaunched
/// consumer and a restarted broker with the new values; then a protected key is refused.
fn policy_change(apps: &Apps, brokers: &mut [Jvm]) {
    let cluster = apps.cluster;
    step(
        "GlobalClientDefaults edit: consumers' max.poll.records 50 -> 77, client.rack -> rack-2; brokers' message.max.bytes -> 3000000",
    );
    let (consumer_hash, _) = wait_settled(cluster, APPS, "orders-consumer");
    let (broker_hash, _) = wait_settled(cluster, A, "broker");
    cluster.merge_patch(
        "globalclientdefaults",
        GCD_CONSUMERS,
        None,
        serde_json::json!({"spec": {"enforced": {"consumer": {"max.poll.records": "77", "client.rack": "rack-2"}}}}),
    );
    cluster.merge_patch(
        "globalclientdefaults",
        GCD_BROKERS,
        None,
        serde_json::json!({"spec": {"enforced": {"broker": {"message.max.bytes": "3000000"}}}}),
    );
    for (ns, name, old) in [
        (APPS, "orders-consumer", &consumer_hash),
        (A, "broker", &broker_hash),
    ] {
        eventually(
            &format!("{ns}/{name} re-rendered"),
            Duration::from_secs(30),
            || {
                let (hash, _) = settled(cluster, ns, name)?;
                (hash != *old).then_some(()).ok_or("same hash".to_string())
            },
        );
    }
    apps.synced("orders-consumer");
    let broker_dir = apps.world.mount("broker-a");
    let broker_output = Volume {
        kind: "configmap",
        namespace: A.into(),
        name: "broker-kafka".into(),
        dir: broker_dir.clone(),
    };
    wait_projected(apps.kubelet, cluster, &[broker_output]);
    let server_properties =
        std::fs::read_to_string(broker_dir.join("broker.properties")).expect("broker.properties");
    assert!(
        server_properties
            .lines()
            .any(|l| l == "message.max.bytes=3000000"),
        "the projected server.properties lacks the new value:\n{server_properties}"
    );

    step("the relaunched consumer logs the new values");
    let mut relaunched = apps.launch("orders-consumer", "kafka-console-consumer", None);
    relaunched.wait_until("log its config", Duration::from_secs(60), |j| {
        !logged_blocks(&j.stderr(), "ConsumerConfig").is_empty()
    });
    assert_eq!(
        logged_value(&relaunched, "ConsumerConfig", "max.poll.records"),
        "77"
    );
    assert_eq!(
        logged_value(&relaunched, "ConsumerConfig", "client.rack"),
        "rack-2"
    );
    relaunched.kill();

    step("broker a restarted from the new server.properties reports it (STATIC_BROKER_CONFIG)");
    brokers[0].terminate();
    let mut restarted = Jvm::launch(
        apps.classpath,
        &main_class("kafka-server"),
        &broker_dir,
        apps.logs,
        "broker-a",
        "512m",
        None,
    );
    restarted.wait_until("start", Duration::from_secs(120), |j| {
        j.stderr().contains("Kafka Server started")
    });
    brokers[0] = restarted;
    let described = eventually(
        "kafka-configs --describe --all",
        Duration::from_secs(60),
        || {
            let mut tool = apps.launch("broker-configs", "kafka-configs", None);
            tool.wait_exit(Duration::from_secs(60));
            let out = tool.stdout();
            out.lines()
                .find(|l| l.trim_start().starts_with("message.max.bytes="))
                .map(|l| l.trim().to_string())
                .ok_or_else(|| format!("no message.max.bytes in:\n{out}{}", tool.complaint(5)))
        },
    );
    assert!(
        described.starts_with("message.max.bytes=3000000 ")
            && described.contains("STATIC_BROKER_CONFIG:message.max.bytes=3000000"),
        "kafka-configs says: {described}"
    );

    step("an enforced protected key (node.id) is refused; the running broker is untouched");
    let (hash, _) = wait_settled(cluster, A, "broker");
    let pid = brokers[0].child.id();
    cluster.apply_yaml(&format!(
        r#"{{"apiVersion": "kafkaconfig.dev/v1alpha1", "kind": "GlobalClientDefaults",
            "metadata": {{"name": "{GCD_PROTECTED}"}},
            "spec": {{"selector": {{"namespaceSelector": {{"matchLabels": {{"kco-e2e-kafka-cluster": "true"}}}},
                                   "tools": ["kafka-server"]}},
                     "enforced": {{"broker": {{"node.id": "7"}}}}}}}}"#
    ));
    let refusal = eventually(
        "the GlobalClientDefaults refused",
        Duration::from_secs(30),
        || {
            let gcd = cluster
                .json(&["get", "globalclientdefaults", GCD_PROTECTED])
                .ok_or("not found")?;
            let valid = condition(&gcd, "Valid").ok_or("no Valid condition")?;
            (valid["status"] == "False")
                .then(|| format!("{} {}", valid["reason"], valid["message"]))
                .ok_or(format!("Valid={}", valid["status"]))
        },
    );
    println!("    refused: {refusal}");
    assert!(refusal.contains("LocalOnlyKey"), "{refusal}");
    let config = eventually(
        "the broker config to notice",
        Duration::from_secs(30),
        || {
            let config = cluster
                .json(&["get", "kafkatoolconfig", "broker", "-n", A])
                .ok_or("not found")?;
            let text = config["status"].to_string();
            text.contains("GlobalDefaultsInvalid")
                .then_some(config)
                .ok_or("no GlobalDefaultsInvalid yet".to_string())
        },
    );
    let output = cluster
        .json(&["get", "configmap", "broker-kafka", "-n", A])
        .expect("broker output");
    assert_eq!(
        annotation(&output, "/metadata/annotations").as_deref(),
        Some(hash.as_str()),
        "the broker's output changed: {}",
        config["status"]
    );
    std::thread::sleep(Duration::from_secs(2));
    let now = std::fs::read_to_string(broker_dir.join("broker.properties")).expect("read");
    assert_eq!(
        now, server_properties,
        "the projected server.properties changed"
    );
    assert!(
        brokers[0].running() && brokers[0].child.id() == pid,
        "broker a stopped"
    );
    cluster.kubectl(&["delete", "globalclientdefaults", GCD_PROTECTED]);
}
