//! What an evaluation reports: problems (which decide the conditions), warnings and shadowing.
//! Reasons are public API (they appear in status conditions): CamelCase and stable.

use std::fmt;
use std::sync::Arc;

use serde::Serialize;

use crate::engine::spec::Role;
use crate::engine::text_order;

/// Why a condition is not True, or why a warning was raised.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub enum Reason {
    // SourcesResolved=False
    ConfigMapNotFound,
    SecretNotFound,
    KeyNotFound,
    ParseError,
    UnresolvedReference,
    CrossNamespaceReference,
    // Valid=False
    UnknownTool,
    UnknownRole,
    InvalidArgument,
    InvalidValue,
    MissingRequired,
    OverrideNotAllowed,
    SensitiveValueInConfigMap,
    RoleConflict,
    LocalOnlyKey,
    OutputTooLarge,
    // Warnings
    ForcedByTool,
    Enforced,
    UnknownKey,
    DeprecatedKey,
    NonAsciiInFile,
    OverrideIgnored,
    GlobalDefaultsInvalid,
    ConflictingKeys,
}

impl Reason {
    pub fn as_str(self) -> &'static str {
        match self {
            Reason::ConfigMapNotFound => "ConfigMapNotFound",
            Reason::SecretNotFound => "SecretNotFound",
            Reason::KeyNotFound => "KeyNotFound",
            Reason::ParseError => "ParseError",
            Reason::UnresolvedReference => "UnresolvedReference",
            Reason::CrossNamespaceReference => "CrossNamespaceReference",
            Reason::UnknownTool => "UnknownTool",
            Reason::UnknownRole => "UnknownRole",
            Reason::InvalidArgument => "InvalidArgument",
            Reason::InvalidValue => "InvalidValue",
            Reason::MissingRequired => "MissingRequired",
            Reason::OverrideNotAllowed => "OverrideNotAllowed",
            Reason::SensitiveValueInConfigMap => "SensitiveValueInConfigMap",
            Reason::RoleConflict => "RoleConflict",
            Reason::LocalOnlyKey => "LocalOnlyKey",
            Reason::OutputTooLarge => "OutputTooLarge",
            Reason::ForcedByTool => "ForcedByTool",
            Reason::Enforced => "Enforced",
            Reason::UnknownKey => "UnknownKey",
            Reason::DeprecatedKey => "DeprecatedKey",
            Reason::NonAsciiInFile => "NonAsciiInFile",
            Reason::OverrideIgnored => "OverrideIgnored",
            Reason::GlobalDefaultsInvalid => "GlobalDefaultsInvalid",
            Reason::ConflictingKeys => "ConflictingKeys",
        }
    }
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A failure: the config is not rendered while any exists.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Problem {
    pub reason: Reason,
    /// Which field of the spec (or which object) the problem is in.
    pub field: String,
    pub message: String,
}

impl Problem {
    pub fn new(reason: Reason, field: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            reason,
            field: field.into(),
            message: message.into(),
        }
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.field.is_empty() {
            write!(f, "{}: {}", self.reason, self.message)
        } else {
            write!(f, "{}: {}: {}", self.reason, self.field, self.message)
        }
    }
}

/// Something the user should know that does not stop rendering. Never carries a secret value.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Warning {
    pub key: Text,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub role: Option<Role>,
    pub reason: Reason,
    pub message: Text,
}

/// The text of a warning, read as a `str`: its own string, or a part of a buffer that many
/// warnings share. A config with hundreds of custom keys gets an `UnknownKey` warning for each;
/// their messages are written into one buffer and each key is the start of its message, so the
/// warnings cost one allocation between them instead of two each.
#[derive(Clone)]
pub struct Text(TextRepr);

#[derive(Clone)]
enum TextRepr {
    Owned(String),
    Shared {
        buffer: Arc<String>,
        start: usize,
        end: usize,
    },
}

impl Text {
    /// The part `range` of a shared buffer; an empty text when `range` is not a part of it.
    pub fn shared(buffer: &Arc<String>, range: std::ops::Range<usize>) -> Self {
        if buffer.get(range.clone()).is_none() {
            return Text::default();
        }
        Text(TextRepr::Shared {
            buffer: Arc::clone(buffer),
            start: range.start,
            end: range.end,
        })
    }

    pub fn as_str(&self) -> &str {
        match &self.0 {
            TextRepr::Owned(text) => text,
            TextRepr::Shared { buffer, start, end } => buffer.get(*start..*end).unwrap_or(""),
        }
    }
}

impl Default for Text {
    fn default() -> Self {
        Text(TextRepr::Owned(String::new()))
    }
}

impl std::ops::Deref for Text {
    type Target = str;

    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl AsRef<str> for Text {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl std::borrow::Borrow<str> for Text {
    fn borrow(&self) -> &str {
        self.as_str()
    }
}

impl From<String> for Text {
    fn from(text: String) -> Self {
        Text(TextRepr::Owned(text))
    }
}

impl From<&str> for Text {
    fn from(text: &str) -> Self {
        Text(TextRepr::Owned(text.to_string()))
    }
}

impl From<Text> for String {
    fn from(text: Text) -> Self {
        match text.0 {
            TextRepr::Owned(text) => text,
            TextRepr::Shared { .. } => text.as_str().to_string(),
        }
    }
}

impl fmt::Display for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Debug for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl PartialEq for Text {
    fn eq(&self, other: &Self) -> bool {
        text_order::equal(self.as_str(), other.as_str())
    }
}

impl Eq for Text {}

impl PartialOrd for Text {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Text {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        text_order::compare(self.as_str(), other.as_str())
    }
}

impl std::hash::Hash for Text {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.as_str().hash(state);
    }
}

impl PartialEq<str> for Text {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for Text {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl PartialEq<String> for Text {
    fn eq(&self, other: &String) -> bool {
        self.as_str() == other.as_str()
    }
}

impl PartialEq<Text> for str {
    fn eq(&self, other: &Text) -> bool {
        self == other.as_str()
    }
}

impl PartialEq<Text> for &str {
    fn eq(&self, other: &Text) -> bool {
        *self == other.as_str()
    }
}

impl PartialEq<Text> for String {
    fn eq(&self, other: &Text) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Serialize for Text {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

/// A key set by more than one layer: who won, over whom (names only, never values).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Shadowed {
    pub key: String,
    pub role: Role,
    pub winner: String,
    pub over: Vec<String>,
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::Text;

    #[test]
    fn shared_and_owned_texts_compare_print_and_serialize_as_their_str() {
        let buffer = Arc::new("custom.a (from x): y".to_string());
        let key = Text::shared(&buffer, 0..8);
        let message = Text::shared(&buffer, 0..buffer.len());
        assert_eq!(key, "custom.a");
        assert_eq!(key, Text::from("custom.a"));
        let owned = String::from("custom.a");
        assert!("custom.a" == key);
        assert!(key == owned);
        assert!(owned == key);
        assert_eq!(message.as_str(), buffer.as_str());
        assert!(key < message && message.contains("(from x)"));
        assert_eq!(format!("{key} {key:?}"), "custom.a \"custom.a\"");
        assert_eq!(
            serde_json::to_string(&key).ok().as_deref(),
            Some("\"custom.a\"")
        );
        assert_eq!(String::from(key.clone()), "custom.a");
        // Not a part of the buffer (out of range, or not on a char boundary): empty.
        assert_eq!(Text::shared(&buffer, 5..99), "");
        let accented = Arc::new("é".to_string());
        assert_eq!(Text::shared(&accented, 0..1), "");
    }
}
