//! Every Kafka tool's command-line option table (`catalogue/kafka-tool-options.json`), read from
//! the tools' own jopt-simple / argparse4j parsers by `catalogue/generate.sh` and embedded at
//! build time. One table per release line: the option names changed with KIP-1147 (4.2).
//! `engine::tool_cli` parses an argument list with a table the way the tool's parser does.

use std::sync::OnceLock;

use serde::Deserialize;

const OPTIONS_JSON: &str = include_str!("../../../catalogue/kafka-tool-options.json");

/// Which library parses the tool's command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub enum ParserKind {
    #[serde(rename = "jopt-simple")]
    JoptSimple,
    #[serde(rename = "argparse4j")]
    Argparse4j,
    /// No parser: the tool reads its arguments by position (kafka-e2e-latency before 4.2).
    #[serde(rename = "none")]
    None,
}

/// Whether an option takes a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Argument {
    None,
    Required,
    Optional,
}

/// What an option carries that the operator owns: a whole properties file or key=value sets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Carries {
    File,
    Properties,
}

/// One option of a tool.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolOption {
    /// Long names without dashes first (the first is the canonical name), then short ones as `-x`.
    pub names: Vec<String>,
    pub argument: Argument,
    /// Every occurrence is kept (jopt-simple: always; argparse4j: append/count actions).
    pub repeatable: bool,
    pub required: bool,
    pub carries: Option<Carries>,
    /// The value's Java type when not a String (`Integer`, `Long`, `Double`, `File`, ...).
    #[serde(default, rename = "type")]
    pub value_type: Option<String>,
    /// argparse4j: the action (`store`, `storeTrue`, `append`, `help`, `version`, or a tool's own).
    #[serde(default)]
    pub action: Option<String>,
    /// argparse4j: `?`, `*`, `+` or a count; absent = exactly one value.
    #[serde(default)]
    pub nargs: Option<String>,
    /// argparse4j: the values the option accepts.
    #[serde(default)]
    pub choices: Option<Vec<String>>,
    /// argparse4j: index into the scope's `mutex_groups`.
    #[serde(default)]
    pub mutex_group: Option<usize>,
    /// jopt-simple `forHelp()`: its presence turns off the required/available checks.
    #[serde(default)]
    pub help: bool,
    /// jopt-simple `withValuesSeparatedBy` (absent: NUL, i.e. never in a real argument).
    #[serde(default)]
    pub value_separator: Option<String>,
    /// jopt-simple: required when any of these is present.
    #[serde(default)]
    pub required_if: Vec<String>,
    /// jopt-simple: required unless any of these is present.
    #[serde(default)]
    pub required_unless: Vec<String>,
    /// jopt-simple: allowed only when one of these is present.
    #[serde(default)]
    pub available_if: Vec<String>,
    /// jopt-simple: not allowed when one of these is present.
    #[serde(default)]
    pub available_unless: Vec<String>,
}

impl ToolOption {
    /// The canonical name: the first long name (or the short one, `-x`, when it has none).
    pub fn name(&self) -> &str {
        self.names.first().map(String::as_str).unwrap_or("")
    }
}

/// A positional argument (argparse4j), or jopt-simple's `[arguments]` (any number).
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Positional {
    pub name: String,
    /// `1`, `?`, `*`, `+` or a count.
    pub nargs: String,
    #[serde(default, rename = "type")]
    pub value_type: Option<String>,
    #[serde(default)]
    pub choices: Option<Vec<String>>,
}

/// An argparse4j mutually exclusive group.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct MutexGroup {
    pub options: Vec<String>,
    pub required: bool,
}

/// What one parser (a tool, or one of its argparse4j subcommands) accepts.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Scope {
    pub options: Vec<ToolOption>,
    pub positionals: Vec<Positional>,
    #[serde(default)]
    pub mutex_groups: Vec<MutexGroup>,
    #[serde(default)]
    pub subcommands: Vec<Subcommand>,
}

impl Scope {
    /// The option with exactly this name (`bootstrap-server`, `-b`; leading `--` allowed).
    pub fn lookup(&self, name: &str) -> Option<&ToolOption> {
        let name = name.strip_prefix("--").unwrap_or(name);
        self.options
            .iter()
            .find(|o| o.names.iter().any(|n| n == name))
    }
}

/// An argparse4j subcommand: given first, before its own options.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Subcommand {
    pub name: String,
    #[serde(default)]
    pub aliases: Vec<String>,
    #[serde(flatten)]
    pub scope: Scope,
}

/// One tool's command line in one release line.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OptionTable {
    pub name: String,
    pub main_class: String,
    pub parser: ParserKind,
    /// Whether the parser accepts a unique prefix of a long option (`--bootstrap-serv`).
    pub abbreviations: bool,
    /// jopt-simple: the first non-option argument ends option parsing.
    #[serde(default)]
    pub posixly_correct: bool,
    #[serde(flatten)]
    pub scope: Scope,
}

impl OptionTable {
    /// The top-level option with exactly this name (see [`Scope::lookup`]).
    pub fn lookup(&self, name: &str) -> Option<&ToolOption> {
        self.scope.lookup(name)
    }
}

/// An entry of `tools.yaml` without a command line to check, and why.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WithoutTable {
    pub name: String,
    pub main_class: Option<String>,
    pub reason: String,
}

/// The tables of one Kafka release, used for `spec.kafkaVersion` from `from_kafka_version` on.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Release {
    /// The release the tables were read from (`4.3.1`).
    pub kafka_version: String,
    /// The first `major.minor` this line covers (`4.2`).
    pub from_kafka_version: String,
    pub tools: Vec<OptionTable>,
    pub without_table: Vec<WithoutTable>,
}

/// All release lines, newest first.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolOptions {
    pub kafka_version: String,
    releases: Vec<Release>,
}

/// `major.minor` of a version string (`4.3.1` → (4, 3), `4.2` → (4, 2)); None when not numeric.
fn major_minor(version: &str) -> Option<(u32, u32)> {
    let mut parts = version.split('.');
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next()?.parse().ok()?;
    Some((major, minor))
}

impl ToolOptions {
    /// The embedded tables, parsed once.
    pub fn get() -> &'static ToolOptions {
        static OPTIONS: OnceLock<ToolOptions> = OnceLock::new();
        OPTIONS.get_or_init(|| Self::parse(OPTIONS_JSON).expect("embedded kafka-tool-options.json"))
    }

    fn parse(json: &str) -> Result<ToolOptions, serde_json::Error> {
        serde_json::from_str(json)
    }

    /// The release lines, newest first (for messages: "known: 4.2+ (4.3.1), 4.0+ (4.1.2)").
    pub fn releases(&self) -> &[Release] {
        &self.releases
    }

    /// The release line for `spec.kafkaVersion`: the newest line starting at or below its
    /// `major.minor`. None for a version older than every line or not of the form `N.N[...]`.
    pub fn release(&self, kafka_version: &str) -> Option<&Release> {
        let wanted = major_minor(kafka_version)?;
        self.releases
            .iter()
            .filter_map(|r| major_minor(&r.from_kafka_version).map(|from| (from, r)))
            .filter(|(from, _)| *from <= wanted)
            .max_by_key(|(from, _)| *from)
            .map(|(_, r)| r)
    }

    /// `tool`'s option table for `kafka_version`.
    pub fn table(&self, tool: &str, kafka_version: &str) -> Option<&OptionTable> {
        self.release(kafka_version)?
            .tools
            .iter()
            .find(|t| t.name == tool)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_picks_the_release_line_by_major_minor() {
        let options = ToolOptions::get();
        let newest = options.releases()[0].kafka_version.as_str();
        assert_eq!(
            options.release("4.3.1").map(|r| r.kafka_version.as_str()),
            Some(newest)
        );
        assert_eq!(
            options.release("4.2.0").map(|r| r.kafka_version.as_str()),
            Some(newest)
        );
        assert_eq!(
            options.release("4.2").map(|r| r.kafka_version.as_str()),
            Some(newest)
        );
        let older = options.release("4.1.0").expect("4.1 line");
        assert!(older.kafka_version.starts_with("4.1."));
        assert_eq!(options.release("4.0.2"), Some(older));
        assert_eq!(options.release("3.9.0"), None);
        assert_eq!(options.release("banana"), None);
        assert_eq!(options.release("4"), None);
    }

    #[test]
    fn command_config_exists_only_from_4_2_on_the_console_consumer() {
        let options = ToolOptions::get();
        let new = options
            .table("kafka-console-consumer", "4.3.0")
            .expect("4.3 table");
        let old = options
            .table("kafka-console-consumer", "4.1.1")
            .expect("4.1 table");
        assert_eq!(
            new.lookup("command-config").and_then(|o| o.carries),
            Some(Carries::File)
        );
        assert!(old.lookup("command-config").is_none());
        assert_eq!(
            old.lookup("--consumer.config").and_then(|o| o.carries),
            Some(Carries::File)
        );
        assert_eq!(
            new.lookup("consumer-property").and_then(|o| o.carries),
            Some(Carries::Properties)
        );
        assert_eq!(
            new.lookup("bootstrap-server").map(|o| o.argument),
            Some(Argument::Required)
        );
        assert_eq!(
            new.lookup("from-beginning").map(|o| o.argument),
            Some(Argument::None)
        );
    }

    #[test]
    fn every_table_has_options_and_names_are_well_formed() {
        for release in ToolOptions::get().releases() {
            assert!(release.tools.len() >= 25, "{}", release.kafka_version);
            for table in &release.tools {
                if table.parser != ParserKind::None {
                    assert!(!table.scope.options.is_empty(), "{}", table.name);
                }
                for option in &table.scope.options {
                    for name in &option.names {
                        let short = name.len() == 2 && name.starts_with('-');
                        assert!(short || !name.starts_with('-'), "{}: {name}", table.name);
                    }
                }
            }
        }
    }

    #[test]
    fn argparse4j_tools_have_their_subcommands() {
        let table = ToolOptions::get()
            .table("kafka-metadata-quorum", "4.3.1")
            .expect("table");
        assert_eq!(table.parser, ParserKind::Argparse4j);
        assert!(table.scope.subcommands.iter().any(|s| s.name == "describe"));
        let perf = ToolOptions::get()
            .table("kafka-producer-perf-test", "4.3.1")
            .expect("table");
        assert_eq!(
            perf.lookup("producer-props")
                .and_then(|o| o.nargs.as_deref()),
            Some("+")
        );
    }

    #[test]
    fn entries_without_a_command_line_are_listed_with_a_reason() {
        let release = &ToolOptions::get().releases()[0];
        let names: Vec<_> = release
            .without_table
            .iter()
            .map(|w| w.name.as_str())
            .collect();
        assert!(names.contains(&"client"));
        assert!(names.contains(&"kafka-server"));
        assert!(ToolOptions::get().table("client", "4.3.1").is_none());
    }

    #[test]
    fn malformed_json_is_an_error_not_a_panic() {
        assert!(ToolOptions::parse("{").is_err());
        assert!(ToolOptions::parse(r#"{"kafkaVersion":"x","releases":[{"tools":1}]}"#).is_err());
    }
}
