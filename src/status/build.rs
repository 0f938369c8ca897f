//! The status made from an evaluation: conditions, warnings, shadowed keys, output and history.

use super::*;
use crate::engine::safe_text::{QUOTE_BYTES, cut};

/// Bounds that keep a status far below etcd's object limit (1.5 MiB) whatever the input:
/// together with [`MAX_STATUS_WARNINGS`] and [`HISTORY_LIMIT`], a status stays under
/// [`STATUS_BUDGET_BYTES`] (tests/bad_input.rs checks the worst cases).
const MAX_CONDITION_MESSAGE: usize = 8 * 1024;
const MAX_WARNING_MESSAGE: usize = 1024;
const MAX_STATUS_SHADOWED: usize = 50;
const MAX_SHADOWED_OVER: usize = 4;
const MAX_CHANGED_KEYS: usize = 20;

fn summarize(problems: &[Problem]) -> (Reason, String) {
    let reason = problems
        .first()
        .map(|p| p.reason)
        .unwrap_or(Reason::InvalidValue);
    const SEPARATOR: &str = "; ";
    let mut message = String::new();
    for (listed, problem) in problems.iter().enumerate() {
        let text = problem.to_string();
        // The listed problems, separators included, stay within the bound; only the count of
        // those left out goes past it.
        if !message.is_empty()
            && message.len() + SEPARATOR.len() + text.len() > MAX_CONDITION_MESSAGE
        {
            let left_out = problems.len() - listed;
            let noun = if left_out == 1 { "problem" } else { "problems" };
            message.push_str(&format!(
                "; and {left_out} more {noun} (`validate` lists them all)"
            ));
            break;
        }
        if !message.is_empty() {
            message.push_str(SEPARATOR);
        }
        message.push_str(&text);
    }
    (reason, message)
}

/// The conditions of a GlobalClientDefaults with these problems (`Valid` only). Shared by the
/// operator and `validate`, so both say the same thing.
pub fn global_conditions(
    problems: &[Problem],
    previous: &[Condition],
    generation: Option<i64>,
    now: &str,
) -> Vec<Condition> {
    let mut conditions = Vec::new();
    if problems.is_empty() {
        set_condition(
            &mut conditions,
            previous,
            VALID,
            "True",
            "Valid",
            "applied to the configs it selects".into(),
            generation,
            now,
        );
    } else {
        let (reason, message) = summarize(problems);
        let message =
            format!("{message}; not applied: the configs it selects keep their last good output");
        // kstatus: only an edit of this object can fix it.
        for (type_, status) in [(VALID, "False"), (STALLED, "True")] {
            set_condition(
                &mut conditions,
                previous,
                type_,
                status,
                reason.as_str(),
                message.clone(),
                generation,
                now,
            );
        }
    }
    conditions
}

/// The order of conditions in a status: Ready first (what `kubectl get` and GitOps tools read),
/// kstatus's two next.
fn condition_order(type_: &str) -> u8 {
    match type_ {
        READY => 0,
        STALLED | RECONCILING => 1,
        SOURCES_RESOLVED => 2,
        _ => 3,
    }
}

/// What the operator knows about the output object when it writes status.
#[derive(Debug, Clone, Default)]
pub struct Live {
    /// Hash of the content in the output object now (after this reconcile's write, if any).
    pub hash: Option<String>,
    /// Set when the output could not be written, e.g. `OutputConflict`.
    pub write_failure: Option<WriteFailure>,
}

/// Why the output could not be written, and whether the operator tries again.
#[derive(Debug, Clone)]
pub struct WriteFailure {
    /// Ready's reason (`OutputConflict`, `OutputWriteFailed`).
    pub reason: String,
    pub message: String,
    /// True when trying again may succeed without any change to the config (a conflict that
    /// garbage collection may clear, a 5xx, a 429): `Reconciling=True`. False when the API server
    /// will refuse the same object again (a 422): `Stalled=True`.
    pub retried: bool,
}

/// The status for an evaluation. `previous` keeps transition times, history and the live hash.
pub fn build(
    ev: &Evaluation,
    generation: Option<i64>,
    previous: Option<&KafkaToolConfigStatus>,
    live: &Live,
    now: &str,
) -> KafkaToolConfigStatus {
    let prev_conditions = previous.map(|p| p.conditions.as_slice()).unwrap_or(&[]);
    let mut status = KafkaToolConfigStatus {
        observed_generation: generation,
        history: previous.map(|p| p.history.clone()).unwrap_or_default(),
        rollout: previous.map(|p| p.rollout.clone()).unwrap_or_default(),
        inputs: previous.and_then(|p| p.inputs.clone()),
        ..Default::default()
    };
    let mut conditions = Vec::new();
    let mut set = |type_: &str, ok: bool, reason: &str, message: String| {
        let value = if ok { "True" } else { "False" };
        set_condition(
            &mut conditions,
            prev_conditions,
            type_,
            value,
            reason,
            message,
            generation,
            now,
        );
    };

    if ev.source_problems.is_empty() {
        set(
            SOURCES_RESOLVED,
            true,
            "AllFound",
            "every referenced source was read".into(),
        );
    } else {
        let (reason, message) = summarize(&ev.source_problems);
        set(SOURCES_RESOLVED, false, reason.as_str(), message);
    }
    if ev.problems.is_empty() && ev.source_problems.is_empty() {
        set(
            VALID,
            true,
            "Valid",
            "the merged configuration is valid".into(),
        );
    } else if ev.problems.is_empty() {
        set(
            VALID,
            false,
            "SourcesNotResolved",
            "cannot validate until every source is resolved".into(),
        );
    } else {
        let (reason, message) = summarize(&ev.problems);
        set(VALID, false, reason.as_str(), message);
    }
    let kept = |hash: &Option<String>| match hash {
        Some(h) => format!("; the last good output ({h}) stays in place"),
        None => String::new(),
    };
    // Ready, and what kstatus reads beside it: Stalled while nothing but a change of the
    // config (or of what it reads) can help, Reconciling while the operator tries again.
    let (ready, reason, message, stalled) = match (&ev.rendered, &live.write_failure) {
        (_, Some(failure)) => (
            false,
            failure.reason.clone(),
            format!("{}{}", failure.message, kept(&live.hash)),
            !failure.retried,
        ),
        (Some(rendered), None) => (
            true,
            "Rendered".to_string(),
            format!(
                "{} {} holds {}",
                rendered.kind_str(),
                rendered.name,
                rendered.hash
            ),
            false,
        ),
        (None, None) => {
            let (reason, message) = if !ev.source_problems.is_empty() {
                summarize(&ev.source_problems)
            } else {
                summarize(&ev.problems)
            };
            (
                false,
                reason.as_str().to_string(),
                format!("{message}{}", kept(&live.hash)),
                true,
            )
        }
    };
    if stalled {
        set(STALLED, true, &reason, message.clone());
    } else if !ready {
        set(
            RECONCILING,
            true,
            PROGRESSING_WITH_RETRY,
            format!("the operator tries again: {message}"),
        );
    }
    set(READY, ready, &reason, message);
    // Ready first: what `kubectl get` and GitOps tools read.
    conditions.sort_by_key(|c| condition_order(&c.type_));
    status.conditions = conditions;
    status.config_hash = live.hash.clone();
    if let Some(rendered) = &ev.rendered {
        status.output = Some(Box::new(OutputStatus {
            kind: rendered.kind_str().to_string(),
            name: rendered.name.clone(),
            keys: rendered.files.keys().cloned().collect(),
            secret_mounts: rendered
                .secret_mounts
                .iter()
                .map(|m| SecretMountStatus {
                    secret: m.secret.clone(),
                    mount_path: m.mount_path.clone(),
                })
                .collect(),
        }));
    } else if let Some(prev) = previous {
        status.output = prev.output.clone();
    }
    status.warnings = ev
        .warnings
        .iter()
        .take(MAX_STATUS_WARNINGS)
        .map(|w| StatusWarning {
            key: cut(&w.key, QUOTE_BYTES).into_owned(),
            role: w.role,
            reason: w.reason.to_string(),
            message: cut(&w.message, MAX_WARNING_MESSAGE).into_owned(),
        })
        .collect();
    if ev.warnings.len() > MAX_STATUS_WARNINGS {
        status.warnings.push(StatusWarning {
            key: String::new(),
            role: None,
            reason: "MoreWarnings".into(),
            message: format!(
                "{} more warnings are not listed; run `kafka-config-operator validate` or `explain` to see all",
                ev.warnings.len() - MAX_STATUS_WARNINGS
            ),
        });
    }
    status.shadowed = ev
        .shadowed
        .iter()
        .take(MAX_STATUS_SHADOWED)
        .map(|s| ShadowedKey {
            key: cut(&s.key, QUOTE_BYTES).into_owned(),
            role: s.role,
            winner: cut(s.winner, QUOTE_BYTES).into_owned(),
            over: s
                .over
                .iter()
                .take(MAX_SHADOWED_OVER)
                .map(|o| cut(o, QUOTE_BYTES).into_owned())
                .chain(
                    (s.over.len() > MAX_SHADOWED_OVER)
                        .then(|| format!("(and {} more)", s.over.len() - MAX_SHADOWED_OVER)),
                )
                .collect(),
        })
        .collect();
    if let Some(first_left_out) = ev.shadowed.get(MAX_STATUS_SHADOWED) {
        // Like MoreWarnings: one entry that says how many are not listed.
        status.shadowed.push(ShadowedKey {
            key: String::new(),
            role: first_left_out.role,
            winner: format!(
                "{} more shadowed keys are not listed; `explain` shows every key",
                ev.shadowed.len() - MAX_STATUS_SHADOWED
            ),
            over: Vec::new(),
        });
    }
    status
}

/// Appends a history entry when the live hash changes, keeping the last [`HISTORY_LIMIT`].
pub fn record_history(
    status: &mut KafkaToolConfigStatus,
    hash: &str,
    time: &str,
    changed_keys: Vec<String>,
    cause: String,
    by: Option<Author>,
) {
    if status.history.last().is_some_and(|h| h.hash == hash) {
        return;
    }
    let revision = status.history.last().map(|h| h.revision + 1).unwrap_or(1);
    let left_out = changed_keys.len().saturating_sub(MAX_CHANGED_KEYS);
    let mut changed_keys: Vec<String> = changed_keys
        .iter()
        .take(MAX_CHANGED_KEYS)
        .map(|k| cut(k, QUOTE_BYTES).into_owned())
        .collect();
    if left_out > 0 {
        changed_keys.push(format!("(and {left_out} more)"));
    }
    status.history.push(HistoryEntry {
        revision,
        hash: hash.to_string(),
        time: time.to_string(),
        changed_keys,
        cause: cut(&cause, MAX_WARNING_MESSAGE).into_owned(),
        // Names and managers are anyone's to choose: bounded like any quoted name.
        by: by.map(|by| Author {
            kind: cut(&by.kind, QUOTE_BYTES).into_owned(),
            name: cut(&by.name, QUOTE_BYTES).into_owned(),
            manager: cut(&by.manager, QUOTE_BYTES).into_owned(),
            operation: by.operation.map(|o| cut(&o, QUOTE_BYTES).into_owned()),
            time: by.time.map(|t| cut(&t, QUOTE_BYTES).into_owned()),
        }),
    });
    let excess = status.history.len().saturating_sub(HISTORY_LIMIT);
    status.history.drain(..excess);
}

#[cfg(test)]
#[path = "build_tests.rs"]
mod tests;
