//! Typed validation against Kafka's ConfigDef catalogue: the same parsing and validators Kafka
//! applies when a client starts, so a bad value fails here instead of in a pod.

use std::sync::Arc;

use crate::engine::catalogue::configs::{ConfigCatalogue, ConfigKey, ConfigType, Validator};
use crate::engine::evaluate::{RoleView, file_contribution};
use crate::engine::layers::Source;
use crate::engine::outcome::{Problem, Reason, Text, Warning};
use crate::engine::sensitive::{self, REDACTED};
use crate::engine::spec::Role;

/// Key prefixes whose keys are open-ended (Kafka reads them by prefix), so they are never unknown.
const OPEN_PREFIXES: &[&str] = &[
    "config.providers.",
    "listener.name.",
    "producer.override.",
    "consumer.override.",
    "admin.override.",
    "metric.reporters.",
    "sasl.login.",
    "ssl.engine.",
    "confluent.",
];

/// Whether `key` starts with one of [`OPEN_PREFIXES`]. Most unknown keys differ from every prefix
/// in their first two bytes, so those are compared before whole prefixes.
fn has_open_prefix(key: &str) -> bool {
    let head = |text: &str| match text.as_bytes() {
        [a, b, ..] => Some([*a, *b]),
        _ => None,
    };
    let Some(key_head) = head(key) else {
        return false;
    };
    OPEN_PREFIXES
        .iter()
        .any(|p| head(p) == Some(key_head) && key.starts_with(p))
}

/// How many unknown keys per role get a did-you-mean.
const MAX_SUGGESTIONS: usize = 20;

/// Keys the consumer refuses under each group protocol (`ConsumerConfig`'s post-processing).
const CONSUMER_PROTOCOL_ONLY: &[(&str, &[&str])] = &[
    (
        "consumer",
        &[
            "partition.assignment.strategy",
            "heartbeat.interval.ms",
            "session.timeout.ms",
        ],
    ),
    ("classic", &["group.remote.assignor"]),
];

/// Checks every key written to the role's file. `defs` holds Kafka's definition of each key of
/// the view, in key order (what `set.get(key)` gives).
pub(crate) fn check_role(
    role: Role,
    view: &RoleView,
    defs: &[Option<&'static ConfigKey>],
    problems: &mut Vec<Problem>,
    warnings: &mut Vec<Warning>,
) {
    if role == Role::Consumer {
        check_group_protocol(view, problems);
    }
    let catalogue = ConfigCatalogue::get();
    let Some(set) = catalogue.set_for(role) else {
        return;
    };
    debug_assert_eq!(defs.len(), view.keys.len());
    let mut suggestions_left = MAX_SUGGESTIONS;
    // Unknown keys, warned about after the loop (the evaluation sorts its warnings).
    // Sized for the worst case at once: a config of custom keys would otherwise regrow it
    // (and copy it) about log2(keys) times; it lives only for this call.
    let mut unknown: Vec<UnknownKey> = Vec::with_capacity(view.keys.len());
    let mut unknown_len = 0;
    for (provenance, def) in view.keys.values().zip(defs) {
        let Some(contribution) = file_contribution(provenance) else {
            continue;
        };
        let key = provenance.key.as_str();
        let Some(def) = *def else {
            if role != Role::MirrorMaker && !has_open_prefix(key) {
                // A config with many custom keys (interceptors, plugins) is deliberate, not a
                // typo: suggestions stop after a few, which keeps large configs cheap to check.
                let suggestion = if suggestions_left > 0 {
                    suggestions_left -= 1;
                    set.closest_key(key)
                } else {
                    None
                };
                let unknown_key = UnknownKey {
                    key,
                    source: &contribution.source,
                    suggestion,
                };
                unknown_len += unknown_key.message_len(role);
                unknown.push(unknown_key);
            }
            continue;
        };
        if def.deprecated {
            warnings.push(Warning {
                key: key.into(),
                role: Some(role),
                reason: Reason::DeprecatedKey,
                message: format!(
                    "{key} is deprecated in Kafka {} (from {})",
                    catalogue.kafka_version, contribution.source
                )
                .into(),
            });
        }
        // A provider reference is resolved by Kafka at run time; its type is unknown here.
        if sensitive::has_provider_reference(&contribution.value, &view.providers) {
            continue;
        }
        if let Err(why) = check_value(def, &contribution.value) {
            let shown = if contribution.is_secret_sourced() || def.is_password() {
                REDACTED.to_string()
            } else {
                format!("{:?}", contribution.value)
            };
            problems.push(Problem::new(
                Reason::InvalidValue,
                contribution.source.to_string(),
                format!("{key}={shown} is not valid for the {role} client: {why}"),
            ));
        }
    }
    warn_unknown(role, &unknown, unknown_len, warnings);
}

/// A key the role's config set does not define, and the key it was most likely meant to be.
struct UnknownKey<'v> {
    key: &'v str,
    source: &'v Source,
    suggestion: Option<&'static str>,
}

impl UnknownKey<'_> {
    /// The length of [`UnknownKey::write_message`]'s text.
    fn message_len(&self, role: Role) -> usize {
        let tail = match self.suggestion {
            Some(s) => "did you mean ?".len() + s.len(),
            None => "the  client does not define it; Kafka ignores it".len() + role.as_str().len(),
        };
        self.key.len() + " (from ".len() + self.source.text_len() + "): ".len() + tail
    }

    /// `key (from source): did you mean x?` or `…: the producer client does not define it; …`,
    /// written by hand: this runs for every custom key of large configs.
    fn write_message(&self, role: Role, out: &mut String) {
        out.push_str(self.key);
        out.push_str(" (from ");
        self.source.push_to(out);
        out.push_str("): ");
        match self.suggestion {
            Some(s) => {
                out.push_str("did you mean ");
                out.push_str(s);
                out.push('?');
            }
            None => {
                out.push_str("the ");
                out.push_str(role.as_str());
                out.push_str(" client does not define it; Kafka ignores it");
            }
        }
    }
}

/// One `UnknownKey` warning per key. Their messages are written into one buffer of `len` bytes
/// and each message starts with its key, so every warning's key and message are parts of that
/// buffer: one allocation for all of them (a config with thousands of custom keys made two per
/// key).
fn warn_unknown(role: Role, unknown: &[UnknownKey], len: usize, warnings: &mut Vec<Warning>) {
    if unknown.is_empty() {
        return;
    }
    let mut buffer = String::with_capacity(len);
    let mut ends = Vec::with_capacity(unknown.len());
    for unknown_key in unknown {
        unknown_key.write_message(role, &mut buffer);
        ends.push(buffer.len());
    }
    let buffer = Arc::new(buffer);
    warnings.reserve(unknown.len());
    let mut start = 0;
    for (unknown_key, end) in unknown.iter().zip(ends) {
        warnings.push(Warning {
            key: Text::shared(&buffer, start..start + unknown_key.key.len()),
            role: Some(role),
            reason: Reason::UnknownKey,
            message: Text::shared(&buffer, start..end),
        });
        start = end;
    }
}

/// Parses and validates a value as Kafka's `ConfigDef.parseValue` does: `ConfigDef.parseType`
/// for the key's type, then the key's validator. The error says why Kafka would refuse it.
///
/// Parsing follows Java exactly where a value can differ (`String.trim`, `Integer.parseInt` with
/// non-ASCII digits, `Double.parseDouble` suffixes and hex, `equalsIgnoreCase`), so that the
/// verdict is Kafka's; the conformance check (`conformance/validators.py`) compares the two.
/// What is deliberately not checked is listed in docs/conformance.md ("Validators").
pub fn check_value(def: &ConfigKey, value: &str) -> Result<(), String> {
    let trimmed = java::trim(value);
    let parsed = match def.config_type {
        ConfigType::Boolean => {
            if !java::equals_ignore_case(trimmed, "true")
                && !java::equals_ignore_case(trimmed, "false")
            {
                return Err("expected true or false".into());
            }
            Parsed::Boolean
        }
        ConfigType::Int => Parsed::Integer(
            java::parse_integer(trimmed, i64::from(i32::MIN), i64::from(i32::MAX))
                .ok_or("expected a 32-bit integer")?,
        ),
        ConfigType::Short => Parsed::Integer(
            java::parse_integer(trimmed, i64::from(i16::MIN), i64::from(i16::MAX))
                .ok_or("expected a 16-bit integer")?,
        ),
        ConfigType::Long => Parsed::Integer(
            java::parse_integer(trimmed, i64::MIN, i64::MAX).ok_or("expected a 64-bit integer")?,
        ),
        ConfigType::Double => {
            Parsed::Double(java::parse_double(trimmed).ok_or("expected a number")?)
        }
        ConfigType::Class => {
            // Whether the class exists depends on the classpath Kafka runs with: only the form
            // of the name is checked.
            if !is_class_name(trimmed) {
                return Err("expected a fully qualified Java class name".into());
            }
            Parsed::Class
        }
        ConfigType::String => Parsed::Text(trimmed),
        ConfigType::List => Parsed::List(java::list_items(trimmed)),
        ConfigType::Password => Parsed::Password,
    };
    match &def.validator {
        // ConfigDef.parseValue drops repeated items (logging a warning) before a ValidList sees them.
        Some(validator @ Validator::ValidList { .. }) => match parsed {
            Parsed::List(items) => {
                let mut unique: Vec<&str> = Vec::with_capacity(items.len());
                for item in items {
                    if !unique.contains(&item) {
                        unique.push(item);
                    }
                }
                apply(validator, &Parsed::List(unique))
            }
            other => apply(validator, &other),
        },
        Some(validator) => apply(validator, &parsed),
        None => Ok(()),
    }
}

/// A value after `ConfigDef.parseType`, as far as the validators need it.
#[derive(Debug)]
enum Parsed<'a> {
    Boolean,
    /// INT, SHORT and LONG.
    Integer(i64),
    Double(f64),
    /// STRING, trimmed.
    Text(&'a str),
    /// LIST: the items, trimmed.
    List(Vec<&'a str>),
    Class,
    Password,
}

impl Parsed<'_> {
    fn number(&self) -> Option<f64> {
        match self {
            // Number.doubleValue(), as ConfigDef.Range compares
            Parsed::Integer(n) => Some(*n as f64),
            Parsed::Double(n) => Some(*n),
            _ => None,
        }
    }

    fn text(&self) -> Result<&str, String> {
        match self {
            Parsed::Text(s) => Ok(s),
            // Kafka casts the parsed value to String and fails
            _ => Err("Kafka's validator for this key expects a string".into()),
        }
    }

    fn list(&self) -> Result<&[&str], String> {
        match self {
            Parsed::List(items) => Ok(items),
            _ => Err("Kafka's validator for this key expects a list".into()),
        }
    }
}

fn apply(validator: &Validator, value: &Parsed) -> Result<(), String> {
    match validator {
        Validator::Range { min, max } => {
            // ConfigDef.Range: compares Number.doubleValue(); NaN passes both tests, as in Java
            let Some(n) = value.number() else {
                return Err("Kafka's range validator for this key expects a number".into());
            };
            if let Some(min) = min
                && n < *min
            {
                return Err(format!("must be at least {}", fmt_number(*min)));
            }
            if let Some(max) = max
                && n > *max
            {
                return Err(format!("must be no more than {}", fmt_number(*max)));
            }
            Ok(())
        }
        Validator::ValidString { values } => {
            let s = value.text()?;
            if values.iter().any(|v| v == s) {
                Ok(())
            } else {
                Err(format!("must be one of {} (exact case)", values.join(", ")))
            }
        }
        Validator::CaseInsensitiveValidString { values } => {
            // s.toUpperCase(Locale.ROOT) is one of the (upper-cased) values
            let upper = value.text()?.to_uppercase();
            if values.contains(&upper) {
                Ok(())
            } else {
                Err(format!("must be one of {} (any case)", values.join(", ")))
            }
        }
        Validator::ValidList {
            values,
            allow_empty,
        } => {
            let items = value.list()?;
            if items.is_empty() && *allow_empty == Some(false) {
                return Err(if values.is_empty() {
                    "must not be empty".to_string()
                } else {
                    format!("must not be empty: one or more of {}", values.join(", "))
                });
            }
            if items.iter().any(|item| item.is_empty()) {
                return Err("must not have empty items (check for a stray comma)".into());
            }
            if values.is_empty() {
                return Ok(());
            }
            match items.iter().find(|item| !values.iter().any(|v| v == *item)) {
                Some(bad) => Err(format!(
                    "{bad:?} is not one of {} (exact case)",
                    values.join(", ")
                )),
                None => Ok(()),
            }
        }
        Validator::NonEmptyString => {
            if value.text()?.is_empty() {
                Err("must not be empty".into())
            } else {
                Ok(())
            }
        }
        Validator::NonEmptyStringWithoutControlChars => {
            let s = value.text()?;
            if s.is_empty() {
                Err("must not be empty".into())
            } else if let Some(c) = s.chars().find(|c| c.is_control()) {
                // Character.isISOControl: U+0000-U+001F and U+007F-U+009F, the same set
                Err(format!(
                    "must not contain control characters (found U+{:04X})",
                    u32::from(c)
                ))
            } else {
                Ok(())
            }
        }
        // a value read from a file is never null
        Validator::NonNullValidator => Ok(()),
        Validator::ListSize { max_size } => {
            let items = value.list()?;
            if items.len() > *max_size {
                Err(format!(
                    "may have at most {max_size} entries, not {}",
                    items.len()
                ))
            } else {
                Ok(())
            }
        }
        Validator::Composite { validators } => validators.iter().try_for_each(|v| apply(v, value)),
        Validator::AutoOffsetReset {
            values,
            duration_prefix,
        } => auto_offset_reset(value.text()?, values, duration_prefix),
        Validator::ThrottledReplicaList => throttled_replicas(value.list()?),
        Validator::QuorumVoters => value.list()?.iter().try_for_each(|v| quorum_voter(v)),
        Validator::QuorumBootstrapServers => {
            value
                .list()?
                .iter()
                .try_for_each(|entry| match host_port(entry) {
                    Some(_) => Ok(()),
                    None => Err(format!("{entry:?} is not {{host}}:{{port}} (port 0-65535)")),
                })
        }
        Validator::RestListeners => {
            let items = value.list()?;
            if items.is_empty() {
                Err("needs at least one URL, e.g. http://localhost:8083".into())
            } else if items.iter().any(|item| java::trim(item).is_empty()) {
                Err("has an empty URL (check for a stray comma)".into())
            } else {
                Ok(())
            }
        }
        Validator::ResponseHttpHeaders { actions } => response_http_headers(value.text()?, actions),
        Validator::Lambda {
            defined_in,
            description,
        } => match (defined_in, description) {
            (Some(defined_in), Some(description)) => match lambda_rule(defined_in, description) {
                Some(rule) => apply_lambda(rule, description, value),
                // deliberately or not yet checked: see is_checked
                None => Ok(()),
            },
            _ => Ok(()),
        },
        // Deliberately not checked (docs/conformance.md, "Validators")
        Validator::Other { .. } | Validator::Unknown => Ok(()),
    }
}

/// What a Kafka validator written as a lambda (`ConfigDef.LambdaValidator`) checks. The generator
/// cannot read a lambda's code, only the class that defines it and its description, so
/// [`lambda_rule`] maps those to one of these, each following the Kafka 4.3.1 source it names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LambdaRule {
    /// `CompressionType.GZIP.levelValidator()`: -1 (`Deflater.DEFAULT_COMPRESSION`) or 1-9
    /// (`Deflater.BEST_SPEED`-`BEST_COMPRESSION`).
    GzipLevel,
    /// `TopicCreationConfig.REPLICATION_FACTOR_VALIDATOR` / `PARTITIONS_VALIDATOR`: -1
    /// (`TopicAdmin.NO_REPLICATION_FACTOR` / `NO_PARTITIONS`) or at least 1.
    PositiveOrMinusOne,
    /// `DistributedConfig` `connect.protocol`: `ConnectProtocolCompatibility.compatibility`, a
    /// constant whose `name()` `equalsIgnoreCase` the value; the description lists them.
    ConnectProtocol,
    /// `DistributedConfig.validateVerificationAlgorithms`: at least one algorithm. Whether each is
    /// a `Mac` of the worker JVM's security providers is not checked (docs/conformance.md).
    AtLeastOneAlgorithm,
    /// `ConnectorConfig.aliasValidator(kind)`: no alias twice.
    UniqueAliases,
    /// `StreamsConfig.verifyTopologyOptimizationConfigs`: `value.split("\\s*,\\s*")`, each item
    /// one of the description's list, `all` (OPTIMIZE) and `none` (NO_OPTIMIZATION) only alone.
    TopologyOptimization,
}

/// The rule of a lambda validator of the catalogue, or `None`: unknown (a test fails for any
/// lambda of the catalogue that is neither here nor listed as unchecked in docs/conformance.md)
/// or deliberately unchecked because its verdict depends on the JVM Kafka runs in.
fn lambda_rule(defined_in: &str, description: &str) -> Option<LambdaRule> {
    let listed = description.starts_with('[') && description.ends_with(']');
    match (defined_in, description) {
        ("org.apache.kafka.common.record.internal.CompressionType$1", "[1,...,9] or -1") => {
            Some(LambdaRule::GzipLevel)
        }
        (
            "org.apache.kafka.connect.runtime.TopicCreationConfig",
            "Positive number not larger than the number of brokers in the Kafka cluster, or -1 to use the broker's default"
            | "Positive number, or -1 to use the broker's default",
        ) => Some(LambdaRule::PositiveOrMinusOne),
        ("org.apache.kafka.connect.runtime.distributed.DistributedConfig", _) if listed => {
            Some(LambdaRule::ConnectProtocol)
        }
        (
            "org.apache.kafka.connect.runtime.distributed.DistributedConfig",
            "A list of one or more MAC algorithms, each supported by the worker JVM",
        ) => Some(LambdaRule::AtLeastOneAlgorithm),
        ("org.apache.kafka.connect.runtime.ConnectorConfig", d)
            if d.starts_with("unique ") && d.ends_with(" aliases") =>
        {
            Some(LambdaRule::UniqueAliases)
        }
        ("org.apache.kafka.streams.StreamsConfig", _) if listed => {
            Some(LambdaRule::TopologyOptimization)
        }
        _ => None,
    }
}

/// Whether the engine checks what this validator checks (all of it, or for
/// `inter.worker.verification.algorithms` the part that does not depend on the JVM). The ones it
/// does not are listed, with the reason, in docs/conformance.md ("Validators").
pub fn is_checked(validator: &Validator) -> bool {
    match validator {
        Validator::Lambda {
            defined_in: Some(defined_in),
            description: Some(description),
        } => lambda_rule(defined_in, description).is_some(),
        Validator::Lambda { .. } | Validator::Other { .. } | Validator::Unknown => false,
        Validator::Composite { validators } => validators.iter().all(is_checked),
        _ => true,
    }
}

/// The items of a `[a, b, c]` description.
fn listed(description: &str) -> Vec<&str> {
    description
        .strip_prefix('[')
        .and_then(|d| d.strip_suffix(']'))
        .map(|d| d.split(", ").collect())
        .unwrap_or_default()
}

fn apply_lambda(rule: LambdaRule, description: &str, value: &Parsed) -> Result<(), String> {
    match rule {
        LambdaRule::GzipLevel => match value {
            Parsed::Integer(level) if *level == -1 || (1..=9).contains(level) => Ok(()),
            Parsed::Integer(_) => Err("must be between 1 and 9, or -1 for gzip's default".into()),
            _ => Err("Kafka's validator for this key expects a number".into()),
        },
        LambdaRule::PositiveOrMinusOne => match value {
            Parsed::Integer(n) if *n == -1 || *n >= 1 => Ok(()),
            Parsed::Integer(_) => Err("must be at least 1, or -1 for the broker's default".into()),
            _ => Err("Kafka's validator for this key expects a number".into()),
        },
        LambdaRule::ConnectProtocol => {
            let s = value.text()?;
            let names = listed(description);
            if names.iter().any(|n| java::equals_ignore_case(s, n)) {
                Ok(())
            } else {
                Err(format!("must be one of {} (any case)", names.join(", ")))
            }
        }
        LambdaRule::AtLeastOneAlgorithm => {
            if value.list()?.is_empty() {
                Err("needs at least one MAC algorithm".into())
            } else {
                Ok(())
            }
        }
        LambdaRule::UniqueAliases => {
            let items = value.list()?;
            match items
                .iter()
                .enumerate()
                .find(|(i, item)| items[..*i].contains(item))
            {
                Some((_, dup)) => Err(format!("names the alias {dup:?} twice")),
                None => Ok(()),
            }
        }
        LambdaRule::TopologyOptimization => {
            let allowed = listed(description);
            let items = java::split_comma_dropping_trailing_empty(value.text()?);
            if items.len() > 1 && items.iter().any(|i| *i == "all" || *i == "none") {
                Err("all and none cannot be combined with other optimizations".into())
            } else if let Some(bad) = items.iter().find(|i| !allowed.contains(i)) {
                Err(format!("{bad:?} is not one of {}", allowed.join(", ")))
            } else {
                Ok(())
            }
        }
    }
}

/// `AutoOffsetResetStrategy.fromString`: exactly one of `values` (case-sensitive), or the
/// prefix followed by an ISO-8601 duration (`java.time.Duration.parse`) that is not negative.
fn auto_offset_reset(s: &str, values: &[String], prefix: &str) -> Result<(), String> {
    if values.iter().any(|v| v == s) {
        return Ok(());
    }
    let expected = || {
        format!(
            "must be one of {} (exact case) or {prefix}<ISO-8601 duration>, e.g. {prefix}PT1H",
            values.join(", ")
        )
    };
    let Some(duration) = s.strip_prefix(prefix) else {
        return Err(expected());
    };
    match java::parse_duration(duration) {
        Some((seconds, _)) if seconds < 0 => Err(format!(
            "{duration:?} is a negative duration; {prefix} needs one that is not negative"
        )),
        Some(_) => Ok(()),
        None => Err(format!(
            "{duration:?} is not an ISO-8601 duration such as PT1H or P1DT30M; {}",
            expected()
        )),
    }
}

/// `ThrottledReplicaListValidator`: every item (trimmed) is `partition:broker` or empty, or the
/// items joined are `*`.
fn throttled_replicas(items: &[&str]) -> Result<(), String> {
    let replica = |item: &str| {
        let item = java::trim(item);
        item.is_empty()
            || item.split_once(':').is_some_and(|(p, b)| {
                !p.is_empty()
                    && !b.is_empty()
                    && p.bytes().all(|c| c.is_ascii_digit())
                    && b.bytes().all(|c| c.is_ascii_digit())
            })
    };
    let joined: String = items.iter().map(|i| java::trim(i)).collect();
    if items.iter().all(|i| replica(i)) || joined == "*" {
        Ok(())
    } else {
        Err("must be * or a list of partition:broker pairs, e.g. 0:101,1:102".into())
    }
}

/// `QuorumConfig.parseVoterConnections(entries, false)` for one entry: `{id}@{host}:{port}`.
fn quorum_voter(entry: &str) -> Result<(), String> {
    let bad = |why: &str| Err(format!("{entry:?} is not {{id}}@{{host}}:{{port}}: {why}"));
    // entry.split("@"): trailing empty pieces are dropped
    let parts = java::split_dropping_trailing_empty(entry, '@');
    let [id, address] = parts.as_slice() else {
        return bad("one @ expected");
    };
    if java::parse_integer(id, i64::from(i32::MIN), i64::from(i32::MAX)).is_none() {
        return bad("the id is not a 32-bit integer");
    }
    if host_port(address).is_none() {
        return bad("the address is not {host}:{port} (port 0-65535)");
    }
    Ok(())
}

/// `Utils.getHost`/`Utils.getPort` (the pattern
/// `^(?:[0-9a-zA-Z\-%._]*://)?\[?([0-9a-zA-Z\-%._:]*)]?:([0-9]+)`) and
/// `InetSocketAddress.createUnresolved`'s port range: the port, if Kafka accepts the address.
fn host_port(address: &str) -> Option<u16> {
    let scheme_char = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '%' | '.' | '_');
    let host_char = |c: char| scheme_char(c) || c == ':';
    let (rest, port) = address.rsplit_once(':')?;
    if port.is_empty() || !port.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    // Integer.parseInt (overflow throws), then the port range check
    let port: u16 = port.parse::<i32>().ok()?.try_into().ok()?;
    let bracketed_host = |s: &str| {
        let s = s.strip_prefix('[').unwrap_or(s);
        let s = s.strip_suffix(']').unwrap_or(s);
        s.chars().all(host_char)
    };
    let with_scheme = rest
        .split_once("://")
        .is_some_and(|(scheme, host)| scheme.chars().all(scheme_char) && bracketed_host(host));
    (with_scheme || bracketed_host(rest)).then_some(port)
}

/// `RestServerConfig.ResponseHttpHeadersValidator`: blank, or rules split by Jetty's
/// `StringUtil.csvSplit`, each `[action] [header name]:[header value]`.
fn response_http_headers(s: &str, actions: &[String]) -> Result<(), String> {
    if java::trim(s).is_empty() {
        return Ok(());
    }
    for rule in java::jetty_csv_split(s) {
        let bad = |why: String| Err(format!("header rule {rule:?}: {why}"));
        let rule_trimmed = java::trim(&rule);
        // config.trim().split("\\s+", 2)
        let Some(at) = rule_trimmed.find(java::is_regex_space) else {
            return bad("expected '[action] [header name]:[header value]'".into());
        };
        let action = java::trim(&rule_trimmed[..at]);
        let header = rule_trimmed[at..].trim_start_matches(java::is_regex_space);
        if !actions.iter().any(|a| java::equals_ignore_case(action, a)) {
            return bad(format!(
                "the action {action:?} is not one of {}",
                actions.join(", ")
            ));
        }
        // header.trim().split(":") must give exactly a name and a value
        let pieces = java::split_dropping_trailing_empty(java::trim(header), ':');
        let [name, _value] = pieces.as_slice() else {
            return bad("expected '[header name]:[header value]'".into());
        };
        let name = java::trim(name);
        if name.is_empty() || java::matches_dot_star_space_dot_star(name) {
            return bad(format!(
                "the header name {name:?} is empty or contains whitespace"
            ));
        }
    }
    Ok(())
}

fn fmt_number(n: f64) -> String {
    if n.fract() == 0.0 && n.abs() < 1e18 {
        format!("{}", n as i64)
    } else {
        n.to_string()
    }
}

fn is_class_name(value: &str) -> bool {
    !value.is_empty()
        && value.split('.').all(|part| {
            let mut chars = part.chars();
            chars
                .next()
                .is_some_and(|c| c.is_alphabetic() || c == '_' || c == '$')
                && chars.all(|c| c.is_alphanumeric() || c == '_' || c == '$')
        })
}

/// Kafka refuses a consumer whose settings belong to the other group protocol (KIP-848).
/// Judged on the values the tool ends up with: in Legacy a tool's forced `group.protocol` (and
/// the options it then adds) beat what the file says.
fn check_group_protocol(view: &RoleView, problems: &mut Vec<Problem>) {
    let protocol = view
        .effective_value("group.protocol")
        .map(|c| c.value.trim().to_ascii_lowercase())
        .unwrap_or_else(|| "classic".to_string());
    for (refusing, keys) in CONSUMER_PROTOCOL_ONLY {
        if protocol != *refusing {
            continue;
        }
        for key in *keys {
            if let Some(contribution) = view.effective_value(key) {
                problems.push(Problem::new(
                    Reason::InvalidValue,
                    contribution.source.to_string(),
                    format!("{key} cannot be set when group.protocol={protocol}: the consumer refuses to start"),
                ));
            }
        }
    }
}

/// Java's own parsing rules where Kafka relies on them, so that a value is read here exactly as
/// the JVM reads it.
mod java {
    /// `String.trim()`: removes every char up to U+0020 at both ends (not Unicode spaces).
    pub fn trim(s: &str) -> &str {
        s.trim_matches(|c: char| c <= ' ')
    }

    /// `\s` of `java.util.regex` without UNICODE_CHARACTER_CLASS: `[ \t\n\x0B\f\r]`.
    pub fn is_regex_space(c: char) -> bool {
        matches!(c, ' ' | '\t' | '\n' | '\u{0B}' | '\u{0C}' | '\r')
    }

    /// `Character.isWhitespace`: Unicode space, line and paragraph separators except the
    /// no-break ones, plus the ASCII controls U+0009-U+000D and U+001C-U+001F.
    pub fn is_whitespace(c: char) -> bool {
        matches!(
            c,
            '\t' | '\n'
                | '\u{0B}'
                | '\u{0C}'
                | '\r'
                | '\u{1C}'..='\u{1F}'
                | ' '
                | '\u{1680}'
                | '\u{2000}'..='\u{2006}'
                | '\u{2008}'..='\u{200A}'
                | '\u{2028}'
                | '\u{2029}'
                | '\u{205F}'
                | '\u{3000}'
        )
    }

    /// `Character.toUpperCase(char)` / `toLowerCase(char)`: one char to one char (a char whose
    /// full mapping is several chars keeps its simple mapping, itself for those).
    fn single(c: char, mut mapped: impl Iterator<Item = char>) -> char {
        match (mapped.next(), mapped.next()) {
            (Some(m), None) => m,
            _ => c,
        }
    }

    fn upper(c: char) -> char {
        single(c, c.to_uppercase())
    }

    fn lower(c: char) -> char {
        single(c, c.to_lowercase())
    }

    /// `String.equalsIgnoreCase`: same length in UTF-16 units, and char by char equal after
    /// `toUpperCase`, or after `toUpperCase` then `toLowerCase`.
    pub fn equals_ignore_case(a: &str, b: &str) -> bool {
        a.encode_utf16().count() == b.encode_utf16().count()
            && a.chars().zip(b.chars()).all(|(x, y)| {
                if x == y {
                    return true;
                }
                let (ux, uy) = (upper(x), upper(y));
                ux == uy || lower(ux) == lower(uy)
            })
    }

    /// The chars `Character.digit(c, 10)` reads as 0 (JDK 17, BMP only: `Integer.parseInt`
    /// reads UTF-16 units); each starts a run of ten digits.
    const DIGIT_ZEROS: [u32; 37] = [
        0x0030, 0x0660, 0x06F0, 0x07C0, 0x0966, 0x09E6, 0x0A66, 0x0AE6, 0x0B66, 0x0BE6, 0x0C66,
        0x0CE6, 0x0D66, 0x0DE6, 0x0E50, 0x0ED0, 0x0F20, 0x1040, 0x1090, 0x17E0, 0x1810, 0x1946,
        0x19D0, 0x1A80, 0x1A90, 0x1B50, 0x1BB0, 0x1C40, 0x1C50, 0xA620, 0xA8D0, 0xA900, 0xA9D0,
        0xA9F0, 0xAA50, 0xABF0, 0xFF10,
    ];

    fn decimal_digit(c: char) -> Option<i64> {
        let c = u32::from(c);
        DIGIT_ZEROS
            .iter()
            .find(|zero| (**zero..**zero + 10).contains(&c))
            .map(|zero| i64::from(c - zero))
    }

    /// `Integer.parseInt` / `Short.parseShort` / `Long.parseLong`: an optional ASCII sign, then
    /// one or more decimal digits of any script, no spaces, within `min..=max`.
    pub fn parse_integer(s: &str, min: i64, max: i64) -> Option<i64> {
        let (negative, digits) = match s.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, s.strip_prefix('+').unwrap_or(s)),
        };
        if digits.is_empty() {
            return None;
        }
        let mut value: i128 = 0;
        for c in digits.chars() {
            value = value * 10 + i128::from(decimal_digit(c)?);
            if value > i128::from(u64::MAX) {
                return None;
            }
        }
        let value = if negative { -value } else { value };
        i64::try_from(value)
            .ok()
            .filter(|v| (min..=max).contains(v))
    }

    /// `Double.parseDouble` (`FloatingDecimal.readJavaFormatString`): optional sign, then `NaN`,
    /// `Infinity`, a hexadecimal `0x…p…` or a decimal with optional exponent, each number with
    /// an optional `f`/`F`/`d`/`D` suffix. Rust's `inf`/`nan` spellings are not Java's.
    pub fn parse_double(s: &str) -> Option<f64> {
        let (negative, body) = match s.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, s.strip_prefix('+').unwrap_or(s)),
        };
        let magnitude = match body {
            "NaN" => f64::NAN,
            "Infinity" => f64::INFINITY,
            _ => {
                let number = body.strip_suffix(['f', 'F', 'd', 'D']).unwrap_or(body);
                if let Some(hex) = number
                    .strip_prefix("0x")
                    .or_else(|| number.strip_prefix("0X"))
                {
                    parse_hex_double(hex)?
                } else {
                    parse_decimal(number)?
                }
            }
        };
        Some(if negative { -magnitude } else { magnitude })
    }

    /// digits [. digits] or . digits, then an optional exponent e[+-]digits (ASCII).
    fn parse_decimal(s: &str) -> Option<f64> {
        let (mantissa, exponent) = match s.find(['e', 'E']) {
            Some(at) => (&s[..at], Some(&s[at + 1..])),
            None => (s, None),
        };
        let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
        let digits_ok = |d: &str| d.bytes().all(|b| b.is_ascii_digit());
        if !digits_ok(int) || !digits_ok(frac) || int.len() + frac.len() == 0 {
            return None;
        }
        if let Some(exponent) = exponent {
            let e = exponent.strip_prefix(['+', '-']).unwrap_or(exponent);
            if e.is_empty() || !digits_ok(e) {
                return None;
            }
        }
        // the syntax is now one Rust reads the same way (an exponent too large for i32 reads as
        // infinity or zero in both)
        s.parse::<f64>().ok()
    }

    /// hexdigits[.hexdigits] p[+-]digits, at least one hex digit, the binary exponent required.
    fn parse_hex_double(s: &str) -> Option<f64> {
        let at = s.find(['p', 'P'])?;
        let (mantissa, exponent) = (&s[..at], &s[at + 1..]);
        let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
        let hex_ok = |d: &str| d.chars().all(|c| c.is_ascii_hexdigit());
        if !hex_ok(int) || !hex_ok(frac) || int.len() + frac.len() == 0 {
            return None;
        }
        let (exp_negative, exp_digits) = match exponent.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, exponent.strip_prefix('+').unwrap_or(exponent)),
        };
        if exp_digits.is_empty() || !exp_digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        // the value only matters for range checks: read it to f64 precision
        let mut value = 0f64;
        for c in int.chars().chain(frac.chars()) {
            value = value * 16.0 + f64::from(c.to_digit(16)?);
        }
        let exp: i64 = exp_digits.parse::<i64>().unwrap_or(i64::MAX / 2);
        let exp = if exp_negative { -exp } else { exp } - 4 * frac.len() as i64;
        let exp = i32::try_from(exp.clamp(-2000, 2000)).unwrap_or(0);
        Some(value * 2f64.powi(exp))
    }

    /// A LIST value as `ConfigDef.parseType` splits it: empty text is the empty list, otherwise
    /// `trimmed.split("\\s*,\\s*", -1)` (empty items kept).
    pub fn list_items(trimmed: &str) -> Vec<&str> {
        if trimmed.is_empty() {
            Vec::new()
        } else {
            trimmed
                .split(',')
                .map(|item| item.trim_matches(is_regex_space))
                .collect()
        }
    }

    /// `s.split("\\s*,\\s*")`: like [`list_items`], but trailing empty items are dropped and a
    /// text without a comma is one item (even when empty).
    pub fn split_comma_dropping_trailing_empty(s: &str) -> Vec<&str> {
        let mut items: Vec<&str> = s
            .split(',')
            .map(|i| i.trim_matches(is_regex_space))
            .collect();
        if s.contains(',') {
            while items.last().is_some_and(|i| i.is_empty()) {
                items.pop();
            }
        }
        items
    }

    /// `s.split(String.valueOf(sep))` (limit 0): trailing empty pieces dropped, a text without
    /// the separator is one piece.
    pub fn split_dropping_trailing_empty(s: &str, sep: char) -> Vec<&str> {
        let mut pieces: Vec<&str> = s.split(sep).collect();
        if s.contains(sep) {
            while pieces.last().is_some_and(|p| p.is_empty()) {
                pieces.pop();
            }
        }
        pieces
    }

    /// `s.matches(".*\\s+.*")`: `.` matches anything but a line terminator (`\n`, `\r`,
    /// U+0085, U+2028, U+2029), so every terminator must sit inside the run of spaces.
    pub fn matches_dot_star_space_dot_star(s: &str) -> bool {
        if s.contains(['\u{85}', '\u{2028}', '\u{2029}']) {
            return false;
        }
        match (s.find(['\n', '\r']), s.rfind(['\n', '\r'])) {
            (Some(first), Some(last)) => s[first..=last].chars().all(is_regex_space),
            _ => s.chars().any(is_regex_space),
        }
    }

    /// Jetty's `StringUtil.csvSplit` (12.0): items separated by commas, unquoted items trimmed
    /// (`Character.isWhitespace`), `"quoted"` items with `\` escapes, a trailing comma ignored,
    /// two commas give an empty item.
    pub fn jetty_csv_split(s: &str) -> Vec<String> {
        #[derive(Clone, Copy, PartialEq)]
        enum State {
            PreData,
            Quote,
            Slosh,
            Data,
            White,
            PostData,
        }
        let mut list = Vec::new();
        let mut state = State::PreData;
        let mut out = String::new();
        let mut last = 0usize;
        for ch in s.chars() {
            match state {
                State::PreData => {
                    if ch == '"' {
                        state = State::Quote;
                    } else if ch == ',' {
                        list.push(String::new());
                    } else if !is_whitespace(ch) {
                        state = State::Data;
                        out.push(ch);
                    }
                }
                State::Data => {
                    if is_whitespace(ch) {
                        last = out.len();
                        out.push(ch);
                        state = State::White;
                    } else if ch == ',' {
                        list.push(std::mem::take(&mut out));
                        state = State::PreData;
                    } else {
                        out.push(ch);
                    }
                }
                State::White => {
                    if is_whitespace(ch) {
                        out.push(ch);
                    } else if ch == ',' {
                        out.truncate(last);
                        list.push(std::mem::take(&mut out));
                        state = State::PreData;
                    } else {
                        state = State::Data;
                        out.push(ch);
                    }
                }
                State::Quote => {
                    if ch == '\\' {
                        state = State::Slosh;
                    } else if ch == '"' {
                        list.push(std::mem::take(&mut out));
                        state = State::PostData;
                    } else {
                        out.push(ch);
                    }
                }
                State::Slosh => {
                    out.push(ch);
                    state = State::Quote;
                }
                State::PostData => {
                    if ch == ',' {
                        state = State::PreData;
                    }
                }
            }
        }
        match state {
            State::PreData | State::PostData => {}
            State::Data | State::Quote | State::Slosh => list.push(out),
            State::White => {
                out.truncate(last);
                list.push(out);
            }
        }
        list
    }

    /// `java.time.Duration.parse` (JDK 17): `[-+]P[nD][T[nH][nM][n[.fraction]S]]`, letters in
    /// any case, each number with its own optional sign, a fraction of at most nine digits (`.`
    /// or `,`), at least one section, no `T` without a time section, and no overflow of the
    /// seconds (a long) along the way. Returns (seconds, nanos) as Duration keeps them.
    pub fn parse_duration(text: &str) -> Option<(i64, i64)> {
        let mut rest = text;
        let negate = match rest.chars().next() {
            Some('-') => {
                rest = &rest[1..];
                true
            }
            Some('+') => {
                rest = &rest[1..];
                false
            }
            _ => false,
        };
        rest = rest.strip_prefix(['P', 'p'])?;
        // a signed number (ASCII digits) at the start of `s`, and what follows it
        fn number(s: &str) -> Option<(&str, &str)> {
            let sign = usize::from(s.starts_with(['+', '-']));
            let digits = s[sign..].bytes().take_while(u8::is_ascii_digit).count();
            (digits > 0).then(|| s.split_at(sign + digits))
        }
        fn long(n: &str, multiplier: i64) -> Option<i64> {
            n.parse::<i64>().ok()?.checked_mul(multiplier)
        }
        let (mut days, mut hours, mut minutes, mut seconds) = (None, None, None, None);
        let mut fraction: Option<&str> = None;
        if let Some((n, after)) = number(rest) {
            rest = after.strip_prefix(['D', 'd'])?;
            days = Some(n);
        }
        if let Some(time) = rest.strip_prefix(['T', 't']) {
            rest = time;
            if rest.is_empty() {
                return None; // "T" without a time section
            }
            while !rest.is_empty() {
                let (n, after) = number(rest)?;
                if let Some(after) = after.strip_prefix(['H', 'h']) {
                    if hours.is_some() || minutes.is_some() || seconds.is_some() {
                        return None;
                    }
                    hours = Some(n);
                    rest = after;
                } else if let Some(after) = after.strip_prefix(['M', 'm']) {
                    if minutes.is_some() || seconds.is_some() {
                        return None;
                    }
                    minutes = Some(n);
                    rest = after;
                } else {
                    if seconds.is_some() {
                        return None;
                    }
                    let after = match after.strip_prefix(['.', ',']) {
                        Some(f) => {
                            let digits = f.bytes().take_while(u8::is_ascii_digit).count();
                            if digits > 9 {
                                return None;
                            }
                            fraction = Some(&f[..digits]);
                            &f[digits..]
                        }
                        None => after,
                    };
                    rest = after.strip_prefix(['S', 's'])?;
                    seconds = Some(n);
                }
            }
        }
        if !rest.is_empty()
            || (days.is_none() && hours.is_none() && minutes.is_none() && seconds.is_none())
        {
            return None;
        }
        let days = days.map_or(Some(0), |n| long(n, 86_400))?;
        let hours = hours.map_or(Some(0), |n| long(n, 3_600))?;
        let minutes = minutes.map_or(Some(0), |n| long(n, 60))?;
        let secs = seconds.map_or(Some(0), |n| long(n, 1))?;
        let negative_secs = seconds.is_some_and(|n| n.starts_with('-'));
        let nanos: i64 = match fraction {
            Some(f) if !f.is_empty() => {
                let mut v: i64 = f.parse().ok()?;
                for _ in f.len()..9 {
                    v *= 10;
                }
                if negative_secs { -v } else { v }
            }
            _ => 0,
        };
        // Duration.create: addExact(days, addExact(hours, addExact(minutes, seconds)))
        let total = days.checked_add(hours.checked_add(minutes.checked_add(secs)?)?)?;
        let (s, n) = of_seconds(total, nanos)?;
        if !negate {
            return Some((s, n));
        }
        // negated(): through BigDecimal; fails when the seconds no longer fit a long
        let all = -(i128::from(s) * 1_000_000_000 + i128::from(n));
        let q = i64::try_from(all / 1_000_000_000).ok()?;
        let r = i64::try_from(all % 1_000_000_000).ok()?;
        of_seconds(q, r)
    }

    /// `Duration.ofSeconds(seconds, nanoAdjustment)`.
    fn of_seconds(seconds: i64, nanos: i64) -> Option<(i64, i64)> {
        let s = seconds.checked_add(nanos.div_euclid(1_000_000_000))?;
        Some((s, nanos.rem_euclid(1_000_000_000)))
    }
}
