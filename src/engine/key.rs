//! Config keys as a type (issue 24): a key read from a Secret's `.properties` file is Secret
//! content from the moment it is read — a PEM body or a token pasted without `=` or with a
//! missing line continuation becomes a "key" — unless it is a name Kafka defines.
//!
//! A [`Key`] compares, orders and hashes by its text, so the merge stays a map keyed by it and is
//! looked up with a `&str` (`Borrow<str>`). It has no `Display`, no `Deref` to `str` and no
//! public field; its `Debug` is [`Key::shown`]. The text leaves it as:
//! - [`Key::shown`]: the text, or for a key that is Secret content where it was read
//!   (`[key from Secret team-a/creds key client.properties, line 3]`), for every message,
//!   warning, `explain` line, status field, event and log line;
//! - [`Key::public_text`]: the text when it is not Secret content (`None` otherwise), for code
//!   that needs the text itself to build a message (a did-you-mean);
//! - [`Key::expose_for_output`]: the text, for the rendered file (which holds a Secret's content
//!   only when it is a Secret; `render` refuses a Secret-content key for a ConfigMap);
//! - [`Key::inspect`]: checks (catalogue look-ups, policy patterns) that answer with a
//!   `Copy + 'static` value, never with text.
//!
//! `Borrow<str>` (for map look-ups) also gives the text: `git grep "borrow()"` lists its uses.
//!
//! ```compile_fail,E0277
//! # use kafka_config_operator::engine::key::Key;
//! # use kafka_config_operator::engine::taint::SecretSource;
//! let key = Key::from_secret_file("deadbeef01".into(), &SecretSource::new("ns", "s", "k"), 3);
//! let shown = format!("{}", key); // no Display
//! ```
//!
//! ```compile_fail,E0614
//! # use kafka_config_operator::engine::key::Key;
//! # use kafka_config_operator::engine::taint::SecretSource;
//! let key = Key::from_secret_file("deadbeef01".into(), &SecretSource::new("ns", "s", "k"), 3);
//! let text: &str = &*key; // no Deref<Target = str>
//! ```
//!
//! ```compile_fail,E0616
//! # use kafka_config_operator::engine::key::Key;
//! # use kafka_config_operator::engine::taint::SecretSource;
//! let key = Key::from_secret_file("deadbeef01".into(), &SecretSource::new("ns", "s", "k"), 3);
//! let text = key.text; // the field is private
//! ```
//!
//! ```compile_fail,E0277
//! # use kafka_config_operator::engine::key::Key;
//! # use kafka_config_operator::engine::taint::SecretSource;
//! let key = Key::from_secret_file("deadbeef01".into(), &SecretSource::new("ns", "s", "k"), 3);
//! let copy: String = key.inspect(|text| text.to_string()); // a check answers without text
//! ```
//!
//! ```
//! # use kafka_config_operator::engine::key::Key;
//! # use kafka_config_operator::engine::taint::SecretSource;
//! let from = SecretSource::new("ns", "s", "k");
//! let key = Key::from_secret_file("deadbeef01".into(), &from, 3);
//! assert_eq!(key.shown(), "[key from Secret ns/s key k, line 3]");
//! assert_eq!(format!("{key:?}"), "[key from Secret ns/s key k, line 3]");
//! assert_eq!(key.public_text(), None);
//! // A name Kafka defines is public knowledge, wherever it was read.
//! let known = Key::from_secret_file("sasl.jaas.config".into(), &from, 4);
//! assert_eq!(known.shown(), "sasl.jaas.config");
//! ```

use std::borrow::{Borrow, Cow};
use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};

use zeroize::Zeroize;

use crate::engine::catalogue::configs::ConfigCatalogue;
use crate::engine::taint::SecretSource;

/// A config key: the text, and for a key that is Secret content, where it was read.
#[derive(Clone)]
pub struct Key {
    /// Borrowed when the key is the catalogue's (a tool's option or default: every evaluation
    /// puts them into its view).
    text: Cow<'static, str>,
    /// Boxed: most keys are not Secret content, and for them the origin costs one null pointer.
    read_from_secret: Option<Box<ReadAt>>,
}

/// Where a key that is Secret content was read.
#[derive(Clone)]
struct ReadAt {
    from: SecretSource,
    line: u32,
}

impl Key {
    /// A key that is not Secret content: written by a person in the spec, a ConfigMap or a
    /// GlobalClientDefaults, or taken from the catalogue.
    pub fn new(text: impl Into<String>) -> Self {
        Self {
            text: Cow::Owned(text.into()),
            read_from_secret: None,
        }
    }

    /// A key of the catalogue (read once per process), borrowed instead of copied.
    pub fn from_catalogue(text: &'static str) -> Self {
        Self {
            text: Cow::Borrowed(text),
            read_from_secret: None,
        }
    }

    /// A key read at `line` of a `.properties` file held in a Secret: Secret content, unless it
    /// is a name Kafka defines ([`is_kafka_name`]).
    pub fn from_secret_file(text: String, from: &SecretSource, line: u32) -> Self {
        if is_kafka_name(&text) {
            return Self::new(text);
        }
        Self {
            text: Cow::Owned(text),
            read_from_secret: Some(Box::new(ReadAt {
                from: from.clone(),
                line,
            })),
        }
    }

    /// Whether the key is Secret content (and so is never shown).
    pub fn is_secret(&self) -> bool {
        self.read_from_secret.is_some()
    }

    /// How every message shows the key: the text, or for a key that is Secret content where it
    /// was read (`[key from Secret team-a/creds key client.properties, line 3]`).
    pub fn shown(&self) -> Cow<'_, str> {
        match &self.read_from_secret {
            None => Cow::Borrowed(self.text.as_ref()),
            Some(at) => Cow::Owned(format!("[key from {}, line {}]", at.from, at.line)),
        }
    }

    /// The text when it is not Secret content.
    pub fn public_text(&self) -> Option<&str> {
        match self.read_from_secret {
            None => Some(&self.text),
            Some(_) => None,
        }
    }

    /// The text, for the rendered `.properties` file; nothing else may call it.
    pub fn expose_for_output(&self) -> &str {
        &self.text
    }

    /// Runs a check over the text. The answer is `Copy + 'static` (a yes/no, a catalogue entry),
    /// never the text or a part of it.
    pub fn inspect<T: Copy + 'static>(&self, check: impl FnOnce(&str) -> T) -> T {
        check(&self.text)
    }
}

/// Whether a key is a name Kafka defines, so it tells nothing of a Secret it was read from: a
/// key of the catalogue (of any set), or a MirrorMaker spelling of one (`us-east.sasl.jaas.config`,
/// `producer.override.acks`: a dot-suffix is a key Kafka defines). Neither a PEM or base64 body
/// line (no `.`) nor a hex or base64url token ends in one.
pub fn is_kafka_name(key: &str) -> bool {
    let sets = &ConfigCatalogue::get().sets;
    let defined = |k: &str| sets.values().any(|set| set.get(k).is_some());
    defined(key)
        || key
            .match_indices('.')
            .any(|(at, _)| defined(&key[at + 1..]))
}

/// Keys are equal, ordered and hashed by their text alone, wherever they were read: the merge
/// joins the same key from every layer.
impl PartialEq for Key {
    fn eq(&self, other: &Self) -> bool {
        self.text == other.text
    }
}

impl Eq for Key {}

impl PartialOrd for Key {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Key {
    fn cmp(&self, other: &Self) -> Ordering {
        self.text.cmp(&other.text)
    }
}

impl Hash for Key {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.text.hash(state)
    }
}

/// For map look-ups by `&str` (consistent with `Eq`, `Ord` and `Hash` above).
impl Borrow<str> for Key {
    fn borrow(&self) -> &str {
        &self.text
    }
}

impl From<&str> for Key {
    fn from(text: &str) -> Self {
        Key::new(text)
    }
}

impl From<String> for Key {
    fn from(text: String) -> Self {
        Key::new(text)
    }
}

/// [`Key::shown`], so a derived `Debug` of a type holding keys shows no Secret content.
impl fmt::Debug for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.shown())
    }
}

impl Drop for Key {
    fn drop(&mut self) {
        // A key read from a Secret is always owned (`from_secret_file`).
        if self.read_from_secret.is_some()
            && let Cow::Owned(text) = &mut self.text
        {
            text.zeroize();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn from() -> SecretSource {
        SecretSource::new("team-a", "creds", "client.properties")
    }

    #[test]
    fn a_secret_file_key_kafka_does_not_define_is_shown_by_where_it_was_read() {
        // Lowercase tokens, key-shaped ones and PEM body lines alike: the old "shaped like a
        // config name" rule showed the first two.
        for text in [
            "deadbeef01",
            "custom.note",
            "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC+/=",
            "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl",
        ] {
            let key = Key::from_secret_file(text.into(), &from(), 7);
            let label = "[key from Secret team-a/creds key client.properties, line 7]";
            assert!(key.is_secret(), "{text}");
            assert_eq!(key.shown(), label);
            assert_eq!(format!("{key:?}"), label);
            assert_eq!(format!("{:?}", vec![key.clone()]), format!("[{label}]"));
            assert_eq!(key.public_text(), None);
            // Positive control: the text is there, for the file and for look-ups.
            assert_eq!(key.expose_for_output(), text);
        }
    }

    #[test]
    fn names_kafka_defines_are_public_wherever_they_were_read() {
        for text in [
            "sasl.jaas.config",
            "ssl.key.password",
            "bootstrap.servers",
            "us-east.sasl.jaas.config",
            "us-east.producer.acks",
            "producer.override.linger.ms",
        ] {
            let key = Key::from_secret_file(text.into(), &from(), 1);
            assert!(!key.is_secret(), "{text}");
            assert_eq!(key.shown(), text);
            assert_eq!(key.public_text(), Some(text));
        }
        // A person's own key (spec, ConfigMap) is their text.
        assert_eq!(Key::new("deadbeef01").shown(), "deadbeef01");
    }

    #[test]
    fn keys_are_one_map_key_by_their_text() {
        let secret = Key::from_secret_file("custom.note".into(), &from(), 2);
        let plain = Key::new("custom.note");
        assert_eq!(secret, plain);
        assert_eq!(secret.cmp(&plain), Ordering::Equal);
        let map = std::collections::BTreeMap::from([(secret, 1)]);
        assert_eq!(map.get("custom.note"), Some(&1));
        assert!(secret_is_checked_without_text());
    }

    #[test]
    fn a_merged_key_is_secret_when_any_layer_read_it_from_a_secret_file() {
        use crate::engine::sources::{SourceData, SourceSet};
        let spec: crate::engine::spec::ToolConfigSpec = serde_json::from_value(serde_json::json!({
            "tool": "kafka-console-producer",
            "args": {"bootstrap-server": "kafka:9092", "topic": "orders"},
            "properties": {"producer": {"deadbeef01": "from-the-spec"}},
            "configFiles": [{"secretKeyRef": {"name": "creds", "key": "client.properties"}}],
            "output": {"kind": "Secret"}
        }))
        .expect("spec");
        let mut sources = SourceSet::default();
        sources.secrets.insert(
            "creds".into(),
            SourceData {
                data: std::collections::BTreeMap::from([(
                    "client.properties".to_string(),
                    b"acks=all\ndeadbeef01=x\n".to_vec(),
                )]),
            },
        );
        let ev = crate::engine::evaluate::evaluate_alone(&spec, "ns", &sources);
        let view = &ev.views[&crate::engine::spec::Role::Producer];
        let label = "[key from Secret ns/creds key client.properties, line 2]";
        let shown = |name: &str| view.keys.get_key_value(name).map(|(k, _)| k.shown());
        assert_eq!(shown("deadbeef01").as_deref(), Some(label));
        assert_eq!(shown("acks").as_deref(), Some("acks"));
        let shadowed: Vec<&str> = ev.shadowed.iter().map(|s| s.key.as_str()).collect();
        assert!(shadowed.contains(&label), "{shadowed:?}");
        assert_eq!(ev.key_label("deadbeef01"), label);
        assert_eq!(ev.key_label("linger.ms"), "linger.ms");
        assert_eq!(ev.key_label("gone01"), "[a key no longer set, not shown]");
        let shown = format!("{:?} {:?}", ev.warnings, ev.shadowed);
        assert!(!shown.contains("deadbeef01"), "{shown}");
        // Positive control: the Secret output holds it.
        let rendered = ev.rendered.as_ref().expect("renders");
        assert!(rendered.files.values().any(|f| f.contains("deadbeef01")));
    }

    fn secret_is_checked_without_text() -> bool {
        let key = Key::from_secret_file("deadbeef01".into(), &from(), 2);
        key.inspect(|text| text.len() == 10 && text.starts_with("dead"))
    }
}
