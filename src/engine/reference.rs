//! KAFKA-6142 references: `${name[,name…][:default]}` resolved from `spec.systemProperties` and
//! `spec.env` (`env.NAME`), never from the operator's own environment.
//!
//! The substituted text is never scanned again, so a value cannot smuggle in another reference.
//! `$${` is a literal `${`. A `${provider:…}` whose provider is declared in `config.providers` is a
//! Kafka runtime reference (KIP-297) and stays verbatim for Kafka to resolve.

use std::cell::Cell;
use std::collections::{BTreeMap, BTreeSet};

use crate::engine::outcome::Reason;
use crate::engine::safe_text;
use crate::engine::taint::{TextBuilder, Value};

/// No single value may expand beyond what an output object can hold (`render::MAX_OUTPUT_BYTES`).
pub const MAX_EXPANDED_VALUE: usize = 1_000_000;
/// What substitutions may add over one evaluation, all layers and roles together. Shadowed values
/// are resolved too, so this is a multiple of the output limit; it bounds time and memory
/// (a 200 KB manifest that references a 100 KB value 10,000 times would otherwise build 1 GB).
pub const EXPANSION_BUDGET: usize = 16 * MAX_EXPANDED_VALUE;

/// Values for references: system properties by name, env entries by `env.`-less name (an entry
/// read from a Secret is Secret data), and what substitutions may still add in this evaluation
/// (checked while building, not after).
#[derive(Debug, Clone)]
pub struct Bindings {
    pub system_properties: BTreeMap<String, Value>,
    pub env: BTreeMap<String, Value>,
    expansion_left: Cell<usize>,
}

impl Default for Bindings {
    fn default() -> Self {
        Self {
            system_properties: BTreeMap::new(),
            env: BTreeMap::new(),
            expansion_left: Cell::new(EXPANSION_BUDGET),
        }
    }
}

impl Bindings {
    /// Takes `len` bytes of expansion for a value that is `current` bytes long so far.
    fn expand(&self, current: usize, len: usize) -> Result<(), Failure> {
        let left = self.expansion_left.get();
        if current.saturating_add(len) > MAX_EXPANDED_VALUE {
            return Err(Failure::TooLarge {
                limit: MAX_EXPANDED_VALUE,
                what: "one value",
            });
        }
        if len > left {
            return Err(Failure::TooLarge {
                limit: EXPANSION_BUDGET,
                what: "all values together",
            });
        }
        self.expansion_left.set(left - len);
        Ok(())
    }

    fn lookup(&self, name: &str) -> Option<&Value> {
        match name.strip_prefix("env.") {
            Some(env_name) => self.env.get(env_name),
            None => self.system_properties.get(name),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mode {
    /// An unresolved reference without default is an error.
    #[default]
    Strict,
    /// KAFKA-6142 as written: an unresolved reference becomes `""`.
    Lenient,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReferenceError {
    #[error("reference ${{{text}}} has no value: set {names} in spec.env or spec.systemProperties, or give a default (${{name:default}})", names = .names.join(" or "))]
    Unresolved { text: String, names: Vec<String> },
    #[error("reference starting at byte {offset} is not closed with '}}'")]
    Unterminated { offset: usize },
    /// `${env.A:${env.B}}`: the first `}` would close the outer reference and leave a stray `}`
    /// in the value, so a reference inside a reference is refused rather than half-resolved.
    #[error(
        "reference starting at byte {offset} contains another reference: nested references (such as a default written as ${{env.B}}) are not supported"
    )]
    Nested { offset: usize },
    #[error("references expand {what} beyond {limit} bytes")]
    TooLarge { limit: usize, what: &'static str },
    /// A reference inside Secret data (a value of a Secret file) names no value: said with the
    /// Secret key, never the reference's text, which is part of the Secret.
    #[error(
        "a value {from} has a reference that cannot be resolved (the reference is not shown: it is part of the Secret)"
    )]
    UnresolvedInSecret { from: String },
}

/// Why [`substitute`] stopped: `Copy`, so it can leave [`SecretText::derive`] without carrying
/// any of the text it was built from (the reference's position, not its text).
///
/// [`SecretText::derive`]: crate::engine::taint::SecretText::derive
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Failure {
    Unresolved { body: (usize, usize) },
    Unterminated { offset: usize },
    Nested { offset: usize },
    TooLarge { limit: usize, what: &'static str },
}

impl Failure {
    /// The error for a text the caller may quote.
    fn in_plain(self, text: &str) -> ReferenceError {
        self.textless().unwrap_or_else(|(start, end)| {
            let body = &text[start..end];
            ReferenceError::Unresolved {
                text: abbreviate(body),
                names: Reference::parse(body)
                    .names
                    .iter()
                    .take(5)
                    .map(|n| abbreviate(n))
                    .collect(),
            }
        })
    }

    /// The error for Secret data, `from` being its redaction.
    fn in_secret(self, from: String) -> ReferenceError {
        self.textless()
            .unwrap_or(ReferenceError::UnresolvedInSecret { from })
    }

    /// The error when it quotes nothing; else where the unresolved reference's body is.
    fn textless(self) -> Result<ReferenceError, (usize, usize)> {
        match self {
            Failure::Unresolved { body } => Err(body),
            Failure::Unterminated { offset } => Ok(ReferenceError::Unterminated { offset }),
            Failure::Nested { offset } => Ok(ReferenceError::Nested { offset }),
            Failure::TooLarge { limit, what } => Ok(ReferenceError::TooLarge { limit, what }),
        }
    }
}

impl ReferenceError {
    /// The condition reason it is reported under.
    pub fn reason(&self) -> Reason {
        match self {
            ReferenceError::Unresolved { .. } | ReferenceError::UnresolvedInSecret { .. } => {
                Reason::UnresolvedReference
            }
            ReferenceError::Unterminated { .. } | ReferenceError::Nested { .. } => {
                Reason::ParseError
            }
            ReferenceError::TooLarge { .. } => Reason::OutputTooLarge,
        }
    }
}

/// Where the first `${` of `text` starts: `text.find("${")` through a search for the `$` alone,
/// which most values (checked on every evaluation, one per key and layer) do not hold at all
/// (the two-byte search costs about 130 instructions a value even then, callgrind).
pub fn find_reference_start(text: &str) -> Option<usize> {
    let mut from = 0;
    while let Some(offset) = memchr::memchr(b'$', &text.as_bytes()[from..]) {
        let at = from + offset;
        if text.as_bytes().get(at + 1) == Some(&b'{') {
            return Some(at);
        }
        from = at + 1;
    }
    None
}

/// [`resolve`] of a value: plain text without references is moved, not copied (most values);
/// Secret data is resolved inside its type and stays Secret data.
pub fn resolve_value(
    value: Value,
    bindings: &Bindings,
    providers: &BTreeSet<String>,
    mode: Mode,
) -> Result<Value, ReferenceError> {
    match value {
        Value::Plain(text) if find_reference_start(&text).is_none() => Ok(Value::Plain(text)),
        Value::Plain(text) => resolve(&text, bindings, providers, mode),
        Value::Secret(secret) => secret
            .derive(|text, out| substitute(text, bindings, providers, mode, out).map(drop))
            .map_err(|failure| failure.in_secret(secret.redacted())),
    }
}

/// Resolves every reference in `text`; the result is Secret data when a Secret-sourced value was
/// substituted into it.
pub fn resolve(
    text: &str,
    bindings: &Bindings,
    providers: &BTreeSet<String>,
    mode: Mode,
) -> Result<Value, ReferenceError> {
    if find_reference_start(text).is_none() {
        return Ok(Value::from(text));
    }
    let mut out = TextBuilder::default();
    substitute(text, bindings, providers, mode, &mut out).map_err(|f| f.in_plain(text))?;
    Ok(out.finish())
}

/// Whether resolving `text` would substitute anything (a reference that is not `$${` and not
/// a declared provider's), or fail.
pub fn substitutes(text: &str, providers: &BTreeSet<String>) -> bool {
    substitute(
        text,
        &Bindings::default(),
        providers,
        Mode::Lenient,
        &mut TextBuilder::default(),
    )
    .unwrap_or(true)
}

/// Writes `text` with its references substituted into `out`; whether any reference was
/// substituted.
fn substitute(
    text: &str,
    bindings: &Bindings,
    providers: &BTreeSet<String>,
    mode: Mode,
    out: &mut TextBuilder,
) -> Result<bool, Failure> {
    let mut substituted = false;
    let bytes = text.as_bytes();
    let mut i = 0;
    let mut literal_start = 0;
    while i < bytes.len() {
        if bytes[i] != b'$' {
            i += 1;
            continue;
        }
        if text[i..].starts_with("$${") {
            out.push_str(&text[literal_start..i]);
            out.push_str("${");
            i += 3;
            literal_start = i;
            continue;
        }
        if !text[i..].starts_with("${") {
            i += 1;
            continue;
        }
        let Some(close) = text[i + 2..].find('}') else {
            match mode {
                Mode::Strict => return Err(Failure::Unterminated { offset: i }),
                Mode::Lenient => break,
            }
        };
        let body = &text[i + 2..i + 2 + close];
        if body.contains("${") {
            return Err(Failure::Nested { offset: i });
        }
        out.push_str(&text[literal_start..i]);
        let end = i + 2 + close + 1;
        let reference = Reference::parse(body);
        if reference.is_provider_reference(providers) {
            out.push_str(&text[i..end]);
        } else {
            substituted = true;
            match reference.first_bound(bindings) {
                Some(value) => {
                    bindings.expand(out.len(), value.len())?;
                    out.push_value(value);
                }
                None => match (reference.default, mode) {
                    (Some(default), _) => {
                        bindings.expand(out.len(), default.len())?;
                        out.push_str(default)
                    }
                    (None, Mode::Lenient) => {}
                    (None, Mode::Strict) => {
                        return Err(Failure::Unresolved {
                            body: (i + 2, i + 2 + close),
                        });
                    }
                },
            }
        }
        i = end;
        literal_start = i;
    }
    out.push_str(&text[literal_start..]);
    Ok(substituted)
}

/// Messages quote references; a hostile 100 KB one must not become a 100 KB condition.
fn abbreviate(text: &str) -> String {
    safe_text::cut(text, 80).into_owned()
}

/// The parts of one `${…}`: names to try in order, then an optional default.
#[derive(Debug, PartialEq, Eq)]
struct Reference<'a> {
    names: Vec<&'a str>,
    default: Option<&'a str>,
}

impl<'a> Reference<'a> {
    fn parse(body: &'a str) -> Self {
        let (names, default) = match body.split_once(':') {
            Some((names, default)) => (names, Some(default)),
            None => (body, None),
        };
        Self {
            names: names.split(',').map(str::trim).collect(),
            default,
        }
    }

    /// `${dir:/path:key}` parses as name `dir` with a default; it belongs to Kafka when `dir`
    /// is a declared config provider.
    fn is_provider_reference(&self, providers: &BTreeSet<String>) -> bool {
        self.default.is_some() && self.names.len() == 1 && providers.contains(self.names[0])
    }

    fn first_bound(&self, bindings: &'a Bindings) -> Option<&'a Value> {
        self.names.iter().find_map(|name| bindings.lookup(name))
    }
}

/// The provider names a `config.providers` value declares (`a, b` → {a, b}).
pub fn provider_names(config_providers: &str) -> BTreeSet<String> {
    config_providers
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

#[cfg(test)]
#[path = "reference_tests.rs"]
mod tests;
