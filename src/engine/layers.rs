//! The layers of DESIGN section 3 and the provenance of every key.

use std::fmt;

use serde::Serialize;

use crate::engine::catalogue::configs::ConfigKey;
use crate::engine::key::Key;
use crate::engine::taint::Value;

/// A precedence layer. The derived order is the Modern order, lowest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Layer {
    /// 0: Kafka's own defaults (rendered only with `output.renderDefaults`).
    KafkaDefaults,
    /// 1: `GlobalClientDefaults.spec.defaults`.
    ClusterDefaults,
    /// 2: the tool's defaults and its options' defaults.
    ToolDefaults,
    /// 3: `spec.configFiles`.
    ConfigFiles,
    /// 4: `spec.properties`.
    Properties,
    /// 5: `spec.args`.
    Args,
    /// 6: `GlobalClientDefaults.spec.enforced`.
    Enforced,
    /// Keys the operator itself adds (`config.providers` for `output.secrets: Deferred`).
    Operator,
    /// `Legacy` only: values today's tool forces in code, above everything.
    ForcedByTool,
}

impl Layer {
    pub fn as_str(self) -> &'static str {
        match self {
            Layer::KafkaDefaults => "kafkaDefaults",
            Layer::ClusterDefaults => "clusterDefaults",
            Layer::ToolDefaults => "toolDefaults",
            Layer::ConfigFiles => "configFiles",
            Layer::Properties => "properties",
            Layer::Args => "args",
            Layer::Enforced => "enforced",
            Layer::Operator => "operator",
            Layer::ForcedByTool => "forcedByTool",
        }
    }

    /// Layers a KafkaToolConfig writes itself (what an override policy governs).
    pub fn is_user_layer(self) -> bool {
        matches!(self, Layer::ConfigFiles | Layer::Properties | Layer::Args)
    }
}

impl fmt::Display for Layer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One layer's value for a key; a value derived from a Secret is Secret data ([`Value::Secret`]).
/// `Debug` (redacted): `engine::secret`.
#[derive(Clone, PartialEq, Eq)]
pub struct Contribution {
    pub layer: Layer,
    /// Human-readable origin: `configFiles[0] base-client/client.properties:2`, `args.topic`, …
    pub source: String,
    pub value: Value,
}

impl Contribution {
    pub fn new(layer: Layer, source: impl Into<String>, value: impl Into<Value>) -> Self {
        Self {
            layer,
            source: source.into(),
            value: value.into(),
        }
    }

    pub fn is_secret_sourced(&self) -> bool {
        self.value.is_secret()
    }

    /// How the contribution is named in `status.shadowed`: the source for files (so the line is
    /// visible), else the layer.
    pub fn shadow_label(&self) -> String {
        match self.layer {
            Layer::ConfigFiles | Layer::ClusterDefaults | Layer::Enforced => self.source.clone(),
            _ => self.layer.as_str().to_string(),
        }
    }
}

/// Every value one key received, highest precedence first; the first is the winner.
#[derive(Debug, Clone)]
pub struct Provenance {
    /// Secret content when read from a Secret's file and not a name Kafka defines: shown only
    /// through [`Key::shown`].
    pub key: Key,
    pub chain: Vec<Contribution>,
    /// Kafka's definition of the key for the view's role, looked up once when the view is built.
    pub def: Option<&'static ConfigKey>,
}

impl Provenance {
    pub fn winner(&self) -> &Contribution {
        // A provenance is only created with its first contribution.
        &self.chain[0]
    }

    pub fn overridden(&self) -> &[Contribution] {
        &self.chain[1..]
    }
}
