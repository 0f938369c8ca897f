//! `engine::reference::resolve` on arbitrary text and bindings.
//!
//! Input layout: byte 0 picks the mode (bit 0: Lenient) and whether `dir` is a declared provider
//! (bit 1); the rest is UTF-8 split on NUL: the text to resolve, then `name=value` bindings
//! (`env.NAME=…` for env, `secret:NAME=…` for a Secret-sourced env value, else a system property).
//!
//! Must hold: no panic; Lenient fails only on a nested reference or an expansion past the limit;
//! text without `${` comes back unchanged; every recorded secret part is a valid range of the
//! output holding exactly the secret's value; the substituted text is never scanned again (a
//! binding whose value contains `${` comes out verbatim when it is the whole reference).
#![no_main]

use std::collections::BTreeSet;

use kafka_config_operator::engine::reference::{
    Binding, BindingOrigin, Bindings, Mode, ReferenceError, resolve,
};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&flags, rest)) = data.split_first() else {
        return;
    };
    let Ok(rest) = std::str::from_utf8(rest) else {
        return;
    };
    let mode = if flags & 1 == 1 { Mode::Lenient } else { Mode::Strict };
    let mut providers = BTreeSet::new();
    if flags & 2 == 2 {
        providers.insert("dir".to_string());
    }
    let mut parts = rest.split('\0');
    let text = parts.next().unwrap_or_default();
    let mut bindings = Bindings::default();
    for part in parts {
        let (name, value) = part.split_once('=').unwrap_or((part, ""));
        let literal = |value: &str| Binding {
            value: value.to_string(),
            origin: BindingOrigin::Literal,
        };
        if let Some(env) = name.strip_prefix("env.") {
            bindings.env.insert(env.to_string(), literal(value));
        } else if let Some(secret) = name.strip_prefix("secret:") {
            bindings.env.insert(
                secret.to_string(),
                Binding {
                    value: value.to_string(),
                    origin: BindingOrigin::Secret {
                        name: "s".into(),
                        key: secret.to_string(),
                    },
                },
            );
        } else {
            bindings
                .system_properties
                .insert(name.to_string(), literal(value));
        }
    }

    let result = resolve(text, &bindings, &providers, mode);
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
    if !text.contains("${") {
        assert_eq!(resolved.value, text);
        assert!(!resolved.substituted);
    }
    for part in &resolved.secret_parts {
        let piece = resolved
            .value
            .get(part.range.clone())
            .unwrap_or_else(|| panic!("secret range {:?} not in {:?}", part.range, resolved.value));
        let binding = &bindings.env[&part.key];
        assert_eq!(piece, binding.value, "secret part does not hold the secret value");
    }
    // No recursion: `${env.X}` alone, X bound to a value holding `${`, yields that value verbatim.
    if let Some(name) = text.strip_prefix("${env.").and_then(|t| t.strip_suffix('}'))
        && !name.contains(['}', ':', ','])
        && name.trim() == name
        && let Some(binding) = bindings.env.get(name)
    {
        assert_eq!(resolved.value, binding.value, "substituted text was rescanned");
    }
});
