//! Kafka's typed parsing and validators (`ConfigDef.parseType`, `ConfigDef.Validator`s), as a
//! client applies them when it starts.

use crate::engine::catalogue::configs::{ConfigKey, ConfigType, Validator};
use crate::engine::validate::java;

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
