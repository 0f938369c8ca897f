//! The prune step: with `output.immutable`, the old outputs no rollout target uses any more go
//! (after the roll-out step, so what the targets carry now decides which are still used).

use crate::operator::apply::{self, GcPending, Target};
use crate::operator::context::{Context, Error};
use crate::operator::reconcile::output::Applied;
use crate::output::Owner;
use crate::status::KafkaToolConfigStatus;

/// Whether some old outputs are held back (then the reconcile checks again soon).
/// Errors: [`Error::Prune`] (a target still rolling or not yet observed is not one: it holds
/// the old outputs back).
pub async fn prune(
    ctx: &Context,
    owner: &Owner<'_>,
    spec: &crate::engine::spec::ToolConfigSpec,
    applied: &Applied,
    targets: &[Target],
    previous: Option<&KafkaToolConfigStatus>,
) -> Result<GcPending, Error> {
    let Some(current) = &applied.immutable else {
        return Ok(GcPending::No);
    };
    let history = previous.map(|s| s.history.as_slice()).unwrap_or_default();
    apply::prune_immutable(
        &ctx.client,
        &ctx.metrics,
        owner,
        spec,
        current,
        targets,
        history,
    )
    .await
    .map_err(|error| error.in_step(Error::Prune))
}
