//! The apply-output step: creates, applies or leaves alone the output object of a rendered
//! config, and says what is live afterwards. A refusal by the API server is reported in the
//! status (`OutputWriteFailed`) before it is returned as [`Error::OutputRefused`].

use std::collections::BTreeMap;

use crate::engine::Evaluation;
use crate::engine::safe_text;
use crate::operator::apply;
use crate::operator::context::{Context, Error};
use crate::operator::error::refused_for_good;
use crate::operator::versions::Cached;
use crate::output::Owner;
use crate::status::{KafkaToolConfigStatus, Live, WriteFailure};

/// Ready's reason when the API server refused the output write.
pub const OUTPUT_WRITE_FAILED: &str = "OutputWriteFailed";

/// What the output step leaves for the steps after it.
pub struct Applied {
    /// The hash the previous status recorded.
    pub previous_hash: Option<String>,
    /// What is live now, and why a write failed.
    pub live: Live,
    /// The output written by this reconcile: kind, name, hash (the `Rendered` event).
    pub wrote: Option<(&'static str, String, String)>,
    /// The refusal, returned after the status says so.
    pub refused: Option<Error>,
    /// The output's files before this reconcile's write (history's changed keys).
    pub previous_files: Option<BTreeMap<String, String>>,
    /// The current immutable output, whose older copies the prune step may delete.
    pub immutable: Option<String>,
}

/// Errors: [`Error::Output`] when the write got no answer; a refusal is not returned here but
/// in [`Applied::refused`], so that the status and event steps still run.
pub async fn apply_output(
    ctx: &Context,
    owner: &Owner<'_>,
    ev: &Evaluation,
    previous: Option<&KafkaToolConfigStatus>,
    spec: &crate::engine::spec::ToolConfigSpec,
) -> Result<Applied, Error> {
    let previous_hash = previous.and_then(|s| s.config_hash.clone());
    let mut applied = Applied {
        live: Live {
            hash: previous_hash.clone(),
            write_failure: None,
        },
        previous_hash,
        wrote: None,
        refused: None,
        previous_files: None,
        immutable: None,
    };
    let Some(rendered) = &ev.rendered else {
        return Ok(applied);
    };
    let namespace = owner.namespace;
    let output_name = crate::output::output_name(spec, rendered);
    let cached = ctx
        .versions(rendered.kind.into(), namespace)
        .map_or(Cached::Unknown, |v| v.get(namespace, &output_name));
    let state = match apply::ensure_output(
        &ctx.client,
        &ctx.metrics,
        owner,
        spec,
        rendered,
        applied.previous_hash.as_deref(),
        cached,
    )
    .await
    {
        Ok(state) => state,
        // The API server refused the write (a 422, a 500, a webhook): say so in Ready, then
        // return the error so the controller retries with backoff. Without an answer at all
        // (transport errors) a status write would fail the same way.
        Err(Error::Kube(kube::Error::Api(refusal))) => {
            let message =
                write_refused_message(rendered.kind_str(), namespace, &output_name, &refusal);
            applied.live.write_failure = Some(WriteFailure {
                reason: OUTPUT_WRITE_FAILED.to_string(),
                message,
                retried: !refused_for_good(refusal.code),
            });
            applied.refused = Some(Error::OutputRefused(kube::Error::Api(refusal)));
            // live.hash stays the previous one: the last good output is what is in place.
            return Ok(applied);
        }
        Err(error) => return Err(error.in_step(Error::Output)),
    };
    if let Some(message) = state.conflict {
        applied.live.hash = None;
        // Retried: garbage collection may remove the old owner's object (a config deleted
        // and created again), or its owner may clean up.
        applied.live.write_failure = Some(WriteFailure {
            reason: "OutputConflict".to_string(),
            message,
            retried: true,
        });
        return Ok(applied);
    }
    applied.live.hash = state.hash.clone();
    applied.previous_files = state.previous_files;
    if state.wrote {
        applied.wrote = Some((
            rendered.kind_str(),
            output_name.clone(),
            rendered.hash.clone(),
        ));
    }
    if spec.output().immutable == Some(true) {
        applied.immutable = Some(output_name);
    }
    Ok(applied)
}

/// Longest API-server message quoted in a status (it may echo what was sent).
const REFUSAL_MESSAGE_LIMIT: usize = 256;

/// "cannot write ConfigMap ns/name: 422 Invalid: …", the API server's message cut to a bound.
/// For a Secret output only the code and reason: the message comes from the API server or an
/// admission webhook, either of which may quote the Secret's data, and a status is readable by
/// anyone who can read the config.
fn write_refused_message(
    kind: &str,
    namespace: &str,
    name: &str,
    refusal: &kube::core::Status,
) -> String {
    let head = format!(
        "cannot write {kind} {namespace}/{name}: {} {}",
        refusal.code, refusal.reason
    );
    if kind == "Secret" {
        return format!("{head} (the API server's message is not shown for a Secret)");
    }
    let text = safe_text::cut(&refusal.message, REFUSAL_MESSAGE_LIMIT);
    format!("{head}: {text}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusal_quotes_the_api_message_cut_to_a_bound_and_never_for_a_secret() {
        let refusal = |message: &str| kube::core::Status {
            code: 422,
            reason: "Invalid".into(),
            message: message.into(),
            ..Default::default()
        };
        assert_eq!(
            write_refused_message("ConfigMap", "ns", "out", &refusal("too big")),
            "cannot write ConfigMap ns/out: 422 Invalid: too big"
        );
        let long = write_refused_message("ConfigMap", "ns", "out", &refusal(&"é".repeat(300)));
        assert!(long.ends_with("…(600 bytes)"), "{long}");
        assert!(long.len() < 256 + 80, "{long}");
        let secret = write_refused_message("Secret", "ns", "out", &refusal("password=hunter2"));
        assert!(!secret.contains("hunter2"), "{secret}");
        assert!(
            secret.starts_with("cannot write Secret ns/out: 422 Invalid"),
            "{secret}"
        );
    }
}
