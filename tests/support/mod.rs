//! Shared harness for the end-to-end tests on the real control plane (e2e/controlplane/up.sh):
//! kubectl as admin, impersonating kubeconfigs, the operator as a child process with its metrics,
//! and polling helpers. Each e2e test file does `mod support;`.
#![allow(dead_code)] // each test binary uses a different subset

pub mod audit;
pub mod kafka;
pub mod kubelet;

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub mod managed_fields;

pub const NS: &str = "kco-e2e";
pub const OPERATOR_NS: &str = "kafka-config-operator";
pub const SA: &str = "kafka-config-operator";
/// The user the operator's requests are made as (an impersonating kubeconfig of `SA`).
pub const SA_USER: &str = "system:serviceaccount:kafka-config-operator:kafka-config-operator";
pub const LEASE: &str = "kco-e2e-operator";
pub const HASH: &str = "kafkaconfig.dev/config-hash";
/// The content-hash key Secret every operator of these tests shares (in [`OPERATOR_NS`]: each is
/// started with `--lease-namespace` there, also without leader election).
pub const HASH_KEY_SECRET: &str = "kafka-config-operator-hash-key";

pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

pub fn step(message: &str) {
    println!("==> {message}");
}

pub struct Cluster {
    pub kubeconfig: PathBuf,
    pub kubectl: PathBuf,
    pub work: tempfile::TempDir,
}

impl Cluster {
    /// The cluster of `KCO_E2E_KUBECONFIG`. The e2e tests are `#[ignore]`d, so only a run that
    /// asks for them (`--include-ignored`, scripts/test.sh) gets here; it panics when the variable
    /// is unset or empty, so such a run can never pass by testing nothing.
    pub fn from_env() -> Cluster {
        let kubeconfig = std::env::var_os("KCO_E2E_KUBECONFIG")
            .filter(|value| !value.is_empty())
            .map(PathBuf::from)
            .expect(
                "KCO_E2E_KUBECONFIG is not set: this test needs a running control plane \
             (bash e2e/controlplane/up.sh, then KCO_E2E_KUBECONFIG=e2e/.run/kubeconfig)",
            );
        assert!(
            kubeconfig.exists(),
            "KCO_E2E_KUBECONFIG={} does not exist",
            kubeconfig.display()
        );
        let kubectl = std::env::var_os("KCO_E2E_KUBECTL")
            .map(PathBuf::from)
            .unwrap_or_else(|| repo().join("e2e/.bin/kubectl"));
        Cluster {
            kubeconfig,
            kubectl,
            work: tempfile::tempdir().expect("temp dir"),
        }
    }

    pub fn run(&self, args: &[&str], stdin: Option<&str>) -> Result<String, String> {
        let mut child = Command::new(&self.kubectl)
            .arg("--kubeconfig")
            .arg(&self.kubeconfig)
            .args(args)
            .current_dir(repo())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot run {}: {e}", self.kubectl.display()));
        if let Some(input) = stdin {
            child
                .stdin
                .take()
                .expect("stdin")
                .write_all(input.as_bytes())
                .expect("write stdin");
        }
        drop(child.stdin.take());
        let out = child.wait_with_output().expect("kubectl output");
        if out.status.success() {
            Ok(String::from_utf8_lossy(&out.stdout).into_owned())
        } else {
            Err(format!(
                "kubectl {}: {}",
                args.join(" "),
                String::from_utf8_lossy(&out.stderr).trim()
            ))
        }
    }

    pub fn kubectl(&self, args: &[&str]) -> String {
        self.run(args, None).unwrap_or_else(|e| panic!("{e}"))
    }

    pub fn json(&self, args: &[&str]) -> Option<serde_json::Value> {
        let mut full = args.to_vec();
        full.extend(["-o", "json"]);
        self.run(&full, None)
            .ok()
            .and_then(|s| serde_json::from_str(&s).ok())
    }

    pub fn merge_patch(
        &self,
        kind: &str,
        name: &str,
        namespace: Option<&str>,
        patch: serde_json::Value,
    ) {
        let patch = patch.to_string();
        let mut args = vec!["patch", kind, name, "--type", "merge", "-p", &patch];
        if let Some(ns) = namespace {
            args.extend(["-n", ns]);
        }
        self.kubectl(&args);
    }

    /// A kubeconfig with the same cluster and admin credentials plus `as: system:serviceaccount:…`.
    pub fn impersonating_kubeconfig(&self, namespace: &str, name: &str) -> PathBuf {
        let raw = self.kubectl(&[
            "config",
            "view",
            "--raw",
            "--minify",
            "--flatten",
            "-o",
            "json",
        ]);
        let mut config: serde_json::Value = serde_json::from_str(&raw).expect("kubeconfig json");
        let user = config["users"][0]["user"]
            .as_object_mut()
            .expect("a user entry");
        user.insert(
            "as".into(),
            format!("system:serviceaccount:{namespace}:{name}").into(),
        );
        let path = self
            .work
            .path()
            .join(format!("kubeconfig-{namespace}-{name}"));
        std::fs::write(&path, serde_json::to_string_pretty(&config).expect("json"))
            .expect("write kubeconfig");
        path
    }
}

pub fn eventually<T>(
    what: &str,
    timeout: Duration,
    mut probe: impl FnMut() -> Result<T, String>,
) -> T {
    let start = Instant::now();
    let mut last = String::new();
    while start.elapsed() < timeout {
        match probe() {
            Ok(value) => return value,
            Err(e) => last = e,
        }
        std::thread::sleep(Duration::from_millis(250));
    }
    panic!("timed out after {timeout:?} waiting for {what}: {last}");
}

pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

pub fn http_get(port: u16, path: &str) -> Result<(u16, String), String> {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).map_err(|e| e.to_string())?;
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .map_err(|e| e.to_string())?;
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
    )
    .map_err(|e| e.to_string())?;
    let mut response = String::new();
    stream
        .read_to_string(&mut response)
        .map_err(|e| e.to_string())?;
    let code = response
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .ok_or_else(|| format!("bad response: {response}"))?;
    let body = response
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_string())
        .unwrap_or_default();
    Ok((code, body))
}

/// One `kafka-config-operator run` process, killed on drop.
pub struct Operator {
    pub name: String,
    pub child: Child,
    pub port: u16,
    pub log: PathBuf,
}

impl Operator {
    pub fn start(cluster: &Cluster, kubeconfig: &Path, name: &str) -> Operator {
        let port = free_port();
        let log = cluster.work.path().join(format!("{name}.log"));
        let file = std::fs::File::create(&log).expect("log file");
        let child = Command::new(env!("CARGO_BIN_EXE_kafka-config-operator"))
            .args(["run", "--metrics-address", &format!("127.0.0.1:{port}")])
            .args([
                "--lease-namespace",
                OPERATOR_NS,
                "--lease-name",
                LEASE,
                "--identity",
                name,
            ])
            .env("KUBECONFIG", kubeconfig)
            .env("RUST_LOG", "info,kube=warn")
            .env_remove("POD_NAMESPACE")
            .env_remove("POD_NAME")
            .stdout(file.try_clone().expect("log file"))
            .stderr(file)
            .spawn()
            .expect("start the operator");
        println!(
            "    started operator {name} (pid {}, metrics 127.0.0.1:{port}, log {})",
            child.id(),
            log.display()
        );
        let mut operator = Operator {
            name: name.to_string(),
            child,
            port,
            log,
        };
        eventually(&format!("{name} /readyz"), Duration::from_secs(30), || {
            if let Ok(Some(status)) = operator.child.try_wait() {
                return Err(format!(
                    "exited with {status}; log:\n{}",
                    operator.log_text()
                ));
            }
            match http_get(port, "/readyz") {
                Ok((200, _)) => Ok(()),
                Ok((code, body)) => Err(format!("{code} {body}")),
                Err(e) => Err(e),
            }
        });
        operator
    }

    pub fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    pub fn metrics(&self) -> BTreeMap<String, f64> {
        let (_, body) = http_get(self.port, "/metrics")
            .unwrap_or_else(|e| panic!("{} /metrics: {e}", self.name));
        body.lines()
            .filter(|l| !l.starts_with('#'))
            .filter_map(|l| {
                let (name, value) = l.rsplit_once(' ')?;
                Some((name.to_string(), value.parse().ok()?))
            })
            .collect()
    }

    pub fn metric_sum(&self, prefix: &str) -> f64 {
        self.metrics()
            .iter()
            .filter(|(k, _)| k.starts_with(prefix))
            .map(|(_, v)| v)
            .fold(0.0, |a, b| a + b)
    }

    pub fn is_leader(&self) -> bool {
        self.metrics().get("kafka_config_leader").copied() == Some(1.0)
    }

    /// SIGTERM: a clean stop that releases the Lease.
    pub fn terminate(mut self) {
        terminate(&mut self.child, Duration::from_secs(10));
    }

    /// SIGKILL: a crash; the Lease stays until it expires.
    pub fn crash(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Operator {
    fn drop(&mut self) {
        if std::thread::panicking() {
            let log = self.log_text();
            let tail: Vec<&str> = log.lines().rev().take(30).collect();
            eprintln!("--- last lines of operator {} ---", self.name);
            for line in tail.iter().rev() {
                eprintln!("{line}");
            }
            // The whole log outlives the test's temp dir, which a failing test deletes.
            let kept = repo().join("e2e/.run-logs");
            let copy = kept.join(format!("{}-{}.log", self.name, std::process::id()));
            if std::fs::create_dir_all(&kept).is_ok() && std::fs::copy(&self.log, &copy).is_ok() {
                eprintln!("--- the whole log: {} ---", copy.display());
            }
        }
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// SIGTERM, then SIGKILL when `child` has not exited after `grace`.
pub fn terminate(child: &mut Child, grace: Duration) {
    let _ = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status();
    let start = Instant::now();
    while start.elapsed() < grace {
        if let Ok(Some(_)) = child.try_wait() {
            return;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let _ = child.kill();
    let _ = child.wait();
}

pub fn annotation(object: &serde_json::Value, pointer: &str) -> Option<String> {
    object
        .pointer(pointer)?
        .get(HASH)?
        .as_str()
        .map(String::from)
}

pub fn condition<'a>(object: &'a serde_json::Value, type_: &str) -> Option<&'a serde_json::Value> {
    object["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == type_)
}

impl Cluster {
    /// Deletes a leader Lease in [`OPERATOR_NS`] (if any) so the next operator leads at once.
    pub fn delete_lease(&self, name: &str) {
        let _ = self.run(
            &[
                "delete",
                "lease",
                name,
                "-n",
                OPERATOR_NS,
                "--ignore-not-found",
            ],
            None,
        );
    }

    /// A PATH on which the binary is the kubectl plugin `kubectl-kafkaconfig` (a symlink in this
    /// test's temp dir), so `kubectl kafkaconfig …` runs it.
    pub fn plugin_path(&self) -> String {
        let dir = self.work.path().join("plugins");
        std::fs::create_dir_all(&dir).expect("plugin dir");
        let plugin = dir.join("kubectl-kafkaconfig");
        if !plugin.exists() {
            std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_kafka-config-operator"), &plugin)
                .expect("symlink plugin");
        }
        format!(
            "{}:{}",
            dir.display(),
            std::env::var("PATH").unwrap_or_default()
        )
    }
}

// ---------------------------------------------------------------- added for e2e_faults / e2e_security

impl Cluster {
    /// The control plane's run directory (pids, logs, audit log, state.env): `KCO_E2E_RUN_DIR`, else
    /// the directory holding the kubeconfig (up.sh writes it to `$E2E_RUN_DIR/kubeconfig`).
    pub fn run_dir(&self) -> PathBuf {
        std::env::var_os("KCO_E2E_RUN_DIR")
            .map(PathBuf::from)
            .or_else(|| self.kubeconfig.parent().map(Path::to_path_buf))
            .expect("a run directory")
    }

    /// Runs `bash e2e/controlplane/<script> ARGS` (restart.sh, …) against this control plane
    /// (E2E_RUN_DIR set to [`Cluster::run_dir`]); returns stderr, panics on failure.
    pub fn controlplane(&self, script: &str, args: &[&str]) -> String {
        let out = Command::new("bash")
            .arg(repo().join("e2e/controlplane").join(script))
            .args(args)
            .env("E2E_RUN_DIR", self.run_dir())
            .current_dir(repo())
            .output()
            .unwrap_or_else(|e| panic!("cannot run {script}: {e}"));
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(
            out.status.success(),
            "e2e/controlplane/{script} {args:?} failed: {stderr}"
        );
        stderr
    }

    /// Runs a bash snippet with e2e/controlplane/common.sh sourced and the state loaded (ports,
    /// pids): e.g. `stop_component etcd` to hold etcd down for a while.
    pub fn controlplane_snippet(&self, snippet: &str) -> String {
        let script = format!(
            "source '{}' && load_state && {snippet}",
            repo().join("e2e/controlplane/common.sh").display()
        );
        let out = Command::new("bash")
            .args(["-c", &script])
            .env("E2E_RUN_DIR", self.run_dir())
            .current_dir(repo())
            .output()
            .unwrap_or_else(|e| panic!("cannot run bash: {e}"));
        assert!(
            out.status.success(),
            "controlplane snippet {snippet:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// kubectl with a stdin; panics on failure.
    pub fn kubectl_stdin(&self, args: &[&str], stdin: &str) -> String {
        self.run(args, Some(stdin))
            .unwrap_or_else(|e| panic!("{e}"))
    }

    /// `kubectl apply -f -` of a YAML text (retried while a new CRD is being discovered).
    pub fn apply_yaml(&self, yaml: &str) {
        eventually("kubectl apply", Duration::from_secs(30), || {
            self.run(&["apply", "-f", "-"], Some(yaml))
        });
    }

    /// Installs the CRDs and the operator's RBAC (e2e/rbac/cluster.yaml).
    pub fn install_crds_and_rbac(&self) {
        self.kubectl(&["apply", "-f", "crds/"]);
        self.kubectl(&[
            "wait",
            "--for=condition=Established",
            "--timeout=60s",
            "crd/kafkatoolconfigs.kafkaconfig.dev",
            "crd/globalclientdefaults.kafkaconfig.dev",
        ]);
        self.kubectl(&["apply", "-f", "e2e/rbac/cluster.yaml"]);
    }

    /// Deletes a namespace (waiting) so a test starts from nothing.
    pub fn fresh_namespace(&self, namespace: &str) {
        let _ = self.run(
            &[
                "delete",
                "namespace",
                namespace,
                "--ignore-not-found",
                "--wait=true",
                "--timeout=90s",
            ],
            None,
        );
    }

    /// The apiserver's /metrics (admin).
    pub fn apiserver_metrics(&self) -> String {
        self.kubectl(&["get", "--raw", "/metrics"])
    }
}

/// Sum of the samples of a Prometheus text exposition whose name-and-labels start with `prefix`
/// and contain every string of `labels`.
pub fn prometheus_sum(text: &str, prefix: &str, labels: &[&str]) -> f64 {
    text.lines()
        .filter(|l| !l.starts_with('#') && l.starts_with(prefix))
        .filter(|l| labels.iter().all(|s| l.contains(s)))
        .filter_map(|l| l.rsplit_once(' ')?.1.parse::<f64>().ok())
        .sum()
}

/// One rendered output object, as `kafka-config-operator render -o json` prints it.
#[derive(Debug, Clone, PartialEq)]
pub struct Expected {
    pub kind: String,
    pub name: String,
    pub hash: String,
    /// `data` exactly as the API stores it (Secret values base64).
    pub data: serde_json::Value,
}

/// Renders manifests offline with the binary under test: output name → object. Configs that are
/// invalid are simply absent (render exits 1 then; the valid ones are still printed).
pub fn render_offline(paths: &[&Path]) -> BTreeMap<String, Expected> {
    let mut command = Command::new(env!("CARGO_BIN_EXE_kafka-config-operator"));
    command.arg("render");
    // The cluster's key, so that the hashes are the ones the operator writes.
    let key_file = hash_key_file();
    command.arg("--hash-key-file").arg(&key_file);
    for p in paths {
        command.arg("-f").arg(p);
    }
    let out = command.args(["-o", "json"]).output().expect("run render");
    // A key outlives no render: the file is the Secret's content.
    let _ = std::fs::remove_file(&key_file);
    let objects: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "render -o json: {e}; stderr: {}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    objects
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|o| {
            Some((
                o["metadata"]["name"].as_str()?.to_string(),
                Expected {
                    kind: o["kind"].as_str()?.to_string(),
                    name: o["metadata"]["name"].as_str()?.to_string(),
                    hash: annotation(o, "/metadata/annotations")?,
                    data: o["data"].clone(),
                },
            ))
        })
        .collect()
}

/// The cluster's content-hash key as a file for `render --hash-key-file`. When no operator has
/// created the Secret yet (an offline render before the first start), it is created here the way
/// the operator does it (32 random bytes; a 409 means someone else was first and their key is
/// read), so the operator started next reads it.
pub fn hash_key_file() -> PathBuf {
    let cluster = Cluster::from_env();
    let read = || {
        cluster
            .run(
                &[
                    "get",
                    "secret",
                    HASH_KEY_SECRET,
                    "-n",
                    OPERATOR_NS,
                    "-o",
                    "jsonpath={.data.key}",
                ],
                None,
            )
            .ok()
    };
    let encoded = read().unwrap_or_else(|| {
        let mut random = [0u8; 32];
        std::fs::File::open("/dev/urandom")
            .and_then(|mut f| f.read_exact(&mut random))
            .expect("random bytes");
        let file = cluster.work.path().join("new-hash-key");
        std::fs::write(&file, random).expect("write the key");
        let from_file = format!("--from-file=key={}", file.display());
        let _ = cluster.run(&["create", "namespace", OPERATOR_NS], None);
        let _ = cluster.run(
            &[
                "create",
                "secret",
                "generic",
                HASH_KEY_SECRET,
                "-n",
                OPERATOR_NS,
                &from_file,
            ],
            None,
        );
        read().expect("the content-hash key Secret, just created")
    });
    use base64::Engine as _;
    let key = base64::engine::general_purpose::STANDARD
        .decode(encoded.trim())
        .expect("the key is base64");
    let path = std::env::temp_dir().join(format!("kco-e2e-hash-key-{}", std::process::id()));
    std::fs::write(&path, key).expect("write the key file");
    path
}

impl Operator {
    /// Starts `kafka-config-operator run` without waiting for /readyz (the control plane may be
    /// down: a supervisor restarts it like a kubelet would). `lease: None` runs it without leader
    /// election. `rust_log` replaces the default filter.
    pub fn spawn(
        cluster: &Cluster,
        kubeconfig: &Path,
        name: &str,
        lease: Option<&str>,
        rust_log: &str,
    ) -> Operator {
        let port = free_port();
        let mut n = 0;
        let log = loop {
            let candidate = cluster.work.path().join(format!("{name}-{n}.log"));
            if !candidate.exists() {
                break candidate;
            }
            n += 1;
        };
        let file = std::fs::File::create(&log).expect("log file");
        let mut command = Command::new(env!("CARGO_BIN_EXE_kafka-config-operator"));
        command.args(["run", "--metrics-address", &format!("127.0.0.1:{port}")]);
        match lease {
            Some(lease) => command.args([
                "--lease-namespace",
                OPERATOR_NS,
                "--lease-name",
                lease,
                "--identity",
                name,
            ]),
            None => command.args([
                "--leader-election=false",
                // The content-hash key Secret every operator of these tests shares.
                "--lease-namespace",
                OPERATOR_NS,
            ]),
        };
        let child = command
            .env("KUBECONFIG", kubeconfig)
            .env("RUST_LOG", rust_log)
            .env_remove("POD_NAMESPACE")
            .env_remove("POD_NAME")
            .stdout(file.try_clone().expect("log file"))
            .stderr(file)
            .spawn()
            .expect("start the operator");
        println!(
            "    spawned operator {name} (pid {}, metrics 127.0.0.1:{port}, log {})",
            child.id(),
            log.display()
        );
        Operator {
            name: name.to_string(),
            child,
            port,
            log,
        }
    }

    /// Waits until /readyz answers 200; Err if the process exits or `timeout` passes.
    pub fn wait_ready(&mut self, timeout: Duration) -> Result<(), String> {
        let start = Instant::now();
        while start.elapsed() < timeout {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Err(format!("{} exited with {status}", self.name));
            }
            if let Ok((200, _)) = http_get(self.port, "/readyz") {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        Err(format!("{} not ready after {timeout:?}", self.name))
    }

    /// Whether the process has exited.
    pub fn exited(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(Some(_)))
    }

    /// `metrics()` that does not panic when the endpoint is down.
    pub fn try_metrics(&self) -> Option<BTreeMap<String, f64>> {
        let (code, body) = http_get(self.port, "/metrics").ok()?;
        (code == 200).then(|| {
            body.lines()
                .filter(|l| !l.starts_with('#'))
                .filter_map(|l| {
                    let (name, value) = l.rsplit_once(' ')?;
                    Some((name.to_string(), value.parse().ok()?))
                })
                .collect()
        })
    }
}

// ---------------------------------------------------------------- added for e2e_workloads

/// Objects as one multi-document YAML text (JSON documents) for `kubectl apply -f -`.
pub fn to_yaml(objects: &[serde_json::Value]) -> String {
    objects
        .iter()
        .map(|o| serde_json::to_string_pretty(o).expect("json"))
        .collect::<Vec<_>>()
        .join("\n---\n")
}

/// The immutable ConfigMap outputs of `config` in `namespace`: hash → name.
pub fn immutable_outputs(
    cluster: &Cluster,
    namespace: &str,
    config: &str,
) -> BTreeMap<String, String> {
    let selector = format!("kafkaconfig.dev/config={config}");
    let list = cluster
        .json(&["get", "configmaps", "-n", namespace, "-l", &selector])
        .unwrap_or_default();
    list["items"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|cm| {
            Some((
                annotation(cm, "/metadata/annotations")?,
                cm["metadata"]["name"].as_str()?.to_string(),
            ))
        })
        .collect()
}

impl Cluster {
    /// The stand-in for Argo Rollouts' CRD (e2e/testdata/argo-rollouts-crd.yaml), established.
    pub fn install_argo_rollouts_crd(&self) {
        self.kubectl(&["apply", "-f", "e2e/testdata/argo-rollouts-crd.yaml"]);
        self.kubectl(&[
            "wait",
            "--for=condition=Established",
            "--timeout=60s",
            "crd/rollouts.argoproj.io",
        ]);
    }
}
