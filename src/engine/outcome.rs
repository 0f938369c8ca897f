//! What an evaluation reports: problems (which decide the conditions), warnings and shadowing.
//! Reasons are public API (they appear in status conditions): CamelCase and stable.

use std::borrow::Cow;
use std::fmt;

use serde::Serialize;

use crate::engine::safe_text;
use crate::engine::spec::Role;

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
    // Valid=False (and Ready=False). First, so that it names the condition: platform policy that
    // cannot be applied outranks what is wrong with the config itself.
    GlobalDefaultsInvalid,
    UnknownTool,
    UnknownRole,
    InvalidArgument,
    UnknownArgument,
    InvalidValue,
    MissingRequired,
    OverrideNotAllowed,
    SensitiveValueInConfigMap,
    SensitiveArgument,
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
    ConflictingKeys,
    DefaultAddress,
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
            Reason::UnknownArgument => "UnknownArgument",
            Reason::InvalidValue => "InvalidValue",
            Reason::MissingRequired => "MissingRequired",
            Reason::OverrideNotAllowed => "OverrideNotAllowed",
            Reason::SensitiveValueInConfigMap => "SensitiveValueInConfigMap",
            Reason::SensitiveArgument => "SensitiveArgument",
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
            Reason::DefaultAddress => "DefaultAddress",
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

/// The longest problem message kept: a message quotes user text, and a condition holds the
/// messages of every problem.
pub const MAX_MESSAGE_BYTES: usize = 4096;

impl Problem {
    pub fn new(reason: Reason, field: impl Into<String>, message: impl Into<String>) -> Self {
        let (field, message) = (field.into(), message.into());
        Self {
            reason,
            field: safe_text::cut(&field, safe_text::QUOTE_BYTES).into_owned(),
            message: safe_text::cut(&message, MAX_MESSAGE_BYTES).into_owned(),
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
    pub key: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub role: Option<Role>,
    pub reason: Reason,
    pub message: String,
}

/// A key set by more than one layer: who won, over whom (names only, never values).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Shadowed {
    pub key: String,
    pub role: Role,
    /// The winner's layer.
    pub winner: &'static str,
    /// [`Contribution::shadow_label`]s: a layer's name is borrowed, a file line's source written.
    ///
    /// [`Contribution::shadow_label`]: crate::engine::layers::Contribution::shadow_label
    pub over: Vec<Cow<'static, str>>,
}
