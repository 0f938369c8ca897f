//! Which keys hold secrets by Kafka's own definition (`ConfigDef.Type.PASSWORD`).
//!
//! The generated config catalogue is the authority; this list covers keys it cannot know about
//! (listener- and mechanism-prefixed broker keys) by suffix.

use std::collections::BTreeSet;

use crate::engine::catalogue::configs::{ConfigCatalogue, ConfigKey};
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
