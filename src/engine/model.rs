//! What an evaluation takes and gives: the [`Request`], each role's merged [`RoleView`] and the
//! [`Evaluation`]. The pipeline (`evaluate`) and the steps it calls (validation, arguments,
//! rendering) all read these types.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use crate::engine::globals::GlobalDefaults;
use crate::engine::key::{self, Key};
use crate::engine::layers::{Contribution, Layer, Provenance};
use crate::engine::outcome::{Problem, Shadowed, Warning};
use crate::engine::sensitive;
use crate::engine::sources::{SourceRef, Sources};
use crate::engine::spec::{OutputKind, Role, ToolConfigSpec};
use crate::engine::taint::Value;

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
    /// The installation's content-hash key: the hash is `hmac-sha256:` under it, or a plain
    /// `sha256:` without one (the offline CLI without `--hash-key-file`).
    pub hash_key: Option<&'a HashKey>,
}

/// The per-installation key of the content hash. A plain digest of files whose other content can
/// be rebuilt from the spec and `explain` lets anyone who can read the annotation test password
/// guesses offline; keyed, the annotation tells nothing without the key. The bytes are never
/// printed (`Debug` names the length only) and are zeroed on drop.
#[derive(Clone)]
pub struct HashKey(zeroize::Zeroizing<Vec<u8>>);

/// Why some bytes are not a [`HashKey`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "a content-hash key is exactly {expected} raw bytes, this one has {found} (a base64 text of \
     32 bytes has 44: decode it first, e.g. `base64 -d`)",
    expected = HashKey::LEN
)]
pub struct HashKeyError {
    pub found: usize,
}

impl HashKey {
    /// 256 bits, the output size of SHA-256 (what RFC 2104 recommends for HMAC).
    pub const LEN: usize = 32;

    pub fn new(bytes: Vec<u8>) -> Result<Self, HashKeyError> {
        let bytes = zeroize::Zeroizing::new(bytes);
        if bytes.len() != Self::LEN {
            return Err(HashKeyError { found: bytes.len() });
        }
        Ok(HashKey(bytes))
    }

    /// A short public name of the key (16 hex digits of an HMAC of a constant under it): which
    /// key rendered a status can be recorded and compared, while the key stays unguessable.
    pub fn id(&self) -> String {
        let mut mac = self.mac();
        sha2::digest::Update::update(&mut mac, b"kafka-config-operator content-hash key id");
        let digest = hmac::Mac::finalize(mac).into_bytes();
        digest[..8].iter().map(|b| format!("{b:02x}")).collect()
    }

    pub(crate) fn mac(&self) -> hmac::Hmac<sha2::Sha256> {
        // HMAC takes a key of any length (RFC 2104: a long one is hashed, a short one padded),
        // so this cannot fail; the length was checked in `new` anyway.
        <hmac::Hmac<sha2::Sha256> as hmac::KeyInit>::new_from_slice(&self.0)
            .expect("HMAC accepts keys of every length")
    }
}

impl std::fmt::Debug for HashKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "HashKey([{} bytes])", self.0.len())
    }
}

/// One role's merged configuration: every key with its provenance chain.
#[derive(Debug, Clone, Default)]
pub struct RoleView {
    /// By key (looked up with a `&str`; a [`Key`] shows its text only through its own methods).
    /// A key is Secret content when read from a Secret's file and not a name Kafka defines:
    /// shown only through [`Key::shown`].
    pub keys: BTreeMap<Key, Provenance>,
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
    pub fn file_entries(&self) -> impl Iterator<Item = (&Key, &Provenance, &Contribution)> {
        self.keys
            .iter()
            .filter_map(|(k, p)| file_contribution(p).map(|c| (k, p, c)))
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

/// Arguments that map to no client property and `extraArgs`, with their references resolved
/// (every value of every layer is resolved, arguments included); a value a Secret-sourced
/// reference built is Secret data.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PlainArgs {
    /// `(option name, value)`; `None` for a flag given as `true`.
    pub options: Vec<(String, Option<Value>)>,
    /// `(spec.extraArgs[i], value)`.
    pub extra: Vec<(String, Value)>,
}

/// One word of `tool.args`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Arg {
    /// How a message names the argument the word belongs to: `--bootstrap-server`,
    /// `spec.extraArgs[2]` (borrowed from the catalogue for a tool's own options).
    pub argument: Cow<'static, str>,
    pub value: Value,
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
    /// Arguments passed to the tool as given, references resolved.
    pub plain_args: PlainArgs,
}

impl Evaluation {
    pub fn is_valid(&self) -> bool {
        self.problems.is_empty() && self.source_problems.is_empty()
    }

    /// A key as `status.history` may name it: as a view holds it ([`Key::shown`]: a key read
    /// from a Secret file that Kafka does not define is shown by where it was read); a name no
    /// view holds any more (it may have been read from a Secret file) only when Kafka defines it
    /// or it is a file of the output (`tool.args`).
    pub fn key_label(&self, name: &str) -> String {
        for view in self.views.values() {
            if let Some((key, _)) = view.keys.get_key_value(name) {
                return key.shown().into_owned();
            }
        }
        let output_file = self
            .rendered
            .as_ref()
            .is_some_and(|r| r.files.contains_key(name));
        if output_file || key::is_kafka_name(name) {
            name.to_string()
        } else {
            "[a key no longer set, not shown]".to_string()
        }
    }

    /// How `explain` shows a value of `key`: [`sensitive::shown_value`] for the role.
    pub fn shown_value<'c>(
        &self,
        role: Role,
        key: &str,
        contribution: &'c Contribution,
    ) -> std::borrow::Cow<'c, str> {
        let def = crate::engine::catalogue::configs::ConfigCatalogue::get().key(role, key);
        sensitive::shown_value(def, key, contribution)
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
    /// `hmac-sha256:<hex>` (keyed) or `sha256:<hex>` (unkeyed) of the files and, when Deferred,
    /// of the referenced Secret data (`render::content_hash`).
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
