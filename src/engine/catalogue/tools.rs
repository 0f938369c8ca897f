//! The tool catalogue (`catalogue/tools.yaml`, embedded at build time): for each Kafka tool, its
//! roles, its config-file option, how each option becomes a client property, its required
//! argument groups, its defaults and the values it forces.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use serde::Deserialize;

use crate::engine::spec::Role;

const TOOLS_YAML: &str = include_str!("../../../catalogue/tools.yaml");

/// When a tool puts an option's value into the client properties.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Applied {
    AlwaysOverrides,
    WhenAbsentOrExplicit,
    ExplicitOverrides,
    WhenAbsent,
    BeforeFile,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ToolOption {
    pub name: String,
    /// Roles the option feeds; all the tool's roles when absent.
    #[serde(default)]
    pub roles: Vec<Role>,
    pub key: String,
    /// The value the tool uses when the option is absent.
    #[serde(default)]
    pub default: Option<String>,
    /// For flags: the value the key takes when the flag is given.
    #[serde(default)]
    pub flag: Option<String>,
    /// For options with an optional value: the value when given without one.
    #[serde(default)]
    pub when_empty: Option<String>,
    pub applied: Applied,
    /// The tool removes this key when the option is used.
    #[serde(default)]
    pub removes: Option<String>,
    #[serde(default)]
    pub deprecated: bool,
    /// The tool uses the option only when another key has a given value.
    #[serde(default)]
    pub only_when: Option<OnlyWhen>,
    /// The sources of its values, written once when the catalogue is read: every evaluation
    /// names its tool's option defaults.
    #[serde(skip)]
    labels: OptionLabels,
}

/// [`ToolOption::dashed`], [`ToolOption::default_label`], [`ToolOption::args_label`],
/// [`ToolOption::forced_label`].
#[derive(Debug, Clone, Default)]
struct OptionLabels {
    dashed: String,
    default: String,
    args: String,
    forced: String,
}

/// A condition on another key's merged value, compared case-insensitively.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OnlyWhen {
    pub key: String,
    pub value: String,
}

impl OnlyWhen {
    pub fn holds(&self, value: Option<&str>) -> bool {
        value.is_some_and(|v| v.trim().eq_ignore_ascii_case(&self.value))
    }
}

impl ToolOption {
    pub fn feeds(&self, role: Role, tool: &Tool) -> bool {
        if self.roles.is_empty() {
            tool.roles.contains(&role)
        } else {
            self.roles.contains(&role)
        }
    }

    pub fn is_flag(&self) -> bool {
        self.flag.is_some()
    }

    /// `--NAME`: how the option is written in `tool.args`.
    pub fn dashed(&self) -> &str {
        &self.labels.dashed
    }

    /// `--NAME default`: the source of the option's default.
    pub fn default_label(&self) -> &str {
        &self.labels.default
    }

    /// `args.NAME`: the source of the value `spec.args` gives the option.
    pub fn args_label(&self) -> &str {
        &self.labels.args
    }

    /// `--NAME (forced by TOOL)`, TOOL being the option's own tool.
    pub fn forced_label(&self) -> &str {
        &self.labels.forced
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ConfigFileOption {
    pub option: String,
    /// The spelling before KIP-1147 renamed it to `--command-config`.
    #[serde(default)]
    pub legacy: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Tool {
    pub name: String,
    #[serde(default)]
    pub main_class: Option<String>,
    pub roles: Vec<Role>,
    /// `client` and `kafka-server`: the spec's `roles` select among `roles`.
    #[serde(default)]
    pub select_roles: bool,
    /// The tool takes its file as a positional argument (`kafka-server-start.sh server.properties`).
    #[serde(default)]
    pub positional_config_file: bool,
    /// Sub-command words (`spec.extraArgs`) come before the options.
    #[serde(default)]
    pub subcommand_first: bool,
    #[serde(default)]
    pub config_file: Option<ConfigFileOption>,
    #[serde(default)]
    pub required: Vec<Vec<String>>,
    #[serde(default)]
    pub options: Vec<ToolOption>,
    #[serde(default)]
    pub tool_defaults: BTreeMap<Role, BTreeMap<String, String>>,
    #[serde(default)]
    pub forced: BTreeMap<Role, BTreeMap<String, String>>,
    #[serde(default)]
    pub dynamic: BTreeMap<Role, BTreeMap<String, String>>,
    /// `dynamic` keys the tool sets on every run, whatever the user gives (the forced values of
    /// the KIP-1137 table that have no literal value, such as `test-group-<millis>`).
    #[serde(default)]
    pub always_computed: BTreeMap<Role, Vec<String>>,
    /// Keys a GlobalClientDefaults may not enforce (the global broker config's protected list).
    #[serde(default)]
    pub local_only_keys: Vec<String>,
    /// [`Tool::default_label`] and [`Tool::forced_label`], written when the catalogue is read.
    #[serde(skip)]
    labels: [String; 2],
}

impl Tool {
    /// `TOOL default`: the source of the tool's defaults.
    pub fn default_label(&self) -> &str {
        &self.labels[0]
    }

    /// `forced by TOOL`: the source of the values the tool forces.
    pub fn forced_label(&self) -> &str {
        &self.labels[1]
    }

    pub fn option(&self, name: &str) -> Option<&ToolOption> {
        self.options.iter().find(|o| o.name == name)
    }

    pub fn options_for(&self, role: Role) -> impl Iterator<Item = &ToolOption> {
        self.options.iter().filter(move |o| o.feeds(role, self))
    }

    /// One file for all roles: every KIP-1137 tool has a single config-file option.
    pub fn shares_one_file(&self) -> bool {
        !self.select_roles && self.roles.len() > 1
    }

    /// Whether `name` is this tool's config-file option under any spelling.
    pub fn is_config_file_option(&self, name: &str) -> bool {
        self.config_file
            .as_ref()
            .is_some_and(|c| c.option == name || c.legacy.as_deref() == Some(name))
    }
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ToolCatalogue {
    /// First release with KIP-1147's `--command-config` spelling.
    pub command_config_since: String,
    pub tools: Vec<Tool>,
}

impl ToolCatalogue {
    /// The embedded catalogue. It is checked by the test suite, so a parse failure here is a
    /// build defect, not an input error.
    pub fn get() -> &'static ToolCatalogue {
        static CATALOGUE: OnceLock<ToolCatalogue> = OnceLock::new();
        CATALOGUE.get_or_init(|| {
            let mut catalogue: ToolCatalogue = serde_saphyr::from_str(TOOLS_YAML)
                .unwrap_or_else(|e| panic!("catalogue/tools.yaml is invalid: {e}"));
            for tool in &mut catalogue.tools {
                tool.labels = [
                    [&tool.name, " default"].concat(),
                    ["forced by ", &tool.name].concat(),
                ];
                for option in &mut tool.options {
                    option.labels = OptionLabels {
                        dashed: ["--", &option.name].concat(),
                        default: ["--", &option.name, " default"].concat(),
                        args: ["args.", &option.name].concat(),
                        forced: ["--", &option.name, " (forced by ", &tool.name, ")"].concat(),
                    };
                }
            }
            catalogue
        })
    }

    /// Finds a tool by name, with or without the `.sh` suffix.
    pub fn tool(&self, name: &str) -> Option<&Tool> {
        let name = name.strip_suffix(".sh").unwrap_or(name);
        self.tools.iter().find(|t| t.name == name)
    }

    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.tools.iter().map(|t| t.name.as_str())
    }
}

/// Compares dotted release numbers (`4.1.0` < `4.2`); non-numeric parts compare as 0.
pub fn version_at_least(version: &str, since: &str) -> bool {
    // Part by part, the shorter padded with zeros; read as they are compared, not collected
    // first (every render of a tool with a config-file option asks).
    fn parse(v: &str) -> impl Iterator<Item = u64> + '_ {
        v.split(['.', '-']).map(|p| p.parse::<u64>().unwrap_or(0))
    }
    let (mut a, mut b) = (parse(version), parse(since));
    loop {
        let (x, y) = match (a.next(), b.next()) {
            (None, None) => return true,
            (x, y) => (x.unwrap_or(0), y.unwrap_or(0)),
        };
        if x != y {
            return x > y;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn catalogue_has_the_thirty_kip_1137_tools_and_three_more() {
        let catalogue = ToolCatalogue::get();
        assert_eq!(catalogue.tools.len(), 33);
        for extra in ["client", "kafka-server", "connect-mirror-maker"] {
            assert!(catalogue.tool(extra).is_some(), "{extra}");
        }
    }

    #[test]
    fn every_required_option_and_option_role_is_declared() {
        for tool in &ToolCatalogue::get().tools {
            for option in &tool.options {
                for role in &option.roles {
                    assert!(
                        tool.roles.contains(role),
                        "{}: {} feeds {role}",
                        tool.name,
                        option.name
                    );
                }
            }
            for name in tool.tool_defaults.keys().chain(tool.forced.keys()) {
                assert!(
                    tool.roles.contains(name),
                    "{}: defaults for {name}",
                    tool.name
                );
            }
            if !tool.select_roles && !tool.positional_config_file {
                assert!(
                    tool.config_file.is_some(),
                    "{} has no config-file option",
                    tool.name
                );
            }
        }
    }

    #[test]
    fn tool_names_accept_the_script_suffix() {
        assert!(ToolCatalogue::get().tool("kafka-topics.sh").is_some());
    }

    #[test]
    fn versions_compare_numerically() {
        assert!(version_at_least("4.10", "4.2"));
        assert!(version_at_least("4.2.0", "4.2"));
        assert!(!version_at_least("4.1.1", "4.2"));
    }
}
