//! The inputs of an evaluation (source resourceVersions, selecting GlobalClientDefaults and their
//! generations, the operator's version), recorded in `status.inputs`, and the check that they are
//! still current according to the watch caches: when they are and the cached output still holds
//! the recorded hash, a reconcile has nothing to read, render or write.

use std::collections::BTreeMap;

use kube::ResourceExt;
use kube::runtime::reflector::ObjectRef;

use crate::engine::catalogue::tools::ToolCatalogue;
use crate::engine::globals;
use crate::engine::sources::{SourceKind, SourceRef, referenced_sources};
use crate::operator::authors;
use crate::operator::context::{Context, Seen};
use crate::operator::crd::KafkaToolConfig;
use crate::operator::versions::Cached;
pub use crate::status::InputsStatus;
use crate::status::{Author, GlobalVersion, SourceVersion};

/// Recorded in `status.inputs.operator`: a new release evaluates everything again, since its
/// catalogue or rendering may differ.
pub const OPERATOR_VERSION: &str = env!("CARGO_PKG_VERSION");

/// The GlobalClientDefaults that select a config now (valid or not: an invalid one changes the
/// status), with their generations, straight from the cache (no copy of their specs).
pub fn selected_globals(
    ctx: &Context,
    config: &KafkaToolConfig,
    labels: &BTreeMap<String, String>,
) -> BTreeMap<String, Option<i64>> {
    let Some(tool) = ToolCatalogue::get().tool(&config.spec.config.tool) else {
        return BTreeMap::new();
    };
    ctx.caches
        .globals
        .state()
        .iter()
        .filter(|g| globals::selects(&g.spec.config, &tool.name, labels))
        .filter_map(|g| Some((g.metadata.name.clone()?, g.metadata.generation)))
        .collect()
}

/// Who last changed the spec of each GlobalClientDefaults in `seen`, from the cache's kept
/// managedFields entry.
pub fn global_authors(ctx: &Context, seen: &Seen) -> BTreeMap<String, Author> {
    (seen.globals.keys())
        .filter_map(|name| ctx.caches.globals.get(&ObjectRef::new(name)))
        .filter_map(|g| authors::author("GlobalClientDefaults", &g.metadata, authors::SPEC))
        .map(|author| (author.name.clone(), author))
        .collect()
}

/// `hash_key_id`: [`HashKey::id`](crate::engine::render::HashKey::id) of the key the hash was
/// made with.
pub fn to_status(seen: &Seen, hash_key_id: &str) -> InputsStatus {
    InputsStatus {
        operator: OPERATOR_VERSION.to_string(),
        hash_key: Some(hash_key_id.to_string()),
        sources: seen
            .sources
            .iter()
            .map(|(source, version)| SourceVersion {
                kind: source.kind.as_str().to_string(),
                name: source.name.clone(),
                resource_version: version.clone(),
            })
            .collect(),
        global_client_defaults: seen
            .globals
            .iter()
            .map(|(name, generation)| GlobalVersion {
                name: name.clone(),
                generation: *generation,
            })
            .collect(),
        change_cause: None,
    }
}

/// What a previous evaluation saw, read back from its status (after a restart, for history's
/// cause). Sources of an unknown kind are skipped.
pub fn from_status(generation: Option<i64>, inputs: &InputsStatus) -> Seen {
    Seen {
        generation,
        sources: inputs
            .sources
            .iter()
            .filter_map(|s| {
                Some((
                    SourceRef {
                        kind: SourceKind::parse(&s.kind)?,
                        name: s.name.clone(),
                    },
                    s.resource_version.clone(),
                ))
            })
            .collect(),
        globals: inputs
            .global_client_defaults
            .iter()
            .map(|g| (g.name.clone(), g.generation))
            .collect(),
    }
}

/// The recorded inputs, when the watch caches prove that nothing changed since the live output
/// was rendered: same generation, Ready, same operator version and content-hash key, every
/// referenced source at the recorded resourceVersion, the same GlobalClientDefaults at the same
/// generations selecting it, and the output object still controlled by this config, holding the recorded hash,
/// with files nobody else wrote. Immutable outputs are always checked against the API server
/// (the ReplicaSets that may still mount old ones are not cached); rollout targets are the
/// caller's to prove (`reconcile::unchanged`).
pub fn unchanged(ctx: &Context, config: &KafkaToolConfig, namespace: &str) -> Option<Seen> {
    let generation = config.metadata.generation;
    let status = config.status.as_ref()?;
    let (ready, ready_generation) = status.ready_status()?;
    if status.observed_generation != generation || ready != "True" || ready_generation != generation
    {
        return None;
    }
    let inputs = status.inputs.as_ref()?;
    // Another key (a rotation), or none (an operator before the keyed hash): the hash differs
    // even where nothing else does, so the output is rendered again (once).
    if inputs.operator != OPERATOR_VERSION
        || inputs.hash_key.as_deref() != Some(ctx.hash_key.id().as_str())
    {
        return None;
    }
    let spec = &config.spec.config;
    if spec.output().immutable == Some(true) {
        return None;
    }
    let seen = from_status(generation, inputs);
    let referenced = referenced_sources(spec);
    if referenced.len() != seen.sources.len() {
        return None;
    }
    for source in &referenced {
        let recorded = seen.sources.get(source)?;
        if !ctx.versions(source.kind, namespace)?.is_at(
            namespace,
            &source.name,
            recorded.as_deref(),
        ) {
            return None;
        }
    }
    let labels = ctx.namespace_labels(namespace);
    if selected_globals(ctx, config, &labels) != seen.globals {
        return None;
    }
    let output = status.output.as_ref()?;
    let kind = SourceKind::parse(&output.kind)?;
    let uid = config.uid()?;
    let Cached::Present {
        output: Some(meta), ..
    } = ctx.versions(kind, namespace)?.get(namespace, &output.name)
    else {
        return None;
    };
    let current = meta.controlled_by(&uid)
        && meta.hash_is(status.config_hash.as_deref())
        && status.config_hash.is_some()
        && !meta.foreign_data;
    current.then_some(seen)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inputs_survive_the_round_trip_through_status() {
        let seen = Seen {
            generation: Some(3),
            sources: BTreeMap::from([
                (
                    SourceRef {
                        kind: SourceKind::ConfigMap,
                        name: "base".into(),
                    },
                    Some("41".into()),
                ),
                (
                    SourceRef {
                        kind: SourceKind::Secret,
                        name: "optional".into(),
                    },
                    None,
                ),
            ]),
            globals: BTreeMap::from([("prod".to_string(), Some(2))]),
        };
        let status = to_status(&seen, "0123456789abcdef");
        assert_eq!(status.operator, OPERATOR_VERSION);
        assert_eq!(status.hash_key.as_deref(), Some("0123456789abcdef"));
        assert_eq!(from_status(Some(3), &status), seen);
    }
}
