//! Typed validation against Kafka's ConfigDef catalogue: the same parsing and validators Kafka
//! applies when a client starts, so a bad value fails here instead of in a pod.

mod java;
pub(crate) mod typed;

pub use typed::{check_value, is_checked};

use crate::engine::catalogue::configs::ConfigCatalogue;
use crate::engine::model::RoleView;
use crate::engine::outcome::{Problem, Reason, Warning};
use crate::engine::sensitive;
use crate::engine::spec::Role;
use crate::engine::taint::Value;

/// What a refused sensitive value says instead of a reason that would quote it.
const HIDDEN_REASON: &str = "the reason is not shown: it would quote the value";

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

fn has_open_prefix(key: &str) -> bool {
    OPEN_PREFIXES.iter().any(|p| key.starts_with(p))
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

/// Checks every key written to the role's file.
pub(crate) fn check_role(
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
    for (merged_key, provenance, contribution) in view.file_entries() {
        let Some(def) = provenance.def else {
            if role == Role::MirrorMaker || merged_key.inspect(has_open_prefix) {
                continue;
            }
            // A key read from a Secret file that Kafka does not define is Secret content (a PEM
            // line): named by where it was read, with no suggestion (which would hint at its
            // text). Only a key that is not has its text here.
            let Some(key) = merged_key.public_text() else {
                let label = merged_key.shown();
                warnings.push(Warning {
                    key: label.to_string(),
                    role: Some(role),
                    reason: Reason::UnknownKey,
                    message: format!(
                        "{label}: not a key the {role} client defines; Kafka ignores it (the key is not shown: it was read from a Secret)"
                    ),
                });
                continue;
            };
            // A config with many custom keys (interceptors, plugins) is deliberate, not a
            // typo: suggestions stop after a few.
            let suggestion = if suggestions_left > 0 {
                suggestions_left -= 1;
                set.closest_key(key)
            } else {
                None
            };
            // Joined rather than formatted: a config with thousands of custom keys gets
            // this warning for each.
            let tail = match suggestion {
                Some(s) => ["did you mean ", s, "?"],
                None => [
                    "the ",
                    role.as_str(),
                    " client does not define it; Kafka ignores it",
                ],
            };
            // Sized for the usual source label and tail, so it is written without regrowing.
            let mut message = String::with_capacity(key.len() + 120);
            message.push_str(key);
            message.push_str(" (from ");
            contribution.source.push_to(&mut message);
            message.push_str("): ");
            message.extend(tail);
            warnings.push(Warning {
                key: key.to_string(),
                role: Some(role),
                reason: Reason::UnknownKey,
                message,
            });
            continue;
        };
        // Kafka defines it: its name is public, wherever it was read.
        let key = def.name.as_str();
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
        let providers = &view.providers;
        if contribution
            .value
            .inspect(|text| sensitive::has_provider_reference(text, providers))
        {
            continue;
        }
        let refused = match &contribution.value {
            Value::Plain(text) => typed::check_value(def, text).err().map(|why| {
                let shown = if def.is_password() {
                    sensitive::REDACTED.to_string()
                } else {
                    format!("{text:?}")
                };
                // Reasons quote the offending part of a value as a Rust string literal ("…"):
                // for a password only a reason that quotes nothing is shown.
                if def.is_password() && why.contains('"') {
                    (shown, HIDDEN_REASON.to_string())
                } else {
                    (shown, why)
                }
            }),
            // Secret data is checked without a copy of it leaving the check: only the verdict
            // does, so no reason (it could quote the value) is given.
            Value::Secret(secret) => (!secret
                .inspect(|text| typed::check_value(def, text).is_ok()))
            .then(|| (secret.redacted(), HIDDEN_REASON.to_string())),
        };
        if let Some((shown, why)) = refused {
            problems.push(Problem::new(
                Reason::InvalidValue,
                contribution.source.clone(),
                format!("{key}={shown} is not valid for the {role} client: {why}"),
            ));
        }
    }
}

/// Kafka refuses a consumer whose settings belong to the other group protocol (KIP-848).
/// Judged on the values the tool ends up with: in Legacy a tool's forced `group.protocol` (and
/// the options it then adds) beat what the file says.
fn check_group_protocol(view: &RoleView, problems: &mut Vec<Problem>) {
    let protocol = view
        .effective_value("group.protocol")
        .map(|c| {
            if c.value
                .inspect(|p| p.trim().eq_ignore_ascii_case("consumer"))
            {
                "consumer"
            } else if c
                .value
                .inspect(|p| p.trim().eq_ignore_ascii_case("classic"))
            {
                "classic"
            } else {
                // Any other value is refused by typed validation, not here.
                ""
            }
        })
        .unwrap_or("classic");
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
