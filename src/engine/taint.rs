//! Secret data as a type (issue 24, "taint, not lists"): everything the engine derives from a
//! Secret is a [`SecretText`] from the moment it is read, and stays one through reference
//! substitution, so the compiler, not a reviewer, keeps it out of messages.
//!
//! A [`SecretText`] has no `Display`, no `Deref` to `str` and no public field; its `Debug` prints
//! where it came from. The only text forms are:
//! - [`SecretText::redacted`]: `[from Secret team-a/kafka-sasl key sasl.properties]`, for every
//!   message, warning, `explain` line, status field, event, log line and metric label;
//! - [`SecretText::expose_for_secret_output`]: the bytes, for the files of a Secret output and the
//!   content hash over them (and nowhere else: `git grep expose_for_secret_output` lists them);
//! - [`SecretText::deferred`]: the value with each Secret part replaced by a Kafka
//!   config-provider reference (`output.secrets: Deferred`).
//!
//! Checks read the text through [`SecretText::inspect`], whose closure can only answer with a
//! `Copy + 'static` value (a yes/no, a position, a `&'static str`), never with text borrowed or
//! built from the secret.
//!
//! The keys of a Secret's file are Secret content too, carried as `engine::key::Key`.
//!
//! ```compile_fail,E0277
//! # use kafka_config_operator::engine::taint::{SecretSource, SecretText};
//! let secret = SecretText::from_key("hunter2".into(), SecretSource::new("ns", "s", "k"));
//! let shown = format!("{}", secret); // no Display
//! ```
//!
//! ```compile_fail,E0614
//! # use kafka_config_operator::engine::taint::{SecretSource, SecretText};
//! let secret = SecretText::from_key("hunter2".into(), SecretSource::new("ns", "s", "k"));
//! let text: &str = &*secret; // no Deref<Target = str>
//! ```
//!
//! ```compile_fail,E0616
//! # use kafka_config_operator::engine::taint::{SecretSource, SecretText};
//! let secret = SecretText::from_key("hunter2".into(), SecretSource::new("ns", "s", "k"));
//! let text = secret.text; // the field is private
//! ```
//!
//! ```compile_fail,E0277
//! # use kafka_config_operator::engine::taint::{SecretSource, SecretText};
//! let secret = SecretText::from_key("hunter2".into(), SecretSource::new("ns", "s", "k"));
//! let copy: String = secret.inspect(|text| text.to_string()); // a check answers without text
//! ```
//!
//! ```compile_fail
//! # use kafka_config_operator::engine::taint::{SecretSource, SecretText};
//! let secret = SecretText::from_key("hunter2".into(), SecretSource::new("ns", "s", "k"));
//! let part: &str = secret.inspect(|text| &text[..2]); // nor with a slice of it
//! ```
//!
//! ```
//! # use kafka_config_operator::engine::taint::{SecretSource, SecretText};
//! let secret = SecretText::from_key("hunter2".into(), SecretSource::new("ns", "s", "k"));
//! assert_eq!(format!("{secret:?}"), "SecretText([from Secret ns/s key k])");
//! assert_eq!(secret.redacted(), "[from Secret ns/s key k]");
//! assert!(secret.inspect(|text| text.len() == 7));
//! ```

use std::borrow::Cow;
use std::fmt;
use std::ops::Range;

use zeroize::Zeroize;

/// A key of a Secret that text was read from: names only, never content.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SecretSource {
    pub namespace: String,
    pub name: String,
    pub key: String,
}

impl SecretSource {
    pub fn new(namespace: &str, name: &str, key: &str) -> Self {
        Self {
            namespace: namespace.to_string(),
            name: name.to_string(),
            key: key.to_string(),
        }
    }
}

/// `Secret team-a/kafka-sasl key sasl.properties`.
impl fmt::Display for SecretSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Secret {}/{} key {}",
            self.namespace, self.name, self.key
        )
    }
}

/// Where Secret data sits in a value; decides how `output.secrets: Deferred` writes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SecretOrigin {
    /// Secret data substituted into the value (`${env.X}` of a `secretKeyRef` entry, or that
    /// entry's whole value), at these byte ranges; the rest of the value is plain text.
    Parts(Vec<SecretPart>),
    /// A value of a `.properties` file held in a Secret, read at `line`: all of it is Secret
    /// content, whatever was substituted into it.
    File { from: SecretSource, line: u32 },
}

/// One substitution of Secret data: where in the value, from which Secret key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SecretPart {
    pub range: Range<usize>,
    pub from: SecretSource,
}

/// Text derived from a Secret. Zeroed when dropped.
#[derive(Clone, PartialEq, Eq)]
pub struct SecretText {
    text: String,
    /// Boxed: a value is moved through every layer of the merge, and most values are plain
    /// (a `Value` is the size of a `String` and a pointer, not of three names of a Secret).
    origin: Box<SecretOrigin>,
}

impl SecretText {
    /// The value of one Secret key (an env entry's `secretKeyRef`).
    pub fn from_key(text: String, from: SecretSource) -> Self {
        let range = 0..text.len();
        Self {
            text,
            origin: Box::new(SecretOrigin::Parts(vec![SecretPart { range, from }])),
        }
    }

    /// A value read from line `line` of a `.properties` file held in a Secret.
    pub fn from_file(text: String, from: SecretSource, line: u32) -> Self {
        Self {
            text,
            origin: Box::new(SecretOrigin::File { from, line }),
        }
    }

    pub fn origin(&self) -> &SecretOrigin {
        &self.origin
    }

    /// The Secret keys the text holds data of, sorted, each once.
    pub fn sources(&self) -> Vec<&SecretSource> {
        let mut sources: Vec<&SecretSource> = match &*self.origin {
            SecretOrigin::Parts(parts) => parts.iter().map(|p| &p.from).collect(),
            SecretOrigin::File { from, .. } => vec![from],
        };
        sources.sort();
        sources.dedup();
        sources
    }

    /// How every message shows the text: the Secret keys it came from, never the content
    /// (`[from Secret team-a/kafka-sasl key sasl.properties]`).
    pub fn redacted(&self) -> String {
        let from: Vec<String> = self.sources().iter().map(ToString::to_string).collect();
        format!("[from {}]", from.join(", "))
    }

    pub fn len(&self) -> usize {
        self.text.len()
    }

    pub fn is_empty(&self) -> bool {
        self.text.is_empty()
    }

    /// Runs a check over the text. The answer is `Copy + 'static`, so it can be a yes/no, a
    /// position or a `&'static str`, never the text or a part of it.
    pub fn inspect<T: Copy + 'static>(&self, check: impl FnOnce(&str) -> T) -> T {
        check(&self.text)
    }

    /// The bytes, for the files of an output that is a Secret and the content hash over them;
    /// nothing else may call it.
    pub fn expose_for_secret_output(&self) -> &str {
        &self.text
    }

    /// A new value built from this text (reference substitution) by `build`, which sees the text
    /// and writes the result into a [`TextBuilder`]; it fails with a `Copy` error, which cannot
    /// carry the text either. A value read from a Secret file stays Secret content as a whole.
    /// Text that is already the result of a substitution is never scanned again (KAFKA-6142):
    /// it is returned as it is.
    pub fn derive<E: Copy + 'static>(
        &self,
        build: impl FnOnce(&str, &mut TextBuilder) -> Result<(), E>,
    ) -> Result<Value, E> {
        let SecretOrigin::File { from, line } = &*self.origin else {
            return Ok(Value::Secret(self.clone()));
        };
        let mut out = TextBuilder::default();
        build(&self.text, &mut out)?;
        Ok(Value::Secret(SecretText::from_file(
            std::mem::take(&mut out.text),
            from.clone(),
            *line,
        )))
    }

    /// The text as `output.secrets: Deferred` writes it into a ConfigMap: each Secret part
    /// replaced by a reference Kafka resolves at start (`${dir:<mount>/secrets/<secret>:<key>}`),
    /// or for a value of a Secret file, a reference to its `property` in the mounted file
    /// (`${file:<mount>/secrets/<secret>/<key>:<property>}`).
    pub fn deferred(&self, mount_path: &str, property: &str) -> DeferredText {
        match &*self.origin {
            SecretOrigin::File { from, .. } => DeferredText {
                text: format!(
                    "${{file:{mount_path}/secrets/{}/{}:{property}}}",
                    from.name, from.key
                ),
                sources: vec![from.clone()],
                uses_dir: false,
                uses_file: true,
            },
            SecretOrigin::Parts(parts) => {
                let mut text = String::with_capacity(self.text.len());
                let mut at = 0;
                for part in parts {
                    text.push_str(&self.text[at..part.range.start]);
                    text.push_str(&format!(
                        "${{dir:{mount_path}/secrets/{}:{}}}",
                        part.from.name, part.from.key
                    ));
                    at = part.range.end;
                }
                text.push_str(&self.text[at..]);
                DeferredText {
                    text,
                    sources: parts.iter().map(|p| p.from.clone()).collect(),
                    uses_dir: true,
                    uses_file: false,
                }
            }
        }
    }
}

impl fmt::Debug for SecretText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SecretText({})", self.redacted())
    }
}

impl Drop for SecretText {
    fn drop(&mut self) {
        self.text.zeroize();
    }
}

/// A Secret-derived value as `output.secrets: Deferred` writes it: references, no Secret byte.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeferredText {
    pub text: String,
    /// The Secret keys the references read (to mount, and to hash).
    pub sources: Vec<SecretSource>,
    /// Whether it uses Kafka's `DirectoryConfigProvider` (`dir`) or `FileConfigProvider` (`file`).
    pub uses_dir: bool,
    pub uses_file: bool,
}

/// A value as the engine carries it: text a person wrote (or a default), or text derived from a
/// Secret. Its `Debug` prints no content of either (a plain value may be a password too).
/// Plain text is borrowed when it is the catalogue's (a tool's or Kafka's defaults, which every
/// evaluation puts into its chains), owned otherwise.
#[derive(Clone, PartialEq, Eq)]
pub enum Value {
    Plain(Cow<'static, str>),
    Secret(SecretText),
}

impl Value {
    /// The text, when it is not Secret data.
    pub fn as_plain(&self) -> Option<&str> {
        match self {
            Value::Plain(text) => Some(text),
            Value::Secret(_) => None,
        }
    }

    pub fn secret(&self) -> Option<&SecretText> {
        match self {
            Value::Plain(_) => None,
            Value::Secret(secret) => Some(secret),
        }
    }

    pub fn is_secret(&self) -> bool {
        matches!(self, Value::Secret(_))
    }

    /// [`SecretText::inspect`] for either kind of value.
    pub fn inspect<T: Copy + 'static>(&self, check: impl FnOnce(&str) -> T) -> T {
        match self {
            Value::Plain(text) => check(text),
            Value::Secret(secret) => secret.inspect(check),
        }
    }

    /// Whether the text is `text` (a comparison answers yes or no, and shows nothing).
    pub fn is(&self, text: &str) -> bool {
        match self {
            Value::Plain(plain) => plain == text,
            Value::Secret(secret) => secret.text == text,
        }
    }

    /// Whether two values hold the same text, wherever each came from.
    pub fn same_text(&self, other: &Value) -> bool {
        match other {
            Value::Plain(text) => self.is(text),
            Value::Secret(secret) => self.is(&secret.text),
        }
    }

    pub fn len(&self) -> usize {
        match self {
            Value::Plain(text) => text.len(),
            Value::Secret(secret) => secret.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// How a message shows the value: the text, or for Secret data [`SecretText::redacted`].
    /// (A plain value of a password key is redacted by its key: `sensitive::shown_value`.)
    pub fn shown(&self) -> Cow<'_, str> {
        match self {
            Value::Plain(text) => Cow::Borrowed(text),
            Value::Secret(secret) => Cow::Owned(secret.redacted()),
        }
    }
}

impl Default for Value {
    fn default() -> Self {
        Value::Plain(Cow::Borrowed(""))
    }
}

impl From<String> for Value {
    fn from(text: String) -> Self {
        Value::Plain(Cow::Owned(text))
    }
}

impl From<&str> for Value {
    fn from(text: &str) -> Self {
        Value::Plain(Cow::Owned(text.to_string()))
    }
}

impl fmt::Debug for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Plain(_) => f.write_str("Plain([redacted])"),
            Value::Secret(secret) => write!(f, "Secret({})", secret.redacted()),
        }
    }
}

/// Text built from pieces (reference substitution). Secret as soon as one piece is Secret data:
/// taint follows substitution, so a plain prefix and a Secret password make a Secret value.
#[derive(Default)]
pub struct TextBuilder {
    text: String,
    parts: Vec<SecretPart>,
}

impl TextBuilder {
    pub fn push_str(&mut self, text: &str) {
        self.text.push_str(text);
    }

    /// Appends a value, recording where its Secret data lands.
    pub fn push_value(&mut self, value: &Value) {
        let start = self.text.len();
        match value {
            Value::Plain(text) => self.text.push_str(text),
            Value::Secret(secret) => {
                self.text.push_str(&secret.text);
                match &*secret.origin {
                    SecretOrigin::Parts(parts) => {
                        self.parts.extend(parts.iter().map(|p| SecretPart {
                            range: start + p.range.start..start + p.range.end,
                            from: p.from.clone(),
                        }))
                    }
                    SecretOrigin::File { from, .. } => self.parts.push(SecretPart {
                        range: start..self.text.len(),
                        from: from.clone(),
                    }),
                }
            }
        }
    }

    pub fn len(&self) -> usize {
        self.text.len()
    }

    pub fn is_empty(&self) -> bool {
        self.text.is_empty()
    }

    pub fn finish(mut self) -> Value {
        let text = std::mem::take(&mut self.text);
        if self.parts.is_empty() {
            Value::Plain(Cow::Owned(text))
        } else {
            Value::Secret(SecretText {
                text,
                origin: Box::new(SecretOrigin::Parts(std::mem::take(&mut self.parts))),
            })
        }
    }
}

impl Drop for TextBuilder {
    fn drop(&mut self) {
        // Left over only when building failed part-way; plain text needs no zeroing.
        if !self.parts.is_empty() {
            self.text.zeroize();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CANARY: &str = "kcoTaintCanary51d2";

    fn pw() -> SecretText {
        SecretText::from_key(
            CANARY.to_string(),
            SecretSource::new("team-a", "kafka-sasl", "password"),
        )
    }

    #[test]
    fn redaction_names_the_secret_key_never_the_content() {
        let secret = pw();
        assert_eq!(
            secret.redacted(),
            "[from Secret team-a/kafka-sasl key password]"
        );
        let file = SecretText::from_file(
            CANARY.into(),
            SecretSource::new("team-a", "kafka-sasl", "sasl.properties"),
            3,
        );
        assert_eq!(
            file.redacted(),
            "[from Secret team-a/kafka-sasl key sasl.properties]"
        );
        for text in [
            format!("{secret:?}"),
            format!("{secret:#?}"),
            format!("{:?}", Value::Secret(file.clone())),
            format!("{:?}", Value::Plain(CANARY.into())),
            Value::Secret(file).shown().into_owned(),
        ] {
            assert!(!text.contains(CANARY), "{text}");
        }
        assert_eq!(Value::Plain("kafka:9092".into()).shown(), "kafka:9092");
    }

    #[test]
    fn substitution_keeps_the_taint_and_where_each_part_sits() {
        let mut out = TextBuilder::default();
        out.push_str("user=u pw=");
        out.push_value(&Value::Secret(pw()));
        out.push_str(";");
        let value = out.finish();
        let secret = value
            .secret()
            .expect("a plain and a Secret part make a Secret value");
        assert_eq!(
            secret.expose_for_secret_output(),
            format!("user=u pw={CANARY};")
        );
        let deferred = secret.deferred("/etc/k", "sasl.jaas.config");
        assert_eq!(
            deferred.text,
            "user=u pw=${dir:/etc/k/secrets/kafka-sasl:password};"
        );
        assert!(deferred.uses_dir && !deferred.uses_file);
        // Only plain pieces: a plain value.
        let mut out = TextBuilder::default();
        out.push_str("a");
        out.push_value(&Value::Plain("b".into()));
        assert_eq!(out.finish(), Value::Plain("ab".into()));
    }

    #[test]
    fn a_secret_file_value_stays_secret_as_a_whole() {
        let from = SecretSource::new("ns", "creds", "client.properties");
        let file = SecretText::from_file("x=${a}".into(), from.clone(), 4);
        let derived = file
            .derive(|text, out| {
                out.push_str(text);
                Ok::<(), ()>(())
            })
            .expect("built");
        assert_eq!(
            derived.secret().map(SecretText::origin),
            Some(&SecretOrigin::File { from, line: 4 })
        );
        assert_eq!(
            derived
                .secret()
                .map(|s| s.deferred("/m", "a.b").text)
                .as_deref(),
            Some("${file:/m/secrets/creds/client.properties:a.b}")
        );
        // A substitution's result is not scanned again.
        let substituted = pw();
        let again = substituted.derive(|_, _| Err(())).expect("not rebuilt");
        assert_eq!(again, Value::Secret(substituted));
    }

    #[test]
    fn comparisons_answer_without_showing() {
        let secret = Value::Secret(pw());
        assert!(secret.is(CANARY));
        assert!(secret.same_text(&Value::Plain(CANARY.into())));
        assert!(!secret.is("guess"));
        assert_eq!(secret.inspect(str::len), CANARY.len());
        assert_eq!(secret.as_plain(), None);
    }
}
