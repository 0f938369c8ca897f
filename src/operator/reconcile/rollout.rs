//! The roll-out step: the targets (named in the spec, or opted in by annotation) get the live
//! hash in their pod template, and mount the live output when it is immutable.

use crate::engine::Evaluation;
use crate::engine::spec::{RolloutKind, ToolConfigSpec};
use crate::operator::apply::{self, Target};
use crate::operator::context::{Context, Error};
use crate::status::{Live, RolloutStatus};

/// The targets, and the status list of them as it is to be.
pub struct Rolled {
    pub targets: Vec<Target>,
    /// What each target carries now. `None`: the previous list stays (targets, but no output
    /// that is current, whose hash they would get: an invalid spec, a failed write).
    pub statuses: Option<Vec<RolloutStatus>>,
}

/// Errors: [`Error::Rollout`].
pub async fn roll_out(
    ctx: &Context,
    namespace: &str,
    spec: &ToolConfigSpec,
    opted_in: &[(RolloutKind, String)],
    ev: &Evaluation,
    live: &Live,
) -> Result<Rolled, Error> {
    let (targets, mount) =
        apply::targets_of(spec, opted_in, live.hash.as_deref(), ev.rendered.as_ref());
    let statuses = match (&live.hash, &live.write_failure) {
        // Without targets the list goes.
        _ if targets.is_empty() => Some(Vec::new()),
        (Some(hash), None) => Some(
            apply::roll_out(
                &ctx.client,
                &ctx.metrics,
                namespace,
                &targets,
                hash,
                mount.as_ref(),
            )
            .await
            .map_err(|error| error.in_step(Error::Rollout))?,
        ),
        _ => None,
    };
    Ok(Rolled { targets, statuses })
}
