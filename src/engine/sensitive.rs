//! Which keys hold secrets by Kafka's own definition (`ConfigDef.Type.PASSWORD`).
//!
//! The generated config catalogue is the authority; this list covers keys it cannot know about
//! (listener- and mechanism-prefixed broker keys) by suffix.

use std::borrow::Cow;
use std::collections::BTreeSet;

use crate::engine::catalogue::configs::{ConfigCatalogue, ConfigKey};
use crate::engine::layers::{Contribution, Provenance, SecretOrigin};
use crate::engine::spec::Role;

/// Suffixes of PASSWORD-typed keys under prefixes (`listener.name.x.sasl.jaas.config`, …).
const PASSWORD_SUFFIXES: &[&str] = &[
    "sasl.jaas.config",
    "ssl.key.password",
    "ssl.keystore.password",
    "ssl.truststore.password",
    "ssl.keystore.key",
    "ssl.keystore.certificate.chain",
    "ssl.truststore.certificates",
    "sasl.oauthbearer.client.credentials.client.secret",
    "sasl.oauthbearer.assertion.private.key.passphrase",
];

pub fn is_password_key(role: Role, key: &str) -> bool {
    is_password(ConfigCatalogue::get().key(role, key), key)
}

/// [`is_password_key`] for a key whose definition (if any) is already looked up.
pub fn is_password(def: Option<&ConfigKey>, key: &str) -> bool {
    if let Some(def) = def {
        return def.is_password();
    }
    PASSWORD_SUFFIXES.iter().any(|suffix| {
        key.strip_suffix(suffix)
            .is_some_and(|rest| rest.is_empty() || rest.ends_with('.'))
    }) || key.ends_with(".password")
}

/// Whether `value` holds a Kafka config-provider reference (`${dir:/p:k}`) to a declared provider:
/// such a value defers its secret to Kafka and is safe to write to a ConfigMap.
pub fn has_provider_reference(value: &str, providers: &BTreeSet<String>) -> bool {
    let mut rest = value;
    while let Some(start) = rest.find("${") {
        let body = &rest[start + 2..];
        if let Some((name, _)) = body.split_once(':')
            && providers.contains(name)
            && body.contains('}')
        {
            return true;
        }
        rest = body;
    }
    false
}

/// Placeholder shown instead of a sensitive value.
pub const REDACTED: &str = "[redacted]";

/// How a message shows a sensitive value: the Secret it came from, never the content.
pub fn redacted_label(contribution: &Contribution) -> String {
    match &contribution.secret {
        Some(SecretOrigin::File {
            secret, file_key, ..
        }) => format!("[redacted: from Secret {secret} key {file_key}]"),
        Some(SecretOrigin::Parts(parts)) => {
            let mut from: Vec<String> = parts
                .iter()
                .map(|p| format!("Secret {} key {}", p.secret, p.key))
                .collect();
            from.sort();
            from.dedup();
            format!("[redacted: from {}]", from.join(", "))
        }
        None => REDACTED.to_string(),
    }
}

/// Whether a key name may itself be Secret content: read from a Secret file, not a key Kafka
/// defines for the role, and not shaped like a config name (lowercase ASCII letters, digits,
/// `.`, `-`, `_`). A PEM or base64 body pasted without line continuations makes each line a
/// "key" (mixed case, `+`, `/`, `=`): such keys are named by where they were read, never shown.
pub fn key_is_secret(role: Role, key: &str, contribution: &Contribution) -> bool {
    matches!(contribution.secret, Some(SecretOrigin::File { .. }))
        && !is_config_shaped(key)
        && ConfigCatalogue::get().key(role, key).is_none()
}

/// Lowercase ASCII letters, digits, `.`, `-`, `_`: how Kafka's config names look.
pub fn is_config_shaped(key: &str) -> bool {
    !key.is_empty()
        && key.bytes().all(|b| {
            b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'.' | b'-' | b'_')
        })
}

/// How a message shows the key of `provenance`: [`key_label`] of the first contribution that
/// makes it Secret content, else the key.
pub fn shown_key(role: Role, provenance: &Provenance) -> Cow<'_, str> {
    provenance
        .chain
        .iter()
        .find(|c| key_is_secret(role, &provenance.key, c))
        .map_or(Cow::Borrowed(provenance.key.as_str()), |c| {
            key_label(role, &provenance.key, c)
        })
}

/// How a message shows a key: the key, or for a key that is Secret content, where it was read
/// (`[key from configFiles[1] kafka-sasl/sasl.properties:3]`).
pub fn key_label<'k>(role: Role, key: &'k str, contribution: &Contribution) -> Cow<'k, str> {
    if key_is_secret(role, key, contribution) {
        Cow::Owned(format!("[key from {}]", contribution.source))
    } else {
        Cow::Borrowed(key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixed_password_suffixes_and_dot_password_are_passwords() {
        for suffix in PASSWORD_SUFFIXES {
            assert!(is_password_key(Role::Producer, &format!("x.{suffix}")));
        }
        assert!(is_password_key(Role::Producer, "my.custom.password"));
        assert!(!is_password_key(
            Role::Producer,
            "custom.interceptor.setting.7"
        ));
        assert!(!is_password_key(Role::Producer, "my.custom.passwords"));
        assert!(!is_password_key(Role::Producer, "password"));
    }
}
