//! What an evaluation takes and gives: the [`Request`], each role's merged [`RoleView`] and the
//! [`Evaluation`]. The pipeline (`evaluate`) and the steps it calls (validation, arguments,
//! rendering) all read these types.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use crate::engine::globals::GlobalDefaults;
use crate::engine::layers::{Contribution, Layer, Provenance};
use crate::engine::outcome::{Problem, Shadowed, Warning};
use crate::engine::sensitive;
use crate::engine::sources::{SourceRef, Sources};
use crate::engine::spec::{OutputKind, Role, ToolConfigSpec};

/// Everything one evaluation needs.
pub struct Request<'a> {
    pub name: &'a str,
    pub namespace: &'a str,
    pub spec: &'a ToolConfigSpec,
    /// Labels of the config's namespace (for GlobalClientDefaults namespace selectors).
    pub namespace_labels: &'a BTreeMap<String, String>,
    /// Every GlobalClientDefaults in the cluster; the engine selects.
    pub globals: &'a [GlobalDefaults],
    /// ConfigMaps and Secrets of the config's namespace.
    pub sources: &'a dyn Sources,
}

/// One role's merged configuration: every key with its provenance chain.
#[derive(Debug, Clone, Default)]
pub struct RoleView {
    /// By key.
    pub keys: BTreeMap<String, Provenance>,
    /// Provider names declared by the merged `config.providers`.
    pub providers: BTreeSet<String>,
}

impl RoleView {
    /// The value written to the file: the highest contribution that is not a Legacy forced value
    /// (the tool applies those itself).
    pub fn file_value(&self, key: &str) -> Option<&Contribution> {
        self.keys.get(key).and_then(file_contribution)
    }

    /// The value the tool ends up with.
    pub fn effective_value(&self, key: &str) -> Option<&Contribution> {
        self.keys
            .get(key)
            .map(Provenance::winner)
            .filter(|c| c.layer != Layer::KafkaDefaults)
    }

    /// Keys written to the file, in key order, with the contribution that wins there.
    pub fn file_entries(&self) -> impl Iterator<Item = (&Provenance, &Contribution)> {
        self.keys
            .values()
            .filter_map(|p| file_contribution(p).map(|c| (p, c)))
    }
}

/// The contribution written to the file: the highest that is neither a Legacy forced value nor
/// Kafka's default.
pub fn file_contribution(provenance: &Provenance) -> Option<&Contribution> {
    provenance
        .chain
        .iter()
        .find(|c| c.layer != Layer::ForcedByTool && c.layer != Layer::KafkaDefaults)
}

/// The result of evaluating one KafkaToolConfig.
#[derive(Debug, Clone, Default)]
pub struct Evaluation {
    /// Canonical tool name (empty when the tool is unknown).
    pub tool: String,
    pub roles: Vec<Role>,
    /// Problems reading sources (`SourcesResolved=False`).
    pub source_problems: Vec<Problem>,
    /// Problems with the merged configuration (`Valid=False`).
    pub problems: Vec<Problem>,
    pub warnings: Vec<Warning>,
    pub views: BTreeMap<Role, RoleView>,
    pub shadowed: Vec<Shadowed>,
    /// GlobalClientDefaults applied, in application order.
    pub globals_applied: Vec<String>,
    /// ConfigMaps and Secrets the spec references.
    pub referenced: Vec<SourceRef>,
    /// Present only when there are no problems.
    pub rendered: Option<Rendered>,
    /// `output.renderDefaults`: Kafka's defaults of unset keys are written into the files too.
    pub defaults_rendered: bool,
}

impl Evaluation {
    pub fn is_valid(&self) -> bool {
        self.problems.is_empty() && self.source_problems.is_empty()
    }

    /// Whether a value shown to people must be redacted.
    pub fn is_sensitive(&self, role: Role, key: &str, contribution: &Contribution) -> bool {
        contribution.is_secret_sourced() || sensitive::is_password_key(role, key)
    }
}

/// A Secret the workload must mount for `output.secrets: Deferred`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SecretMount {
    pub secret: String,
    pub mount_path: String,
}

/// The output object's content. `Debug` and `Drop` (redacted, zeroed): `engine::secret`.
#[derive(Clone, PartialEq, Eq)]
pub struct Rendered {
    pub kind: OutputKind,
    pub name: String,
    /// File name → content (`producer.properties`, `tool.args`).
    pub files: BTreeMap<String, String>,
    /// `sha256:<hex>` of the files (and, when Deferred, of the referenced Secret data).
    pub hash: String,
    pub secret_mounts: Vec<SecretMount>,
}

impl Rendered {
    pub fn kind_str(&self) -> &'static str {
        match self.kind {
            OutputKind::ConfigMap => "ConfigMap",
            OutputKind::Secret => "Secret",
        }
    }
}
