//! The roll-out step: the targets (named in the spec, or opted in by annotation) get the live
//! hash in their pod template, and mount the live output when it is immutable.

use crate::operator::apply::{self, Mount, Target};
use crate::operator::context::{Context, Error};
use crate::status::{Live, RolloutStatus};

/// What each target carries now; `None` when nothing is rolled: no targets, or no output that
/// is current (an invalid spec, a failed write), whose hash the targets would get.
/// Errors: [`Error::Rollout`].
pub async fn roll_out(
    ctx: &Context,
    namespace: &str,
    targets: &[Target],
    live: &Live,
    mount: Option<&Mount<'_>>,
) -> Result<Option<Vec<RolloutStatus>>, Error> {
    match (&live.hash, &live.write_failure) {
        (Some(hash), None) if !targets.is_empty() => {
            apply::roll_out(&ctx.client, &ctx.metrics, namespace, targets, hash, mount)
                .await
                .map(Some)
                .map_err(|error| error.in_step(Error::Rollout))
        }
        _ => Ok(None),
    }
}
