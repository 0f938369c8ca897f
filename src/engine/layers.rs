//! The layers of DESIGN section 3 and the provenance of every key.

use std::fmt;
use std::sync::Arc;

use serde::Serialize;

use crate::engine::outcome::Text;
use crate::engine::reference::SecretPart;
use crate::engine::text_order;

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

/// Where a Secret-held value sits, so `output.secrets: Deferred` can write a reference instead.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SecretOrigin {
    /// Substitutions of Secret-sourced `${env.X}` references inside the value.
    Parts(Vec<SecretPart>),
    /// The whole value is a key of a `.properties` file held in a Secret.
    File {
        secret: String,
        file_key: String,
        property: String,
    },
}

/// Where a value came from, for people: `args.topic`, `properties.producer`, or a file line
/// `configFiles[0] base-client/client.properties:2`. A file's lines share one label and keep only
/// their number, so the text is built when someone reads it (a large file costs no label per key).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Source {
    label: Label,
    line: Option<u32>,
}

#[derive(Debug, Clone)]
enum Label {
    Fixed(&'static str),
    Shared(Arc<str>),
}

impl Label {
    fn as_str(&self) -> &str {
        match self {
            Label::Fixed(text) => text,
            Label::Shared(text) => text,
        }
    }
}

impl PartialEq for Label {
    fn eq(&self, other: &Self) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for Label {}

impl Source {
    /// A label known at compile time (`Kafka default`): no allocation.
    pub const fn fixed(label: &'static str) -> Self {
        Self {
            label: Label::Fixed(label),
            line: None,
        }
    }

    /// A label made once and shared by the values of many evaluations (a tool's, an option's).
    pub fn shared(label: &Arc<str>) -> Self {
        Self {
            label: Label::Shared(Arc::clone(label)),
            line: None,
        }
    }

    /// Line `line` of the file labelled `file` (`configFiles[0] base-client/client.properties`).
    pub fn line(file: &Arc<str>, line: u32) -> Self {
        Self {
            label: Label::Shared(Arc::clone(file)),
            line: Some(line),
        }
    }

    /// Appends the text to `out` without formatting machinery (it runs for every key of a file
    /// that the catalogue does not know).
    pub fn push_to(&self, out: &mut String) {
        out.push_str(self.label.as_str());
        if let Some(line) = self.line {
            out.push(':');
            push_decimal(out, line);
        }
    }

    /// The length of the text.
    pub fn text_len(&self) -> usize {
        self.label.as_str().len() + self.line.map_or(0, |n| 1 + decimal_len(n))
    }
}

fn decimal_len(mut n: u32) -> usize {
    let mut len = 1;
    while n >= 10 {
        n /= 10;
        len += 1;
    }
    len
}

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
        f.write_str(self.label.as_str())?;
        match self.line {
            Some(line) => write!(f, ":{line}"),
            None => Ok(()),
        }
    }
}

impl From<String> for Source {
    fn from(label: String) -> Self {
        Self {
            label: Label::Shared(label.into()),
            line: None,
        }
    }
}

impl From<&str> for Source {
    fn from(label: &str) -> Self {
        Self {
            label: Label::Shared(label.into()),
            line: None,
        }
    }
}

impl PartialEq<str> for Source {
    fn eq(&self, other: &str) -> bool {
        match self.line {
            None => self.label.as_str() == other,
            Some(line) => other
                .strip_prefix(self.label.as_str())
                .and_then(|rest| rest.strip_prefix(':'))
                .is_some_and(|digits| {
                    digits.len() == decimal_len(line) && digits.parse::<u32>() == Ok(line)
                }),
        }
    }
}

impl PartialEq<&str> for Source {
    fn eq(&self, other: &&str) -> bool {
        *self == **other
    }
}

/// One layer's value for a key. `Debug` and `Drop` (redacted, zeroed): `engine::secret`.
#[derive(Clone, PartialEq, Eq)]
pub struct Contribution {
    pub layer: Layer,
    /// Human-readable origin: `configFiles[0] base-client/client.properties:2`, `args.topic`, …
    pub source: Source,
    pub value: String,
    /// Boxed: almost no value has one, and a smaller contribution is cheaper to move.
    pub secret: Option<Box<SecretOrigin>>,
}

impl Contribution {
    pub fn new(layer: Layer, source: impl Into<Source>, value: impl Into<String>) -> Self {
        Self {
            layer,
            source: source.into(),
            value: value.into(),
            secret: None,
        }
    }

    pub fn is_secret_sourced(&self) -> bool {
        self.secret.is_some()
    }

    /// How the contribution is named in `status.shadowed`: the source for files (so the line is
    /// visible), else the layer.
    pub fn shadow_label(&self) -> String {
        match self.layer {
            Layer::ConfigFiles | Layer::ClusterDefaults | Layer::Enforced => {
                self.source.to_string()
            }
            _ => self.layer.as_str().to_string(),
        }
    }
}

/// Every value one key received, highest precedence first; the first is the winner.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Provenance {
    /// The key (its text usually a part of a buffer the role's keys share).
    pub key: Text,
    pub chain: Chain,
}

/// The contributions of one key, highest precedence first, read as a slice. Most keys have one
/// value, which is held inline: a chain allocates only from its second contribution on.
#[derive(Clone, PartialEq, Eq)]
pub struct Chain(ChainRepr);

#[derive(Clone, PartialEq, Eq)]
enum ChainRepr {
    One(Contribution),
    Many(Vec<Contribution>),
}

impl Chain {
    /// An empty chain (no allocation).
    pub const fn new() -> Self {
        Chain(ChainRepr::Many(Vec::new()))
    }

    /// An empty chain with room for `capacity` contributions (allocated only beyond one).
    pub fn with_capacity(capacity: usize) -> Self {
        if capacity <= 1 {
            Chain::new()
        } else {
            Chain(ChainRepr::Many(Vec::with_capacity(capacity)))
        }
    }

    pub fn push(&mut self, contribution: Contribution) {
        match &mut self.0 {
            ChainRepr::Many(all) if all.is_empty() && all.capacity() == 0 => {
                self.0 = ChainRepr::One(contribution);
            }
            ChainRepr::Many(all) => all.push(contribution),
            ChainRepr::One(_) => {
                let mut all = self.take_all(2);
                all.push(contribution);
                self.0 = ChainRepr::Many(all);
            }
        }
    }

    /// Inserts at `at` (at most the length), moving the later contributions down.
    pub fn insert(&mut self, at: usize, contribution: Contribution) {
        let mut all = self.take_all(self.len() + 1);
        all.insert(at, contribution);
        self.0 = ChainRepr::Many(all);
    }

    /// The contributions as a vector with room for `capacity`, leaving the chain empty.
    fn take_all(&mut self, capacity: usize) -> Vec<Contribution> {
        match std::mem::replace(&mut self.0, ChainRepr::Many(Vec::new())) {
            ChainRepr::One(first) => {
                let mut all = Vec::with_capacity(capacity.max(1));
                all.push(first);
                all
            }
            ChainRepr::Many(all) => all,
        }
    }
}

impl Default for Chain {
    fn default() -> Self {
        Chain::new()
    }
}

impl std::ops::Deref for Chain {
    type Target = [Contribution];

    fn deref(&self) -> &[Contribution] {
        match &self.0 {
            ChainRepr::One(first) => std::slice::from_ref(first),
            ChainRepr::Many(all) => all,
        }
    }
}

impl std::ops::DerefMut for Chain {
    fn deref_mut(&mut self) -> &mut [Contribution] {
        match &mut self.0 {
            ChainRepr::One(first) => std::slice::from_mut(first),
            ChainRepr::Many(all) => all,
        }
    }
}

impl<'c> IntoIterator for &'c Chain {
    type Item = &'c Contribution;
    type IntoIter = std::slice::Iter<'c, Contribution>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl From<Vec<Contribution>> for Chain {
    fn from(all: Vec<Contribution>) -> Self {
        Chain(ChainRepr::Many(all))
    }
}

impl Extend<Contribution> for Chain {
    fn extend<I: IntoIterator<Item = Contribution>>(&mut self, contributions: I) {
        for contribution in contributions {
            self.push(contribution);
        }
    }
}

/// As the vector it stands for: a list of (redacted) contributions.
impl fmt::Debug for Chain {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
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

/// A role's keys, each with its provenance, sorted by key. Built in one go from sorted chains and
/// searched by bisection: a large file costs one vector instead of a tree node and a second copy
/// of the key per entry.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KeyMap {
    entries: Vec<Provenance>,
}

impl KeyMap {
    /// `entries` sorted by key, no key twice (what grouping sorted contributions gives).
    pub fn from_sorted(entries: Vec<Provenance>) -> Self {
        debug_assert!(entries.windows(2).all(|w| w[0].key < w[1].key));
        Self { entries }
    }

    fn position(&self, key: &str) -> Result<usize, usize> {
        self.entries
            .binary_search_by(|p| text_order::compare(p.key.as_str(), key))
    }

    pub fn get(&self, key: &str) -> Option<&Provenance> {
        self.position(key).ok().map(|at| &self.entries[at])
    }

    pub fn contains_key(&self, key: &str) -> bool {
        self.position(key).is_ok()
    }

    pub fn remove(&mut self, key: &str) -> Option<Provenance> {
        self.position(key).ok().map(|at| self.entries.remove(at))
    }

    /// The key's provenance, created with an empty chain when the key is new.
    pub fn get_or_insert(&mut self, key: &str) -> &mut Provenance {
        let at = match self.position(key) {
            Ok(at) => at,
            Err(at) => {
                self.entries.insert(
                    at,
                    Provenance {
                        key: key.into(),
                        chain: Chain::new(),
                    },
                );
                at
            }
        };
        &mut self.entries[at]
    }

    /// In key order.
    pub fn values(&self) -> std::slice::Iter<'_, Provenance> {
        self.entries.iter()
    }

    /// In key order; the keys themselves stay as they are.
    pub fn chains_mut(&mut self) -> impl Iterator<Item = (&str, &mut Chain)> {
        self.entries
            .iter_mut()
            .map(|p| (p.key.as_str(), &mut p.chain))
    }

    /// `(key, provenance)` in key order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Provenance)> {
        self.entries.iter().map(|p| (p.key.as_str(), p))
    }

    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.entries.iter().map(|p| p.key.as_str())
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

impl std::ops::Index<&str> for KeyMap {
    type Output = Provenance;

    /// Panics when the key is absent, as a map's index does (tests read known keys this way).
    fn index(&self, key: &str) -> &Provenance {
        match self.get(key) {
            Some(provenance) => provenance,
            None => panic!("no key {key:?}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::{Chain, Contribution, KeyMap, Layer, Source};

    #[test]
    fn a_chain_reads_as_the_vector_of_its_contributions() {
        let value = |v: &str| Contribution::new(Layer::Properties, "properties.common", v);
        let values = |chain: &Chain| chain.iter().map(|c| c.value.clone()).collect::<Vec<_>>();
        let mut chain = Chain::new();
        assert!(chain.is_empty());
        chain.push(value("a"));
        assert_eq!(values(&chain), ["a"]);
        chain.push(value("b"));
        chain.insert(0, value("c"));
        assert_eq!(values(&chain), ["c", "a", "b"]);
        chain[1].value = "d".into();
        assert_eq!(chain.len(), 3);
        assert_eq!(
            (&chain).into_iter().nth(1).map(|c| c.value.as_str()),
            Some("d")
        );

        let mut one = Chain::with_capacity(1);
        one.insert(0, value("x"));
        one.insert(1, value("y"));
        assert_eq!(values(&one), ["x", "y"]);
        let mut sized = Chain::with_capacity(2);
        sized.extend([value("p"), value("q")]);
        assert_eq!(sized, Chain::from(vec![value("p"), value("q")]));
        assert_eq!(
            format!("{sized:?}"),
            format!("{:?}", vec![value("p"), value("q")])
        );
    }

    #[test]
    fn a_key_map_finds_inserts_and_removes_in_key_order() {
        let mut map = KeyMap::default();
        for key in ["b", "a", "c", "a"] {
            map.get_or_insert(key).chain.push(Contribution::new(
                Layer::Properties,
                "properties.common",
                key,
            ));
        }
        assert_eq!(map.keys().collect::<Vec<_>>(), ["a", "b", "c"]);
        assert_eq!(map["a"].chain.len(), 2);
        assert!(map.contains_key("b") && map.get("d").is_none());
        assert_eq!(
            map.remove("b").map(|p| p.key.to_string()),
            Some("b".to_string())
        );
        assert_eq!(map.keys().collect::<Vec<_>>(), ["a", "c"]);
        assert_eq!(map.len(), 2);
    }

    #[test]
    fn a_file_line_reads_as_its_file_and_decimal_line() {
        let file: Arc<str> = "configFiles[0] a/b.properties".into();
        for (line, text) in [
            (0, "configFiles[0] a/b.properties:0"),
            (7, "configFiles[0] a/b.properties:7"),
            (4_294_967_295, "configFiles[0] a/b.properties:4294967295"),
        ] {
            let source = Source::line(&file, line);
            let mut pushed = String::new();
            source.push_to(&mut pushed);
            assert_eq!(pushed, text);
            assert_eq!(source.to_string(), text);
            assert_eq!(source.text_len(), text.len());
            assert!(source == text);
            assert!(
                source != format!("{text}0").as_str() && source != "configFiles[0] a/b.properties"
            );
        }
        assert_eq!(Source::from("args.topic").to_string(), "args.topic");
        assert_eq!(Source::from("args.topic").text_len(), 10);
    }
}
