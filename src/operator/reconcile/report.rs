//! The status step: the next status from the evaluation, what is live and what the targets carry,
//! plus a history entry for a new live hash; written only when it differs from the previous one.

use std::collections::BTreeMap;

use kube::ResourceExt;
use kube::api::Api;

use crate::engine::sources::SourceRef;
use crate::operator::apply;
use crate::operator::authors::Authors;
use crate::operator::context::{Context, Error};
use crate::operator::crd::KafkaToolConfig;
use crate::operator::history;
use crate::operator::index::ConfigId;
use crate::operator::inputs;
use crate::operator::reconcile::evaluate::Evaluated;
use crate::operator::reconcile::now;
use crate::operator::reconcile::output::Applied;
use crate::status::{self, Author, KafkaToolConfigStatus, RolloutStatus};

/// The status the next one is built from and compared with.
pub struct Previous<'a> {
    /// Rebuilt from a projection (`KafkaToolConfigStatus::rebuilt`), or as it is.
    pub status: Option<KafkaToolConfigStatus>,
    /// The projection `status` was rebuilt from: the stored status's digest compares.
    projection: Option<&'a KafkaToolConfigStatus>,
}

impl Previous<'_> {
    fn differs(&self, next: &KafkaToolConfigStatus) -> bool {
        match &self.projection {
            Some(projection) => projection.differs_from_stored(next),
            // Read from the API server: exactly the serialized form.
            None => self.status.as_ref() != Some(next),
        }
    }
}

/// The previous status, without a request: the cache's projection holds all the next status is
/// built from (history, transition times, output keys, rollout) and a digest of the rest. The
/// cache may not have this operator's last write of it yet; the status write then finds the
/// config at a later resourceVersion than `config`'s and is refused ([`write`]).
pub fn previous_status(config: &KafkaToolConfig) -> Previous<'_> {
    let stored = config.status.as_ref();
    let rebuilt = stored.and_then(KafkaToolConfigStatus::rebuilt);
    Previous {
        projection: stored.filter(|_| rebuilt.is_some()),
        // Not a projection (a status read from the API server): compared as it is.
        status: rebuilt.or_else(|| stored.cloned()),
    }
}

/// The next status (pure but for the caches of pods and GlobalClientDefaults authors).
/// `rollout`: the targets' list as it is to be (`None`: the previous one stays);
/// `sources`: who last changed each source, for history.
pub fn next_status(
    ctx: &Context,
    config: &KafkaToolConfig,
    previous: &Previous<'_>,
    evaluated: &Evaluated,
    applied: &Applied,
    rollout: Option<Vec<RolloutStatus>>,
    sources: BTreeMap<SourceRef, Author>,
) -> KafkaToolConfigStatus {
    let before = previous.status.as_ref();
    let Evaluated { ev, seen } = evaluated;
    let now = now();
    let mut next = status::build(ev, config.metadata.generation, before, &applied.live, &now);
    next.inputs = Some(inputs::InputsStatus {
        // Kept until another annotation is the cause of a revision.
        change_cause: before
            .and_then(|s| s.inputs.as_ref())
            .and_then(|i| i.change_cause.clone()),
        ..inputs::to_status(seen, &ctx.hash_key.id())
    });
    if let Some(rollout) = rollout {
        next.rollout = rollout;
    }
    let namespace = config.namespace().unwrap_or_default();
    crate::operator::pods::record(&ctx.pods, &namespace, &mut next, before, &now);
    // A new live hash (not a failed write) is a revision: `status.history` says what changed,
    // why and who changed it.
    let live = &applied.live;
    if let (Some(hash), Some(rendered)) = (&live.hash, &ev.rendered)
        && applied.previous_hash.as_deref() != Some(hash.as_str())
        && live.write_failure.is_none()
    {
        // What the previous evaluation saw is in its status (also after a restart).
        let seen_before = before.and_then(|before| {
            Some(inputs::from_status(
                before.observed_generation,
                before.inputs.as_ref()?,
            ))
        });
        let key_id = ctx.hash_key.id();
        let change = history::Change {
            config,
            ev,
            previous_files: applied.previous_files.as_ref(),
            files: &rendered.files,
            previous: before,
            hash_key_id: &key_id,
            seen_before: seen_before.as_ref(),
            seen,
            authors: Authors {
                config: None,
                sources,
                globals: inputs::global_authors(ctx, seen),
            },
        };
        history::record_revision(change, &mut next, hash, &now);
    }
    next
}

/// What became of a status write.
#[derive(Debug, PartialEq, Eq)]
pub enum Written {
    /// Written, or nothing to write.
    Done,
    /// The config is gone (deleted meanwhile; garbage collection removes its output).
    Gone,
    /// The config is no longer at the resourceVersion the status was built from: someone
    /// changed it, or the cache has not brought in this operator's last status write yet.
    Stale,
}

/// Writes `next` when it differs from the previous status, onto the version of the config the
/// previous status was read from (`resource_version`): history is read-modify-write, and a
/// status built on an older one would drop what was written since. Errors: [`Error::Status`].
pub async fn write(
    ctx: &Context,
    key: &ConfigId,
    resource_version: Option<&str>,
    previous: &Previous<'_>,
    next: &KafkaToolConfigStatus,
) -> Result<Written, Error> {
    if !previous.differs(next) {
        return Ok(Written::Done);
    }
    let api: Api<apply::Written<KafkaToolConfig>> =
        Api::namespaced(ctx.client.clone(), &key.namespace);
    match apply::write_status(&api, &ctx.metrics, &key.name, resource_version, next).await {
        Ok(()) => Ok(Written::Done),
        Err(Error::Kube(kube::Error::Api(status))) if status.is_not_found() => Ok(Written::Gone),
        Err(Error::Kube(kube::Error::Api(status))) if status.is_conflict() => Ok(Written::Stale),
        Err(error) => Err(error.in_step(Error::Status)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn explained_status(over: &str) -> KafkaToolConfigStatus {
        KafkaToolConfigStatus {
            config_hash: Some("sha256:ab".into()),
            warnings: vec![crate::status::StatusWarning {
                key: "lingr.ms".into(),
                role: None,
                reason: "UnknownKey".into(),
                message: "did you mean linger.ms?".into(),
            }],
            shadowed: vec![crate::status::ShadowedKey {
                key: "acks".into(),
                role: crate::engine::spec::Role::Producer,
                winner: "args".into(),
                over: vec![over.into()],
            }],
            ..KafkaToolConfigStatus::default()
        }
    }

    #[test]
    fn a_full_previous_status_is_compared_as_it_is() {
        let previous = |status| Previous {
            status,
            projection: None,
        };
        let stored = Some(explained_status("properties"));
        assert!(!previous(stored.clone()).differs(&explained_status("properties")));
        assert!(previous(stored.clone()).differs(&explained_status("toolDefaults")));
        assert!(previous(None).differs(&explained_status("properties")));
    }
}
