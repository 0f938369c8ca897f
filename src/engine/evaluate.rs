//! The pipeline: sources → layers → references → checks → render. Pure: everything it needs is in
//! the [`Request`]; the operator and the CLI differ only in how they fill it.

use std::collections::{BTreeMap, BTreeSet};

use crate::engine::args;
use crate::engine::catalogue::configs::ConfigCatalogue;
use crate::engine::catalogue::tools::{Applied, OnlyWhen, Tool, ToolCatalogue, ToolOption};
use crate::engine::globals::{self, GlobalDefaults, role_entries};
use crate::engine::layers::{Contribution, Layer, Provenance, SecretOrigin};
use crate::engine::model::{Evaluation, Request, RoleView};
use crate::engine::outcome::{Problem, Reason, Shadowed, Warning};
use crate::engine::reference::{self, Bindings, Mode, ReferenceError};
use crate::engine::render;
use crate::engine::sources::{self, LoadedFile, SourceKind};
use crate::engine::spec::{
    COMMON, Precedence, ReferenceMode, Role, Scalar, SecretsMode, ToolConfigSpec, properties_label,
};
use crate::engine::suggest;
use crate::engine::validate;

/// A value before references are resolved.
struct Raw<'a> {
    key: &'a str,
    layer: Layer,
    source: String,
    text: String,
    file_secret: Option<(&'a str, &'a str)>,
    /// Set for values an option contributes only under a condition (`onlyWhen`).
    only_when: Option<&'a OnlyWhen>,
}

pub fn evaluate(req: &Request<'_>) -> Evaluation {
    let mut ev = Evaluation {
        referenced: sources::referenced_sources(req.spec),
        defaults_rendered: req.spec.output.as_ref().and_then(|o| o.render_defaults) == Some(true),
        ..Evaluation::default()
    };
    let catalogue = ToolCatalogue::get();
    let Some(tool) = catalogue.tool(&req.spec.tool) else {
        let hint = suggest::closest(&req.spec.tool, catalogue.names())
            .map(|s| format!("did you mean {s}? "))
            .unwrap_or_default();
        ev.problems.push(Problem::new(
            Reason::UnknownTool,
            "spec.tool",
            format!(
                "{:?} is not a tool of the catalogue; {hint}known tools: {}",
                req.spec.tool,
                catalogue.names().collect::<Vec<_>>().join(", ")
            ),
        ));
        return ev;
    };
    ev.tool = tool.name.clone();
    ev.roles = roles_of(tool, req.spec, &mut ev.problems);
    check_sections(tool, req.spec, &ev.roles, &mut ev.problems);
    args::check_args(tool, req.spec, &mut ev.problems);

    let files = sources::load_files(
        req.spec,
        req.namespace,
        req.sources,
        &mut ev.source_problems,
        &mut ev.warnings,
    );
    let bindings = sources::bindings(
        req.spec,
        req.namespace,
        req.sources,
        &mut ev.source_problems,
    );

    let mut applied: Vec<&GlobalDefaults> = Vec::new();
    for global in globals::select(req.globals, &tool.name, req.namespace_labels) {
        let problems = global.problems();
        if problems.is_empty() {
            applied.push(global);
            ev.globals_applied.push(global.name.clone());
        } else {
            ev.warnings.push(Warning {
                key: String::new(),
                role: None,
                reason: Reason::GlobalDefaultsInvalid,
                message: format!(
                    "GlobalClientDefaults {} selects this config but is invalid and was not applied: {}",
                    global.name,
                    problems.iter().map(ToString::to_string).collect::<Vec<_>>().join("; ")
                ),
            });
        }
    }

    let mode = match req.spec.references() {
        ReferenceMode::Strict => Mode::Strict,
        ReferenceMode::Lenient => Mode::Lenient,
    };
    for &role in &ev.roles {
        let raws = collect(tool, req.spec, role, &files, &applied, &mut ev.problems);
        let view = resolve(role, raws, &bindings, mode, &mut ev.source_problems);
        ev.views.insert(role, view);
    }

    choose_one_connection(tool, &mut ev.views, &mut ev.warnings);
    if req.spec.output().secrets() == SecretsMode::Deferred {
        for view in ev.views.values_mut() {
            declare_deferred_providers(view);
        }
    }

    for (&role, view) in &ev.views {
        check_override_policy(role, view, &applied, &mut ev.problems);
        warn_forced_by_tool(tool, req.spec.precedence(), role, view, &mut ev.warnings);
        warn_enforced(role, view, &mut ev.warnings);
        validate::check_role(role, view, &mut ev.problems, &mut ev.warnings);
        ev.shadowed.extend(shadowed(role, view));
    }
    check_required(tool, req.spec, &ev.views, &mut ev.problems);

    ev.problems
        .sort_by(|a, b| (a.reason, &a.field, &a.message).cmp(&(b.reason, &b.field, &b.message)));
    ev.problems.dedup();
    ev.source_problems.dedup();
    ev.warnings.sort();
    ev.warnings.dedup();
    if ev.is_valid() {
        match render::render(req, tool, &ev.views, &mut ev.warnings) {
            Ok(rendered) => ev.rendered = Some(rendered),
            Err(problems) => ev.problems.extend(problems),
        }
    }
    ev
}

/// The roles to render: the tool's, or for `client`/`kafka-server` the ones the spec selects.
fn roles_of(tool: &Tool, spec: &ToolConfigSpec, problems: &mut Vec<Problem>) -> Vec<Role> {
    let names = || {
        tool.roles
            .iter()
            .map(|r| r.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    if tool.select_roles {
        if spec.roles.is_empty() {
            problems.push(Problem::new(
                Reason::UnknownRole,
                "spec.roles",
                format!("{} needs spec.roles: one or more of {}", tool.name, names()),
            ));
            return Vec::new();
        }
        let mut roles = Vec::new();
        for role in &spec.roles {
            if tool.roles.contains(role) {
                if !roles.contains(role) {
                    roles.push(*role);
                }
            } else {
                problems.push(Problem::new(
                    Reason::UnknownRole,
                    "spec.roles",
                    format!("{} has no role {role}; use {}", tool.name, names()),
                ));
            }
        }
        return roles;
    }
    if !spec.roles.is_empty() && spec.roles.iter().any(|r| !tool.roles.contains(r)) {
        problems.push(Problem::new(
            Reason::UnknownRole,
            "spec.roles",
            format!(
                "{} builds {}; spec.roles is only needed for client and kafka-server",
                tool.name,
                names()
            ),
        ));
    }
    tool.roles.clone()
}

/// Every `properties` section and file role must be `common` or a role of the tool.
fn check_sections(tool: &Tool, spec: &ToolConfigSpec, roles: &[Role], problems: &mut Vec<Problem>) {
    let names = || {
        roles
            .iter()
            .map(|r| r.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    for section in spec.properties.keys() {
        let known = section == COMMON || Role::parse(section).is_some_and(|r| roles.contains(&r));
        if !known {
            problems.push(Problem::new(
                Reason::UnknownRole,
                format!("spec.properties.{section}"),
                format!(
                    "{} renders {}; use common or one of those",
                    tool.name,
                    names()
                ),
            ));
        }
    }
    for (index, file) in spec.config_files.iter().enumerate() {
        if let Some(role) = file.role
            && !roles.contains(&role)
        {
            problems.push(Problem::new(
                Reason::UnknownRole,
                format!("spec.configFiles[{index}].role"),
                format!("{} renders {}, not {role}", tool.name, names()),
            ));
        }
    }
}

/// The value an option puts into its key when given as `value`, or `None` when it puts nothing.
pub fn option_value(option: &ToolOption, value: &Scalar) -> Result<Option<String>, String> {
    if let Some(flag_value) = &option.flag {
        return match value {
            Scalar::Bool(true) => Ok(Some(flag_value.clone())),
            Scalar::Bool(false) => Ok(None),
            Scalar::Str(s) if s == "true" || s.is_empty() => Ok(Some(flag_value.clone())),
            Scalar::Str(s) if s == "false" => Ok(None),
            _ => Err(format!("--{} is a flag: use true or false", option.name)),
        };
    }
    if let Some(when_empty) = &option.when_empty {
        match value {
            Scalar::Bool(true) => return Ok(Some(when_empty.clone())),
            Scalar::Str(s) if s.is_empty() => return Ok(Some(when_empty.clone())),
            _ => {}
        }
    }
    Ok(Some(value.to_text()))
}

/// The raw values of every layer for one role, lowest precedence first.
fn collect<'a>(
    tool: &'a Tool,
    spec: &'a ToolConfigSpec,
    role: Role,
    files: &'a [LoadedFile],
    applied: &[&'a GlobalDefaults],
    problems: &mut Vec<Problem>,
) -> Vec<Raw<'a>> {
    let legacy = spec.precedence() == Precedence::Legacy;
    let mut raws: Vec<Raw<'a>> = Vec::new();
    let push = |raws: &mut Vec<Raw<'a>>, key: &'a str, layer, source: String, text: String| {
        raws.push(Raw {
            key,
            layer,
            source,
            text,
            file_secret: None,
            only_when: None,
        })
    };
    // Values an option contributes carry the option's condition.
    let push_option =
        |raws: &mut Vec<Raw<'a>>, option: &'a ToolOption, layer, source: String, text: String| {
            raws.push(Raw {
                key: &option.key,
                layer,
                source,
                text,
                file_secret: None,
                only_when: option.only_when.as_ref(),
            })
        };

    push_globals(&mut raws, applied, role, Layer::ClusterDefaults);

    if let Some(defaults) = tool.tool_defaults.get(&role) {
        for (key, value) in defaults {
            push(
                &mut raws,
                key,
                Layer::ToolDefaults,
                tool.default_label(),
                value.clone(),
            );
        }
    }
    for option in tool.options_for(role) {
        if let Some(default) = &option.default
            && !matches!(
                option.applied,
                Applied::ExplicitOverrides | Applied::WhenAbsent
            )
        {
            push_option(
                &mut raws,
                option,
                Layer::ToolDefaults,
                option.default_label(),
                default.clone(),
            );
        }
    }

    let mut arg_values: Vec<(&'a ToolOption, String)> = Vec::new();
    for option in tool.options_for(role) {
        if let Some(value) = spec.args.get(&option.name) {
            match option_value(option, value) {
                Ok(Some(text)) => arg_values.push((option, text)),
                Ok(None) => {}
                Err(message) => problems.push(Problem::new(
                    Reason::InvalidArgument,
                    format!("spec.args.{}", option.name),
                    message,
                )),
            }
        }
    }
    // Legacy: options the tool puts before loading the file, or only when the key is absent,
    // lose to the file.
    let is_before_file =
        |o: &ToolOption| legacy && matches!(o.applied, Applied::BeforeFile | Applied::WhenAbsent);
    for (option, text) in arg_values.iter().filter(|(o, _)| is_before_file(o)) {
        push_option(
            &mut raws,
            option,
            Layer::Args,
            option.args_label(),
            text.clone(),
        );
    }

    for file in files {
        let file_role = spec.config_files.get(file.index).and_then(|f| f.role);
        if file_role.is_some_and(|r| r != role) {
            continue;
        }
        let file_label = file.source_file();
        let file_secret = (file.kind == SourceKind::Secret).then_some((&*file.object, &*file.key));
        for entry in &file.entries {
            raws.push(Raw {
                key: &entry.key,
                layer: Layer::ConfigFiles,
                source: format!("{file_label}:{}", entry.line),
                text: entry.value.clone(),
                file_secret,
                only_when: None,
            });
        }
    }

    for (section, key, value) in role_entries(&spec.properties, role) {
        let source = match properties_label(section) {
            Some(label) => label.to_string(),
            None => format!("properties.{section}"),
        };
        raws.push(Raw {
            key,
            layer: Layer::Properties,
            source,
            text: value.to_text(),
            file_secret: None,
            only_when: None,
        });
    }

    for (option, text) in arg_values.iter().filter(|(o, _)| !is_before_file(o)) {
        push_option(
            &mut raws,
            option,
            Layer::Args,
            option.args_label(),
            text.clone(),
        );
    }

    push_globals(&mut raws, applied, role, Layer::Enforced);

    if legacy {
        if let Some(forced) = tool.forced.get(&role) {
            for (key, value) in forced {
                push(
                    &mut raws,
                    key,
                    Layer::ForcedByTool,
                    tool.forced_label(),
                    value.clone(),
                );
            }
        }
        for option in tool
            .options_for(role)
            .filter(|o| o.applied == Applied::AlwaysOverrides)
        {
            let given = arg_values
                .iter()
                .find(|(o, _)| o.name == option.name)
                .map(|(_, t)| t.clone());
            if let Some(text) = given.or_else(|| option.default.clone()) {
                let source = option.forced_label(&tool.name);
                push_option(&mut raws, option, Layer::ForcedByTool, source, text);
            }
        }
    }
    // Drop what a conditional option contributed when its condition does not hold.
    let holds: Vec<bool> = raws
        .iter()
        .map(|raw| {
            raw.only_when.is_none_or(|condition| {
                let value = raws
                    .iter()
                    .rev()
                    .find(|r| r.key == condition.key && r.only_when.is_none());
                condition.holds(value.map(|r| r.text.as_str()))
            })
        })
        .collect();
    let mut keep = holds.into_iter();
    raws.retain(|_| keep.next().unwrap_or(true));
    raws
}

/// Layer 1 (`defaults`) or 6 (`enforced`) of every applied GlobalClientDefaults, in order.
fn push_globals<'a>(
    raws: &mut Vec<Raw<'a>>,
    applied: &[&'a GlobalDefaults],
    role: Role,
    layer: Layer,
) {
    for global in applied.iter().filter(|g| g.applies_to_role(role)) {
        let (props, field) = match layer {
            Layer::Enforced => (&global.spec.enforced, "enforced"),
            _ => (&global.spec.defaults, "defaults"),
        };
        for (section, key, value) in role_entries(props, role) {
            raws.push(Raw {
                key,
                layer,
                source: format!("GlobalClientDefaults {} {field}.{section}", global.name),
                text: value.to_text(),
                file_secret: None,
                only_when: None,
            });
        }
    }
}

/// A raw value with its references resolved, taking its text and source out of `raw`; the
/// problem when a reference does not resolve.
fn contribution(
    raw: &mut Raw<'_>,
    bindings: &Bindings,
    providers: &BTreeSet<String>,
    mode: Mode,
) -> Result<Contribution, Problem> {
    let text = std::mem::take(&mut raw.text);
    let source = std::mem::take(&mut raw.source);
    let resolved = match reference::resolve_owned(text, bindings, providers, mode) {
        Ok(resolved) => resolved,
        Err(error) => {
            let reason = match error {
                ReferenceError::Unresolved { .. } => Reason::UnresolvedReference,
                ReferenceError::Unterminated { .. } => Reason::ParseError,
            };
            return Err(Problem::new(
                reason,
                source,
                format!("{}: {error}", raw.key),
            ));
        }
    };
    let secret = match raw.file_secret {
        Some((secret, file_key)) => Some(SecretOrigin::File {
            secret: secret.to_string(),
            file_key: file_key.to_string(),
            property: raw.key.to_string(),
        }),
        None if resolved.is_secret() => Some(SecretOrigin::Parts(resolved.secret_parts)),
        None => None,
    };
    Ok(Contribution {
        layer: raw.layer,
        source,
        value: resolved.value,
        secret,
    })
}

/// Resolves references and builds each key's chain, highest precedence first, ending with Kafka's
/// default (layer 0, for `explain`) when the key has one.
fn resolve(
    role: Role,
    mut raws: Vec<Raw<'_>>,
    bindings: &Bindings,
    mode: Mode,
    problems: &mut Vec<Problem>,
) -> RoleView {
    // The providers in force are those of the config.providers value that wins.
    let providers = raws
        .iter()
        .rev()
        .find(|r| r.key == "config.providers")
        .and_then(|r| reference::resolve(&r.text, bindings, &BTreeSet::new(), Mode::Lenient).ok())
        .map(|r| reference::provider_names(&r.value))
        .unwrap_or_default();
    // Each key's values, lowest layer first.
    let mut by_key: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (at, raw) in raws.iter().enumerate() {
        by_key.entry(raw.key).or_default().push(at);
    }
    let set = ConfigCatalogue::get().set_for(role);
    let mut keys = BTreeMap::new();
    // Values whose references do not resolve, reported in the order of the layers.
    let mut failures: Vec<(usize, Problem)> = Vec::new();
    for (key, positions) in by_key {
        let mut chain = Vec::new();
        for &at in positions.iter().rev() {
            match contribution(&mut raws[at], bindings, &providers, mode) {
                Ok(contribution) => chain.push(contribution),
                Err(problem) => failures.push((at, problem)),
            }
        }
        if chain.is_empty() {
            continue;
        }
        if let Some(default) = set.and_then(|set| set.get(key)?.default.as_ref()) {
            chain.push(Contribution::new(
                Layer::KafkaDefaults,
                "Kafka default",
                default.clone(),
            ));
        }
        let key = key.to_string();
        keys.insert(key.clone(), Provenance { key, chain });
    }
    failures.sort_by_key(|(at, _)| *at);
    problems.extend(failures.into_iter().map(|(_, problem)| problem));
    RoleView { keys, providers }
}

fn check_override_policy(
    role: Role,
    view: &RoleView,
    applied: &[&GlobalDefaults],
    problems: &mut Vec<Problem>,
) {
    for global in applied.iter().filter(|g| g.applies_to_role(role)) {
        let Some(policy) = &global.spec.override_policy else {
            continue;
        };
        let refused: Vec<String> = view
            .keys
            .values()
            .filter(|p| !policy.allows(&p.key))
            .filter_map(|p| {
                let sources: Vec<String> = p
                    .chain
                    .iter()
                    .filter(|c| c.layer.is_user_layer())
                    .map(|c| c.source.to_string())
                    .collect();
                (!sources.is_empty()).then(|| format!("{} ({})", p.key, sources.join(", ")))
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

fn warn_forced_by_tool(
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
        if user.layer == Layer::ToolDefaults || &user.value == forced_value {
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
}

fn warn_enforced(role: Role, view: &RoleView, warnings: &mut Vec<Warning>) {
    for provenance in view.keys.values() {
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
            && winner.value != below.value
        {
            warnings.push(Warning {
                key: provenance.key.clone(),
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
fn check_required(
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

fn shadowed(role: Role, view: &RoleView) -> Vec<Shadowed> {
    view.keys
        .values()
        .filter_map(|p| {
            let mut chain = p.chain.iter().filter(|c| c.layer != Layer::KafkaDefaults);
            let winner = chain.next()?;
            let over: Vec<String> = chain.map(Contribution::shadow_label).collect();
            (!over.is_empty()).then(|| Shadowed {
                key: p.key.to_string(),
                role,
                winner: winner.layer.as_str().to_string(),
                over,
            })
        })
        .collect()
}

/// Tools connect through one of `--bootstrap-server` / `--bootstrap-controller`: when both keys are
/// set, the one from the higher layer is used and the other is left out of the file (the tool
/// drops it, or the client refuses both), with a warning.
fn choose_one_connection(
    tool: &Tool,
    views: &mut BTreeMap<Role, RoleView>,
    warnings: &mut Vec<Warning>,
) {
    for group in tool.required.iter().filter(|g| g.len() > 1) {
        let options: Vec<&ToolOption> = group.iter().filter_map(|n| tool.option(n)).collect();
        if options.len() < 2 {
            continue;
        }
        for (role, view) in views.iter_mut() {
            let present: Vec<(&ToolOption, Layer, String)> = options
                .iter()
                .filter(|o| o.feeds(*role, tool))
                .filter_map(|o| {
                    view.file_value(&o.key)
                        .map(|c| (*o, c.layer, c.source.clone()))
                })
                .collect();
            let Some((chosen, _, chosen_source)) = present
                .iter()
                .max_by(|a, b| a.1.cmp(&b.1).then(b.0.name.cmp(&a.0.name)))
                .cloned()
            else {
                continue;
            };
            for (dropped, _, source) in present.iter().filter(|(o, _, _)| o.name != chosen.name) {
                view.keys.remove(&dropped.key);
                warnings.push(Warning {
                    key: dropped.key.clone(),
                    role: Some(*role),
                    reason: Reason::ConflictingKeys,
                    message: format!(
                        "{} connects through one of --{}: {} (from {chosen_source}) is used, so {} (from {source}) is left out",
                        tool.name,
                        group.join(" / --"),
                        chosen.key,
                        dropped.key
                    ),
                });
            }
        }
    }
}

/// `output.secrets: Deferred` needs Kafka's directory and file config providers; declaring them
/// here (layer `operator`) makes `explain` show every key the file will hold.
fn declare_deferred_providers(view: &mut RoleView) {
    let (mut dir, mut file) = (false, false);
    for (_, contribution) in view.file_entries() {
        match contribution.secret.as_ref() {
            Some(SecretOrigin::Parts(_)) => dir = true,
            Some(SecretOrigin::File { .. }) => file = true,
            None => {}
        }
    }
    if !dir && !file {
        return;
    }
    let mut names: Vec<String> = view
        .file_value("config.providers")
        .map(|c| {
            c.value
                .split(',')
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
                .collect()
        })
        .unwrap_or_default();
    let source = "output.secrets: Deferred";
    for (used, (name, class)) in [
        (dir, crate::engine::render::DIRECTORY_PROVIDER),
        (file, crate::engine::render::FILE_PROVIDER),
    ] {
        if !used {
            continue;
        }
        if !names.iter().any(|n| n == name) {
            names.push(name.to_string());
        }
        let class_key = format!("config.providers.{name}.class");
        if view.file_value(&class_key).is_none() {
            add_operator_value(view, &class_key, class, source);
        }
        view.providers.insert(name.to_string());
    }
    let joined = names.join(",");
    if view
        .file_value("config.providers")
        .is_none_or(|c| c.value != joined)
    {
        add_operator_value(view, "config.providers", &joined, source);
    }
}

fn add_operator_value(view: &mut RoleView, key: &str, value: &str, source: &str) {
    let provenance = view
        .keys
        .entry(key.to_string())
        .or_insert_with(|| Provenance {
            key: key.to_string(),
            chain: Vec::new(),
        });
    let at = provenance
        .chain
        .iter()
        .position(|c| c.layer != Layer::ForcedByTool)
        .unwrap_or(provenance.chain.len());
    provenance
        .chain
        .insert(at, Contribution::new(Layer::Operator, source, value));
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::evaluate;
    use crate::engine::model::Request;
    use crate::engine::outcome::Reason;
    use crate::engine::sources::{SourceData, SourceSet};
    use crate::engine::spec::ToolConfigSpec;

    #[test]
    fn unresolved_references_are_reported_in_the_order_of_the_layers_not_of_the_keys() {
        let spec: ToolConfigSpec = serde_json::from_value(serde_json::json!({
            "tool": "kafka-console-producer",
            "args": {"bootstrap-server": "kafka:9092", "topic": "orders"},
            "properties": {"producer": {"a.key": "${env.C}"}},
            "configFiles": [{"configMapKeyRef": {"name": "base", "key": "client.properties"}}]
        }))
        .unwrap_or_default();
        let mut sources = SourceSet::default();
        sources.config_maps.insert(
            "base".into(),
            SourceData {
                data: BTreeMap::from([(
                    "client.properties".to_string(),
                    b"z.key=${env.A}\nb.key=${env.B}\na.key=${env.D}\n".to_vec(),
                )]),
            },
        );
        let labels = BTreeMap::new();
        let ev = evaluate(&Request {
            name: "p",
            namespace: "ns",
            spec: &spec,
            namespace_labels: &labels,
            globals: &[],
            sources: &sources,
        });
        let found: Vec<(Reason, &str, &str)> = ev
            .source_problems
            .iter()
            .map(|p| {
                (
                    p.reason,
                    p.field.as_str(),
                    p.message.split(':').next().unwrap_or(""),
                )
            })
            .collect();
        let file = "configFiles[0] base/client.properties";
        assert_eq!(
            found,
            [
                (Reason::UnresolvedReference, &*format!("{file}:1"), "z.key"),
                (Reason::UnresolvedReference, &*format!("{file}:2"), "b.key"),
                (Reason::UnresolvedReference, &*format!("{file}:3"), "a.key"),
                (Reason::UnresolvedReference, "properties.producer", "a.key"),
            ]
        );
    }
}
