//! `validate --missing-sources=placeholder`: a repository that keeps its Secrets out of Git
//! (External Secrets, Sealed Secrets, Vault) can still run the gate. Each key a config references
//! in a ConfigMap or Secret that the input does not hold becomes an opaque stand-in, so everything
//! else is checked; the stand-ins are listed on stderr. A key missing from an object the input
//! does hold stays an error (`KeyNotFound`): that object is in the repository, and wrong.
//!
//! Built on the engine's existing Secret marking: a stand-in for a Secret key is put in the
//! workspace as a Secret's data, so the engine treats its value as Secret material (redacted,
//! refused in a ConfigMap output, kept out of `tool.args` with `Deferred`) as it would the real
//! one.

use clap::ValueEnum;

use crate::engine::spec::KeyRef;
use crate::manifest::Workspace;

/// What `validate` does with a referenced ConfigMap or Secret key that is not in the input.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, ValueEnum)]
pub enum MissingSources {
    /// The config is not valid (`SourcesResolved=False`), as the operator reports it.
    #[default]
    Error,
    /// Stand in an opaque value for it and check everything else.
    Placeholder,
}

/// The value that stands in for a missing key read as a single value (`env[].valueFrom`).
pub const PLACEHOLDER_VALUE: &str = "placeholder";

/// How a stubbed key is used: a whole `.properties` file, or one value.
#[derive(Clone, Copy)]
enum Use {
    File,
    Value,
}

/// Puts a stand-in for every missing, non-optional key the configs reference into the workspace:
/// an empty `.properties` file for a `configFiles` entry (what it would set is unknown), the
/// text `placeholder` for an `env` value. Returns what was stubbed, one line each, in input order.
pub fn stub_missing(workspace: &mut Workspace) -> Vec<String> {
    let mut wanted = Vec::new();
    for config in &workspace.configs {
        let namespace = config.namespace.clone();
        let of = |place: String| format!("{place} of {namespace}/{}", config.metadata.name);
        for (index, file) in config.spec.config_files.iter().enumerate() {
            let used_by = of(format!("configFiles[{index}]"));
            if let Some(r) = &file.config_map_key_ref {
                wanted.push((
                    namespace.clone(),
                    false,
                    r.clone(),
                    Use::File,
                    used_by.clone(),
                ));
            }
            if let Some(r) = &file.secret_key_ref {
                wanted.push((namespace.clone(), true, r.clone(), Use::File, used_by));
            }
        }
        for env in &config.spec.env {
            let Some(from) = &env.value_from else {
                continue;
            };
            let used_by = of(format!("env {}", env.name));
            if let Some(r) = &from.config_map_key_ref {
                wanted.push((
                    namespace.clone(),
                    false,
                    r.clone(),
                    Use::Value,
                    used_by.clone(),
                ));
            }
            if let Some(r) = &from.secret_key_ref {
                wanted.push((namespace.clone(), true, r.clone(), Use::Value, used_by));
            }
        }
    }
    // Only objects the input does not hold at all are stood in for.
    let absent: Vec<bool> = wanted
        .iter()
        .map(|(namespace, secret, key_ref, ..)| {
            let set = workspace.sources.get(namespace);
            let held = set.is_some_and(|set| {
                let objects = if *secret {
                    &set.secrets
                } else {
                    &set.config_maps
                };
                objects.contains_key(&key_ref.name)
            });
            !held
        })
        .collect();
    let mut stubbed = Vec::new();
    for ((namespace, secret, key_ref, usage, used_by), absent) in wanted.into_iter().zip(absent) {
        if !absent || !stub(workspace, &namespace, secret, &key_ref, usage) {
            continue;
        }
        let kind = if secret { "Secret" } else { "ConfigMap" };
        stubbed.push(format!(
            "{kind} {namespace}/{} key {} (first used by {})",
            key_ref.name.escape_debug(),
            key_ref.key.escape_debug(),
            used_by.escape_debug()
        ));
    }
    stubbed
}

/// Adds the stand-in when the key is missing; whether it did. An optional reference stays
/// missing (the engine skips it, as the operator would), and a reference to another namespace
/// stays refused.
fn stub(
    workspace: &mut Workspace,
    namespace: &str,
    secret: bool,
    key_ref: &KeyRef,
    usage: Use,
) -> bool {
    if key_ref.is_optional() || key_ref.namespace.as_deref().is_some_and(|n| n != namespace) {
        return false;
    }
    let set = workspace.sources.entry(namespace.to_string()).or_default();
    let objects = if secret {
        &mut set.secrets
    } else {
        &mut set.config_maps
    };
    let data = &mut objects.entry(key_ref.name.clone()).or_default().data;
    if data.contains_key(&key_ref.key) {
        return false;
    }
    let value = match usage {
        Use::File => Vec::new(),
        Use::Value => PLACEHOLDER_VALUE.as_bytes().to_vec(),
    };
    data.insert(key_ref.key.clone(), value);
    true
}
