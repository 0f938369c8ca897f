//! The status of a KafkaToolConfig, built from an [`Evaluation`]: kstatus-compatible conditions
//! (`Ready`, `SourcesResolved`, `Valid`, each with `observedGeneration`), the live hash, warnings,
//! shadowed keys and history. Shared by the controller and by `validate -o json`, so both write
//! exactly the same thing.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::engine::outcome::{Problem, Reason};
use crate::engine::{Evaluation, spec::Role};

pub const READY: &str = "Ready";
pub const SOURCES_RESOLVED: &str = "SourcesResolved";
pub const VALID: &str = "Valid";

/// A status condition (the shape of `metav1.Condition`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Condition {
    #[serde(rename = "type")]
    pub type_: String,
    /// True, False or Unknown.
    pub status: String,
    pub reason: String,
    #[serde(default)]
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// RFC 3339 time of the last change of `status`.
    #[serde(default)]
    pub last_transition_time: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StatusWarning {
    pub key: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<Role>,
    pub reason: String,
    pub message: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ShadowedKey {
    pub key: String,
    pub role: Role,
    /// The layer that won.
    pub winner: String,
    /// The layers and sources it overrode, highest first. Never values.
    pub over: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SecretMountStatus {
    pub secret: String,
    pub mount_path: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct OutputStatus {
    pub kind: String,
    pub name: String,
    pub keys: Vec<String>,
    /// For `secrets: Deferred`: Secrets the workload must mount, and where.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub secret_mounts: Vec<SecretMountStatus>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HistoryEntry {
    pub revision: i64,
    pub hash: String,
    pub time: String,
    /// Names of the keys whose values changed (never values).
    #[serde(default)]
    pub changed_keys: Vec<String>,
    pub cause: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RolloutStatus {
    pub kind: String,
    pub name: String,
    /// The hash on the workload's pod template, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hash: Option<String>,
}

/// Status stays small: a config with thousands of unknown keys must not bloat its object.
pub const MAX_STATUS_WARNINGS: usize = 50;

/// How many revisions `status.history` keeps.
pub const HISTORY_LIMIT: usize = 10;

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KafkaToolConfigStatus {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    #[serde(default)]
    pub conditions: Vec<Condition>,
    /// Hash of the content that is live in the output object.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config_hash: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<OutputStatus>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<StatusWarning>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub shadowed: Vec<ShadowedKey>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub history: Vec<HistoryEntry>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rollout: Vec<RolloutStatus>,
    /// What the last evaluation read (set by the operator, not by `validate`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inputs: Option<InputsStatus>,
}

/// The versions of everything an evaluation read. With it, the operator proves from its watch
/// caches alone that nothing changed since the live output was rendered (after a restart, or on
/// the periodic resync) and reads nothing; `history` names the source that changed.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InputsStatus {
    /// Version of the operator that evaluated it: a new release renders everything again.
    pub operator: String,
    /// Every referenced ConfigMap and Secret, with the resourceVersion read (none: not found).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sources: Vec<SourceVersion>,
    /// Every GlobalClientDefaults that selected the config (applied or invalid), with its
    /// generation.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub global_client_defaults: Vec<GlobalVersion>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SourceVersion {
    /// ConfigMap or Secret.
    pub kind: String,
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_version: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GlobalVersion {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generation: Option<i64>,
}

impl KafkaToolConfigStatus {
    /// The part of a status the operator's cache keeps: what proves a config unchanged without
    /// a request (generation, Ready, hash, output, inputs) and what the reverse index, the ready
    /// gauge and the own-write check read. Messages, history, warnings, shadowed keys and rollout
    /// (most of a status: about 1.7 KB per config at N = 10,000) are not kept; a reconcile that
    /// evaluates reads the config fresh from the API server.
    pub fn cached(self) -> Self {
        Self {
            observed_generation: self.observed_generation,
            conditions: self
                .conditions
                .into_iter()
                .filter(|c| c.type_ == READY)
                .map(|c| Condition {
                    message: String::new(),
                    last_transition_time: String::new(),
                    ..c
                })
                .collect(),
            config_hash: self.config_hash,
            output: self.output.map(|o| OutputStatus {
                keys: Vec::new(),
                secret_mounts: Vec::new(),
                ..o
            }),
            inputs: self.inputs,
            ..Self::default()
        }
    }

    pub fn condition(&self, type_: &str) -> Option<&Condition> {
        self.conditions.iter().find(|c| c.type_ == type_)
    }

    pub fn is_ready(&self) -> bool {
        self.condition(READY).is_some_and(|c| c.status == "True")
    }
}

/// Sets a condition, keeping its `lastTransitionTime` when its status did not change.
#[allow(clippy::too_many_arguments)]
pub fn set_condition(
    conditions: &mut Vec<Condition>,
    previous: &[Condition],
    type_: &str,
    status: &str,
    reason: &str,
    message: String,
    generation: Option<i64>,
    now: &str,
) {
    let last_transition_time = previous
        .iter()
        .find(|c| c.type_ == type_ && c.status == status)
        .map(|c| c.last_transition_time.clone())
        .unwrap_or_else(|| now.to_string());
    conditions.retain(|c| c.type_ != type_);
    conditions.push(Condition {
        type_: type_.to_string(),
        status: status.to_string(),
        reason: reason.to_string(),
        message,
        observed_generation: generation,
        last_transition_time,
    });
}

fn summarize(problems: &[Problem]) -> (Reason, String) {
    let reason = problems
        .first()
        .map(|p| p.reason)
        .unwrap_or(Reason::InvalidValue);
    let message = problems
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; ");
    (reason, message)
}

/// What the operator knows about the output object when it writes status.
#[derive(Debug, Clone, Default)]
pub struct Live {
    /// Hash of the content in the output object now (after this reconcile's write, if any).
    pub hash: Option<String>,
    /// Set when the output could not be written: (reason, message), e.g. `OutputConflict`.
    pub write_failure: Option<(String, String)>,
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
    match (&ev.rendered, &live.write_failure) {
        (_, Some((reason, message))) => set(
            READY,
            false,
            reason,
            format!("{message}{}", kept(&live.hash)),
        ),
        (Some(rendered), None) => set(
            READY,
            true,
            "Rendered",
            format!(
                "{} {} holds {}",
                rendered.kind_str(),
                rendered.name,
                rendered.hash
            ),
        ),
        (None, None) => {
            let (reason, message) = if !ev.source_problems.is_empty() {
                summarize(&ev.source_problems)
            } else {
                summarize(&ev.problems)
            };
            set(
                READY,
                false,
                reason.as_str(),
                format!("{message}{}", kept(&live.hash)),
            );
        }
    }
    // Ready first: what `kubectl get` and GitOps tools read.
    conditions.sort_by_key(|c| match c.type_.as_str() {
        READY => 0,
        SOURCES_RESOLVED => 1,
        _ => 2,
    });
    status.conditions = conditions;
    status.config_hash = live.hash.clone();
    if let Some(rendered) = &ev.rendered {
        status.output = Some(OutputStatus {
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
        });
    } else if let Some(prev) = previous {
        status.output = prev.output.clone();
    }
    status.warnings = ev
        .warnings
        .iter()
        .take(MAX_STATUS_WARNINGS)
        .map(|w| StatusWarning {
            key: w.key.clone(),
            role: w.role,
            reason: w.reason.to_string(),
            message: w.message.clone(),
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
        .map(|s| ShadowedKey {
            key: s.key.clone(),
            role: s.role,
            winner: s.winner.clone(),
            over: s.over.clone(),
        })
        .collect();
    status
}

/// Appends a history entry when the live hash changes, keeping the last [`HISTORY_LIMIT`].
pub fn record_history(
    status: &mut KafkaToolConfigStatus,
    hash: &str,
    time: &str,
    changed_keys: Vec<String>,
    cause: String,
) {
    if status.history.last().is_some_and(|h| h.hash == hash) {
        return;
    }
    let revision = status.history.last().map(|h| h.revision + 1).unwrap_or(1);
    status.history.push(HistoryEntry {
        revision,
        hash: hash.to_string(),
        time: time.to_string(),
        changed_keys,
        cause,
    });
    let excess = status.history.len().saturating_sub(HISTORY_LIMIT);
    status.history.drain(..excess);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn condition(type_: &str, status: &str, reason: &str) -> Condition {
        Condition {
            type_: type_.into(),
            status: status.into(),
            reason: reason.into(),
            message: format!("{type_} is {status}: a message of some length"),
            observed_generation: Some(7),
            last_transition_time: "2026-12-03T10:00:00Z".into(),
        }
    }

    fn full_status() -> KafkaToolConfigStatus {
        KafkaToolConfigStatus {
            observed_generation: Some(7),
            conditions: vec![
                condition(READY, "True", "Rendered"),
                condition("SourcesResolved", "True", "AllFound"),
                condition("Valid", "True", "Valid"),
            ],
            config_hash: Some("sha256:ab".into()),
            output: Some(OutputStatus {
                kind: "ConfigMap".into(),
                name: "orders-kafka".into(),
                keys: vec!["producer.properties".into(), "tool.args".into()],
                secret_mounts: Vec::new(),
            }),
            warnings: vec![StatusWarning {
                key: "lingr.ms".into(),
                role: None,
                reason: "UnknownKey".into(),
                message: "did you mean linger.ms?".into(),
            }],
            shadowed: vec![ShadowedKey {
                key: "acks".into(),
                role: Role::Producer,
                winner: "args".into(),
                over: vec!["properties".into()],
            }],
            history: vec![HistoryEntry {
                revision: 1,
                hash: "sha256:ab".into(),
                time: "2026-12-03T10:00:00Z".into(),
                changed_keys: vec!["acks".into()],
                cause: "created".into(),
            }],
            rollout: Vec::new(),
            inputs: Some(InputsStatus {
                operator: "0.1.0".into(),
                sources: vec![SourceVersion {
                    kind: "ConfigMap".into(),
                    name: "base".into(),
                    resource_version: Some("42".into()),
                }],
                global_client_defaults: vec![GlobalVersion {
                    name: "prod".into(),
                    generation: Some(2),
                }],
            }),
        }
    }

    #[test]
    fn the_cached_projection_keeps_what_proves_a_config_unchanged() {
        let full = full_status();
        let cached = full.clone().cached();
        assert_eq!(cached.observed_generation, full.observed_generation);
        assert_eq!(cached.config_hash, full.config_hash);
        assert_eq!(cached.inputs, full.inputs);
        let ready = cached.condition(READY).expect("Ready is kept");
        assert_eq!(
            (
                ready.status.as_str(),
                ready.reason.as_str(),
                ready.observed_generation
            ),
            ("True", "Rendered", Some(7))
        );
        assert!(cached.is_ready());
        let output = cached.output.as_ref().expect("the output is kept");
        assert_eq!(
            (output.kind.as_str(), output.name.as_str()),
            ("ConfigMap", "orders-kafka")
        );
    }

    #[test]
    fn the_cached_projection_drops_messages_history_and_explanations() {
        let cached = full_status().cached();
        assert_eq!(cached.conditions.len(), 1);
        assert!(cached.conditions[0].message.is_empty());
        assert!(cached.conditions[0].last_transition_time.is_empty());
        assert!(cached.warnings.is_empty() && cached.shadowed.is_empty());
        assert!(cached.history.is_empty() && cached.rollout.is_empty());
        assert!(cached.output.as_ref().is_some_and(|o| o.keys.is_empty()));
        // projecting twice changes nothing
        assert_eq!(cached.clone().cached(), cached);
    }
}
