//! GlobalClientDefaults: which ones apply to a config, in which order, and whether each is valid.

use std::collections::BTreeMap;

use crate::engine::catalogue::tools::ToolCatalogue;
use crate::engine::outcome::{Problem, Reason};
use crate::engine::spec::{COMMON, GlobalClientDefaultsSpec, Role, RoleProperties};

/// A named GlobalClientDefaults.
#[derive(Debug, Clone)]
pub struct GlobalDefaults {
    pub name: String,
    pub spec: GlobalClientDefaultsSpec,
}

impl GlobalDefaults {
    /// Whether it selects configs of `tool` in a namespace with `labels` (roles are filtered
    /// separately, per role).
    pub fn selects(&self, tool: &str, labels: &BTreeMap<String, String>) -> bool {
        selects(&self.spec, tool, labels)
    }

    pub fn applies_to_role(&self, role: Role) -> bool {
        self.spec
            .selector
            .as_ref()
            .is_none_or(|s| s.roles.is_empty() || s.roles.contains(&role))
    }

    /// Problems that make this object `Valid=False`; an invalid one is not applied.
    pub fn problems(&self) -> Vec<Problem> {
        let mut problems = Vec::new();
        for (field, props) in [
            ("spec.defaults", &self.spec.defaults),
            ("spec.enforced", &self.spec.enforced),
        ] {
            for section in props.keys() {
                if section != COMMON && Role::parse(section).is_none() {
                    problems.push(Problem::new(
                        Reason::UnknownRole,
                        format!("{field}.{section}"),
                        format!(
                            "unknown role {section:?}: use common or one of {}",
                            role_list()
                        ),
                    ));
                }
            }
        }
        let local_only: Vec<&str> = ToolCatalogue::get()
            .tools
            .iter()
            .flat_map(|t| t.local_only_keys.iter().map(String::as_str))
            .collect();
        for (section, values) in &self.spec.enforced {
            let applies_to_servers = matches!(section.as_str(), COMMON | "broker" | "controller");
            for key in values.keys() {
                if applies_to_servers && local_only.contains(&key.as_str()) {
                    problems.push(Problem::new(
                        Reason::LocalOnlyKey,
                        format!("spec.enforced.{section}.{key}"),
                        format!("{key} is local to each broker/controller and cannot be enforced cluster-wide"),
                    ));
                }
            }
        }
        problems
    }
}

pub fn role_list() -> String {
    Role::ALL
        .iter()
        .map(|r| r.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Whether a GlobalClientDefaults spec selects configs of `tool` in a namespace with `labels`
/// (roles are filtered separately, per role).
pub fn selects(
    spec: &GlobalClientDefaultsSpec,
    tool: &str,
    labels: &BTreeMap<String, String>,
) -> bool {
    let Some(selector) = &spec.selector else {
        return true;
    };
    let namespace_ok = selector
        .namespace_selector
        .as_ref()
        .is_none_or(|s| s.matches(labels));
    let tool_ok = selector.tools.is_empty()
        || selector
            .tools
            .iter()
            .any(|t| t.strip_suffix(".sh").unwrap_or(t) == tool);
    namespace_ok && tool_ok
}

/// The selected objects in application order: ascending priority, then name.
pub fn select<'g>(
    globals: &'g [GlobalDefaults],
    tool: &str,
    labels: &BTreeMap<String, String>,
) -> Vec<&'g GlobalDefaults> {
    let mut selected: Vec<&GlobalDefaults> =
        globals.iter().filter(|g| g.selects(tool, labels)).collect();
    selected.sort_by(|a, b| {
        a.spec
            .priority()
            .cmp(&b.spec.priority())
            .then_with(|| a.name.cmp(&b.name))
    });
    selected
}

/// The `common` entries then the role's own entries of a [`RoleProperties`], so that within one
/// layer the role beats `common`.
pub fn role_entries(
    props: &RoleProperties,
    role: Role,
) -> impl Iterator<Item = (&str, &str, &crate::engine::spec::Scalar)> {
    [COMMON, role.as_str()]
        .into_iter()
        .flat_map(move |section| {
            props
                .get(section)
                .into_iter()
                .flat_map(move |m| m.iter().map(move |(k, v)| (section, k.as_str(), v)))
        })
}
