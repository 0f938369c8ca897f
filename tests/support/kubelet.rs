//! The test's "kubelet" (tests/e2e_kafka.rs): projects live output ConfigMaps and Secrets into
//! directories the way the kubelet's atomic writer does, re-projects on change, and mounts a
//! config's output the way a pod spec would (its ConfigMap, and each Secret of
//! `status.output.secretMounts`).

use std::collections::BTreeMap;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use super::{Cluster, annotation, condition, eventually};

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

/// The live config once it is Ready for its current generation and its output holds the hash
/// its status reports: (hash, config).
pub fn settled(
    cluster: &Cluster,
    ns: &str,
    name: &str,
) -> Result<(String, serde_json::Value), String> {
    let config = cluster
        .json(&["get", "kafkatoolconfig", name, "-n", ns])
        .ok_or_else(|| format!("{ns}/{name} not found"))?;
    let ready = condition(&config, "Ready").ok_or("no Ready condition")?;
    if ready["status"] != "True" {
        return Err(format!("Ready={} {}", ready["status"], ready["message"]));
    }
    if config["status"]["observedGeneration"] != config["metadata"]["generation"] {
        return Err("observedGeneration lags".into());
    }
    let output = format!("{name}-kafka");
    let cm = cluster
        .json(&["get", "configmap", &output, "-n", ns])
        .ok_or_else(|| format!("{output} not found"))?;
    let hash = annotation(&cm, "/metadata/annotations").ok_or("no hash annotation")?;
    if config["status"]["configHash"] != hash.as_str() {
        return Err("status lags the output".into());
    }
    Ok((hash, config))
}

pub fn wait_settled(cluster: &Cluster, ns: &str, name: &str) -> (String, serde_json::Value) {
    eventually(
        &format!("{ns}/{name} Ready"),
        Duration::from_secs(60),
        || settled(cluster, ns, name),
    )
}

/// Mounts a config's output ConfigMap at its mount path and each Secret of
/// `status.output.secretMounts` where the status says, as a pod spec would.
pub fn mount(
    kubelet: &Kubelet,
    cluster: &Cluster,
    ns: &str,
    name: &str,
    dir: &Path,
) -> Vec<Volume> {
    let (_, config) = wait_settled(cluster, ns, name);
    let mut volumes = vec![Volume {
        kind: "configmap",
        namespace: ns.into(),
        name: format!("{name}-kafka"),
        dir: dir.to_path_buf(),
    }];
    for m in config["status"]["output"]["secretMounts"]
        .as_array()
        .into_iter()
        .flatten()
    {
        let (Some(secret), Some(path)) = (m["secret"].as_str(), m["mountPath"].as_str()) else {
            panic!("{ns}/{name}: a secretMount without secret or mountPath: {m}");
        };
        volumes.push(Volume {
            kind: "secret",
            namespace: ns.into(),
            name: secret.into(),
            dir: PathBuf::from(path),
        });
    }
    assert!(
        volumes.len() > 1,
        "{ns}/{name}: Deferred output without secretMounts"
    );
    for v in &volumes {
        kubelet.mount(v.clone());
    }
    wait_projected(kubelet, cluster, &volumes);
    volumes
}

/// Waits until every volume shows the live object's current resourceVersion.
pub fn wait_projected(kubelet: &Kubelet, cluster: &Cluster, volumes: &[Volume]) {
    for v in volumes {
        eventually(
            &format!("{} {} projected", v.kind, v.name),
            Duration::from_secs(30),
            || {
                let live = cluster
                    .json(&["get", v.kind, &v.name, "-n", &v.namespace])
                    .ok_or("not found")?;
                let rv = live["metadata"]["resourceVersion"].as_str().unwrap_or("?");
                (kubelet.projected_version(&v.dir) == rv)
                    .then_some(())
                    .ok_or(format!("projected {}", kubelet.projected_version(&v.dir)))
            },
        );
    }
}
