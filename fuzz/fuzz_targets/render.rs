//! The whole offline render path: YAML manifests → every KafkaToolConfig evaluated → objects
//! printed. Must hold: no panic; a config rendered to a ConfigMap never contains the value of any
//! Secret (checked differentially: a Secret value found in the output must disappear when that
//! Secret's value is changed, else it came from somewhere else); a rendered file loads back.
#![no_main]

use std::path::Path;

use kafka_config_operator::cli::{RenderFormat, evaluate_manifest, render_text};
use kafka_config_operator::engine::spec::OutputKind;
use kafka_config_operator::engine::{Evaluation, Request, evaluate, properties, render};
use kafka_config_operator::manifest::{ToolConfigManifest, Workspace};
use libfuzzer_sys::fuzz_target;

/// Secret values shorter than this are too common to attribute (`1`, `true`, `all`).
const MIN_SECRET_LEN: usize = 6;

fn contains(ev: &Evaluation, needle: &str) -> Option<String> {
    let rendered = ev.rendered.as_ref()?;
    if rendered.kind != OutputKind::ConfigMap {
        return None;
    }
    rendered
        .files
        .iter()
        .find(|(_, content)| {
            content.contains(needle)
                || properties::load_str(content)
                    .map(|es| es.iter().any(|e| e.key.contains(needle) || e.value.contains(needle)))
                    .unwrap_or(false)
        })
        .map(|(file, _)| file.clone())
}

fn check_secrets(ws: &Workspace, config: &ToolConfigManifest, ev: &Evaluation) {
    let Some(secrets) = ws.sources.get(&config.namespace).map(|s| &s.secrets) else {
        return;
    };
    for (secret, data) in secrets {
        for (key, bytes) in &data.data {
            let Ok(value) = std::str::from_utf8(bytes) else { continue };
            if value.chars().count() < MIN_SECRET_LEN {
                continue;
            }
            let Some(file) = contains(ev, value) else { continue };
            // Differential: change this one Secret value; if the output no longer contains the
            // old value, it came from the Secret.
            let mut sources = ws.sources_of(&config.namespace);
            let changed: Vec<u8> = bytes.iter().map(|b| if *b == b'Q' { b'R' } else { b'Q' }).collect();
            sources
                .secrets
                .get_mut(secret)
                .expect("present")
                .data
                .insert(key.clone(), changed);
            let labels = ws.labels_of(&config.namespace);
            let again = evaluate(&Request {
                name: &config.metadata.name,
                namespace: &config.namespace,
                spec: &config.spec,
                namespace_labels: &labels,
                globals: &ws.globals,
                sources: &sources,
                hash_key: None,
            });
            assert!(
                contains(&again, value).is_some(),
                "Secret {}/{secret} key {key} leaked into ConfigMap file {file} of {}",
                config.namespace,
                config.metadata.name
            );
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let mut ws = Workspace::default();
    if ws.add_documents(Path::new("fuzz.yaml"), text).is_err() {
        return;
    }
    for config in &ws.configs {
        let ev = evaluate_manifest(&ws, config);
        if let Some(rendered) = &ev.rendered {
            assert!(ev.problems.is_empty() && ev.source_problems.is_empty());
            let total: usize = rendered.files.iter().map(|(k, v)| k.len() + v.len()).sum();
            assert!(total <= render::MAX_OUTPUT_BYTES + 4096, "output of {total} bytes rendered");
            for (file, content) in &rendered.files {
                if file != render::TOOL_ARGS_KEY {
                    properties::load_str(content)
                        .unwrap_or_else(|e| panic!("rendered {file} does not load: {e}"));
                }
            }
        } else {
            assert!(
                !ev.problems.is_empty() || !ev.source_problems.is_empty(),
                "not rendered, but no problem says why"
            );
        }
        check_secrets(&ws, config, &ev);
    }
    let _ = render_text(&ws, RenderFormat::Yaml, false);
});
