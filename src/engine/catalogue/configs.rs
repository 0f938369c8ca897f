//! Kafka's own config catalogue (`catalogue/kafka-configs.json`), generated from the `ConfigDef`s
//! in Kafka's jars by `catalogue/generate.sh` and embedded at build time.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use crate::engine::suggest::Candidates;

use serde::Deserialize;

use crate::engine::spec::Role;

const CONFIGS_JSON: &str = include_str!("../../../catalogue/kafka-configs.json");

/// `ConfigDef.Type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum ConfigType {
    Boolean,
    String,
    Int,
    Short,
    Long,
    Double,
    List,
    Class,
    Password,
}

/// A `ConfigDef.Validator`, as far as the generator could read its structure
/// (`catalogue/README.md`, "Validator kinds"). `engine::validate` applies each kind the way the
/// Kafka class named in its comment does.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum Validator {
    /// `ConfigDef.Range`: inclusive bounds, `None` unbounded.
    Range {
        #[serde(default)]
        min: Option<f64>,
        #[serde(default)]
        max: Option<f64>,
    },
    /// `ConfigDef.ValidString` (case-sensitive); also `ShareAcknowledgementMode.Validator`.
    ValidString { values: Vec<String> },
    /// `ConfigDef.ListSize`: at most `max_size` list entries.
    ListSize {
        #[serde(rename = "maxSize")]
        max_size: usize,
    },
    /// `ConfigDef.NonEmptyStringWithoutControlChars`.
    NonEmptyStringWithoutControlChars,
    /// A `ConfigDef.LambdaValidator`: its code cannot be read, only the class that defines it and
    /// its description; `engine::validate` keeps what each known one does in a table keyed by both.
    Lambda {
        #[serde(default, rename = "definedIn")]
        defined_in: Option<String>,
        #[serde(default)]
        description: Option<String>,
    },
    /// `ConfigDef.CaseInsensitiveValidString` (values upper-cased); also `ShareAcquireMode.Validator`.
    CaseInsensitiveValidString { values: Vec<String> },
    /// `ConfigDef.ValidList`: allowed items (`[]`: any item), whether an empty list is allowed.
    ValidList {
        #[serde(default)]
        values: Vec<String>,
        #[serde(default, rename = "allowEmpty")]
        allow_empty: Option<bool>,
    },
    /// `ConfigDef.NonEmptyString`.
    NonEmptyString,
    /// `ConfigDef.NonNullValidator`.
    NonNullValidator,
    /// `ConfigDef.CompositeValidator`: every validator must pass.
    Composite { validators: Vec<Validator> },
    /// `AutoOffsetResetStrategy.Validator`: one of `values`, or `duration_prefix` followed by a
    /// `java.time.Duration` that is not negative.
    AutoOffsetReset {
        values: Vec<String>,
        #[serde(rename = "durationPrefix")]
        duration_prefix: String,
    },
    /// `ThrottledReplicaListValidator`: `partition:broker` items, or `*`.
    ThrottledReplicaList,
    /// `QuorumConfig.ControllerQuorumVotersValidator`: `{id}@{host}:{port}` items.
    QuorumVoters,
    /// `QuorumConfig.ControllerQuorumBootstrapServersValidator`: `{host}:{port}` items.
    QuorumBootstrapServers,
    /// `RestServerConfig.ListenersValidator`: at least one item, none blank.
    RestListeners,
    /// `RestServerConfig.ResponseHttpHeadersValidator`: `[action] [name]:[value]` rules.
    ResponseHttpHeaders { actions: Vec<String> },
    /// Any other Kafka validator class: not checked here (docs/conformance.md lists them).
    Other {
        #[serde(default)]
        class: Option<String>,
        #[serde(default)]
        description: Option<String>,
    },
    /// A kind this build does not know (a newer generator): not checked.
    #[serde(other)]
    Unknown,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ConfigKey {
    pub name: String,
    #[serde(rename = "type")]
    pub config_type: ConfigType,
    #[serde(default)]
    pub default: Option<String>,
    #[serde(default)]
    pub has_default: bool,
    #[serde(default)]
    pub importance: Option<String>,
    #[serde(default)]
    pub validator: Option<Validator>,
    #[serde(default)]
    pub validator_text: Option<String>,
    #[serde(default)]
    pub deprecated: bool,
    #[serde(default)]
    pub doc: Option<String>,
}

impl ConfigKey {
    pub fn is_password(&self) -> bool {
        self.config_type == ConfigType::Password
    }
}

#[derive(Debug, Deserialize)]
struct ConfigSetFile {
    #[serde(default)]
    source: Option<String>,
    keys: Vec<ConfigKey>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct CatalogueFile {
    kafka_version: String,
    sets: BTreeMap<String, ConfigSetFile>,
}

/// The keys of one client or server kind, by name.
#[derive(Debug)]
pub struct ConfigSet {
    pub source: String,
    pub keys: BTreeMap<String, ConfigKey>,
    /// The keys prepared for did-you-mean, built on first use.
    candidates: OnceLock<Candidates<'static>>,
    /// The keys hashed for lookups, built on first use: every key of every rendered file is
    /// looked up several times (validation, Kafka's default, is it a password), and a hash probe
    /// costs a fraction of the string comparisons of a tree walk.
    table: OnceLock<KeyTable>,
}

/// Open addressing over the set's keys (linear probing, at most half full). Each slot keeps its
/// key's full hash, so a probe past another key compares two integers instead of reading that
/// key's name (most lookups are of keys the catalogue does not have: custom and plugin keys).
#[derive(Debug)]
struct KeyTable {
    slots: Vec<Option<(u64, &'static ConfigKey)>>,
    mask: usize,
}

impl KeyTable {
    fn new(keys: impl ExactSizeIterator<Item = &'static ConfigKey>) -> Self {
        let capacity = (keys.len() * 2).next_power_of_two().max(8);
        let mask = capacity - 1;
        let mut slots = vec![None; capacity];
        for key in keys {
            let hash = key_hash(&key.name);
            let mut at = hash as usize & mask;
            while slots[at].is_some() {
                at = (at + 1) & mask;
            }
            slots[at] = Some((hash, key));
        }
        Self { slots, mask }
    }

    fn get(&self, name: &str) -> Option<&'static ConfigKey> {
        let hash = key_hash(name);
        let mut at = hash as usize & self.mask;
        loop {
            match self.slots.get(at).copied().flatten() {
                None => return None,
                Some((slot_hash, key)) if slot_hash == hash && key.name == name => {
                    return Some(key);
                }
                Some(_) => at = (at + 1) & self.mask,
            }
        }
    }
}

/// A multiply-rotate hash over eight bytes at a time (the catalogue is fixed, so no defence
/// against chosen collisions is needed; a user's keys can only make a probe longer).
fn key_hash(name: &str) -> u64 {
    const K: u64 = 0x517c_c1b7_2722_0a95;
    let bytes = name.as_bytes();
    let mut hash = bytes.len() as u64;
    let mut chunks = bytes.chunks_exact(8);
    for chunk in &mut chunks {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        hash = (hash.rotate_left(5) ^ u64::from_le_bytes(word)).wrapping_mul(K);
    }
    let rest = chunks.remainder();
    if !rest.is_empty() {
        let mut word = [0u8; 8];
        word[..rest.len()].copy_from_slice(rest);
        hash = (hash.rotate_left(5) ^ u64::from_le_bytes(word)).wrapping_mul(K);
    }
    // The high bits are the well-mixed ones.
    hash ^ (hash >> 32)
}

impl ConfigSet {
    /// The definition of `name`, if this set has one (the same as `keys.get(name)`, faster).
    pub fn get(&'static self, name: &str) -> Option<&'static ConfigKey> {
        self.table
            .get_or_init(|| KeyTable::new(self.keys.values()))
            .get(name)
    }

    /// The key an unknown key was most likely meant to be.
    pub fn closest_key(&'static self, unknown: &str) -> Option<&'static str> {
        self.candidates
            .get_or_init(|| Candidates::new(self.keys.keys().map(String::as_str)))
            .closest(unknown)
    }
}

#[derive(Debug)]
pub struct ConfigCatalogue {
    pub kafka_version: String,
    pub sets: BTreeMap<String, ConfigSet>,
    /// `set_for` of every role, in `Role::ALL` order, resolved on first use.
    by_role: OnceLock<[Option<&'static ConfigSet>; 7]>,
}

impl ConfigCatalogue {
    /// The embedded catalogue; a test parses it, so failure here is a build defect.
    pub fn get() -> &'static ConfigCatalogue {
        static CATALOGUE: OnceLock<ConfigCatalogue> = OnceLock::new();
        CATALOGUE.get_or_init(|| {
            let file: CatalogueFile = serde_json::from_str(CONFIGS_JSON)
                .unwrap_or_else(|e| panic!("catalogue/kafka-configs.json is invalid: {e}"));
            ConfigCatalogue {
                by_role: OnceLock::new(),
                kafka_version: file.kafka_version,
                sets: file
                    .sets
                    .into_iter()
                    .map(|(name, set)| {
                        let keys = set.keys.into_iter().map(|k| (k.name.clone(), k)).collect();
                        (
                            name,
                            ConfigSet {
                                source: set.source.unwrap_or_default(),
                                keys,
                                candidates: OnceLock::new(),
                                table: OnceLock::new(),
                            },
                        )
                    })
                    .collect(),
            }
        })
    }

    /// The config set a role's file is read by.
    pub fn set_for(&'static self, role: Role) -> Option<&'static ConfigSet> {
        let by_role = self
            .by_role
            .get_or_init(|| Role::ALL.map(|role| self.find_set(role)));
        match Role::ALL.iter().position(|r| *r == role) {
            Some(at) => by_role[at],
            None => self.find_set(role),
        }
    }

    fn find_set(&self, role: Role) -> Option<&ConfigSet> {
        let candidates: &[&str] = match role {
            Role::Producer => &["producer"],
            Role::Consumer => &["consumer"],
            Role::Admin => &["admin"],
            Role::ShareConsumer => &["share-consumer", "consumer"],
            Role::Broker => &["broker"],
            Role::Controller => &["controller", "broker"],
            Role::MirrorMaker => &["mirror-maker"],
        };
        candidates.iter().find_map(|name| self.sets.get(*name))
    }

    pub fn key(&'static self, role: Role, key: &str) -> Option<&'static ConfigKey> {
        self.set_for(role).and_then(|set| set.get(key))
    }
}

#[cfg(test)]
mod tests {
    use super::ConfigCatalogue;

    #[test]
    fn the_hash_table_finds_exactly_the_keys_of_each_set() {
        let catalogue = ConfigCatalogue::get();
        for set in catalogue.sets.values() {
            for (name, key) in &set.keys {
                assert!(std::ptr::eq(set.get(name).expect(name), key), "{name}");
                for unknown in [
                    format!("{name}x"),
                    format!("x{name}"),
                    name[1..].to_string(),
                ] {
                    assert_eq!(set.get(&unknown).is_some(), set.keys.contains_key(&unknown));
                }
            }
            assert!(set.get("").is_none() && set.get("custom.interceptor.setting.7").is_none());
        }
    }
}
