//! Which keys hold secrets by Kafka's own definition (`ConfigDef.Type.PASSWORD`).
//!
//! The generated config catalogue is the authority; this list covers keys it cannot know about
//! (listener- and mechanism-prefixed broker keys) by suffix.

use std::borrow::Cow;
use std::collections::BTreeSet;

use crate::engine::catalogue::configs::{ConfigCatalogue, ConfigKey};
use crate::engine::layers::{Contribution, Provenance};
use crate::engine::spec::Role;
use crate::engine::taint::{SecretOrigin, Value};

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

/// How a message, `explain` or the status shows a merged value: Secret data as the Secret key it
/// came from ([`SecretText::redacted`]), the value of a password key as [`REDACTED`], anything
/// else as it is.
pub fn shown_value<'c>(
    def: Option<&ConfigKey>,
    key: &str,
    contribution: &'c Contribution,
) -> Cow<'c, str> {
    match &contribution.value {
        Value::Secret(secret) => Cow::Owned(secret.redacted()),
        Value::Plain(_) if is_password(def, key) => Cow::Borrowed(REDACTED),
        Value::Plain(text) => Cow::Borrowed(text),
    }
}

/// Where a value read from a Secret file was read: `Secret ns/name key k, line N`.
fn file_line(contribution: &Contribution) -> Option<String> {
    match contribution.value.secret()?.origin() {
        SecretOrigin::File { from, line } => Some(format!("{from}, line {line}")),
        SecretOrigin::Parts(_) => None,
    }
}

/// Whether a key name may itself be Secret content: read from a Secret file, not a key Kafka
/// defines for the role, and not shaped like a config name (lowercase ASCII letters, digits,
/// `.`, `-`, `_`). A PEM or base64 body pasted without line continuations makes each line a
/// "key" (mixed case, `+`, `/`, `=`): such keys are named by where they were read, never shown.
pub fn key_is_secret(role: Role, key: &str, contribution: &Contribution) -> bool {
    contribution
        .value
        .secret()
        .is_some_and(|s| matches!(s.origin(), SecretOrigin::File { .. }))
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
/// (`[key from Secret team-a/kafka-sasl key sasl.properties, line 3]`).
pub fn key_label<'k>(role: Role, key: &'k str, contribution: &Contribution) -> Cow<'k, str> {
    match file_line(contribution).filter(|_| key_is_secret(role, key, contribution)) {
        Some(at) => Cow::Owned(format!("[key from {at}]")),
        None => Cow::Borrowed(key),
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

    fn from_file(text: &str) -> Contribution {
        Contribution::new(
            crate::engine::layers::Layer::ConfigFiles,
            "configFiles[0] creds/client.properties:3",
            Value::Secret(crate::engine::taint::SecretText::from_file(
                text.into(),
                crate::engine::taint::SecretSource::new("team-a", "creds", "client.properties"),
                3,
            )),
        )
    }

    #[test]
    fn a_key_of_a_secret_file_is_named_by_where_it_was_read() {
        let pem_line = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC+/=";
        assert_eq!(
            key_label(Role::Producer, pem_line, &from_file("")),
            "[key from Secret team-a/creds key client.properties, line 3]"
        );
        // Kafka's own keys, and keys shaped like config names, are shown.
        for shown in ["ssl.key.password", "custom.note"] {
            assert_eq!(key_label(Role::Producer, shown, &from_file("x")), shown);
        }
        // The same key from a ConfigMap is the user's text, shown as it is.
        let plain = Contribution::new(
            crate::engine::layers::Layer::ConfigFiles,
            "configFiles[0] base/client.properties:3",
            "x",
        );
        assert_eq!(key_label(Role::Producer, pem_line, &plain), pem_line);
    }

    #[test]
    fn a_value_is_shown_by_its_secret_a_password_as_redacted() {
        let secret = from_file("hunter2");
        assert_eq!(
            shown_value(None, "custom.token", &secret),
            "[from Secret team-a/creds key client.properties]"
        );
        let password = Contribution::new(crate::engine::layers::Layer::Properties, "p", "hunter2");
        assert_eq!(shown_value(None, "ssl.key.password", &password), REDACTED);
        assert_eq!(shown_value(None, "client.id", &password), "hunter2");
    }
}
