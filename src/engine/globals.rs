//! GlobalClientDefaults: which ones apply to a config, in which order, and whether each is valid.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};

use crate::engine::catalogue::configs::ConfigCatalogue;
use crate::engine::catalogue::tools::ToolCatalogue;
use crate::engine::outcome::{Problem, Reason};
use crate::engine::reference;
use crate::engine::safe_text;
use crate::engine::sensitive::REDACTED;
use crate::engine::spec::{
    COMMON, GlobalClientDefaultsSpec, LabelSelector, Role, RoleProperties, Scalar,
    SelectorOperator, SpecMap,
};
use crate::engine::suggest;
use crate::engine::validate::typed::check_value;

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

    /// Problems that make this object `Valid=False`. An invalid one is applied to nothing: every
    /// config it selects reports `GlobalDefaultsInvalid` and keeps its last good output.
    pub fn problems(&self) -> Vec<Problem> {
        let mut problems = Vec::new();
        self.check_sections(&mut problems);
        self.check_selector(&mut problems);
        self.check_local_only(&mut problems);
        self.check_values(&mut problems);
        self.check_enforced_references(&mut problems);
        problems
    }

    fn sections(&self) -> impl Iterator<Item = (&'static str, &str, &SpecMap<Scalar>)> {
        [
            ("spec.defaults", &self.spec.defaults),
            ("spec.enforced", &self.spec.enforced),
        ]
        .into_iter()
        .flat_map(|(field, props)| {
            props
                .iter()
                .map(move |(section, values)| (field, section.as_str(), values))
        })
    }

    fn check_sections(&self, problems: &mut Vec<Problem>) {
        for (field, section, _) in self.sections() {
            if section != COMMON && Role::parse(section).is_none() {
                problems.push(Problem::new(
                    Reason::UnknownRole,
                    format!("{field}.{section}"),
                    format!(
                        "unknown role {:?}: use common or one of {}",
                        cut(section),
                        role_list()
                    ),
                ));
            }
        }
    }

    fn check_selector(&self, problems: &mut Vec<Problem>) {
        let Some(selector) = &self.spec.selector else {
            return;
        };
        let catalogue = ToolCatalogue::get();
        for (index, tool) in selector.tools.iter().enumerate() {
            let name = tool.strip_suffix(".sh").unwrap_or(tool);
            if catalogue.tool(name).is_none() {
                let hint = suggest::closest(name, catalogue.names())
                    .map(|s| format!("; did you mean {s}?"))
                    .unwrap_or_default();
                problems.push(Problem::new(
                    Reason::UnknownTool,
                    format!("spec.selector.tools[{index}]"),
                    format!("{:?} is not a tool of the catalogue{hint}", cut(tool)),
                ));
            }
        }
        if let Some(namespaces) = &selector.namespace_selector {
            for why in label_selector_problems(namespaces) {
                problems.push(Problem::new(
                    Reason::InvalidValue,
                    "spec.selector.namespaceSelector",
                    why,
                ));
            }
        }
    }

    /// Seed 004's protected keys identify one broker or controller: never cluster-wide, neither
    /// as a default (every broker that omits it would get the same `node.id`) nor enforced.
    fn check_local_only(&self, problems: &mut Vec<Problem>) {
        let local_only: Vec<&str> = ToolCatalogue::get()
            .tools
            .iter()
            .flat_map(|t| t.local_only_keys.iter().map(String::as_str))
            .collect();
        for (field, section, values) in self.sections() {
            if !matches!(section, COMMON | "broker" | "controller") {
                continue;
            }
            for key in values.keys() {
                if local_only.contains(&key.as_str()) {
                    problems.push(Problem::new(
                        Reason::LocalOnlyKey,
                        format!("{field}.{section}.{key}"),
                        format!(
                            "{key} is local to each broker/controller and cannot be set cluster-wide"
                        ),
                    ));
                }
            }
        }
    }

    /// Typed values, checked for every role the section can reach, as each config would check
    /// them: a bad value is reported here, on the object that holds it.
    fn check_values(&self, problems: &mut Vec<Problem>) {
        let catalogue = ConfigCatalogue::get();
        let selectable: Vec<Role> = Role::ALL
            .into_iter()
            .filter(|&r| self.applies_to_role(r))
            .collect();
        for (field, section, values) in self.sections() {
            let roles: Vec<Role> = match Role::parse(section) {
                Some(role) => vec![role],
                None if section == COMMON => selectable.clone(),
                None => continue,
            };
            for (key, value) in values.iter() {
                let text = value.to_text();
                // A reference's value is only known per config; that config checks it.
                if text.contains("${") {
                    continue;
                }
                for &role in &roles {
                    let Some(def) = catalogue.key(role, key) else {
                        continue;
                    };
                    if let Err(why) = check_value(def, &text) {
                        let shown = if def.is_password() {
                            REDACTED.to_string()
                        } else {
                            format!("{:?}", cut(&text))
                        };
                        problems.push(Problem::new(
                            Reason::InvalidValue,
                            format!("{field}.{section}.{key}"),
                            format!("{key}={shown} is not valid for the {role} client: {why}"),
                        ));
                        break;
                    }
                }
            }
        }
    }

    /// An enforced value must be the platform's: a reference would be resolved from each config's
    /// own `spec.env`, so the namespace would choose the value the platform enforces. Only KIP-297
    /// provider references (`${file:…}`) whose provider this object itself declares in
    /// `config.providers` are allowed, because Kafka resolves those in the pod.
    fn check_enforced_references(&self, problems: &mut Vec<Problem>) {
        let providers: BTreeSet<String> = self
            .sections()
            .filter_map(|(_, _, values)| values.get("config.providers"))
            .flat_map(|v| reference::provider_names(&v.to_text()))
            .collect();
        for (section, values) in self.spec.enforced.iter() {
            for (key, value) in values.iter() {
                let text = value.to_text();
                let refused = reference::substitutes(&text, &providers);
                if refused {
                    problems.push(Problem::new(
                        Reason::InvalidValue,
                        format!("spec.enforced.{section}.{key}"),
                        format!(
                            "{key}: an enforced value cannot hold a reference; it would be resolved from \
                             each config's own spec.env, so the namespace would choose the enforced value \
                             (write the value itself, or a ${{provider:…}} reference to a provider this \
                             object declares in config.providers)"
                        ),
                    ));
                }
            }
        }
    }
}

/// Text from the object quoted in a message, cut to a short line.
fn cut(text: &str) -> Cow<'_, str> {
    safe_text::cut(text, 128)
}

/// What the API server would refuse in a label selector, and what can never match as meant.
fn label_selector_problems(selector: &LabelSelector) -> Vec<String> {
    let mut out = Vec::new();
    for (key, value) in &selector.match_labels {
        if let Some(why) = label_key_problem(key) {
            out.push(format!("matchLabels key {:?} {why}", cut(key)));
        }
        if let Some(why) = label_value_problem(value) {
            out.push(format!(
                "matchLabels.{} value {:?} {why}",
                cut(key),
                cut(value)
            ));
        }
    }
    for (index, requirement) in selector.match_expressions.iter().enumerate() {
        let at = format!("matchExpressions[{index}]");
        if let Some(why) = label_key_problem(&requirement.key) {
            out.push(format!("{at}.key {:?} {why}", cut(&requirement.key)));
        }
        match requirement.operator {
            SelectorOperator::In | SelectorOperator::NotIn if requirement.values.is_empty() => {
                out.push(format!(
                    "{at}: operator {:?} needs at least one value",
                    requirement.operator
                ));
            }
            SelectorOperator::Exists | SelectorOperator::DoesNotExist
                if !requirement.values.is_empty() =>
            {
                out.push(format!(
                    "{at}: operator {:?} takes no values",
                    requirement.operator
                ));
            }
            _ => {}
        }
        for value in &requirement.values {
            if let Some(why) = label_value_problem(value) {
                out.push(format!("{at} value {:?} {why}", cut(value)));
            }
        }
    }
    out
}

/// A label name: 1–63 characters, alphanumeric at both ends, `-_.` inside.
fn label_name_ok(name: &str) -> bool {
    let bytes = name.as_bytes();
    !bytes.is_empty()
        && bytes.len() <= 63
        && bytes[0].is_ascii_alphanumeric()
        && bytes[bytes.len() - 1].is_ascii_alphanumeric()
        && bytes
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
}

/// A label key: `[prefix/]name`, the prefix a DNS subdomain of at most 253 characters.
fn label_key_problem(key: &str) -> Option<&'static str> {
    let (prefix, name) = match key.split_once('/') {
        Some((prefix, name)) => (Some(prefix), name),
        None => (None, key),
    };
    if let Some(prefix) = prefix {
        let dns_ok = !prefix.is_empty()
            && prefix.len() <= 253
            && prefix.split('.').all(|part| {
                let b = part.as_bytes();
                !b.is_empty()
                    && b[0].is_ascii_alphanumeric()
                    && b[b.len() - 1].is_ascii_alphanumeric()
                    && b.iter()
                        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
            });
        if !dns_ok {
            return Some("has a prefix that is not a DNS subdomain");
        }
    }
    (!label_name_ok(name)).then_some("is not a valid label key")
}

fn label_value_problem(value: &str) -> Option<&'static str> {
    (!value.is_empty() && !label_name_ok(value)).then_some("is not a valid label value")
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
