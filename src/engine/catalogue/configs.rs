//! Kafka's own config catalogue (`catalogue/kafka-configs.json`), generated from the `ConfigDef`s
//! in Kafka's jars by `catalogue/generate.sh` and embedded at build time.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use serde::Deserialize;

use crate::engine::spec::Role;
use crate::engine::suggest;

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
    /// The keys with what "did you mean" needs of each, computed on the first unknown key.
    suggestions: OnceLock<Vec<(String, suggest::Profile)>>,
}

impl ConfigSet {
    /// The definition of `name`, if this set has one.
    pub fn get(&self, name: &str) -> Option<&ConfigKey> {
        self.keys.get(name)
    }

    /// The key an unknown key was most likely meant to be.
    pub fn closest_key(&self, unknown: &str) -> Option<&str> {
        let profiled = self.suggestions.get_or_init(|| {
            let mut profiled: Vec<_> = self
                .keys
                .keys()
                .map(|key| (key.clone(), suggest::Profile::new(key)))
                .collect();
            profiled.sort_by_key(|(_, profile)| profile.char_count());
            profiled
        });
        suggest::closest_profiled(unknown, profiled)
    }
}

#[derive(Debug)]
pub struct ConfigCatalogue {
    pub kafka_version: String,
    pub sets: BTreeMap<String, ConfigSet>,
}

impl ConfigCatalogue {
    /// The embedded catalogue; a test parses it, so failure here is a build defect.
    pub fn get() -> &'static ConfigCatalogue {
        static CATALOGUE: OnceLock<ConfigCatalogue> = OnceLock::new();
        CATALOGUE.get_or_init(|| {
            let file: CatalogueFile = serde_json::from_str(CONFIGS_JSON)
                .unwrap_or_else(|e| panic!("catalogue/kafka-configs.json is invalid: {e}"));
            ConfigCatalogue {
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
                                suggestions: OnceLock::new(),
                            },
                        )
                    })
                    .collect(),
            }
        })
    }

    /// The config set a role's file is read by.
    pub fn set_for(&self, role: Role) -> Option<&ConfigSet> {
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

    pub fn key(&self, role: Role, key: &str) -> Option<&ConfigKey> {
        self.set_for(role).and_then(|set| set.get(key))
    }
}
