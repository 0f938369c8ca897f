//! The status of a KafkaToolConfig, built from an [`Evaluation`]: kstatus-compatible conditions
//! (`Ready`, `SourcesResolved`, `Valid`, each with `observedGeneration`, and kstatus's own
//! `Stalled` and `Reconciling` while they are True), the live hash, warnings,
//! shadowed keys and history. Shared by the controller and by `validate -o json`, so both write
//! exactly the same thing. The types and their accessors are here; `build.rs` makes a status
//! from an evaluation, `cached.rs` is the operator's compact copy of one.

// Text here comes from the API server (statuses, annotations, data): a byte-offset slice of it
// panics inside a character, and the release build aborts on a panic. Cut with `safe_text`.
#![deny(clippy::string_slice)]

mod build;
mod cached;

pub use build::{Live, WriteFailure, build, global_conditions, record_history};
pub use cached::{ContentHash, Digest, Kept, digest};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::engine::outcome::{Problem, Reason};
use crate::engine::{Evaluation, spec::Role};

pub const READY: &str = "Ready";
pub const SOURCES_RESOLVED: &str = "SourcesResolved";
pub const VALID: &str = "Valid";
/// kstatus's "abnormal-true" conditions (sigs.k8s.io/cli-utils/pkg/kstatus): present only while
/// True, so a healthy status carries neither. `Stalled=True` makes kstatus (Flux, `kstatus`
/// based tools) report Failed: only a change of the spec, a source or a GlobalClientDefaults can
/// fix the config. `Reconciling=True` reports InProgress: the operator is still working on it
/// (its first result is not there yet, or it retries a refused write).
pub const STALLED: &str = "Stalled";
pub const RECONCILING: &str = "Reconciling";
/// `Reconciling`'s reasons, Flux's names for the same two states.
pub const PROGRESSING: &str = "Progressing";
pub const PROGRESSING_WITH_RETRY: &str = "ProgressingWithRetry";

/// A status condition (the shape of `metav1.Condition`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Condition {
    /// `Ready`, `SourcesResolved`, `Valid` (a GlobalClientDefaults: `Valid`), and kstatus's
    /// `Stalled` (only a change of the spec or of what it reads can help) and `Reconciling` (the
    /// operator is still at work), present only while True (docs/flux.md).
    #[serde(rename = "type")]
    pub type_: String,
    /// True, False or Unknown.
    pub status: String,
    pub reason: String,
    #[serde(default)]
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// RFC 3339 time of the last change of `status`.
    #[serde(default)]
    pub last_transition_time: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StatusWarning {
    pub key: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<Role>,
    pub reason: String,
    pub message: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ShadowedKey {
    pub key: String,
    pub role: Role,
    /// The layer that won.
    pub winner: String,
    /// The layers and sources it overrode, highest first. Never values.
    pub over: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SecretMountStatus {
    pub secret: String,
    pub mount_path: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct OutputStatus {
    pub kind: String,
    pub name: String,
    pub keys: Vec<String>,
    /// For `secrets: Deferred`: Secrets the workload must mount, and where.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub secret_mounts: Vec<SecretMountStatus>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HistoryEntry {
    pub revision: i64,
    pub hash: String,
    pub time: String,
    /// Names of the keys whose values changed (never values).
    #[serde(default)]
    pub changed_keys: Vec<String>,
    /// Why: a new `kafkaconfig.dev/change-cause` annotation (for the one revision after it was
    /// set or changed), else what changed (`spec changed`, `ConfigMap base changed`, …).
    pub cause: String,
    /// Who made the change that caused this revision: the field manager Kubernetes recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub by: Option<Author>,
}

/// The object whose change caused a revision and the field manager that last changed it, from
/// its `metadata.managedFields`. A manager is the name a client gives itself (`kubectl-client-
/// side-apply`, `argocd-controller`, `helm`), not an authenticated user: the API server's audit
/// log says who.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Author {
    /// KafkaToolConfig (its spec), ConfigMap, Secret or GlobalClientDefaults.
    pub kind: String,
    pub name: String,
    /// The field manager of the latest change of that object's content.
    pub manager: String,
    /// `Apply` (server-side apply) or `Update`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operation: Option<String>,
    /// When that manager last changed it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RolloutStatus {
    pub kind: String,
    pub name: String,
    /// The hash on the workload's pod template, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hash: Option<String>,
    /// `Annotation` when the workload opted in with `kafkaconfig.dev/config` and is not named in
    /// `rollout.targets`; absent for a `rollout.targets` entry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub via: Option<String>,
    /// Pods with the current template (`updatedReplicas`; a DaemonSet's
    /// `updatedNumberScheduled`), from the workload's own status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub updated: Option<i32>,
    /// Ready pods (`readyReplicas`; `numberReady`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ready: Option<i32>,
    /// Pods wanted (`spec.replicas`; `desiredNumberScheduled`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<i32>,
}

/// Status stays small: a config with thousands of unknown keys must not bloat its object.
pub const MAX_STATUS_WARNINGS: usize = 50;

/// How many revisions `status.history` keeps.
pub const HISTORY_LIMIT: usize = 10;

/// What one status may take at most (documented in docs/RELIABILITY.md): far below etcd's
/// 1.5 MiB object limit, so a status write never fails for size.
pub const STATUS_BUDGET_BYTES: usize = 256 * 1024;

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KafkaToolConfigStatus {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    #[serde(default)]
    pub conditions: Vec<Condition>,
    /// Hash of the content that is live in the output object.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config_hash: Option<String>,
    // Boxed: inline it made a cached KafkaToolConfig 1,056 bytes, one allocator size class
    // (1,280 bytes) above what it is now (1,024): 2.5 MiB at N = 10,000 (`rss_10k_mib`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<Box<OutputStatus>>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<StatusWarning>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub shadowed: Vec<ShadowedKey>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub history: Vec<HistoryEntry>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rollout: Vec<RolloutStatus>,
    /// What the last evaluation read (set by the operator, not by `validate`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inputs: Option<InputsStatus>,
    /// Not part of the API (never serialized): in the operator's cache, what the next status is
    /// built from in place of the parts [`KafkaToolConfigStatus::cached`] drops.
    #[serde(skip)]
    pub kept: Option<Box<Kept>>,
}

/// The versions of everything an evaluation read. With it, the operator proves from its watch
/// caches alone that nothing changed since the live output was rendered (after a restart, or on
/// the periodic resync) and reads nothing; `history` names the source that changed.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InputsStatus {
    /// Version of the operator that evaluated it: a new release renders everything again.
    pub operator: String,
    /// Public id of the content-hash key `configHash` was made with (16 hex digits of an HMAC of
    /// a constant under the key; never the key): a new key renders everything again, once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hash_key: Option<String>,
    /// Every referenced ConfigMap and Secret, with the resourceVersion read (none: not found).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sources: Vec<SourceVersion>,
    /// Every GlobalClientDefaults that selected the config (applied or invalid), with its
    /// generation.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub global_client_defaults: Vec<GlobalVersion>,
    /// Digest (16 hex digits) of the last `kafkaconfig.dev/change-cause` recorded in `history`:
    /// an annotation is the cause of one revision only, not of every later one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub change_cause: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SourceVersion {
    /// ConfigMap or Secret.
    pub kind: String,
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_version: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GlobalVersion {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generation: Option<i64>,
}

impl KafkaToolConfigStatus {
    pub fn condition(&self, type_: &str) -> Option<&Condition> {
        self.conditions.iter().find(|c| c.type_ == type_)
    }
}

/// Sets a condition, keeping its `lastTransitionTime` when its status did not change.
#[allow(clippy::too_many_arguments)]
pub fn set_condition(
    conditions: &mut Vec<Condition>,
    previous: &[Condition],
    type_: &str,
    status: &str,
    reason: &str,
    message: String,
    generation: Option<i64>,
    now: &str,
) {
    let last_transition_time = previous
        .iter()
        .find(|c| c.type_ == type_ && c.status == status)
        .map(|c| c.last_transition_time.clone())
        .unwrap_or_else(|| now.to_string());
    conditions.retain(|c| c.type_ != type_);
    conditions.push(Condition {
        type_: type_.to_string(),
        status: status.to_string(),
        reason: reason.to_string(),
        message,
        observed_generation: generation,
        last_transition_time,
    });
}

/// The evaluation of a spec with no sources nor GlobalClientDefaults (the status tests' input).
#[cfg(test)]
fn evaluation_of(spec: serde_json::Value) -> Evaluation {
    let spec: crate::engine::spec::ToolConfigSpec =
        serde_json::from_value(spec).expect("a spec that decodes");
    crate::engine::evaluate(&crate::engine::Request {
        name: "orders",
        namespace: "team-a",
        spec: &spec,
        namespace_labels: &Default::default(),
        globals: &[],
        sources: &crate::engine::sources::SourceSet::default(),
        hash_key: None,
    })
}
