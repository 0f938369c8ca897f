//! The evaluate step: the engine (pure) on the spec and what the dereference step read, then the
//! reverse index learns what the evaluation depends on. It cannot fail: an invalid spec is a
//! status, not an error.

use crate::engine::sources::SourceRef;
use crate::engine::{Evaluation, Request, evaluate as engine_evaluate};
use crate::operator::context::{Context, Seen, lock};
use crate::operator::crd::KafkaToolConfig;
use crate::operator::dereference::Dereferenced;
use crate::operator::index::ConfigId;
use crate::operator::inputs;

/// The evaluation, and what it saw (for `status.inputs` and history's cause of a change).
pub struct Evaluated {
    pub ev: Evaluation,
    pub seen: Seen,
}

pub fn evaluate(
    ctx: &Context,
    config: &KafkaToolConfig,
    key: &ConfigId,
    read: &Dereferenced,
) -> Evaluated {
    let spec = &config.spec.config;
    let ev = engine_evaluate(&Request {
        name: &key.name,
        namespace: &key.namespace,
        spec,
        namespace_labels: &read.labels,
        globals: &read.globals,
        sources: &read.fetched.sources,
        hash_key: Some(&ctx.hash_key),
    });
    // The output name is a dependency too: deleting a conflicting object must wake us up.
    let mut watched = ev.referenced.clone();
    if let Some(rendered) = &ev.rendered {
        watched.push(SourceRef {
            kind: rendered.kind.into(),
            name: crate::output::output_name(spec, rendered),
        });
    }
    lock(&ctx.index).record(key, &watched, &ev.globals_applied);
    let seen = Seen {
        generation: config.metadata.generation,
        sources: read.fetched.versions.clone(),
        globals: inputs::selected_globals(ctx, config, &read.labels),
    };
    Evaluated { ev, seen }
}
