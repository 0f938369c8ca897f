//! The checks and warnings on merged views that need the whole picture: override policies,
//! values a tool forces or a GlobalClientDefaults enforces, required options, and shadowing.

use std::collections::BTreeMap;

use crate::engine::catalogue::tools::{Tool, ToolOption};
use crate::engine::globals::GlobalDefaults;
use crate::engine::layers::{Contribution, Layer};
use crate::engine::model::RoleView;
use crate::engine::outcome::{Problem, Reason, Shadowed, Warning};
use crate::engine::policy::PolicyMatcher;
use crate::engine::spec::{Precedence, Role, Scalar, ToolConfigSpec};

pub(crate) fn check_override_policy(
    role: Role,
    view: &RoleView,
    applied: &[&GlobalDefaults],
    problems: &mut Vec<Problem>,
) {
    for global in applied.iter().filter(|g| g.applies_to_role(role)) {
        let Some(policy) = &global.spec.override_policy else {
            continue;
        };
        let matcher = PolicyMatcher::new(policy);
        let refused: Vec<String> = view
            .keys
            .iter()
            .filter(|(key, _)| !key.inspect(|key| matcher.allows(key)))
            .filter_map(|(key, p)| {
                let sources: Vec<String> = p
                    .chain
                    .iter()
                    .filter(|c| c.layer.is_user_layer())
                    .map(|c| c.source.to_string())
                    .collect();
                (!sources.is_empty()).then(|| format!("{} ({})", key.shown(), sources.join(", ")))
            })
            .collect();
        if !refused.is_empty() {
            let allowed = if policy.keys.is_empty() {
                String::new()
            } else {
                format!(" {}", policy.keys.join(", "))
            };
            problems.push(Problem::new(
                Reason::OverrideNotAllowed,
                format!("spec ({role})"),
                format!(
                    "GlobalClientDefaults {} (overridePolicy {:?}{allowed}) does not allow this config to set: {}",
                    global.name,
                    policy.mode(),
                    refused.join("; ")
                ),
            ));
        }
    }
}

pub(crate) fn warn_forced_by_tool(
    tool: &Tool,
    precedence: Precedence,
    role: Role,
    view: &RoleView,
    warnings: &mut Vec<Warning>,
) {
    let Some(forced) = tool.forced.get(&role) else {
        return;
    };
    for (key, forced_value) in forced {
        let Some(user) = view.file_value(key) else {
            continue;
        };
        if user.layer == Layer::ToolDefaults || user.value.is(forced_value) {
            continue;
        }
        let message = match precedence {
            Precedence::Modern => format!(
                "{} forces {key}={forced_value} in code: the value from {} is rendered but cannot take \
                 effect with today's tool",
                tool.name, user.source
            ),
            Precedence::Legacy => format!(
                "{} forces {key}={forced_value} in code (Legacy precedence): it overrides the value from {}",
                tool.name, user.source
            ),
        };
        warnings.push(Warning {
            key: key.clone(),
            role: Some(role),
            reason: Reason::ForcedByTool,
            message,
        });
    }
    // Values the tool computes on every run (`test-group-<millis>`): a user value never applies.
    for key in tool.always_computed.get(&role).into_iter().flatten() {
        let Some(user) = view.file_value(key) else {
            continue;
        };
        if user.layer == Layer::ToolDefaults {
            continue;
        }
        let computed = tool
            .dynamic
            .get(&role)
            .and_then(|d| d.get(key))
            .map_or("at run time", String::as_str);
        warnings.push(Warning {
            key: key.clone(),
            role: Some(role),
            reason: Reason::ForcedByTool,
            message: format!(
                "{} sets {key} itself ({computed}): the value from {} is rendered but never takes effect",
                tool.name, user.source
            ),
        });
    }
}

pub(crate) fn warn_enforced(role: Role, view: &RoleView, warnings: &mut Vec<Warning>) {
    for (key, provenance) in &view.keys {
        let mut chain = provenance
            .chain
            .iter()
            .filter(|c| c.layer != Layer::ForcedByTool);
        let (Some(winner), Some(below)) =
            (chain.next(), chain.find(|c| c.layer != Layer::Enforced))
        else {
            continue;
        };
        if winner.layer == Layer::Enforced
            && below.layer != Layer::KafkaDefaults
            && !winner.value.same_text(&below.value)
        {
            warnings.push(Warning {
                key: key.shown().into_owned(),
                role: Some(role),
                reason: Reason::Enforced,
                message: format!(
                    "{} overrides the value from {}",
                    winner.source, below.source
                ),
            });
        }
    }
}

/// KIP-1137: required arguments count as given when their key comes from any source.
pub(crate) fn check_required(
    tool: &Tool,
    spec: &ToolConfigSpec,
    views: &BTreeMap<Role, RoleView>,
    problems: &mut Vec<Problem>,
) {
    for group in &tool.required {
        let key_options: Vec<&ToolOption> =
            group.iter().filter_map(|name| tool.option(name)).collect();
        let given = |name: &String| {
            spec.args
                .get(name)
                .is_some_and(|v| !matches!(v, Scalar::Bool(false)))
        };
        let satisfied = group.iter().any(given)
            || key_options.iter().any(|o| {
                views.iter().any(|(role, view)| {
                    o.feeds(*role, tool) && view.effective_value(&o.key).is_some()
                })
            })
            || (key_options.is_empty() && group.iter().any(|n| tool.is_config_file_option(n)));
        if satisfied {
            continue;
        }
        let options = group
            .iter()
            .map(|n| format!("--{n}"))
            .collect::<Vec<_>>()
            .join(" or ");
        let keys: Vec<&str> = key_options.iter().map(|o| o.key.as_str()).collect();
        let how = if keys.is_empty() {
            format!("set it in spec.args ({})", group.join(" or "))
        } else {
            format!(
                "set spec.args.{}, or {} in spec.properties or a config file",
                group.join(" or spec.args."),
                keys.join(" or ")
            )
        };
        problems.push(Problem::new(
            Reason::MissingRequired,
            "spec.args",
            format!("{} requires {options}: {how}", tool.name),
        ));
    }
}

pub(crate) fn shadowed(role: Role, view: &RoleView) -> Vec<Shadowed> {
    let mut shadowed: Vec<Shadowed> = view
        .keys
        .iter()
        .filter_map(|(key, p)| {
            let mut chain = p.chain.iter().filter(|c| c.layer != Layer::KafkaDefaults);
            let winner = chain.next()?;
            let over: Vec<_> = chain.map(Contribution::shadow_label).collect();
            (!over.is_empty()).then(|| Shadowed {
                key: key.shown().into_owned(),
                role,
                winner: winner.layer.as_str(),
                over,
            })
        })
        .collect();
    // By the key as shown (the key order when every key is shown): in key order, a key read
    // from a Secret file would tell where its text sorts.
    shadowed.sort_by(|a, b| a.key.cmp(&b.key));
    shadowed
}
