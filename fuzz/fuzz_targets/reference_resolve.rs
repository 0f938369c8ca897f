//! `engine::reference::resolve` on arbitrary text and bindings.
//!
//! Input layout: byte 0 picks the mode (bit 0: Lenient) and whether `dir` is a declared provider
//! (bit 1); the rest is UTF-8 split on NUL: the text to resolve, then `name=value` bindings
//! (`env.NAME=…` for env, `secret:NAME=…` for a Secret-sourced env value, else a system property).
//!
//! Must hold: no panic; Lenient fails only on a nested reference or an expansion past the limit;
//! text without `${` comes back unchanged; every recorded secret part is a valid range of the
//! output holding exactly the secret's value, and a Secret binding taints what it builds; the substituted text is never scanned again (a
//! binding whose value contains `${` comes out verbatim when it is the whole reference).
#![no_main]

use std::collections::BTreeSet;

use kafka_config_operator::engine::reference::{Bindings, Mode, ReferenceError, resolve};
use kafka_config_operator::engine::taint::{SecretOrigin, SecretSource, SecretText, Value};
use libfuzzer_sys::fuzz_target;

/// The bytes of a value, for the harness's own checks (it prints nothing of them).
fn text(value: &Value) -> &str {
    match value {
        Value::Plain(text) => text,
        Value::Secret(secret) => secret.expose_for_secret_output(),
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&flags, rest)) = data.split_first() else {
        return;
    };
    let Ok(rest) = std::str::from_utf8(rest) else {
        return;
    };
    let mode = if flags & 1 == 1 {
        Mode::Lenient
    } else {
        Mode::Strict
    };
    let mut providers = BTreeSet::new();
    if flags & 2 == 2 {
        providers.insert("dir".to_string());
    }
    let mut parts = rest.split('\0');
    let text_in = parts.next().unwrap_or_default();
    let mut bindings = Bindings::default();
    for part in parts {
        let (name, value) = part.split_once('=').unwrap_or((part, ""));
        if let Some(env) = name.strip_prefix("env.") {
            bindings.env.insert(env.to_string(), Value::from(value));
        } else if let Some(secret) = name.strip_prefix("secret:") {
            let from = SecretSource::new("ns", "s", secret);
            bindings.env.insert(
                secret.to_string(),
                Value::Secret(SecretText::from_key(value.to_string(), from)),
            );
        } else {
            bindings
                .system_properties
                .insert(name.to_string(), Value::from(value));
        }
    }

    let result = resolve(text_in, &bindings, &providers, mode);
    if mode == Mode::Lenient {
        // Lenient forgives what has no value, never a nested reference or an expansion past the
        // output limit (issues 23 and 24).
        assert!(
            matches!(
                result,
                Ok(_) | Err(ReferenceError::Nested { .. } | ReferenceError::TooLarge { .. })
            ),
            "Lenient mode failed: {result:?}"
        );
    }
    let Ok(resolved) = result else { return };
    if !text_in.contains("${") {
        assert_eq!(text(&resolved), text_in);
        assert!(!resolved.is_secret());
    }
    // Taint: every recorded Secret part is a valid range of the output holding exactly the
    // Secret's value, and a value built from a Secret binding is Secret.
    if let Value::Secret(secret) = &resolved
        && let SecretOrigin::Parts(parts) = secret.origin()
    {
        for part in parts {
            let piece = text(&resolved)
                .get(part.range.clone())
                .unwrap_or_else(|| panic!("secret range {:?} not in the output", part.range));
            let binding = &bindings.env[&part.from.key];
            assert_eq!(
                piece,
                text(binding),
                "secret part does not hold the secret value"
            );
        }
    }
    // No recursion: `${env.X}` alone, X bound to a value holding `${`, yields that value verbatim.
    if let Some(name) = text_in
        .strip_prefix("${env.")
        .and_then(|t| t.strip_suffix('}'))
        && !name.contains(['}', ':', ','])
        && name.trim() == name
        && let Some(binding) = bindings.env.get(name)
    {
        assert_eq!(
            text(&resolved),
            text(binding),
            "substituted text was rescanned"
        );
        assert_eq!(
            resolved.is_secret(),
            binding.is_secret(),
            "taint lost or invented"
        );
    }
});
