//! Secret material in memory: never printed by `Debug`, zeroed when the engine drops it.
//!
//! Secret data itself is a type ([`crate::engine::taint::SecretText`], with its own redacting
//! `Debug` and zeroing `Drop`): the value of every `secretKeyRef` env entry and every value of a
//! Secret's file, from the moment `engine::sources` reads it, and every value a substitution
//! builds from one. The types here hold such values next to other data, or values that are
//! sensitive by their key (a plain password in the spec): their `Debug` is written here instead
//! of derived, so names, keys, layers, sources and line numbers show and values print as
//! `[redacted]`. Having them in one place keeps the list in view; a unit test below formats each.
//!
//! Zeroing covers the raw Secret data ([`SourceData`]), every [`SecretText`] and the files of a
//! Secret output ([`Rendered`]). Intermediate buffers (a `String` that grew and reallocated,
//! serde's and the Kubernetes client's own buffers) are not: zeroising is a best effort that
//! shortens how long a secret lingers, not a guarantee.
//!
//! [`SecretText`]: crate::engine::taint::SecretText

use std::fmt;

use zeroize::Zeroize;

use crate::engine::layers::Contribution;
use crate::engine::properties::Entry;
use crate::engine::render::Rendered;
use crate::engine::sensitive::REDACTED;
use crate::engine::sources::{FileEntry, SourceData};
use crate::engine::spec::OutputKind;

/// What `Debug` prints in place of a value.
pub struct Redacted;

impl fmt::Debug for Redacted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(REDACTED)
    }
}

/// A map's keys with every value redacted.
struct RedactedValues<I>(I);

impl<I, K> fmt::Debug for RedactedValues<I>
where
    I: Iterator<Item = K> + Clone,
    K: fmt::Debug,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map()
            .entries(self.0.clone().map(|k| (k, Redacted)))
            .finish()
    }
}

impl fmt::Debug for SourceData {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SourceData")
            .field("data", &RedactedValues(self.data.keys()))
            .finish()
    }
}

impl Drop for SourceData {
    fn drop(&mut self) {
        // A ConfigMap's data is zeroed too: the type does not know which of the two it holds.
        for value in self.data.values_mut() {
            value.zeroize();
        }
    }
}

impl fmt::Debug for Entry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Entry")
            .field("key", &self.key)
            .field("value", &Redacted)
            .field("line", &self.line)
            .finish()
    }
}

impl fmt::Debug for FileEntry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // A key of a Secret's file that Kafka does not define is shown by where it was read.
        f.debug_struct("FileEntry")
            .field("key", &self.key)
            .field("value", &self.value)
            .field("line", &self.line)
            .finish()
    }
}

impl fmt::Debug for Contribution {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Contribution")
            .field("layer", &self.layer)
            .field("source", &self.source)
            .field("value", &self.value)
            .finish()
    }
}

impl fmt::Debug for Rendered {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Rendered")
            .field("kind", &self.kind)
            .field("name", &self.name)
            .field("files", &RedactedValues(self.files.keys()))
            .field("hash", &self.hash)
            .field("secret_mounts", &self.secret_mounts)
            .finish()
    }
}

impl Drop for Rendered {
    fn drop(&mut self) {
        if self.kind == OutputKind::Secret {
            for content in self.files.values_mut() {
                content.zeroize();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, BTreeSet};

    use super::*;
    use crate::engine::evaluate::evaluate_alone;
    use crate::engine::layers::Layer;
    use crate::engine::reference::{Bindings, Mode, resolve};
    use crate::engine::sources::{SourceSet, load_files};
    use crate::engine::spec::ToolConfigSpec;
    use crate::engine::taint::{SecretSource, SecretText, Value};

    const CANARY: &str = "kcoDebugCanary7f3a";
    /// A key of the Secret file, shaped like a config name: Secret content all the same.
    const KEY_CANARY: &str = "kcodebugkeycanary5b1e";

    fn assert_hidden(what: &str, value: &impl fmt::Debug) {
        for text in [format!("{value:?}"), format!("{value:#?}")] {
            for canary in [CANARY, KEY_CANARY] {
                assert!(
                    !text.contains(canary),
                    "{what}: Debug shows the secret: {text}"
                );
            }
        }
    }

    fn secret_sources() -> SourceSet {
        let mut sources = SourceSet::default();
        sources.secrets.insert(
            "kafka-sasl".into(),
            SourceData {
                data: BTreeMap::from([
                    ("password".to_string(), CANARY.as_bytes().to_vec()),
                    (
                        "sasl.properties".to_string(),
                        format!("ssl.key.password={CANARY}\ncustom.note=plain\n{KEY_CANARY}=x\n")
                            .into_bytes(),
                    ),
                ]),
            },
        );
        sources
    }

    fn secret_spec(output_kind: &str) -> ToolConfigSpec {
        serde_json::from_value(serde_json::json!({
            "tool": "kafka-console-producer",
            "args": {"bootstrap-server": "kafka:9092", "topic": "orders"},
            "env": [{"name": "PW", "valueFrom": {"secretKeyRef": {"name": "kafka-sasl", "key": "password"}}}],
            "properties": {"producer": {
                "sasl.jaas.config": "org.apache.kafka.common.security.plain.PlainLoginModule required username=\"u\" password=\"${env.PW}\";",
                "custom.token": "t-${env.PW}"
            }},
            "configFiles": [{"secretKeyRef": {"name": "kafka-sasl", "key": "sasl.properties"}}],
            "output": {"kind": output_kind}
        }))
        .expect("spec")
    }

    #[test]
    fn source_data_debug_shows_keys_not_values() {
        let sources = secret_sources();
        let data = sources.secrets.get("kafka-sasl").expect("secret");
        assert_hidden("SourceData", data);
        assert_hidden("SourceSet", &sources);
        assert!(format!("{data:?}").contains("password"), "keys still show");
    }

    #[test]
    fn loaded_files_and_entries_debug_hides_values() {
        let spec = secret_spec("Secret");
        let (mut problems, mut warnings) = (Vec::new(), Vec::new());
        let sources = secret_sources();
        let files = load_files(&spec, "team-a", &sources, &mut problems, &mut warnings);
        assert!(problems.is_empty(), "{problems:?}");
        assert!(files[0].entries[0].value.is(CANARY), "positive control");
        assert_hidden("FileEntry", &files[0].entries[0]);
        let parsed = crate::engine::properties::load_str(&format!("k={CANARY}")).expect("parses");
        assert_hidden("Entry", &parsed[0]);
        assert_hidden("LoadedFile", &files);
        assert!(format!("{files:?}").contains("ssl.key.password"));
    }

    #[test]
    fn bindings_and_resolved_values_debug_hides_values() {
        let spec = secret_spec("Secret");
        let mut problems = Vec::new();
        let bindings: Bindings =
            crate::engine::sources::bindings(&spec, "team-a", &secret_sources(), &mut problems);
        assert!(problems.is_empty(), "{problems:?}");
        let binding = bindings.env.get("PW").expect("bound");
        assert!(binding.is(CANARY), "positive control");
        assert!(binding.is_secret(), "read from a Secret: Secret data");
        assert_hidden("binding", binding);
        assert_hidden("Bindings", &bindings);
        let resolved =
            resolve("pw=${env.PW}", &bindings, &BTreeSet::new(), Mode::Strict).expect("resolves");
        assert!(resolved.is(&format!("pw={CANARY}")), "positive control");
        assert_hidden("resolved", &resolved);
        assert_hidden("literal binding", &Value::Plain(CANARY.into()));
    }

    #[test]
    fn contribution_debug_hides_values() {
        let mut contribution = Contribution::new(Layer::Properties, "properties.producer", CANARY);
        assert_hidden("Contribution", &contribution);
        contribution.value = Value::Secret(SecretText::from_file(
            CANARY.into(),
            SecretSource::new("team-a", "kafka-sasl", "sasl.properties"),
            1,
        ));
        assert_hidden("secret Contribution", &contribution);
        assert!(format!("{contribution:?}").contains("properties.producer"));
    }

    #[test]
    fn evaluation_debug_hides_secret_values() {
        for kind in ["Secret", "ConfigMap"] {
            let spec = secret_spec(kind);
            let sources = secret_sources();
            let ev = evaluate_alone(&spec, "team-a", &sources);
            if kind == "Secret" {
                let rendered = ev.rendered.as_ref().expect("a Secret output renders");
                assert!(
                    rendered.files.values().any(|c| c.contains(CANARY)),
                    "positive control: the rendered Secret holds the value"
                );
                assert!(
                    rendered.files.values().any(|c| c.contains(KEY_CANARY)),
                    "positive control: the rendered Secret holds the key"
                );
                assert_hidden("Rendered", rendered);
            } else {
                assert!(
                    ev.rendered.is_none(),
                    "sensitive content is not put in a ConfigMap"
                );
            }
            assert_hidden("Evaluation", &ev);
            assert_hidden("RoleView", &ev.views);
        }
    }
}
