//! The pipeline: sources → layers → references → checks → render. Pure: everything it needs is in
//! the [`Request`]; the operator and the CLI differ only in how they fill it.

use crate::engine::arg_check;
use crate::engine::args;
use crate::engine::catalogue::configs::ConfigCatalogue;
use crate::engine::catalogue::tools::{Tool, ToolCatalogue};
use crate::engine::checks;
use crate::engine::globals::{self, GlobalDefaults};
use crate::engine::merge::{
    self, choose_one_connection, collect, declare_deferred_providers, resolve,
};
use crate::engine::mirror_maker;
use crate::engine::model::{Evaluation, Request};
use crate::engine::outcome::{Problem, Reason};
use crate::engine::reference::Mode;
use crate::engine::render;
use crate::engine::safe_text;
use crate::engine::sources;
use crate::engine::spec::{COMMON, ReferenceMode, Role, SecretsMode, ToolConfigSpec};
use crate::engine::suggest;
use crate::engine::validate;

pub use merge::option_value;

// A value may expand up to what an output object can hold, not further.
const _: () = assert!(crate::engine::reference::MAX_EXPANDED_VALUE == render::MAX_OUTPUT_BYTES);

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
    let newest = &ConfigCatalogue::get().kafka_version;
    arg_check::check_kafka_version(req.spec, newest, &mut ev.problems);
    let table = arg_check::table(tool, req.spec.kafka_version.as_deref().unwrap_or(newest));
    if let Some(table) = table {
        arg_check::check_user_args(tool, req.spec, table, &mut ev.problems);
    }
    if let Some(why) = req
        .spec
        .output
        .as_ref()
        .and_then(|o| o.mount_path.as_deref())
        .and_then(safe_text::mount_path_problem)
    {
        ev.problems.push(Problem::new(
            Reason::InvalidValue,
            "spec.output.mountPath",
            format!("the mount path {why}"),
        ));
    }

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
            // Never a partial application of platform policy: the config is not rendered (its
            // last good output stays) until the GlobalClientDefaults is fixed.
            ev.problems.push(Problem::new(
                Reason::GlobalDefaultsInvalid,
                format!("GlobalClientDefaults {}", global.name),
                format!(
                    "GlobalClientDefaults {} selects this config but is invalid, so platform policy cannot be applied: {}",
                    global.name,
                    problems.iter().map(ToString::to_string).collect::<Vec<_>>().join("; ")
                ),
            ));
        }
    }

    let mode = match req.spec.references() {
        ReferenceMode::Strict => Mode::Strict,
        ReferenceMode::Lenient => Mode::Lenient,
    };
    for (at, &role) in ev.roles.iter().enumerate() {
        let last_role = at + 1 == ev.roles.len();
        let raws = collect(
            tool,
            req.spec,
            role,
            last_role,
            &mut files,
            &applied,
            &mut ev.problems,
        );
        let view = resolve(role, raws, &bindings, mode, &mut ev.source_problems);
        ev.views.insert(role, view);
    }

    ev.plain_args = args::resolve_plain(
        tool,
        req.spec,
        &bindings,
        mode,
        &mut ev.source_problems,
        &mut ev.problems,
    );
    choose_one_connection(tool, &mut ev.views, &mut ev.warnings);
    if req.spec.output().secrets() == SecretsMode::Deferred {
        for (&role, view) in &mut ev.views {
            declare_deferred_providers(role, view);
        }
    }

    for (&role, view) in &ev.views {
        if role == Role::MirrorMaker {
            mirror_maker::check_policy(view, &applied, &mut ev.problems);
        } else {
            checks::check_override_policy(role, view, &applied, &mut ev.problems);
        }
        checks::warn_forced_by_tool(tool, req.spec.precedence(), role, view, &mut ev.warnings);
        checks::warn_enforced(role, view, &mut ev.warnings);
        validate::check_role(role, view, &mut ev.problems, &mut ev.warnings);
        ev.shadowed.extend(checks::shadowed(role, view));
    }
    checks::check_required(tool, req.spec, &ev.views, &mut ev.problems);
    args::check_option_values(tool, &ev.views, &mut ev.problems);
    args::warn_default_address(tool, &ev.views, &mut ev.warnings);

    ev.problems.sort_by(by_reason_field_message);
    ev.problems.dedup();
    ev.source_problems.dedup();
    ev.warnings.sort();
    ev.warnings.dedup();
    if ev.is_valid() {
        match render::render(req, tool, &ev.views, &ev.plain_args, &mut ev.warnings) {
            Ok(rendered) => {
                // Parse what was built: the tool must read exactly these arguments.
                let built = rendered.files.get(render::TOOL_ARGS_KEY);
                let refused = table.zip(built).and_then(|(table, text)| {
                    let args: Vec<&str> = text.lines().collect();
                    arg_check::check_rendered(tool, table, &args).err()
                });
                match refused {
                    Some(problem) => ev.problems.push(problem),
                    None => ev.rendered = Some(rendered),
                }
            }
            Err(mut problems) => {
                // Sorted too: in key order, problems naming keys read from a Secret file would
                // tell where each key's text sorts.
                problems.sort_by(by_reason_field_message);
                ev.problems.extend(problems)
            }
        }
    }
    ev
}

/// `spec` evaluated in `namespace` against `sources` alone (no GlobalClientDefaults, no
/// content-hash key): what the engine's unit tests need.
#[cfg(test)]
pub(crate) fn evaluate_alone(
    spec: &ToolConfigSpec,
    namespace: &str,
    sources: &crate::engine::sources::SourceSet,
) -> Evaluation {
    evaluate(&Request {
        name: "p",
        namespace,
        spec,
        namespace_labels: &std::collections::BTreeMap::new(),
        globals: &[],
        sources,
        hash_key: None,
    })
}

fn by_reason_field_message(a: &Problem, b: &Problem) -> std::cmp::Ordering {
    (a.reason, &a.field, &a.message).cmp(&(b.reason, &b.field, &b.message))
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
        // kafka.Kafka takes one server.properties: a second positional file is refused at start
        // ("Found non argument parameters"). A combined node is one file whose process.roles
        // names both.
        if tool.positional_config_file && roles.len() > 1 {
            problems.push(Problem::new(
                Reason::RoleConflict,
                "spec.roles",
                format!(
                    "{} reads one configuration file: give one role (a combined node sets \
                     process.roles=broker,controller in it)",
                    tool.name
                ),
            ));
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

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::evaluate_alone;
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
        let ev = evaluate_alone(&spec, "ns", &sources);
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
