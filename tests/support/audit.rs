//! The control plane's audit log (e2e/controlplane writes every request's `ResponseComplete`
//! stage to `<run dir>/audit.log`): which writes the operator made in a namespace, and whether
//! a write after convergence is explained by what Kubernetes' own controllers did.

use serde_json::Value;

use super::Cluster;

/// The audit log from a point on: entries written before it (an earlier run of the same
/// namespace on the same control plane, or an earlier operator) are not this test's.
pub struct AuditLog {
    path: std::path::PathBuf,
    from: usize,
}

/// (verb, resource, name, code) of an audit entry.
pub type Write = (String, String, String, i64);

impl AuditLog {
    /// Starts at the log's current end. A missing log fails the test: an empty one would let
    /// every "nothing was written" check pass.
    pub fn from_now(cluster: &Cluster) -> AuditLog {
        let path = cluster.run_dir().join("audit.log");
        let from = std::fs::metadata(&path)
            .unwrap_or_else(|e| panic!("no audit log at {}: {e}", path.display()))
            .len() as usize;
        AuditLog { path, from }
    }

    /// Completed writes in `namespace` (create/update/patch/delete), oldest first.
    pub fn writes_in(&self, namespace: &str) -> Vec<Value> {
        let bytes = std::fs::read(&self.path).unwrap_or_default();
        let text = String::from_utf8_lossy(bytes.get(self.from..).unwrap_or_default());
        text.lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .filter(|e| e["stage"] == "ResponseComplete")
            .filter(|e| e["objectRef"]["namespace"] == namespace)
            .filter(|e| {
                matches!(
                    e["verb"].as_str(),
                    Some("create" | "update" | "patch" | "delete" | "deletecollection")
                )
            })
            .collect()
    }
}

/// Whether `user` made the request, directly or through an impersonating kubeconfig.
pub fn by_user(e: &Value, user: &str) -> bool {
    e["impersonatedUser"]["username"] == user || e["user"]["username"] == user
}

pub fn write_of(e: &Value) -> Write {
    let text = |v: &Value| v.as_str().unwrap_or_default().to_string();
    (
        text(&e["verb"]),
        text(&e["objectRef"]["resource"]),
        text(&e["objectRef"]["name"]),
        e["responseStatus"]["code"].as_i64().unwrap_or_default(),
    )
}

fn time(e: &Value) -> Option<chrono::DateTime<chrono::FixedOffset>> {
    chrono::DateTime::parse_from_rfc3339(e["stageTimestamp"].as_str()?).ok()
}

/// The writes among `entries[from..]` by `user` that nothing explains. The one write that may
/// follow convergence is a KafkaToolConfig status write reporting what Kubernetes' own
/// controllers did to a rollout target within the two seconds before it: the `Synced` condition
/// follows the Deployment's status, which the deployment controller may update at any time (after
/// an API server restart, say).
pub fn unexplained_writes(entries: &[Value], from: usize, user: &str) -> Vec<Write> {
    let rollout_changes: Vec<_> = entries
        .iter()
        .filter(|e| {
            e["user"]["username"]
                .as_str()
                .is_some_and(|u| u.starts_with("system:serviceaccount:kube-system:"))
                && matches!(
                    e["objectRef"]["resource"].as_str(),
                    Some("deployments" | "replicasets" | "pods")
                )
        })
        .filter_map(time)
        .collect();
    let reports_rollout = |e: &Value| {
        let Some(at) = time(e) else {
            return false;
        };
        e["objectRef"]["resource"] == "kafkatoolconfigs"
            && e["objectRef"]["subresource"] == "status"
            && rollout_changes
                .iter()
                .any(|t| *t <= at && at - *t <= chrono::TimeDelta::seconds(2))
    };
    entries
        .iter()
        .skip(from)
        .filter(|e| by_user(e, user) && !reports_rollout(e))
        .map(write_of)
        .collect()
}
