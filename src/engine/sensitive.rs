//! Which keys hold secrets by Kafka's own definition (`ConfigDef.Type.PASSWORD`).
//!
//! The generated config catalogue is the authority; this list covers keys it cannot know about
//! (listener- and mechanism-prefixed broker keys) by suffix.

use std::borrow::Cow;
use std::collections::BTreeSet;

use crate::engine::catalogue::configs::{ConfigCatalogue, ConfigKey};
use crate::engine::key::Key;
use crate::engine::layers::{Contribution, Provenance};
use crate::engine::spec::Role;
use crate::engine::taint::Value;

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
    while let Some(start) = crate::engine::reference::find_reference_start(rest) {
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
///
/// [`SecretText::redacted`]: crate::engine::taint::SecretText::redacted
pub fn shown_value<'c>(
    def: Option<&ConfigKey>,
    key: &str,
    contribution: &'c Contribution,
) -> Cow<'c, str> {
    shown(is_password(def, key), contribution)
}

/// [`shown_value`] for a value of a merged key (whose name may be Secret content: it is only
/// checked, never copied).
pub fn shown_value_of<'c>(
    key: &Key,
    provenance: &Provenance,
    contribution: &'c Contribution,
) -> Cow<'c, str> {
    let password = key.inspect(|key| is_password(provenance.def, key));
    shown(password, contribution)
}

fn shown(password: bool, contribution: &Contribution) -> Cow<'_, str> {
    match &contribution.value {
        Value::Secret(secret) => Cow::Owned(secret.redacted()),
        Value::Plain(_) if password => Cow::Borrowed(REDACTED),
        Value::Plain(text) => Cow::Borrowed(text),
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

    #[test]
    fn a_value_is_shown_by_its_secret_a_password_as_redacted() {
        let secret = Contribution::new(
            crate::engine::layers::Layer::ConfigFiles,
            "configFiles[0] creds/client.properties:3",
            Value::Secret(crate::engine::taint::SecretText::from_file(
                "hunter2".into(),
                crate::engine::taint::SecretSource::new("team-a", "creds", "client.properties"),
                3,
            )),
        );
        assert_eq!(
            shown_value(None, "custom.token", &secret),
            "[from Secret team-a/creds key client.properties]"
        );
        let password = Contribution::new(crate::engine::layers::Layer::Properties, "p", "hunter2");
        assert_eq!(shown_value(None, "ssl.key.password", &password), REDACTED);
        assert_eq!(shown_value(None, "client.id", &password), "hunter2");
    }
}
