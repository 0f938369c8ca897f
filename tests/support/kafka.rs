//! Real Kafka for tests/e2e_kafka.rs: the 4.3.1 jars the conformance stage fetches, tools started
//! exactly as a pod starts them (the launcher line of docs/workloads.md), a "kubelet" projecting
//! live output ConfigMaps and Secrets into directories the way the kubelet's atomic writer does,
//! and a cluster CA and broker certificate made with openssl.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
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

/// kubectl without the test's temp dir, so that the kubelet thread can own one.
#[derive(Clone)]
pub struct Kube {
    kubeconfig: PathBuf,
    kubectl: PathBuf,
}

impl Kube {
    pub fn of(cluster: &Cluster) -> Kube {
        Kube {
            kubeconfig: cluster.kubeconfig.clone(),
            kubectl: cluster.kubectl.clone(),
        }
    }

    fn get(&self, kind: &str, namespace: &str, name: &str) -> Option<serde_json::Value> {
        let out = Command::new(&self.kubectl)
            .arg("--kubeconfig")
            .arg(&self.kubeconfig)
            .args(["get", kind, name, "-n", namespace, "-o", "json"])
            .output()
            .ok()?;
        if !out.status.success() {
            return None;
        }
        serde_json::from_slice(&out.stdout).ok()
    }
}

/// One volume: a ConfigMap or Secret projected into `dir`.
#[derive(Clone, Debug)]
pub struct Volume {
    pub kind: &'static str,
    pub namespace: String,
    pub name: String,
    pub dir: PathBuf,
}

/// The kubelet's atomic writer, reduced to what a reader can see: the payload is written to a new
/// hidden directory `..<timestamp>`, a `..data_tmp` symlink to it is renamed over `..data` (one
/// atomic step: a reader sees the old set of files or the new one, never a mix), each key is a
/// symlink `key -> ..data/key`, keys that disappeared are removed, then the old directory.
pub fn project(dir: &Path, payload: &BTreeMap<String, Vec<u8>>) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let old = std::fs::read_link(dir.join("..data")).ok();
    let stamp = format!(
        "..{}",
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default()
    );
    let fresh = dir.join(&stamp);
    std::fs::create_dir(&fresh)?;
    for (key, bytes) in payload {
        std::fs::write(fresh.join(key), bytes)?;
    }
    let tmp = dir.join("..data_tmp");
    let _ = std::fs::remove_file(&tmp);
    symlink(&stamp, &tmp)?;
    std::fs::rename(&tmp, dir.join("..data"))?;
    for key in payload.keys() {
        let link = dir.join(key);
        if std::fs::symlink_metadata(&link).is_err() {
            symlink(Path::new("..data").join(key), &link)?;
        }
    }
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let ours = std::fs::read_link(entry.path())
            .map(|t| t.starts_with("..data"))
            .unwrap_or(false);
        if ours && !payload.contains_key(&name) {
            std::fs::remove_file(entry.path())?;
        }
    }
    if let Some(old) = old {
        std::fs::remove_dir_all(dir.join(old))?;
    }
    Ok(())
}

/// The payload of a ConfigMap (`data`) or Secret (`data`, base64) as the API returns it.
fn payload(kind: &str, object: &serde_json::Value) -> BTreeMap<String, Vec<u8>> {
    use base64::Engine as _;
    let data = object["data"].as_object().cloned().unwrap_or_default();
    data.into_iter()
        .filter_map(|(k, v)| {
            let text = v.as_str()?;
            let bytes = if kind == "secret" {
                base64::engine::general_purpose::STANDARD
                    .decode(text)
                    .ok()?
            } else {
                text.as_bytes().to_vec()
            };
            Some((k, bytes))
        })
        .collect()
}

/// Projects its volumes, and re-projects each one whose resourceVersion changed, every 300 ms
/// (the kubelet's sync loop, minus its delay). Stops on drop.
pub struct Kubelet {
    volumes: Arc<Mutex<Vec<(Volume, String)>>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Kubelet {
    pub fn start(kube: Kube) -> Kubelet {
        let volumes: Arc<Mutex<Vec<(Volume, String)>>> = Arc::default();
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let volumes = Arc::clone(&volumes);
            let stop = Arc::clone(&stop);
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    let snapshot: Vec<Volume> = match volumes.lock() {
                        Ok(v) => v.iter().map(|(v, _)| v.clone()).collect(),
                        Err(_) => return,
                    };
                    for volume in snapshot {
                        Kubelet::sync(&kube, &volumes, &volume);
                    }
                    std::thread::sleep(Duration::from_millis(300));
                }
            })
        };
        Kubelet {
            volumes,
            stop,
            thread: Some(thread),
        }
    }

    fn sync(kube: &Kube, volumes: &Mutex<Vec<(Volume, String)>>, volume: &Volume) {
        let Some(object) = kube.get(volume.kind, &volume.namespace, &volume.name) else {
            return;
        };
        let version = object["metadata"]["resourceVersion"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let seen = volumes.lock().ok().and_then(|v| {
            v.iter()
                .find(|(v, _)| v.dir == volume.dir)
                .map(|(_, r)| r.clone())
        });
        if seen.as_deref() == Some(version.as_str()) {
            return;
        }
        if let Err(e) = project(&volume.dir, &payload(volume.kind, &object)) {
            eprintln!("kubelet: projecting {volume:?}: {e}");
            return;
        }
        if let Ok(mut v) = volumes.lock() {
            for (v, r) in v.iter_mut() {
                if v.dir == volume.dir {
                    *r = version.clone();
                }
            }
        }
    }

    /// Mounts a volume (idempotent per directory).
    pub fn mount(&self, volume: Volume) {
        if let Ok(mut v) = self.volumes.lock()
            && !v.iter().any(|(m, _)| m.dir == volume.dir)
        {
            v.push((volume, String::new()));
        }
    }

    /// The resourceVersion last projected into `dir` ("" before the first projection).
    pub fn projected_version(&self, dir: &Path) -> String {
        self.volumes
            .lock()
            .ok()
            .and_then(|v| v.iter().find(|(m, _)| m.dir == dir).map(|(_, r)| r.clone()))
            .unwrap_or_default()
    }
}

impl Drop for Kubelet {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
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
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(30) {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        self.kill();
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

/// A random Kafka cluster id (a `Uuid`: 16 bytes, URL-safe base64 without padding).
pub fn cluster_id() -> String {
    use base64::Engine as _;
    let mut bytes = [0u8; 16];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .expect("random bytes");
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
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
