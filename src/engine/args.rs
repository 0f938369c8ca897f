//! `tool.args`: the command line that makes today's tool run with exactly the merged values.
//!
//! The rendered file carries every merged key. Options the tool applies *over* the file
//! (`always-overrides`) are passed with the merged value, so the file and the option agree;
//! required options are passed too, derived from the merged keys, because today's tools check
//! only their command line (KIP-1137).

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};

use crate::engine::bootstrap;
use crate::engine::catalogue::tools::{Applied, Tool, ToolCatalogue, version_at_least};
use crate::engine::layers::Layer;
use crate::engine::model::{Arg, PlainArgs, RoleView};
use crate::engine::outcome::{Problem, Reason, Warning};
use crate::engine::reference::{self, Bindings, Mode};
use crate::engine::safe_text;
use crate::engine::sensitive;
use crate::engine::spec::{Role, Scalar, ToolConfigSpec};
use crate::engine::taint::Value;

pub fn check_args(tool: &Tool, spec: &ToolConfigSpec, problems: &mut Vec<Problem>) {
    if tool.select_roles && !spec.args.is_empty() {
        problems.push(Problem::new(
            Reason::InvalidArgument,
            "spec.args",
            format!(
                "{} is not a command-line tool; put client settings in spec.properties",
                tool.name
            ),
        ));
    }
    for (name, value) in &spec.args {
        let field = arg_field(name);
        let mut refuse = |message: String| {
            problems.push(Problem::new(
                Reason::InvalidArgument,
                field.clone(),
                message,
            ))
        };
        if name.is_empty() {
            refuse("an option name cannot be empty".into());
            continue;
        }
        if let Some(why) = safe_text::describe_forbidden(name) {
            refuse(format!("the option name {why}"));
            continue;
        }
        if name.starts_with('-') {
            refuse("write option names without dashes".into());
        }
        if name.contains('=') {
            refuse("write the option's value as the map value, not after '=' in its name".into());
        }
        if let Scalar::Str(s) = value
            && let Some(why) = safe_text::describe_forbidden(s)
        {
            refuse(format!("the value {why}"));
        }
    }
    for (index, arg) in spec.extra_args.iter().enumerate() {
        if let Some(why) = safe_text::describe_forbidden(arg) {
            problems.push(Problem::new(
                Reason::InvalidArgument,
                format!("spec.extraArgs[{index}]"),
                format!("the argument {why}"),
            ));
        }
    }
}

/// `spec.args.NAME`, with a hostile name escaped and cut so the field stays one short line.
fn arg_field(name: &str) -> String {
    const MAX: usize = 64;
    let plain = !name.is_empty()
        && name.len() <= MAX
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_'));
    if plain {
        return ["spec.args.", name].concat();
    }
    let cut: String = name.chars().take(MAX).collect();
    let more = if cut.len() < name.len() { "…" } else { "" };
    format!("spec.args[{cut:?}{more}]")
}

/// Merged values that become option values in `tool.args` (`--bootstrap-server <value>`) must be
/// one clean argument; address lists must be what the client accepts.
pub fn check_option_values(
    tool: &Tool,
    views: &BTreeMap<Role, RoleView>,
    problems: &mut Vec<Problem>,
) {
    for (&role, view) in views {
        for option in tool.options_for(role) {
            let Some(contribution) = view.effective_value(&option.key) else {
                continue;
            };
            if let Some((at, c)) = contribution.value.inspect(safe_text::forbidden_char) {
                let why = safe_text::describe_char(at, c);
                problems.push(Problem::new(
                    Reason::InvalidValue,
                    contribution.source.clone(),
                    format!(
                        "{} (the value of --{} for the {role} client) {why}",
                        option.key, option.name
                    ),
                ));
            }
        }
        if matches!(role, Role::Broker | Role::Controller | Role::MirrorMaker) {
            continue;
        }
        for key in bootstrap::ADDRESS_KEYS {
            let Some(contribution) = view.effective_value(key) else {
                continue;
            };
            // A KIP-297 provider reference is resolved by the client itself.
            let providers = &view.providers;
            if contribution
                .value
                .inspect(|text| sensitive::has_provider_reference(text, providers))
            {
                continue;
            }
            if let Some(why) = contribution.value.inspect(bootstrap::address_list_problem) {
                problems.push(Problem::new(
                    Reason::InvalidValue,
                    contribution.source.clone(),
                    format!("{key} for the {role} client {why}"),
                ));
            }
        }
    }
}

/// A tool that falls back to a built-in address (`kafka-streams-application-reset`:
/// `localhost:9092`) when no layer sets one connects somewhere nobody chose: say so.
pub fn warn_default_address(
    tool: &Tool,
    views: &BTreeMap<Role, RoleView>,
    warnings: &mut Vec<Warning>,
) {
    for option in &tool.options {
        let Some(default) = &option.default else {
            continue;
        };
        if !bootstrap::ADDRESS_KEYS.contains(&option.key.as_str()) {
            continue;
        }
        let from_default = views
            .iter()
            .filter(|(role, _)| option.feeds(**role, tool))
            .filter_map(|(_, view)| view.effective_value(&option.key))
            .any(|c| c.layer == Layer::ToolDefaults);
        if from_default {
            warnings.push(Warning {
                key: option.key.clone(),
                role: None,
                reason: Reason::DefaultAddress,
                message: format!(
                    "no layer sets {}: {} falls back to its built-in --{} {default}",
                    option.key, tool.name, option.name
                ),
            });
        }
    }
}

/// Resolves references in the arguments [`build`] passes through as given. Problems go to
/// `source_problems`, as for any other unresolved reference.
pub fn resolve_plain(
    tool: &Tool,
    spec: &ToolConfigSpec,
    bindings: &Bindings,
    mode: Mode,
    source_problems: &mut Vec<Problem>,
    problems: &mut Vec<Problem>,
) -> PlainArgs {
    let mut plain = PlainArgs::default();
    let no_providers = BTreeSet::new();
    let mut resolve = |field: String, text: &str| -> Option<Value> {
        match reference::resolve(text, bindings, &no_providers, mode) {
            Ok(value) => {
                // A reference can bring a line break in: check what the tool would get (a raw
                // one is already reported by `check_args`).
                if safe_text::forbidden_char(text).is_none()
                    && let Some((at, c)) = value.inspect(safe_text::forbidden_char)
                {
                    problems.push(Problem::new(
                        Reason::InvalidArgument,
                        field,
                        format!(
                            "the value after resolving references {}",
                            safe_text::describe_char(at, c)
                        ),
                    ));
                    return None;
                }
                Some(value)
            }
            Err(error) => {
                source_problems.push(Problem::new(error.reason(), field, error.to_string()));
                None
            }
        }
    };
    for (name, value) in &spec.args {
        if tool.option(name).is_some() {
            continue;
        }
        match value {
            Scalar::Bool(true) => plain.options.push((name.clone(), None)),
            Scalar::Bool(false) => {}
            other => {
                if let Some(value) = resolve(arg_field(name), &other.to_text()) {
                    plain.options.push((name.clone(), Some(value)));
                }
            }
        }
    }
    for (index, arg) in spec.extra_args.iter().enumerate() {
        let field = format!("spec.extraArgs[{index}]");
        if let Some(value) = resolve(field.clone(), arg) {
            plain.extra.push((field, value));
        }
    }
    plain
}

/// The config-file option spelling for the Kafka release the tool runs with (KIP-1147).
fn config_file_option<'t>(tool: &'t Tool, kafka_version: &str) -> Option<&'t str> {
    let option = tool.config_file.as_ref()?;
    let since = &ToolCatalogue::get().command_config_since;
    match &option.legacy {
        Some(legacy) if !version_at_least(kafka_version, since) => Some(legacy),
        _ => Some(&option.option),
    }
}

/// Builds `tool.args`; `file_paths` are the mounted paths of the rendered files. A word that holds
/// Secret data stays Secret data: the caller decides whether it may be written.
pub fn build(
    tool: &'static Tool,
    views: &BTreeMap<Role, RoleView>,
    plain: &PlainArgs,
    file_paths: &[String],
    kafka_version: &str,
    warnings: &mut Vec<Warning>,
) -> Vec<Arg> {
    let mut args: Vec<Arg> = Vec::new();
    let word = |value: Value| Arg {
        argument: Cow::Borrowed(""),
        value,
    };
    let mut extra = plain.extra.iter();
    if tool.subcommand_first
        && let Some((field, subcommand)) = extra.next()
    {
        args.push(Arg {
            argument: Cow::Owned(field.clone()),
            value: subcommand.clone(),
        });
    }
    if tool.positional_config_file {
        args.extend(
            file_paths
                .iter()
                .map(|path| word(Value::from(path.as_str()))),
        );
    } else if let Some(option) = config_file_option(tool, kafka_version) {
        for path in file_paths {
            args.push(word(Value::from(["--", option].concat())));
            args.push(word(Value::from(path.as_str())));
        }
    }

    // Key-mapped options: the value a role ends up with, for the first role the option feeds.
    let merged = |option_roles: &dyn Fn(Role) -> bool, key: &str| {
        views
            .iter()
            .filter(|(role, _)| option_roles(**role))
            .find_map(|(_, view)| view.effective_value(key))
    };
    let mut emitted: BTreeSet<&str> = BTreeSet::new();
    let mut removed: BTreeSet<&str> = BTreeSet::new();
    let group_of = |name: &str| {
        tool.required
            .iter()
            .find(|g| g.len() > 1 && g.iter().any(|n| n == name))
    };
    for option in &tool.options {
        // Whether the option is passed at all is asked first: most options are not, and their
        // merged values need not be looked up.
        let required_alone = tool
            .required
            .iter()
            .any(|g| g.len() == 1 && g[0] == option.name);
        let in_group = group_of(&option.name);
        let needed =
            option.applied == Applied::AlwaysOverrides || required_alone || in_group.is_some();
        if !needed || removed.contains(option.key.as_str()) {
            continue;
        }
        let feeds = |role: Role| option.feeds(role, tool);
        let Some(value) = merged(&feeds, &option.key) else {
            continue;
        };
        if let Some(condition) = &option.only_when {
            let holds = match merged(&feeds, &condition.key) {
                Some(c) => c.value.inspect(|text| condition.holds(Some(text))),
                None => condition.holds(None),
            };
            if !holds {
                continue;
            }
        }
        if let Some(group) = in_group
            && group.iter().any(|n| emitted.contains(n.as_str()))
        {
            let chosen: Vec<&str> = group
                .iter()
                .map(String::as_str)
                .filter(|n| emitted.contains(n))
                .collect();
            warnings.push(Warning {
                key: option.key.clone(),
                role: None,
                reason: Reason::ConflictingKeys,
                message: format!(
                    "{} takes one of --{}; --{} is used, so {} is ignored by the tool",
                    tool.name,
                    group.join(" / --"),
                    chosen.join(", --"),
                    option.key
                ),
            });
            continue;
        }
        // Written once when the catalogue is read, borrowed for every evaluation.
        let argument = option.dashed();
        match &option.flag {
            Some(flag_value) => {
                if value.value.is(flag_value) {
                    args.push(word(Value::Plain(Cow::Borrowed(argument))));
                } else if !option.default.as_deref().is_some_and(|d| value.value.is(d)) {
                    warnings.push(Warning {
                        key: option.key.clone(),
                        role: None,
                        reason: Reason::ForcedByTool,
                        message: format!(
                            "{} sets {} with the flag --{} to {flag_value} or {}; the merged value from {} \
                             cannot take effect with today's tool",
                            tool.name,
                            option.key,
                            option.name,
                            option.default.as_deref().unwrap_or("its default"),
                            value.source
                        ),
                    });
                }
            }
            None => {
                args.push(word(Value::Plain(Cow::Borrowed(argument))));
                args.push(Arg {
                    argument: Cow::Borrowed(argument),
                    value: value.value.clone(),
                });
            }
        }
        emitted.insert(option.name.as_str());
        if let Some(key) = &option.removes {
            removed.insert(key.as_str());
        }
    }

    // Arguments that are not client properties, as given (references resolved).
    for (name, value) in &plain.options {
        let argument = ["--", name].concat();
        args.push(word(Value::from(argument.as_str())));
        if let Some(value) = value {
            args.push(Arg {
                argument: Cow::Owned(argument),
                value: value.clone(),
            });
        }
    }
    args.extend(extra.map(|(field, value)| Arg {
        argument: Cow::Owned(field.clone()),
        value: value.clone(),
    }));
    args
}
