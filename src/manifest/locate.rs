//! Where things are in a manifest file: the line and column of a field (for error messages), and
//! YAML syntax errors that never quote the file (inside a Secret, the content is the secret).

use std::collections::BTreeMap;

use serde::Deserialize;
use serde::de::{self, MapAccess, SeqAccess, Visitor};
use serde_saphyr::Spanned;

use super::DEFAULT_NAMESPACE;
use crate::output::DataError;

pub(super) trait Located {
    fn field_and_key(&self) -> Option<(&'static str, &str)>;
    fn located(&self, text: &str, index: usize, namespace: &str, name: &str) -> String;
}

impl Located for DataError {
    fn field_and_key(&self) -> Option<(&'static str, &str)> {
        match self {
            DataError::NotAString { field, key, .. } | DataError::NotBase64 { field, key, .. } => {
                Some((field, key))
            }
            DataError::DuplicateKey { key } => Some(("data", key)),
            DataError::NotAMap { .. } => None,
        }
    }

    /// The message with the line and column of the value in `text` (document `index`), when
    /// they can be found.
    fn located(&self, text: &str, index: usize, namespace: &str, name: &str) -> String {
        let at = self
            .field_and_key()
            .and_then(|(field, key)| value_location(text, index, field, key))
            .map(|(line, column)| format!("line {line}, column {column}: "))
            .unwrap_or_default();
        format!("{at}{namespace}/{name}: {self}")
    }
}

/// Where the value of `field.key` of document `index` starts (1-based line and column). Read
/// again only when an error needs it, so a valid file is parsed once.
fn value_location(text: &str, index: usize, field: &str, key: &str) -> Option<(u64, u64)> {
    type Spans = Option<BTreeMap<String, serde_saphyr::Spanned<serde::de::IgnoredAny>>>;
    #[derive(Deserialize)]
    struct Located {
        #[serde(default)]
        data: Spans,
        #[serde(default, rename = "stringData")]
        string_data: Spans,
        #[serde(default, rename = "binaryData")]
        binary_data: Spans,
    }
    let options = serde_saphyr::options! { with_snippet: false };
    let documents: Vec<Option<Located>> =
        serde_saphyr::from_multiple_with_options(text, options).ok()?;
    let document = documents.into_iter().nth(index)??;
    let spans = match field {
        "data" => document.data,
        "stringData" => document.string_data,
        "binaryData" => document.binary_data,
        _ => None,
    }?;
    let at = spans.get(key)?.referenced;
    (at.line() > 0).then(|| (at.line(), at.column()))
}

/// A YAML syntax error with its line and column and never a snippet of the file; inside a Secret
/// not even the parser's words (they may quote what they stumbled on), only where it is.
pub(super) fn yaml_error_message(text: &str, error: &serde_saphyr::Error) -> String {
    let Some(at) = error.location().filter(|l| l.line() > 0) else {
        return format!("not valid YAML: {error}");
    };
    let (line, column) = (at.line(), at.column());
    match secret_around(text, line) {
        Some(place) => format!(
            "line {line}, column {column}: not valid YAML inside {place} (the content is not \
             shown: it may be secret)"
        ),
        None => format!("line {line}, column {column}: not valid YAML: {error}"),
    }
}

/// When 1-based `line` of `text` is in a document of kind Secret: "Secret NS/NAME", with the
/// field and key the line is under where the indentation tells (`stringData` key `password`).
/// A plain scan of the lines: the YAML could not be parsed.
fn secret_around(text: &str, line: u64) -> Option<String> {
    let lines: Vec<&str> = text.lines().collect();
    let here = usize::try_from(line)
        .ok()?
        .saturating_sub(1)
        .min(lines.len());
    let is_separator = |l: &str| l.starts_with("---");
    let start = lines[..here]
        .iter()
        .rposition(|l| is_separator(l))
        .map_or(0, |i| i + 1);
    let end = lines[here..]
        .iter()
        .position(|l| is_separator(l))
        .map_or(lines.len(), |i| here + i);
    let document = &lines[start..end];
    fn top<'a>(l: &'a str, key: &str) -> Option<&'a str> {
        l.strip_prefix(key)
            .and_then(|rest| rest.strip_prefix(':'))
            .map(str::trim)
    }
    let kind = document.iter().find_map(|l| top(l, "kind"))?;
    if kind.trim_matches(|c| c == '"' || c == '\'') != "Secret" {
        return None;
    }
    // metadata: {name: x, namespace: y} or a block with indented name:/namespace:.
    let word = |l: &str, key: &str| {
        let at = l.find(&format!("{key}:"))?;
        let before = l[..at].chars().last();
        if before.is_some_and(|c| c.is_alphanumeric()) {
            return None;
        }
        let value = l[at + key.len() + 1..].trim_start();
        let value: String = value
            .chars()
            .take_while(|c| !matches!(c, ',' | '}' | ' ' | '#'))
            .collect();
        (!value.is_empty()).then(|| value.trim_matches(|c| c == '"' || c == '\'').to_string())
    };
    let metadata = document.iter().position(|l| top(l, "metadata").is_some());
    let in_metadata = |key: &str| {
        let from = metadata?;
        let mut scope = vec![document[from]];
        scope.extend(
            document[from + 1..]
                .iter()
                .take_while(|l| l.starts_with(' ') || l.trim().is_empty()),
        );
        scope.iter().find_map(|l| word(l, key))
    };
    let name = in_metadata("name").unwrap_or_default();
    let namespace = in_metadata("namespace").unwrap_or_else(|| DEFAULT_NAMESPACE.to_string());
    let mut place = format!("Secret {namespace}/{name}");
    // The top-level field the line is under, and the key at that field's first indentation.
    let local = here
        .saturating_sub(start)
        .min(document.len().saturating_sub(1));
    let field_at = document[..=local]
        .iter()
        .rposition(|l| !l.starts_with(' ') && !l.trim().is_empty() && !l.starts_with('#'));
    if let Some(field_at) = field_at
        && let Some(field) = ["data", "stringData"]
            .into_iter()
            .find(|f| top(document[field_at], f).is_some())
    {
        place.push_str(&format!(", {field}"));
        let children = &document[field_at + 1..=local];
        let indent = children
            .iter()
            .find(|l| !l.trim().is_empty())
            .map(|l| l.len() - l.trim_start().len());
        let key = indent.and_then(|indent| {
            children.iter().rev().find_map(|l| {
                let own = l.len() - l.trim_start().len();
                let (key, _) = l.trim_start().split_once(':')?;
                (own == indent && !key.starts_with('#')).then(|| key.trim().to_string())
            })
        });
        if let Some(key) = key {
            place.push_str(&format!(" key {key}"));
        }
    }
    Some(place)
}

/// One step of a field path: a mapping key or a list index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    Key(String),
    Index(usize),
}

/// `spec.properties.producer.linger.ms`, `spec.env[1].name`: the path as people write it (a key
/// with dots stays as it is, as in the and kubectl's messages).
pub fn path_text(steps: &[Step]) -> String {
    let mut out = String::new();
    for step in steps {
        match step {
            Step::Key(key) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(key);
            }
            Step::Index(index) => out.push_str(&format!("[{index}]")),
        }
    }
    out
}

/// A document's nodes, each with where its value starts: only read again when an error needs a
/// line, so a valid file is parsed once.
enum Node {
    Map(Vec<(String, Spanned<Node>)>),
    Seq(Vec<Spanned<Node>>),
    Leaf,
}

struct NodeVisitor;

impl<'de> Visitor<'de> for NodeVisitor {
    type Value = Node;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("any YAML value")
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Node, E> {
        Ok(Node::Leaf)
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Node, E> {
        Ok(Node::Leaf)
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Node, E> {
        Ok(Node::Leaf)
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Node, E> {
        Ok(Node::Leaf)
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<Node, E> {
        Ok(Node::Leaf)
    }
    fn visit_bytes<E: de::Error>(self, _: &[u8]) -> Result<Node, E> {
        Ok(Node::Leaf)
    }
    fn visit_unit<E: de::Error>(self) -> Result<Node, E> {
        Ok(Node::Leaf)
    }
    fn visit_none<E: de::Error>(self) -> Result<Node, E> {
        Ok(Node::Leaf)
    }
    fn visit_some<D: de::Deserializer<'de>>(self, d: D) -> Result<Node, D::Error> {
        Node::deserialize(d)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Node, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element::<Spanned<Node>>()? {
            items.push(item);
        }
        Ok(Node::Seq(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Node, A::Error> {
        let mut entries = Vec::new();
        while let Some(KeyText(key)) = map.next_key::<KeyText>()? {
            entries.push((key, map.next_value::<Spanned<Node>>()?));
        }
        Ok(Node::Map(entries))
    }
}

impl<'de> Deserialize<'de> for Node {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Node, D::Error> {
        d.deserialize_any(NodeVisitor)
    }
}

/// A mapping key of any scalar type, as text (`1: x` is the key "1", as in the JSON the reader
/// works on).
struct KeyText(String);

impl<'de> Deserialize<'de> for KeyText {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<KeyText, D::Error> {
        struct KeyVisitor;
        impl Visitor<'_> for KeyVisitor {
            type Value = KeyText;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a scalar key")
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<KeyText, E> {
                Ok(KeyText(v.to_string()))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<KeyText, E> {
                Ok(KeyText(v.to_string()))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<KeyText, E> {
                Ok(KeyText(v.to_string()))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<KeyText, E> {
                Ok(KeyText(v.to_string()))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<KeyText, E> {
                Ok(KeyText(v.to_string()))
            }
            fn visit_unit<E: de::Error>(self) -> Result<KeyText, E> {
                Ok(KeyText("null".to_string()))
            }
        }
        d.deserialize_any(KeyVisitor)
    }
}

/// Where (1-based line and column) the value at `steps` of document `index` of `text` starts; as
/// far down the path as it exists.
pub fn field_location(text: &str, index: usize, steps: &[Step]) -> Option<(u64, u64)> {
    let options = serde_saphyr::options! { with_snippet: false };
    let documents: Vec<Spanned<Node>> =
        serde_saphyr::from_multiple_with_options(text, options).ok()?;
    let mut node = documents.get(index)?;
    let mut found = None;
    for step in steps {
        let next = match (&node.value, step) {
            (Node::Map(entries), Step::Key(key)) => {
                entries.iter().find(|(k, _)| k == key).map(|(_, v)| v)
            }
            (Node::Seq(items), Step::Index(i)) => items.get(*i),
            _ => None,
        };
        let Some(next) = next else { break };
        node = next;
        found = Some(node.referenced);
    }
    let at = found?;
    (at.line() > 0).then(|| (at.line(), at.column()))
}

/// `line L, column C: ` for the field at `steps`, or nothing when it cannot be placed.
pub fn at_field(text: &str, index: usize, steps: &[Step]) -> String {
    field_location(text, index, steps)
        .map(|(line, column)| format!("line {line}, column {column}: "))
        .unwrap_or_default()
}
