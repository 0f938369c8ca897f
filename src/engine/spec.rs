//! What users write: the specs of `KafkaToolConfig` and `GlobalClientDefaults`.
//!
//! Plain serde + schemars types with no Kubernetes dependency; the operator wraps them in its
//! custom resources. Optional fields stay `Option`/empty and are never filled in on the way out,
//! so the API server stores exactly what the user applied (no drift in Argo CD).

use std::collections::BTreeMap;
use std::fmt;

use schemars::JsonSchema;

use serde::{Deserialize, Serialize};

/// A client role: which Kafka client (or server) a file configures.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum Role {
    Producer,
    Consumer,
    Admin,
    ShareConsumer,
    Broker,
    Controller,
    /// MirrorMaker 2's `mm2.properties` (the `connect-mirror-maker` tool).
    MirrorMaker,
}

impl Role {
    pub const ALL: [Role; 7] = [
        Role::Producer,
        Role::Consumer,
        Role::Admin,
        Role::ShareConsumer,
        Role::Broker,
        Role::Controller,
        Role::MirrorMaker,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Role::Producer => "producer",
            Role::Consumer => "consumer",
            Role::Admin => "admin",
            Role::ShareConsumer => "share-consumer",
            Role::Broker => "broker",
            Role::Controller => "controller",
            Role::MirrorMaker => "mirror-maker",
        }
    }

    pub fn parse(s: &str) -> Option<Role> {
        Role::ALL.into_iter().find(|r| r.as_str() == s)
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A YAML scalar: users may write `linger.ms: 5` or `enable.auto.commit: false` unquoted.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Scalar {
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
}

impl Scalar {
    /// The text Kafka sees.
    pub fn to_text(&self) -> String {
        match self {
            Scalar::Bool(b) => b.to_string(),
            Scalar::Int(i) => i.to_string(),
            Scalar::Float(f) => f.to_string(),
            Scalar::Str(s) => s.clone(),
        }
    }
}

impl From<&str> for Scalar {
    fn from(s: &str) -> Self {
        Scalar::Str(s.to_string())
    }
}

impl JsonSchema for Scalar {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Scalar".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        // A structural schema cannot say "string, integer or boolean"; the engine rejects
        // anything that is not a scalar with a message naming the field.
        schemars::json_schema!({
            "description": "A string, number or boolean.",
            "x-kubernetes-preserve-unknown-fields": true
        })
    }

    fn inline_schema() -> bool {
        true
    }
}

/// A string-keyed map of a spec, in key order, kept as a sorted `Vec` (ICU4X's `litemap`): every
/// cached KafkaToolConfig holds a few, and a `BTreeMap`'s first node is about 560 bytes, which
/// took the 10,000-config scale run over its 64 MiB target. Same JSON and order; its schema is
/// declared as the `BTreeMap`'s on each field.
pub type SpecMap<V> = litemap::LiteMap<String, V>;

/// `key: value` maps by role: `common` applies to every role of the tool; a role's own entry
/// beats `common` inside the same layer.
pub type RoleProperties = SpecMap<SpecMap<Scalar>>;

/// The schema of a [`RoleProperties`] field: one named property per section (`common` and each
/// role), so that the API server knows the sections and `kubectl apply` (strict field validation)
/// refuses a misspelt one (`producr`) as an unknown field. A CEL rule cannot say it: the values
/// are untyped scalars, which CEL has no type for, so the map is invisible to CEL.
fn role_properties_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
    let section = generator.subschema_for::<BTreeMap<String, Scalar>>();
    let properties: serde_json::Map<String, serde_json::Value> = std::iter::once(COMMON)
        .chain(Role::ALL.iter().map(|r| r.as_str()))
        .map(|name| {
            let mut schema = section.clone();
            let what = if name == COMMON {
                "Keys for every role of the tool.".to_string()
            } else {
                format!("Keys for the {name} role only; beat `common` in the same layer.")
            };
            schema.insert("description".into(), what.into());
            (name.to_string(), schema.to_value())
        })
        .collect();
    schemars::json_schema!({
        "type": "object",
        "properties": properties,
    })
}

/// The name of the role-independent entry in [`RoleProperties`].
pub const COMMON: &str = "common";

/// `properties.SECTION`, the source of a section's values, for the sections a spec can have.
pub fn properties_label(section: &str) -> Option<&'static str> {
    Some(match section {
        COMMON => "properties.common",
        "producer" => "properties.producer",
        "consumer" => "properties.consumer",
        "admin" => "properties.admin",
        "share-consumer" => "properties.share-consumer",
        "broker" => "properties.broker",
        "controller" => "properties.controller",
        "mirror-maker" => "properties.mirror-maker",
        _ => return None,
    })
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
pub enum Precedence {
    /// KIP-1137: args > properties > files > tool defaults > cluster defaults.
    #[default]
    Modern,
    /// What today's tool does: keys the tool forces beat files, properties and args.
    Legacy,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
pub enum ReferenceMode {
    /// A reference with no value and no default is an error (`UnresolvedReference`).
    #[default]
    Strict,
    /// Exactly KAFKA-6142: an unresolved reference becomes the empty string.
    Lenient,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
pub enum OutputKind {
    #[default]
    ConfigMap,
    Secret,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
pub enum SecretsMode {
    /// Secret-sourced values are written into the output (which must then be a Secret).
    #[default]
    Inline,
    /// Secret-sourced values are written as Kafka config-provider references to the Secret
    /// mounted at `<mountPath>/secrets/<secret>`; no secret byte is written to the output.
    Deferred,
}

/// A key of a ConfigMap or Secret in the same namespace.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KeyRef {
    /// Name of the object, in the KafkaToolConfig's own namespace.
    pub name: String,
    /// Key inside the object's data.
    pub key: String,
    /// Only the config's own namespace is allowed; any other is refused
    /// (`CrossNamespaceReference`) rather than silently ignored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// When true, a missing object or key is not an error: the source is skipped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub optional: Option<bool>,
}

impl KeyRef {
    pub fn is_optional(&self) -> bool {
        self.optional.unwrap_or(false)
    }
}

/// A `.properties` file held in a ConfigMap or Secret key (exactly one of the two).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("x-kubernetes-validations" = [{
    "rule": "has(self.configMapKeyRef) != has(self.secretKeyRef)",
    "message": "set exactly one of configMapKeyRef and secretKeyRef"
}]))]
pub struct ConfigFileSource {
    /// A key of a ConfigMap holding a `.properties` file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config_map_key_ref: Option<KeyRef>,
    /// A key of a Secret holding a `.properties` file; its values are treated as sensitive.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret_key_ref: Option<KeyRef>,
    /// Apply the file to this role only; by default it applies to every role of the tool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<Role>,
}

/// An entry of `spec.env`, the same shape as a container's `env` entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("x-kubernetes-validations" = [{
    "rule": "has(self.value) != has(self.valueFrom)",
    "message": "set exactly one of value and valueFrom"
}]))]
pub struct EnvVar {
    /// Referenced as `${env.NAME}`.
    pub name: String,
    /// A literal value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    /// A value read from a ConfigMap or Secret key in the same namespace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value_from: Option<EnvVarSource>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("x-kubernetes-validations" = [{
    "rule": "has(self.configMapKeyRef) != has(self.secretKeyRef)",
    "message": "set exactly one of configMapKeyRef and secretKeyRef"
}]))]
pub struct EnvVarSource {
    /// A key of a ConfigMap in the same namespace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config_map_key_ref: Option<KeyRef>,
    /// A key of a Secret in the same namespace; the value is sensitive.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret_key_ref: Option<KeyRef>,
}

/// Where and how the rendered files are written.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("x-kubernetes-validations" = [
    {
        "rule": "!has(self.keep) || (has(self.immutable) && self.immutable)",
        "message": "keep counts previous immutable outputs: set immutable: true, or remove keep"
    },
    {
        "rule": "!has(self.name) || !has(self.immutable) || !self.immutable || size(self.name) <= 244",
        "message": "with immutable: true the output is named <name>-<hash8>, which must fit in 253 characters: name may have at most 244"
    }
]))]
pub struct OutputSpec {
    /// ConfigMap (default) or Secret. Sensitive content requires Secret (or `secrets: Deferred`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<OutputKind>,
    /// Name of the output object; default `<metadata.name>-kafka`. A DNS-1123 subdomain.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 253), extend("x-kubernetes-validations" = [{
        "rule": "self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*$')",
        "message": "must be a DNS-1123 subdomain: lower-case letters, digits, '-' and '.', starting and ending with a letter or digit"
    }]))]
    pub name: Option<String>,
    /// Where pods mount the output; used for the file paths in `tool.args`. Default `/etc/kafka-config`.
    /// Absolute and normalised, only `A-Z a-z 0-9 . _ -` between the slashes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 4096), extend("x-kubernetes-validations" = [{
        "rule": "self.matches('^(/[A-Za-z0-9._-]+)+$') && !self.matches('/[.][.]?(/|$)')",
        "message": "must be an absolute, normalised path (no //, . or .. segment, no trailing /) of A-Z a-z 0-9 . _ - between slashes"
    }]))]
    pub mount_path: Option<String>,
    /// Also render Kafka's own defaults (layer 0) into the files. Default false.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub render_defaults: Option<bool>,
    /// Inline (default) or Deferred: how Secret-sourced values are written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secrets: Option<SecretsMode>,
    /// Content-addressed, immutable outputs named `<name>-<hash8>`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub immutable: Option<bool>,
    /// With `immutable`, how many previous outputs to keep. Default 3.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 50))]
    pub keep: Option<u32>,
}

impl OutputSpec {
    pub const DEFAULT_MOUNT_PATH: &'static str = "/etc/kafka-config";

    pub fn kind(&self) -> OutputKind {
        self.kind.unwrap_or_default()
    }

    pub fn mount_path(&self) -> &str {
        self.mount_path
            .as_deref()
            .unwrap_or(Self::DEFAULT_MOUNT_PATH)
            .trim_end_matches('/')
    }

    pub fn secrets(&self) -> SecretsMode {
        self.secrets.unwrap_or_default()
    }
}

/// A workload whose pod template gets the content hash, so it rolls when the content changes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RolloutTarget {
    /// Deployment, StatefulSet, DaemonSet, or Rollout (Argo Rollouts, `argoproj.io/v1alpha1`,
    /// with its own `spec.template`).
    pub kind: RolloutKind,
    /// Name of the workload in the same namespace.
    pub name: String,
}

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
pub enum RolloutKind {
    Deployment,
    StatefulSet,
    DaemonSet,
    /// Argo Rollouts' `argoproj.io/v1alpha1 Rollout` (with `spec.template`, not `workloadRef`).
    Rollout,
}

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RolloutSpec {
    /// Workloads to roll when the content hash changes; each kind and name at most once.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(extend("x-kubernetes-list-type" = "map", "x-kubernetes-list-map-keys" = ["kind", "name"]))]
    pub targets: Vec<RolloutTarget>,
}

/// The desired configuration of one Kafka tool or client.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ToolConfigSpec {
    /// A tool of the catalogue (`kafka-console-producer`, `kafka-topics`, …; the `.sh` suffix is
    /// optional), `client` for a plain client configuration, `connect-mirror-maker`, or
    /// `kafka-server` for broker/controller configuration.
    pub tool: String,
    /// For `client` and `kafka-server`: which role files to render.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub roles: Vec<Role>,
    /// Modern (KIP-1137, default) or Legacy (what today's tool does).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub precedence: Option<Precedence>,
    /// Kafka release the tool runs with (`4.1`); selects option spellings in `tool.args`.
    /// Default: the catalogue's release.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 32), extend("x-kubernetes-validations" = [{
        "rule": "self.matches('^[0-9]+([.][0-9]+){0,2}$')",
        "message": "must be a Kafka release number: major.minor or major.minor.patch (4.1, 3.9.1)"
    }]))]
    pub kafka_version: Option<String>,
    /// Layer 5: command-line arguments, by option name without dashes (`bootstrap-server`).
    #[serde(default, skip_serializing_if = "SpecMap::is_empty")]
    #[schemars(with = "BTreeMap<String, Scalar>")]
    pub args: SpecMap<Scalar>,
    /// Words passed to the tool after the options (sub-commands and action flags such as
    /// `--list`), one argument each.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub extra_args: Vec<String>,
    /// Layer 4: key=value properties, by role (or `common`).
    #[serde(default, skip_serializing_if = "SpecMap::is_empty")]
    #[schemars(schema_with = "role_properties_schema")]
    pub properties: RoleProperties,
    /// Layer 3: `.properties` files, in order; later files win.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub config_files: Vec<ConfigFileSource>,
    /// Values for `${env.NAME}` references; each name at most once.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(extend("x-kubernetes-list-type" = "map", "x-kubernetes-list-map-keys" = ["name"]))]
    pub env: Vec<EnvVar>,
    /// Values for `${name}` references.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub system_properties: BTreeMap<String, String>,
    /// Strict (default) or Lenient handling of references without a value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub references: Option<ReferenceMode>,
    /// Where and how the rendered files are written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<OutputSpec>,
    /// Workloads to roll when the content changes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rollout: Option<RolloutSpec>,
}

impl ToolConfigSpec {
    pub fn precedence(&self) -> Precedence {
        self.precedence.unwrap_or_default()
    }

    pub fn references(&self) -> ReferenceMode {
        self.references.unwrap_or_default()
    }

    pub fn output(&self) -> OutputSpec {
        self.output.clone().unwrap_or_default()
    }
}

/// Selects which KafkaToolConfigs a GlobalClientDefaults applies to.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GlobalSelector {
    /// Namespaces by label; absent selects every namespace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace_selector: Option<LabelSelector>,
    /// Only these tools (catalogue names); empty means all.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<String>,
    /// Only these roles; empty means all.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub roles: Vec<Role>,
}

/// A Kubernetes label selector.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LabelSelector {
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub match_labels: BTreeMap<String, String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub match_expressions: Vec<LabelSelectorRequirement>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LabelSelectorRequirement {
    pub key: String,
    /// In, NotIn, Exists or DoesNotExist.
    pub operator: SelectorOperator,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub values: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum SelectorOperator {
    In,
    NotIn,
    Exists,
    DoesNotExist,
}

impl LabelSelector {
    pub fn matches(&self, labels: &BTreeMap<String, String>) -> bool {
        self.match_labels
            .iter()
            .all(|(k, v)| labels.get(k) == Some(v))
            && self.match_expressions.iter().all(|req| {
                let value = labels.get(&req.key);
                match req.operator {
                    SelectorOperator::In => value.is_some_and(|v| req.values.contains(v)),
                    SelectorOperator::NotIn => value.is_none_or(|v| !req.values.contains(v)),
                    SelectorOperator::Exists => value.is_some(),
                    SelectorOperator::DoesNotExist => value.is_none(),
                }
            })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
pub enum OverrideMode {
    /// A KafkaToolConfig may set any key (default).
    #[default]
    All,
    /// A KafkaToolConfig may set no key.
    None,
    /// Only keys matching `keys`.
    Allowlist,
    /// Every key except those matching `keys`.
    Denylist,
}

/// What a KafkaToolConfig may set (KIP-781's client config override policy).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct OverridePolicy {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<OverrideMode>,
    /// Exact keys or `prefix*` patterns.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub keys: Vec<String>,
}

impl OverridePolicy {
    pub fn mode(&self) -> OverrideMode {
        self.mode.unwrap_or_default()
    }

    pub fn allows(&self, key: &str) -> bool {
        let listed = || self.keys.iter().any(|pattern| key_matches(pattern, key));
        match self.mode() {
            OverrideMode::All => true,
            OverrideMode::None => false,
            OverrideMode::Allowlist => listed(),
            OverrideMode::Denylist => !listed(),
        }
    }
}

/// `ssl.*` matches every key starting with `ssl.`; anything else matches exactly.
pub fn key_matches(pattern: &str, key: &str) -> bool {
    match pattern.strip_suffix('*') {
        Some(prefix) => key.starts_with(prefix),
        None => pattern == key,
    }
}

/// Cluster-wide defaults, enforced settings and override policy for the configs it selects.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GlobalClientDefaultsSpec {
    /// Several may match one config: applied in ascending priority, then by name. Default 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<i32>,
    /// Which configs this applies to; absent selects all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<GlobalSelector>,
    /// Layer 1: defaults below everything a namespace writes.
    #[serde(default, skip_serializing_if = "SpecMap::is_empty")]
    #[schemars(schema_with = "role_properties_schema")]
    pub defaults: RoleProperties,
    /// Layer 6: fixed settings that beat everything a namespace writes.
    #[serde(default, skip_serializing_if = "SpecMap::is_empty")]
    #[schemars(schema_with = "role_properties_schema")]
    pub enforced: RoleProperties,
    /// What a KafkaToolConfig may set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub override_policy: Option<OverridePolicy>,
}

impl GlobalClientDefaultsSpec {
    pub fn priority(&self) -> i32 {
        self.priority.unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::{COMMON, Role, properties_label};

    #[test]
    fn every_section_has_its_properties_label() {
        let sections = std::iter::once(COMMON).chain(Role::ALL.iter().map(|r| r.as_str()));
        for section in sections {
            assert_eq!(
                properties_label(section).map(str::to_string),
                Some(format!("properties.{section}"))
            );
        }
        assert_eq!(properties_label("no-such-section"), None);
    }
}
