//! Typed validation against Kafka's ConfigDef catalogue: the same parsing and validators Kafka
//! applies when a client starts, so a bad value fails here instead of in a pod.

use crate::engine::catalogue::configs::{ConfigCatalogue, ConfigKey, ConfigType, Validator};
use crate::engine::evaluate::RoleView;
use crate::engine::outcome::{Problem, Reason, Warning};
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

pub fn check_role(
    role: Role,
    view: &RoleView,
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
    let mut suggestions_left = MAX_SUGGESTIONS;
    for (key, contribution) in view.file_entries() {
        let Some(def) = set.get(key) else {
            if role != Role::MirrorMaker && !OPEN_PREFIXES.iter().any(|p| key.starts_with(p)) {
                // A config with many custom keys (interceptors, plugins) is deliberate, not a
                // typo: suggestions stop after a few, which keeps large configs cheap to check.
                let suggestion = if suggestions_left > 0 {
                    suggestions_left -= 1;
                    set.closest_key(key)
                } else {
                    None
                };
                // Built by hand: this runs for every custom key of large configs.
                let source = contribution.source.as_str();
                let mut message = String::with_capacity(key.len() + source.len() + 64);
                message.push_str(key);
                message.push_str(" (from ");
                message.push_str(source);
                message.push_str("): ");
                match suggestion {
                    Some(s) => {
                        message.push_str("did you mean ");
                        message.push_str(s);
                        message.push('?');
                    }
                    None => {
                        message.push_str("the ");
                        message.push_str(role.as_str());
                        message.push_str(" client does not define it; Kafka ignores it");
                    }
                }
                warnings.push(Warning {
                    key: key.to_string(),
                    role: Some(role),
                    reason: Reason::UnknownKey,
                    message,
                });
            }
            continue;
        };
        if def.deprecated {
            warnings.push(Warning {
                key: key.to_string(),
                role: Some(role),
                reason: Reason::DeprecatedKey,
                message: format!(
                    "{key} is deprecated in Kafka {} (from {})",
                    catalogue.kafka_version, contribution.source
                ),
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
                contribution.source.clone(),
                format!("{key}={shown} is not valid for the {role} client: {why}"),
            ));
        }
    }
}

/// Parses and validates a value as `ConfigDef.parseType` plus the key's validator would.
pub fn check_value(def: &ConfigKey, value: &str) -> Result<(), String> {
    let trimmed = value.trim();
    let number = match def.config_type {
        ConfigType::Boolean => {
            if !trimmed.eq_ignore_ascii_case("true") && !trimmed.eq_ignore_ascii_case("false") {
                return Err("expected true or false".into());
            }
            None
        }
        ConfigType::Int => Some(
            trimmed
                .parse::<i32>()
                .map(f64::from)
                .map_err(|_| "expected a 32-bit integer".to_string())?,
        ),
        ConfigType::Short => Some(
            trimmed
                .parse::<i16>()
                .map(f64::from)
                .map_err(|_| "expected a 16-bit integer".to_string())?,
        ),
        ConfigType::Long => Some(
            trimmed
                .parse::<i64>()
                .map(|v| v as f64)
                .map_err(|_| "expected a 64-bit integer".to_string())?,
        ),
        ConfigType::Double => Some(
            trimmed
                .parse::<f64>()
                .map_err(|_| "expected a number".to_string())?,
        ),
        ConfigType::Class => {
            if !is_class_name(trimmed) {
                return Err("expected a fully qualified Java class name".into());
            }
            None
        }
        ConfigType::String | ConfigType::List | ConfigType::Password => None,
    };
    match &def.validator {
        Some(validator) => apply(validator, trimmed, number),
        None => Ok(()),
    }
}

fn list_items(value: &str) -> Vec<&str> {
    if value.is_empty() {
        Vec::new()
    } else {
        value.split(',').map(str::trim).collect()
    }
}

fn apply(validator: &Validator, value: &str, number: Option<f64>) -> Result<(), String> {
    match validator {
        Validator::Range { min, max } => {
            let Some(n) = number else {
                return Ok(());
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
            if values.iter().any(|v| v == value) {
                Ok(())
            } else {
                Err(format!("must be one of {}", values.join(", ")))
            }
        }
        Validator::CaseInsensitiveValidString { values } => {
            if values.iter().any(|v| v.eq_ignore_ascii_case(value)) {
                Ok(())
            } else {
                Err(format!("must be one of {} (any case)", values.join(", ")))
            }
        }
        Validator::ValidList {
            values,
            allow_empty,
        } => {
            let items = list_items(value);
            if items.is_empty() && *allow_empty == Some(false) {
                return Err("must not be empty".into());
            }
            if values.is_empty() {
                return Ok(());
            }
            match items.iter().find(|item| !values.iter().any(|v| v == *item)) {
                Some(bad) => Err(format!("{bad:?} is not one of {}", values.join(", "))),
                None => Ok(()),
            }
        }
        Validator::NonEmptyString => {
            if value.is_empty() {
                Err("must not be empty".into())
            } else {
                Ok(())
            }
        }
        Validator::NonEmptyStringWithoutControlChars => {
            if value.is_empty() {
                Err("must not be empty".into())
            } else if value.chars().any(char::is_control) {
                Err("must not contain control characters".into())
            } else {
                Ok(())
            }
        }
        Validator::ListSize { max_size } => {
            let items = list_items(value);
            if items.len() > *max_size {
                Err(format!(
                    "may have at most {max_size} entries, not {}",
                    items.len()
                ))
            } else {
                Ok(())
            }
        }
        Validator::NonNullValidator | Validator::Lambda { .. } | Validator::Other => Ok(()),
        Validator::Composite { validators } => {
            validators.iter().try_for_each(|v| apply(v, value, number))
        }
    }
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
fn check_group_protocol(view: &RoleView, problems: &mut Vec<Problem>) {
    let protocol = view
        .file_value("group.protocol")
        .map(|c| c.value.trim().to_ascii_lowercase())
        .unwrap_or_else(|| "classic".to_string());
    for (refusing, keys) in CONSUMER_PROTOCOL_ONLY {
        if protocol != *refusing {
            continue;
        }
        for key in *keys {
            if let Some(contribution) = view.file_value(key) {
                problems.push(Problem::new(
                    Reason::InvalidValue,
                    contribution.source.clone(),
                    format!("{key} cannot be set when group.protocol={protocol}: the consumer refuses to start"),
                ));
            }
        }
    }
}
