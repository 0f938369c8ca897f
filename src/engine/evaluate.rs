//! The pipeline: sources → layers → references → checks → render. Pure: everything it needs is in
//! the [`Request`]; the operator and the CLI differ only in how they fill it.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use crate::engine::args;
use crate::engine::catalogue::configs::{ConfigCatalogue, ConfigKey};
use crate::engine::catalogue::tools::{Applied, OnlyWhen, Tool, ToolCatalogue, ToolOption};
use crate::engine::globals::{self, GlobalDefaults, role_entries};
use crate::engine::layers::{Chain, Contribution, KeyMap, Layer, Provenance, SecretOrigin, Source};
use crate::engine::outcome::{Problem, Reason, Shadowed, Text, Warning};
use crate::engine::properties::CowEntry;
use crate::engine::reference::{self, Bindings, Mode, ReferenceError};
use crate::engine::render::{self, Rendered};
use crate::engine::sensitive;
use crate::engine::sources::{self, LoadedFile, SourceKind, SourceRef, Sources};
use crate::engine::spec::{
    COMMON, Precedence, ReferenceMode, Role, Scalar, SecretsMode, ToolConfigSpec, properties_label,
};
use crate::engine::suggest;
use crate::engine::text_order;
use crate::engine::validate;

/// Everything one evaluation needs.
pub struct Request<'a> {
    pub name: &'a str,
    pub namespace: &'a str,
    pub spec: &'a ToolConfigSpec,
    /// Labels of the config's namespace (for GlobalClientDefaults namespace selectors).
    pub namespace_labels: &'a BTreeMap<String, String>,
    /// Every GlobalClientDefaults in the cluster; the engine selects.
    pub globals: &'a [GlobalDefaults],
    /// ConfigMaps and Secrets of the config's namespace.
    pub sources: &'a dyn Sources,
}

/// One role's merged configuration: every key with its provenance chain.
#[derive(Debug, Clone, Default)]
pub struct RoleView {
    pub keys: KeyMap,
    /// Provider names declared by the merged `config.providers`.
    pub providers: BTreeSet<String>,
}

impl RoleView {
    /// The value written to the file: the highest contribution that is not a Legacy forced value
    /// (the tool applies those itself).
    pub fn file_value(&self, key: &str) -> Option<&Contribution> {
        self.keys.get(key).and_then(file_contribution)
    }

    /// The value the tool ends up with.
    pub fn effective_value(&self, key: &str) -> Option<&Contribution> {
        self.keys
            .get(key)
            .map(Provenance::winner)
            .filter(|c| c.layer != Layer::KafkaDefaults)
    }

    /// Keys written to the file, with the contribution that wins there.
    pub fn file_entries(&self) -> impl Iterator<Item = (&str, &Contribution)> {
        self.keys
            .values()
            .filter_map(|p| file_contribution(p).map(|c| (p.key.as_str(), c)))
    }
}

/// Kafka's definition of each key of a [`RoleView`], in the view's key order (`None`: the role's
/// config set has no such key). Looked up once per key and shared by the steps that need it
/// (Kafka's default, validation, "is it a password"), each of which looked it up again before.
pub type KeyDefs = Vec<Option<&'static ConfigKey>>;

/// The definitions of every key of `view`.
fn key_defs(role: Role, view: &RoleView) -> KeyDefs {
    let set = ConfigCatalogue::get().set_for(role);
    view.keys
        .keys()
        .map(|key| set.and_then(|set| set.get(key)))
        .collect()
}

/// The definitions of `view`'s keys from `defs`, or looked up again when `defs` does not hold
/// one per key (the view changed after they were taken).
pub(crate) fn defs_for<'d>(
    role: Role,
    view: &RoleView,
    defs: &'d BTreeMap<Role, KeyDefs>,
) -> Cow<'d, [Option<&'static ConfigKey>]> {
    match defs.get(&role) {
        Some(known) if known.len() == view.keys.len() => Cow::Borrowed(known),
        _ => Cow::Owned(key_defs(role, view)),
    }
}

pub(crate) fn file_contribution(provenance: &Provenance) -> Option<&Contribution> {
    provenance
        .chain
        .iter()
        .find(|c| c.layer != Layer::ForcedByTool && c.layer != Layer::KafkaDefaults)
}

/// The result of evaluating one KafkaToolConfig.
#[derive(Debug, Clone, Default)]
pub struct Evaluation {
    /// Canonical tool name (empty when the tool is unknown).
    pub tool: String,
    pub roles: Vec<Role>,
    /// Problems reading sources (`SourcesResolved=False`).
    pub source_problems: Vec<Problem>,
    /// Problems with the merged configuration (`Valid=False`).
    pub problems: Vec<Problem>,
    pub warnings: Vec<Warning>,
    pub views: BTreeMap<Role, RoleView>,
    pub shadowed: Vec<Shadowed>,
    /// GlobalClientDefaults applied, in application order.
    pub globals_applied: Vec<String>,
    /// ConfigMaps and Secrets the spec references.
    pub referenced: Vec<SourceRef>,
    /// Present only when there are no problems.
    pub rendered: Option<Rendered>,
    /// `output.renderDefaults`: Kafka's defaults of unset keys are written into the files too.
    pub defaults_rendered: bool,
}

impl Evaluation {
    pub fn is_valid(&self) -> bool {
        self.problems.is_empty() && self.source_problems.is_empty()
    }

    /// Whether a value shown to people must be redacted.
    pub fn is_sensitive(&self, role: Role, key: &str, contribution: &Contribution) -> bool {
        contribution.is_secret_sourced() || sensitive::is_password_key(role, key)
    }
}

/// A value before references are resolved.
struct Raw<'a> {
    key: &'a str,
    layer: Layer,
    source: Source,
    /// Borrowed from the loaded files for their values.
    text: Cow<'a, str>,
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

    let mut files = sources::load_files(
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
                key: Text::default(),
                role: None,
                reason: Reason::GlobalDefaultsInvalid,
                message: format!(
                    "GlobalClientDefaults {} selects this config but is invalid and was not applied: {}",
                    global.name,
                    problems.iter().map(ToString::to_string).collect::<Vec<_>>().join("; ")
                ).into(),
            });
        }
    }

    let mode = match req.spec.references() {
        ReferenceMode::Strict => Mode::Strict,
        ReferenceMode::Lenient => Mode::Lenient,
    };
    let mut defs: BTreeMap<Role, KeyDefs> = BTreeMap::new();
    for (at, &role) in ev.roles.iter().enumerate() {
        // The last role to read the files takes their values instead of copying them.
        let take_values = at + 1 == ev.roles.len();
        let raws = collect(
            tool,
            req.spec,
            role,
            (&mut files, take_values),
            &applied,
            &mut ev.problems,
        );
        let (view, view_defs) = resolve(role, raws, &bindings, mode, &mut ev.source_problems);
        ev.views.insert(role, view);
        defs.insert(role, view_defs);
    }

    let mut keys_changed = choose_one_connection(tool, &mut ev.views, &mut ev.warnings);
    if req.spec.output().secrets() == SecretsMode::Deferred {
        for view in ev.views.values_mut() {
            declare_deferred_providers(view);
        }
        keys_changed = true;
    }
    if keys_changed {
        for (&role, view) in &ev.views {
            defs.insert(role, key_defs(role, view));
        }
    }

    for (&role, view) in &ev.views {
        check_override_policy(role, view, &applied, &mut ev.problems);
        warn_forced_by_tool(tool, req.spec.precedence(), role, view, &mut ev.warnings);
        warn_enforced(role, view, &mut ev.warnings);
        let view_defs = defs_for(role, view, &defs);
        validate::check_role(role, view, &view_defs, &mut ev.problems, &mut ev.warnings);
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
        match render::render(req, tool, &ev.views, &defs, &mut ev.warnings) {
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
    (files, take_values): (&'a mut [LoadedFile<'_>], bool),
    applied: &[&'a GlobalDefaults],
    problems: &mut Vec<Problem>,
) -> Vec<Raw<'a>> {
    let legacy = spec.precedence() == Precedence::Legacy;
    // Room for the values of the files, of every section of the spec and of the tool, so the
    // vector of a large config is not copied while it grows (globals may still add a few).
    let capacity = files.iter().map(|f| f.entries.len()).sum::<usize>()
        + spec.properties.values().map(BTreeMap::len).sum::<usize>()
        + spec.args.len()
        + tool.options.len()
        + tool.tool_defaults.get(&role).map_or(0, BTreeMap::len)
        + tool.forced.get(&role).map_or(0, BTreeMap::len);
    let mut raws: Vec<Raw<'a>> = Vec::with_capacity(capacity);
    let push = |raws: &mut Vec<Raw<'a>>, key: &'a str, layer, source: Source, text: String| {
        raws.push(Raw {
            key,
            layer,
            source,
            text: Cow::Owned(text),
            file_secret: None,
            only_when: None,
        })
    };
    // Values an option contributes carry the option's condition.
    let push_option =
        |raws: &mut Vec<Raw<'a>>, option: &'a ToolOption, layer, source: Source, text: String| {
            raws.push(Raw {
                key: &option.key,
                layer,
                source,
                text: Cow::Owned(text),
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

    for file in files.iter_mut() {
        let file_role = spec.config_files.get(file.index).and_then(|f| f.role);
        if file_role.is_some_and(|r| r != role) {
            continue;
        }
        let file_label = file.source_file();
        let LoadedFile {
            kind,
            object,
            key: file_key,
            entries,
            ..
        } = file;
        let file_secret = (*kind == SourceKind::Secret).then_some((&**object, &**file_key));
        for CowEntry { key, value, line } in entries.iter_mut() {
            let text = if take_values {
                std::mem::take(value)
            } else {
                Cow::Borrowed(&**value)
            };
            raws.push(Raw {
                key,
                layer: Layer::ConfigFiles,
                source: Source::line(&file_label, *line),
                text,
                file_secret,
                only_when: None,
            });
        }
    }

    // The entries of one section share its label.
    let mut section_source: Option<(&str, Source)> = None;
    for (section, key, value) in role_entries(&spec.properties, role) {
        let source = match &section_source {
            Some((name, source)) if *name == section => source.clone(),
            _ => {
                let source = match properties_label(section) {
                    Some(label) => Source::fixed(label),
                    None => Source::from(format!("properties.{section}")),
                };
                section_source = Some((section, source.clone()));
                source
            }
        };
        raws.push(Raw {
            key,
            layer: Layer::Properties,
            source,
            text: Cow::Owned(value.to_text()),
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
                condition.holds(value.map(|r| &*r.text))
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
                source: format!("GlobalClientDefaults {} {field}.{section}", global.name).into(),
                text: Cow::Owned(value.to_text()),
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
    let source = std::mem::replace(&mut raw.source, Source::fixed(""));
    let resolved = match reference::resolve_owned(text.into_owned(), bindings, providers, mode) {
        Ok(resolved) => resolved,
        Err(error) => {
            let reason = match error {
                ReferenceError::Unresolved { .. } => Reason::UnresolvedReference,
                ReferenceError::Unterminated { .. } => Reason::ParseError,
            };
            return Err(Problem::new(
                reason,
                source.to_string(),
                format!("{}: {error}", raw.key),
            ));
        }
    };
    let secret = match raw.file_secret {
        Some((secret, file_key)) => Some(Box::new(SecretOrigin::File {
            secret: secret.to_string(),
            file_key: file_key.to_string(),
            property: raw.key.to_string(),
        })),
        None if resolved.is_secret() => Some(Box::new(SecretOrigin::Parts(resolved.secret_parts))),
        None => None,
    };
    Ok(Contribution {
        layer: raw.layer,
        source,
        value: resolved.value,
        secret,
    })
}

/// Resolves references and builds each key's chain.
fn resolve(
    role: Role,
    raws: Vec<Raw<'_>>,
    bindings: &Bindings,
    mode: Mode,
    problems: &mut Vec<Problem>,
) -> (RoleView, KeyDefs) {
    // The providers in force are those of the config.providers value that wins.
    let providers = raws
        .iter()
        .rev()
        .find(|r| r.key == "config.providers")
        .and_then(|r| reference::resolve(&r.text, bindings, &BTreeSet::new(), Mode::Lenient).ok())
        .map(|r| reference::provider_names(&r.value))
        .unwrap_or_default();
    // Grouped by key (ties keep their order: each key's values lowest layer first), each chain
    // written highest first: the map is built from sorted keys in one pass instead of a tree
    // insert per value, and each value is resolved straight into its chain. Sorting (key,
    // position) pairs moves 24 bytes per step instead of a value; the stable sort keeps ties in
    // order and makes use of runs that are already sorted. Each chain is allocated once at its
    // final length: the key's values and Layer 0, Kafka's default for `explain`, from the key's
    // definition, which is looked up once here and kept for validation and rendering. The keys
    // are written into one buffer that every provenance's key is a part of: one allocation for
    // the role's keys instead of one per key.
    let mut raws = raws;
    let mut keys_in_order: Vec<(&str, usize)> = raws
        .iter()
        .enumerate()
        .map(|(at, raw)| (raw.key, at))
        .collect();
    keys_in_order.sort_by(|a, b| text_order::compare(a.0, b.0));
    let mut runs: Vec<(&str, usize)> = Vec::with_capacity(keys_in_order.len());
    let mut key_bytes = 0;
    let mut rest = &keys_in_order[..];
    while let Some(&(key, _)) = rest.first() {
        let run = rest
            .iter()
            .position(|(k, _)| !text_order::equal(k, key))
            .unwrap_or(rest.len());
        runs.push((key, run));
        key_bytes += key.len();
        rest = &rest[run..];
    }
    let mut buffer = String::with_capacity(key_bytes);
    for (key, _) in &runs {
        buffer.push_str(key);
    }
    let buffer = Arc::new(buffer);
    let set = ConfigCatalogue::get().set_for(role);
    let mut grouped: Vec<Provenance> = Vec::with_capacity(runs.len());
    let mut defs: KeyDefs = Vec::with_capacity(runs.len());
    // Values whose references do not resolve, reported in the order of the layers.
    let mut failures: Vec<(usize, Problem)> = Vec::new();
    let (mut rest, mut key_start) = (&keys_in_order[..], 0);
    for (key, run) in runs {
        let (values, after) = rest.split_at(run);
        rest = after;
        let key_range = key_start..key_start + key.len();
        key_start = key_range.end;
        let def = set.and_then(|set| set.get(key));
        let default = def.and_then(|def| def.default.as_ref());
        let mut chain = Chain::with_capacity(values.len() + usize::from(default.is_some()));
        for &(_, at) in values.iter().rev() {
            let Some(raw) = raws.get_mut(at) else {
                continue;
            };
            match contribution(raw, bindings, &providers, mode) {
                Ok(contribution) => chain.push(contribution),
                Err(problem) => failures.push((at, problem)),
            }
        }
        if chain.is_empty() {
            continue;
        }
        if let Some(default) = default {
            chain.push(Contribution::new(
                Layer::KafkaDefaults,
                Source::fixed("Kafka default"),
                default.clone(),
            ));
        }
        grouped.push(Provenance {
            key: Text::shared(&buffer, key_range),
            chain,
        });
        defs.push(def);
    }
    failures.sort_by_key(|(at, _)| *at);
    problems.extend(failures.into_iter().map(|(_, problem)| problem));
    (
        RoleView {
            keys: KeyMap::from_sorted(grouped),
            providers,
        },
        defs,
    )
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
            key: key.clone().into(),
            role: Some(role),
            reason: Reason::ForcedByTool,
            message: message.into(),
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
                )
                .into(),
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
/// drops it, or the client refuses both), with a warning. Returns whether a key was left out.
fn choose_one_connection(
    tool: &Tool,
    views: &mut BTreeMap<Role, RoleView>,
    warnings: &mut Vec<Warning>,
) -> bool {
    let mut removed = false;
    for group in tool.required.iter().filter(|g| g.len() > 1) {
        let options: Vec<&ToolOption> = group.iter().filter_map(|n| tool.option(n)).collect();
        if options.len() < 2 {
            continue;
        }
        for (role, view) in views.iter_mut() {
            let present: Vec<(&ToolOption, Layer, Source)> = options
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
                removed = true;
                warnings.push(Warning {
                    key: dropped.key.clone().into(),
                    role: Some(*role),
                    reason: Reason::ConflictingKeys,
                    message: format!(
                        "{} connects through one of --{}: {} (from {chosen_source}) is used, so {} (from {source}) is left out",
                        tool.name,
                        group.join(" / --"),
                        chosen.key,
                        dropped.key
                    ).into(),
                });
            }
        }
    }
    removed
}

/// `output.secrets: Deferred` needs Kafka's directory and file config providers; declaring them
/// here (layer `operator`) makes `explain` show every key the file will hold.
fn declare_deferred_providers(view: &mut RoleView) {
    let (mut dir, mut file) = (false, false);
    for (_, contribution) in view.file_entries() {
        match contribution.secret.as_deref() {
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
    let provenance = view.keys.get_or_insert(key);
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

    use super::{Request, evaluate};
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
