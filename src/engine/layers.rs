//! The layers of DESIGN section 3 and the provenance of every key.

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

use serde::Serialize;

use crate::engine::catalogue::configs::ConfigKey;
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
    pub source: Source,
    pub value: Value,
}

/// Where a value came from, as messages and `explain` name it. The lines of a config file share
/// one label of the file and keep their number: `label:line` is written out only when something
/// shows it, not for every line read.
#[derive(Clone, PartialEq, Eq)]
pub enum Source {
    /// `args.topic`, `--timeout default`, `Kafka default`, …
    Text(Cow<'static, str>),
    /// `configFiles[0] base-client/client.properties` and the line: `…client.properties:2`.
    Line { file: Arc<str>, line: u32 },
}

impl Default for Source {
    fn default() -> Self {
        Source::Text(Cow::Borrowed(""))
    }
}

impl Source {
    /// The text, borrowed when it is a label as it is.
    pub fn text(&self) -> Cow<'_, str> {
        match self {
            Source::Text(text) => Cow::Borrowed(text),
            Source::Line { .. } => {
                let mut text = String::new();
                self.push_to(&mut text);
                Cow::Owned(text)
            }
        }
    }

    /// Appends the text to `out`: the file label and the line as pieces, without a formatter
    /// around the whole (an unknown key's warning writes its source this way).
    pub fn push_to(&self, out: &mut String) {
        match self {
            Source::Text(text) => out.push_str(text),
            Source::Line { file, line } => {
                out.reserve(file.len() + 11);
                out.push_str(file);
                out.push(':');
                push_decimal(out, *line);
            }
        }
    }
}

/// `n` in decimal, its digits written into a buffer first: through `write!` a line's source cost
/// ~320 instructions, this way ~215 (callgrind); evaluate_and_render/5000 writes one per key.
fn push_decimal(out: &mut String, n: u32) {
    let mut digits = [0u8; 10];
    let mut at = digits.len();
    let mut rest = n;
    loop {
        at -= 1;
        digits[at] = b'0' + (rest % 10) as u8;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    out.extend(digits[at..].iter().map(|&d| char::from(d)));
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::Text(text) => f.write_str(text),
            Source::Line { file, line } => write!(f, "{file}:{line}"),
        }
    }
}

/// As the text it shows.
impl fmt::Debug for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.text(), f)
    }
}

impl PartialEq<str> for Source {
    fn eq(&self, other: &str) -> bool {
        self.text() == other
    }
}

impl PartialEq<&str> for Source {
    fn eq(&self, other: &&str) -> bool {
        self.text() == *other
    }
}

impl From<&'static str> for Source {
    fn from(text: &'static str) -> Self {
        Source::Text(Cow::Borrowed(text))
    }
}

impl From<String> for Source {
    fn from(text: String) -> Self {
        Source::Text(Cow::Owned(text))
    }
}

impl From<Source> for String {
    fn from(source: Source) -> Self {
        match source {
            Source::Text(text) => text.into_owned(),
            line => line.text().into_owned(),
        }
    }
}

impl Contribution {
    pub fn new(layer: Layer, source: impl Into<Source>, value: impl Into<Value>) -> Self {
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
    pub fn shadow_label(&self) -> Cow<'static, str> {
        match self.layer {
            Layer::ConfigFiles | Layer::ClusterDefaults | Layer::Enforced => {
                Cow::Owned(self.source.text().into_owned())
            }
            _ => Cow::Borrowed(self.layer.as_str()),
        }
    }
}

/// Every value one key received, highest precedence first; the first is the winner. The key is
/// the one a view maps to it (`RoleView::keys`).
#[derive(Debug, Clone)]
pub struct Provenance {
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
