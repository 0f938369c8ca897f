//! Real Kafka for tests/e2e_kafka.rs: the 4.3.1 jars the conformance stage fetches, tools started
//! exactly as a pod starts them (the launcher line of docs/workloads.md), their logged
//! configuration compared with `explain`, a cluster CA and broker certificate made with openssl,
//! Strimzi-shaped user Secrets. The projection of outputs into directories is kubelet.rs.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::{Cluster, repo};

/// The launcher line of docs/workloads.md with `java -cp` in place of `bin/kafka-*.sh` (the jars
/// come from Maven Central, which has no scripts): one argument per line of `tool.args`, no word
/// splitting, no globbing.
pub const LAUNCHER: &str = r#"mapfile -t A < "$DIR/tool.args" && exec java -cp "$KAFKA_CLASSPATH" "$MAIN_CLASS" "${A[@]}""#;

/// The classpath of Kafka 4.3.1: conformance/fetch.sh's jars (kafka-tools, kafka_2.13 and their
/// dependencies) plus MirrorMaker 2's two jars (`fetch.sh mirror`). Both are cached.
pub fn classpath() -> String {
    let fetch = |arg: Option<&str>| {
        let out = Command::new("bash")
            .arg(repo().join("conformance/fetch.sh"))
            .args(arg)
            .output()
            .expect("run conformance/fetch.sh");
        assert!(
            out.status.success(),
            "conformance/fetch.sh {arg:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    };
    format!("{}/*:{}/*", fetch(None), fetch(Some("mirror")))
}

/// The main class `catalogue/tools.yaml` gives a tool (the class the operator's option tables
/// were generated from).
pub fn main_class(tool: &str) -> String {
    let text = std::fs::read_to_string(repo().join("catalogue/tools.yaml")).expect("tools.yaml");
    let mut lines = text
        .lines()
        .skip_while(|l| l.trim() != format!("- name: {tool}"));
    lines
        .find_map(|l| {
            l.trim()
                .strip_prefix("mainClass:")
                .map(|c| c.trim().to_string())
        })
        .unwrap_or_else(|| panic!("no mainClass for {tool} in catalogue/tools.yaml"))
}

/// A Kafka JVM started with [`LAUNCHER`]; stdout and stderr go to files; killed on drop.
pub struct Jvm {
    pub name: String,
    pub child: Child,
    pub out: PathBuf,
    pub err: PathBuf,
}

impl Jvm {
    /// Starts `main_class` with the arguments of `dir/tool.args`; `stdin` is written and closed
    /// (None: no stdin).
    pub fn launch(
        classpath: &str,
        main_class: &str,
        dir: &Path,
        logs: &Path,
        name: &str,
        heap: &str,
        stdin: Option<&str>,
    ) -> Jvm {
        let mut n = 0;
        let (out, err) = loop {
            let out = logs.join(format!("{name}-{n}.out"));
            if !out.exists() {
                break (out, logs.join(format!("{name}-{n}.err")));
            }
            n += 1;
        };
        let mut child = Command::new("bash")
            .args(["-c", LAUNCHER])
            .env("DIR", dir)
            .env("KAFKA_CLASSPATH", classpath)
            .env("MAIN_CLASS", main_class)
            // Small heaps and a quick start: up to five JVMs share two cores here.
            .env(
                "JDK_JAVA_OPTIONS",
                format!("-Xmx{heap} -XX:+UseSerialGC -XX:TieredStopAtLevel=1"),
            )
            .stdin(if stdin.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(std::fs::File::create(&out).expect("stdout file"))
            .stderr(std::fs::File::create(&err).expect("stderr file"))
            .spawn()
            .unwrap_or_else(|e| panic!("start {name}: {e}"));
        if let (Some(text), Some(mut pipe)) = (stdin, child.stdin.take()) {
            pipe.write_all(text.as_bytes()).expect("write stdin");
            // dropped here: EOF
        }
        println!(
            "    started {name} (pid {}, log {})",
            child.id(),
            err.display()
        );
        Jvm {
            name: name.to_string(),
            child,
            out,
            err,
        }
    }

    pub fn stdout(&self) -> String {
        std::fs::read_to_string(&self.out).unwrap_or_default()
    }

    pub fn stderr(&self) -> String {
        std::fs::read_to_string(&self.err).unwrap_or_default()
    }

    /// The last `n` lines of stderr that say ERROR or name an exception (Kafka's own words), else
    /// the last `n` lines.
    pub fn complaint(&self, n: usize) -> String {
        let text = self.stderr();
        let errors: Vec<&str> = text
            .lines()
            .filter(|l| l.contains("ERROR") || l.contains("Exception"))
            .collect();
        let lines: Vec<&str> = if errors.is_empty() {
            text.lines().collect()
        } else {
            errors
        };
        lines[lines.len().saturating_sub(n)..].join("\n")
    }

    pub fn running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// Waits until `probe` holds; panics with Kafka's message when the JVM exits first.
    pub fn wait_until(&mut self, what: &str, timeout: Duration, probe: impl Fn(&Jvm) -> bool) {
        let start = Instant::now();
        while start.elapsed() < timeout {
            if probe(self) {
                return;
            }
            if let Ok(Some(status)) = self.child.try_wait() {
                if probe(self) {
                    return;
                }
                panic!(
                    "{} exited ({status}) before {what}; Kafka said:\n{}",
                    self.name,
                    self.complaint(15)
                );
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        panic!(
            "{} did not {what} within {timeout:?}; last words:\n{}",
            self.name,
            self.complaint(15)
        );
    }

    /// Waits for the exit; its status code (None: killed by a signal), or panics after `timeout`.
    pub fn wait_exit(&mut self, timeout: Duration) -> Option<i32> {
        let start = Instant::now();
        while start.elapsed() < timeout {
            if let Ok(Some(status)) = self.child.try_wait() {
                return status.code();
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        panic!(
            "{} still running after {timeout:?}; last words:\n{}",
            self.name,
            self.complaint(15)
        );
    }

    /// SIGTERM (Kafka's shutdown hook runs), SIGKILL after 30 s.
    pub fn terminate(&mut self) {
        super::terminate(&mut self.child, Duration::from_secs(30));
    }

    /// SIGKILL: a crash.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Jvm {
    fn drop(&mut self) {
        if std::thread::panicking() {
            // The logs outlive the test's temp dir, which a failing test deletes.
            let kept = repo().join("e2e/.run-logs/kafka");
            let file = self.err.file_name().map(PathBuf::from).unwrap_or_default();
            if std::fs::create_dir_all(&kept).is_ok()
                && std::fs::copy(&self.err, kept.join(&file)).is_ok()
            {
                eprintln!(
                    "--- {} log kept: {} ---",
                    self.name,
                    kept.join(&file).display()
                );
            }
        }
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// Every configuration block a Kafka class logged (`<header> values:` then one `\tkey = value`
/// line per key), in order.
pub fn logged_blocks(log: &str, header: &str) -> Vec<BTreeMap<String, String>> {
    let marker = format!("{header} values:");
    let mut blocks = Vec::new();
    let mut lines = log.lines();
    while let Some(line) = lines.next() {
        if !line.contains(&marker) {
            continue;
        }
        let mut block = BTreeMap::new();
        for entry in lines.by_ref() {
            let Some(entry) = entry.strip_prefix('\t') else {
                break;
            };
            if let Some((k, v)) = entry.split_once(" = ") {
                block.insert(k.trim().to_string(), v.trim().to_string());
            } else if let Some(k) = entry.strip_suffix(" =") {
                block.insert(k.trim().to_string(), String::new());
            }
        }
        blocks.push(block);
    }
    blocks
}

/// A cluster CA and a broker certificate for 127.0.0.1/localhost signed by it, made with openssl
/// in `dir`: (ca.crt, tls.crt, tls.key) as files. The key is unencrypted PKCS#8, what Kafka's
/// PEM keystore (`ssl.keystore.key` without `ssl.key.password`) reads.
pub fn make_tls(dir: &Path) -> (PathBuf, PathBuf, PathBuf) {
    std::fs::create_dir_all(dir).expect("tls dir");
    let run = |args: &[&str]| {
        let out = Command::new("openssl")
            .args(args)
            .current_dir(dir)
            .output()
            .expect("run openssl");
        assert!(
            out.status.success(),
            "openssl {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    run(&[
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-keyout",
        "ca.key",
        "-out",
        "ca.crt",
        "-days",
        "2",
        "-subj",
        "/CN=kco-e2e-cluster-ca",
    ]);
    run(&[
        "genpkey",
        "-algorithm",
        "RSA",
        "-pkeyopt",
        "rsa_keygen_bits:2048",
        "-out",
        "tls.key",
    ]);
    run(&[
        "req",
        "-new",
        "-key",
        "tls.key",
        "-subj",
        "/CN=localhost",
        "-out",
        "tls.csr",
    ]);
    std::fs::write(
        dir.join("san.cnf"),
        "subjectAltName=DNS:localhost,IP:127.0.0.1\n",
    )
    .expect("san.cnf");
    run(&[
        "x509",
        "-req",
        "-in",
        "tls.csr",
        "-CA",
        "ca.crt",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-days",
        "2",
        "-extfile",
        "san.cnf",
        "-out",
        "tls.crt",
    ]);
    (dir.join("ca.crt"), dir.join("tls.crt"), dir.join("tls.key"))
}

/// `n` random bytes as lowercase hex (passwords of this run).
pub fn random_hex(n: usize) -> String {
    let mut bytes = vec![0u8; n];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .expect("random bytes");
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A random Kafka cluster id (a `Uuid`: 16 bytes, URL-safe base64 without padding). Like Kafka's
/// `Uuid.randomUuid`, never one that starts with `-`: a command line would read it as an option.
pub fn cluster_id() -> String {
    use base64::Engine as _;
    loop {
        let mut bytes = [0u8; 16];
        std::fs::File::open("/dev/urandom")
            .and_then(|mut f| f.read_exact(&mut bytes))
            .expect("random bytes");
        let id = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes);
        if !id.starts_with('-') {
            return id;
        }
    }
}

/// What comparing `explain`'s rows of one role with a logged configuration block found.
#[derive(Default, Debug)]
pub struct Compared {
    /// keys whose logged value equals explain's
    pub equal: Vec<String>,
    /// keys whose value neither side shows (Secret-sourced, or a PASSWORD Kafka logs `[hidden]`)
    pub hidden: Vec<String>,
    /// keys of no ConfigDef of the class that logged the block (`a.bootstrap.servers`, …)
    pub not_logged: Vec<String>,
}

/// Whether a logged value is the text `want` after Kafka's parsing: lists are logged `[a, b]`,
/// classes `class x.Y`, `acks=all` as `-1` (conformance.py normalises the same way).
pub fn same_value(key: &str, logged: &str, want: &str) -> bool {
    let want = if key == "acks" && want == "all" {
        "-1"
    } else {
        want
    };
    if logged == want {
        return true;
    }
    if let Some(inner) = logged.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
        let logged: Vec<&str> = inner.split(", ").filter(|s| !s.is_empty()).collect();
        let wanted: Vec<&str> = want
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .collect();
        return logged == wanted;
    }
    logged.strip_prefix("class ") == Some(want)
}

/// Compares every row of `explain -o json` for `role` (the keys the config sets, from any layer)
/// with `block`; panics on the first key whose values differ, naming both.
pub fn compare_logged(
    rows: &[serde_json::Value],
    role: &str,
    block: &BTreeMap<String, String>,
    what: &str,
) -> Compared {
    let mut compared = Compared::default();
    for row in rows.iter().filter(|r| r["role"] == role) {
        let (Some(key), Some(value)) = (row["key"].as_str(), row["value"].as_str()) else {
            continue;
        };
        match block.get(key) {
            None => compared.not_logged.push(key.to_string()),
            Some(logged) if value.starts_with("[redacted") || logged == "[hidden]" => {
                compared.hidden.push(key.to_string())
            }
            Some(logged) => {
                assert!(
                    same_value(key, logged, value),
                    "{what}: {role} {key}: explain says {value:?}, Kafka logged {logged:?}"
                );
                compared.equal.push(key.to_string());
            }
        }
    }
    compared
}

/// `kafka-config-operator explain -n NS NAME -o json` on the live cluster (admin kubeconfig).
pub fn explain_live(cluster: &Cluster, namespace: &str, name: &str) -> Vec<serde_json::Value> {
    let out = Command::new(env!("CARGO_BIN_EXE_kafka-config-operator"))
        .args(["explain", "-n", namespace, name, "-o", "json"])
        .env("KUBECONFIG", &cluster.kubeconfig)
        .output()
        .expect("run explain");
    let rows: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "explain {namespace}/{name}: {e}: {}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    rows.into_iter()
        .filter(|r| r["namespace"] == namespace && r["name"] == name)
        .collect()
}

/// `kubectl apply` of a generic Secret whose keys are given as (key, content).
pub fn apply_secret(cluster: &Cluster, ns: &str, name: &str, data: &[(&str, &str)], labels: &str) {
    use base64::Engine as _;
    let encoded: serde_json::Map<String, serde_json::Value> = data
        .iter()
        .map(|(k, v)| {
            (
                k.to_string(),
                base64::engine::general_purpose::STANDARD.encode(v).into(),
            )
        })
        .collect();
    let labels: serde_json::Value = serde_json::from_str(labels).expect("labels json");
    let secret = serde_json::json!({
        "apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": name, "namespace": ns, "labels": labels},
        "data": encoded,
    });
    cluster.apply_yaml(&secret.to_string());
}

/// A Strimzi KafkaUser Secret: `password` and the `sasl.jaas.config` built from it.
pub fn user_secret(cluster: &Cluster, ns: &str, user: &str, password: &str) {
    let jaas = format!(
        "org.apache.kafka.common.security.scram.ScramLoginModule required username=\"{user}\" password=\"{password}\";"
    );
    apply_secret(
        cluster,
        ns,
        user,
        &[("password", password), ("sasl.jaas.config", &jaas)],
        r#"{"strimzi.io/kind": "KafkaUser", "strimzi.io/cluster": "a"}"#,
    );
}

/// Output lines of a console consumer: the records it printed.
pub fn records(jvm: &Jvm) -> Vec<String> {
    jvm.stdout().lines().map(String::from).collect()
}

pub fn expected(range: std::ops::Range<u32>) -> Vec<String> {
    range.map(|i| format!("order-{i:04}")).collect()
}

/// The single value of `key` in every `header` block `jvm` logged (each block must agree).
pub fn logged_value(jvm: &Jvm, header: &str, key: &str) -> String {
    let blocks = logged_blocks(&jvm.stderr(), header);
    let values: Vec<&String> = blocks.iter().filter_map(|b| b.get(key)).collect();
    assert!(
        !values.is_empty(),
        "{}: no {header} block with {key}",
        jvm.name
    );
    assert!(
        values.iter().all(|v| *v == values[0]),
        "{}: {header} blocks disagree on {key}: {values:?}",
        jvm.name
    );
    values[0].clone()
}

/// `kafka-storage format --standalone` of a combined node's `config`, with SCRAM-SHA-512
/// credentials for `users` (name, password). Panics with Kafka's message when it refuses.
pub fn format_storage(classpath: &str, config: &Path, users: &[(&str, &str)]) {
    let mut command = Command::new("java");
    command
        .args(["-cp", classpath, "kafka.tools.StorageTool", "format"])
        .arg("--standalone")
        .arg(format!("--cluster-id={}", cluster_id()))
        .arg("-c")
        .arg(config);
    for (name, password) in users {
        command
            .arg("--add-scram")
            .arg(format!("SCRAM-SHA-512=[name={name},password={password}]"));
    }
    let out = command
        .env("JDK_JAVA_OPTIONS", "-Xmx256m -XX:TieredStopAtLevel=1")
        .output()
        .expect("run kafka-storage format");
    // Its output echoes the SCRAM records: only the verdict is printed here.
    assert!(
        out.status.success(),
        "kafka-storage format refused {}: {}",
        config.display(),
        [&out.stdout, &out.stderr]
            .iter()
            .flat_map(|o| String::from_utf8_lossy(o)
                .into_owned()
                .lines()
                .map(String::from)
                .collect::<Vec<_>>())
            .filter(|l| !l.starts_with('\t') && !l.contains("Bootstrap metadata"))
            .collect::<Vec<_>>()
            .join("\n")
    );
}

/// MirrorMaker 2's own clients in its `log` (client ids `src->tgt|Mirror…` and
/// `connector-producer-Mirror…`; the Connect worker's internal clients follow the worker
/// config), each compared with `explain`'s `mirror-maker/<cluster>/<role>` rows for the cluster
/// its `bootstrap.servers` names (`ports`: cluster -> port); returns `scope key=value` of every
/// value found equal. Panics on a difference.
pub fn mirror_clients_match(
    rows: &[serde_json::Value],
    log: &str,
    ports: &BTreeMap<&str, String>,
) -> Vec<String> {
    let mut compared = Vec::new();
    for (role, header) in [
        ("producer", "ProducerConfig"),
        ("consumer", "ConsumerConfig"),
        ("admin", "AdminClientConfig"),
    ] {
        let blocks: Vec<_> = logged_blocks(log, header)
            .into_iter()
            .filter(|b| {
                let id = b.get("client.id").map(String::as_str).unwrap_or("");
                id.contains("|Mirror") || id.starts_with("connector-producer-Mirror")
            })
            .collect();
        for (cluster, port) in ports {
            let servers = format!("[127.0.0.1:{port}]");
            let scope = format!("mirror-maker/{cluster}/{role}");
            let values: BTreeMap<&str, &str> = rows
                .iter()
                .filter(|r| r["role"] == scope.as_str())
                .filter_map(|r| Some((r["key"].as_str()?, r["value"].as_str()?)))
                .collect();
            for block in blocks
                .iter()
                .filter(|b| b.get("bootstrap.servers") == Some(&servers))
            {
                let what = format!("MirrorMaker client {}", block["client.id"]);
                let c = compare_logged(rows, &scope, block, &what);
                compared.extend(
                    c.equal
                        .iter()
                        .map(|k| format!("{scope} {k}={}", values.get(k.as_str()).unwrap_or(&"?"))),
                );
            }
        }
    }
    compared
}
