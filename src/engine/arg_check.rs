//! `args` and `extraArgs` read with the tool's own option table (`catalogue/kafka-tool-options.json`,
//! generated from the tools' jopt-simple/argparse4j parsers), so that what the tool runs with is
//! what `explain` says: an unknown option, a value where none is taken, an option that carries
//! client properties or files (the operator writes those), or a second spelling of an option that
//! sets a client property is refused before anything is rendered. The rendered `tool.args` is
//! parsed again as a whole, as the tool would parse it.

use crate::engine::catalogue::options::{OptionTable, Scope, ToolOption, ToolOptions};
use crate::engine::catalogue::tools::Tool;
use crate::engine::outcome::{Problem, Reason};
use crate::engine::safe_text;
use crate::engine::spec::{Scalar, ToolConfigSpec};
use crate::engine::suggest;
use crate::engine::tool_cli::{self, ArgError};

/// Options that carry properties or files of the message reader/formatter, not of a Kafka
/// client: they are the user's to give (`--property parse.key=true`).
const MESSAGE_FORMAT_OPTIONS: &[&str] = &[
    "property",
    "reader-config",
    "reader-property",
    "formatter-config",
    "formatter-property",
];

/// The option table of `tool` for `kafka_version`; `None` for configs that are not command
/// lines (`client`, `kafka-server`, `connect-mirror-maker`).
pub fn table<'t>(tool: &Tool, kafka_version: &str) -> Option<&'t OptionTable> {
    ToolOptions::get().table(&tool.name, kafka_version)
}

/// `spec.kafkaVersion` must name a release line the catalogue has option tables for.
pub fn check_kafka_version(spec: &ToolConfigSpec, newest: &str, problems: &mut Vec<Problem>) {
    let Some(version) = &spec.kafka_version else {
        return;
    };
    let known = ToolOptions::get().releases();
    let numeric = !version.is_empty()
        && version.split('.').count() <= 3
        && version
            .split('.')
            .all(|part| !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit()));
    let not_newer = major_minor(version) <= major_minor(newest);
    if numeric && not_newer && ToolOptions::get().release(version).is_some() {
        return;
    }
    let oldest = known
        .iter()
        .map(|r| r.from_kafka_version.as_str())
        .min_by_key(|v| major_minor(v))
        .unwrap_or(newest);
    let shown: String = version.chars().take(40).collect();
    problems.push(Problem::new(
        Reason::InvalidValue,
        "spec.kafkaVersion",
        format!(
            "{shown:?} is not a Kafka release the catalogue knows: use {oldest} up to {} (major.minor or \
             major.minor.patch), or leave it out for {newest}",
            major_minor_text(newest)
        ),
    ));
}

fn major_minor(version: &str) -> (u32, u32) {
    let mut parts = version
        .split('.')
        .map(|p| p.parse::<u32>().unwrap_or(u32::MAX));
    (parts.next().unwrap_or(u32::MAX), parts.next().unwrap_or(0))
}

fn major_minor_text(version: &str) -> String {
    let (major, minor) = major_minor(version);
    format!("{major}.{minor}")
}

/// Every option of a scope and its subcommands.
fn all_options(scope: &Scope) -> Vec<&ToolOption> {
    let mut out: Vec<&ToolOption> = scope.options.iter().collect();
    for sub in &scope.subcommands {
        out.extend(all_options(&sub.scope));
    }
    out
}

fn find_option<'t>(table: &'t OptionTable, canonical: &str) -> Option<&'t ToolOption> {
    // In the order of `all_options`, without collecting them (asked for every option given).
    fn find_in<'t>(scope: &'t Scope, canonical: &str) -> Option<&'t ToolOption> {
        scope
            .options
            .iter()
            .find(|o| o.name() == canonical)
            .or_else(|| {
                scope
                    .subcommands
                    .iter()
                    .find_map(|sub| find_in(&sub.scope, canonical))
            })
    }
    find_in(&table.scope, canonical)
}

/// The user's part of the command line, each word with the spec field it came from.
fn user_argv(tool: &Tool, spec: &ToolConfigSpec) -> (Vec<String>, Vec<String>) {
    let mut argv = Vec::new();
    let mut fields = Vec::new();
    let mut extra = spec.extra_args.iter().enumerate();
    if tool.subcommand_first
        && let Some((index, word)) = extra.next()
    {
        argv.push(word.clone());
        fields.push(format!("spec.extraArgs[{index}]"));
    }
    for (name, value) in &spec.args {
        // Malformed names are already refused by `args::check_args`.
        if name.is_empty()
            || name.starts_with('-')
            || name.contains('=')
            || safe_text::forbidden_char(name).is_some()
        {
            continue;
        }
        // Joined, not formatted (the user's arguments are read on every evaluation).
        let field = ["spec.args.", name].concat();
        match value {
            Scalar::Bool(false) => continue,
            Scalar::Bool(true) => {}
            other => {
                argv.push(["--", name].concat());
                fields.push(field.clone());
                argv.push(other.to_text());
                fields.push(field);
                continue;
            }
        }
        argv.push(["--", name].concat());
        fields.push(field);
    }
    for (index, word) in extra {
        argv.push(word.clone());
        fields.push(format!("spec.extraArgs[{index}]"));
    }
    (argv, fields)
}

/// The index of the first word at or after `from` that is, or starts, `given`.
fn position_of(argv: &[String], from: usize, given: &str) -> Option<usize> {
    let option_part = given.split_once('=').map_or(given, |(o, _)| o);
    // `w == given` is one of these two: the same word has the same option part.
    let matches =
        |w: &String| w == option_part || w.split_once('=').is_some_and(|(o, _)| o == option_part);
    argv.iter().skip(from).position(matches).map(|i| i + from)
}

/// The field of the first word that is, or starts, `given`.
fn field_of<'f>(argv: &[String], fields: &'f [String], given: &str) -> &'f str {
    position_of(argv, 0, given)
        .and_then(|i| fields.get(i))
        .map_or("spec.extraArgs", String::as_str)
}

/// Text from the spec quoted in a message: escaped and cut.
fn shown(text: &str) -> String {
    format!("{:?}", safe_text::cut(text, 64))
}

/// Checks `args` and `extraArgs` against the tool's option table.
pub fn check_user_args(
    tool: &Tool,
    spec: &ToolConfigSpec,
    table: &OptionTable,
    problems: &mut Vec<Problem>,
) {
    let (argv, fields) = user_argv(tool, spec);
    if argv.is_empty() {
        return;
    }
    let parsed = match tool_cli::parse(table, &argv) {
        Ok(parsed) => parsed,
        Err(error) => {
            problems.push(parse_problem(tool, table, &argv, &fields, &error));
            return;
        }
    };
    // Occurrences come in command-line order: find each one's word after the previous one's.
    let mut next = 0;
    for occurrence in &parsed.occurrences {
        let at = position_of(&argv, next, &occurrence.given);
        next = at.map_or(next, |i| i + 1);
        let field = at
            .and_then(|i| fields.get(i))
            .map_or("spec.extraArgs", String::as_str)
            .to_string();
        let Some(option) = find_option(table, &occurrence.option) else {
            continue;
        };
        let name = option.name();
        let mut refuse = |message: String| {
            problems.push(Problem::new(
                Reason::InvalidArgument,
                field.clone(),
                message,
            ))
        };
        if option.carries.is_some() && !MESSAGE_FORMAT_OPTIONS.contains(&name) {
            refuse(format!(
                "--{name} carries client properties or a client config file, which the operator writes: \
                 use spec.configFiles or spec.properties"
            ));
            continue;
        }
        if option.help {
            refuse(format!("--{name} makes {} print and exit", tool.name));
            continue;
        }
        if occurrence.ignored_value.is_some() {
            refuse(format!(
                "--{name} takes no value: {} would ignore what follows '='",
                tool.name
            ));
        }
        let written = occurrence
            .given
            .split_once('=')
            .map_or(occurrence.given.as_str(), |(o, _)| o);
        let exact = option
            .names
            .iter()
            .any(|n| written.strip_prefix("--") == Some(n.as_str()) || written == n.as_str());
        if !exact {
            refuse(format!(
                "{} is an abbreviation of --{name}: write the option in full, so that explain and {} read the same option",
                shown(written),
                tool.name
            ));
        }
        // An option that sets a client property is given once, through spec.args (or the key),
        // where the precedence and explain see it.
        let sets_key = tool.option(name).is_some();
        if sets_key
            && (field.starts_with("spec.extraArgs") || written.strip_prefix("--") != Some(name))
        {
            let key = tool.option(name).map_or("", |o| o.key.as_str());
            refuse(format!(
                "--{name} sets {key}: give it as spec.args.{name} (or set {key}), not here"
            ));
        }
    }
}

fn parse_problem(
    tool: &Tool,
    table: &OptionTable,
    argv: &[String],
    fields: &[String],
    error: &ArgError,
) -> Problem {
    match error {
        ArgError::Unknown { given } => {
            // The parser names a long option without its dashes.
            let given = &if given.starts_with('-') {
                given.clone()
            } else {
                format!("--{given}")
            };
            let bare = given.trim_start_matches('-');
            let bare = bare.split_once('=').map_or(bare, |(o, _)| o);
            let names: Vec<&str> = all_options(&table.scope)
                .into_iter()
                .flat_map(|o| o.names.iter().map(String::as_str))
                .filter(|n| !n.starts_with('-'))
                .collect();
            let hint = suggest::closest(bare, names.iter().copied())
                .map(|s| format!("; did you mean --{s}?"))
                .unwrap_or_default();
            Problem::new(
                Reason::UnknownArgument,
                field_of(argv, fields, given),
                format!(
                    "{} is not an option of {} {}{hint}",
                    shown(given),
                    tool.name,
                    table_release(table)
                ),
            )
        }
        other => {
            let given = match other {
                ArgError::Ambiguous { given, .. }
                | ArgError::UnknownSubcommand { given }
                | ArgError::UnexpectedPositional { given } => given.clone(),
                ArgError::MissingValue { option }
                | ArgError::UnexpectedValue { option }
                | ArgError::InvalidValue { option, .. }
                | ArgError::MissingRequired { option }
                | ArgError::NotAllowedWith { option, .. }
                | ArgError::NotAvailable { option, .. }
                | ArgError::Exits { option } => format!("--{option}"),
                _ => String::new(),
            };
            let message: String = other.to_string().chars().take(300).collect();
            Problem::new(
                Reason::InvalidArgument,
                field_of(argv, fields, &given),
                format!("{} would refuse this: {message}", tool.name),
            )
        }
    }
}

fn table_release(table: &OptionTable) -> String {
    ToolOptions::get()
        .releases()
        .iter()
        .find(|r| r.tools.iter().any(|t| std::ptr::eq(t, table)))
        .map(|r| format!("(Kafka {})", r.kafka_version))
        .unwrap_or_default()
}

/// The rendered command line, parsed as the tool parses it, including the checks its parser
/// makes after the last argument (required options, exclusive groups).
pub fn check_rendered(tool: &Tool, table: &OptionTable, args: &[&str]) -> Result<(), Problem> {
    tool_cli::parse(table, args)
        .and_then(|parsed| tool_cli::check_complete(table, &parsed))
        .map_err(|error| {
            // The built line holds merged values, which may come from a Secret: name the option,
            // never the text.
            let message = match &error {
                ArgError::InvalidValue { option, reason, .. } => {
                    format!("option --{option}: invalid value ({reason})")
                }
                ArgError::Unknown { .. }
                | ArgError::Ambiguous { .. }
                | ArgError::UnknownSubcommand { .. }
                | ArgError::UnexpectedPositional { .. } => {
                    "an argument it does not accept (not shown: it may hold a merged value)".into()
                }
                other => other.to_string(),
            };
            Problem::new(
                Reason::InvalidArgument,
                "tool.args",
                format!(
                    "{} would refuse the command line built from this config: {message}",
                    tool.name
                ),
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::catalogue::configs::ConfigCatalogue;
    use crate::engine::catalogue::tools::ToolCatalogue;

    /// What `check_user_args` says of these `args` and `extraArgs` for the newest release.
    fn user_arg_problems(tool: &str, args: &[(&str, &str)], extra_args: &[&str]) -> Vec<Problem> {
        let tool = ToolCatalogue::get().tool(tool).expect("a catalogued tool");
        let newest = &ConfigCatalogue::get().kafka_version;
        let table = table(tool, newest).expect("a command-line tool");
        let spec = ToolConfigSpec {
            tool: tool.name.clone(),
            args: args
                .iter()
                .map(|(name, value)| (name.to_string(), Scalar::Str(value.to_string())))
                .collect(),
            extra_args: extra_args.iter().map(|a| a.to_string()).collect(),
            ..ToolConfigSpec::default()
        };
        let mut problems = Vec::new();
        check_user_args(tool, &spec, table, &mut problems);
        problems
    }

    fn fields(problems: &[Problem]) -> Vec<&str> {
        problems.iter().map(|p| p.field.as_str()).collect()
    }

    /// An option name `args::check_args` refuses is not read again as an option here: the user
    /// gets one problem for it, not a second "unknown option".
    #[test]
    fn malformed_option_names_are_left_to_check_args() {
        for name in ["-topic", "topic=t", "to\u{1b}pic", ""] {
            let problems = user_arg_problems(
                "kafka-console-consumer",
                &[("bootstrap-server", "k:9092"), (name, "t")],
                &[],
            );
            assert_eq!(problems, [], "{name:?}");
        }
    }

    /// Each option given is matched to its own word, in order: a second `--bootstrap-server` in
    /// extraArgs is refused there, even after the one of spec.args with the same spelling, and a
    /// word holding `=` of another option before it is not taken for it.
    #[test]
    fn a_refused_option_names_the_field_of_its_own_word() {
        let problems = user_arg_problems(
            "kafka-console-consumer",
            &[("bootstrap-server", "k:9092")],
            &["--bootstrap-server", "evil:9092", "--topic", "t"],
        );
        assert_eq!(fields(&problems), ["spec.extraArgs[0]"], "{problems:?}");
        assert!(
            problems[0]
                .message
                .contains("give it as spec.args.bootstrap-server"),
            "{}",
            problems[0].message
        );

        let problems = user_arg_problems(
            "kafka-console-consumer",
            &[("topic", "t")],
            &[
                "--property",
                "parse.key=true",
                "--bootstrap-server=evil:9092",
            ],
        );
        assert_eq!(fields(&problems), ["spec.extraArgs[2]"], "{problems:?}");
    }

    /// A message quotes what was written, escaped, so the user sees which word is meant.
    #[test]
    fn refusals_quote_the_word_written() {
        let problems = user_arg_problems(
            "kafka-console-consumer",
            &[("bootstrap-server", "k:9092"), ("topic", "t")],
            &["--tpoic\u{1b}"],
        );
        let messages: Vec<&str> = problems.iter().map(|p| p.message.as_str()).collect();
        assert_eq!(fields(&problems), ["spec.extraArgs[0]"], "{messages:?}");
        assert!(
            messages[0].starts_with(
                "\"--tpoic\\u{1b}\" is not an option of kafka-console-consumer (Kafka "
            ),
            "{messages:?}"
        );

        // A word the parser cannot place is named by its own field.
        let problems = user_arg_problems(
            "kafka-producer-perf-test",
            &[],
            &["--num-records", "10", "stray"],
        );
        assert_eq!(fields(&problems), ["spec.extraArgs[2]"], "{problems:?}");
        assert!(
            problems[0].message.contains("\"stray\""),
            "{}",
            problems[0].message
        );

        // argparse4j takes a unique prefix; the abbreviation is refused, quoted.
        let problems = user_arg_problems("kafka-producer-perf-test", &[], &["--num-rec", "10"]);
        let messages: Vec<&str> = problems.iter().map(|p| p.message.as_str()).collect();
        assert_eq!(
            messages,
            [
                "\"--num-rec\" is an abbreviation of --num-records: write the option in full, so \
                 that explain and kafka-producer-perf-test read the same option"
            ]
        );
    }

    /// The built command line is read as the tool reads it, and a refusal never quotes it (it
    /// holds merged values, which may come from a Secret).
    #[test]
    fn the_rendered_line_is_parsed_as_the_tool_parses_it() {
        let tool = ToolCatalogue::get()
            .tool("kafka-producer-perf-test")
            .expect("a catalogued tool");
        let table = table(tool, &ConfigCatalogue::get().kafka_version).expect("a command line");
        let complete = [
            "--topic",
            "t",
            "--num-records",
            "10",
            "--record-size",
            "100",
            "--throughput",
            "-1",
            "--bootstrap-server",
            "k:9092",
        ];
        assert_eq!(check_rendered(tool, table, &complete), Ok(()));

        let missing = check_rendered(tool, table, &complete[2..]).expect_err("no --topic");
        assert_eq!(
            (missing.reason, missing.field.as_str()),
            (Reason::InvalidArgument, "tool.args")
        );
        assert!(
            missing.message.starts_with(
                "kafka-producer-perf-test would refuse the command line built from this config: "
            ) && missing.message.contains("topic"),
            "{}",
            missing.message
        );

        let stray = [&complete[..], &["kcoCanaryValue"]].concat();
        let refused = check_rendered(tool, table, &stray).expect_err("a stray word");
        assert!(
            refused.message.ends_with(
                "an argument it does not accept (not shown: it may hold a merged value)"
            ) && !refused.message.contains("kcoCanaryValue"),
            "{}",
            refused.message
        );
    }

    #[test]
    fn kafka_versions() {
        let mut problems = Vec::new();
        let spec = |v: &str| ToolConfigSpec {
            kafka_version: Some(v.into()),
            ..ToolConfigSpec::default()
        };
        for ok in ["4.0", "4.1", "4.1.2", "4.2", "4.3.1"] {
            check_kafka_version(&spec(ok), "4.3.1", &mut problems);
            assert!(problems.is_empty(), "{ok}: {problems:?}");
        }
        for bad in [
            "banana", "", "3.9", "4", "4.4", "5.0", "4.1.x", "4..1", "4.1.2.3",
        ] {
            problems.clear();
            check_kafka_version(&spec(bad), "4.3.1", &mut problems);
            assert_eq!(problems.len(), 1, "{bad} accepted");
            assert!(
                problems[0].message.contains("4.0 up to 4.3"),
                "{}",
                problems[0].message
            );
        }
    }
}
