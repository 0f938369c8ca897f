use super::*;
use crate::engine::catalogue::options::ToolOptions;

fn table(tool: &str, version: &str) -> &'static OptionTable {
    ToolOptions::get().table(tool, version).expect("table")
}

fn argv(args: &[&str]) -> Vec<String> {
    args.iter().map(|s| s.to_string()).collect()
}

fn parse_ok(tool: &str, args: &[&str]) -> ParsedArgs {
    parse(table(tool, "4.3.1"), &argv(args)).expect("parses")
}

#[test]
fn value_after_the_option_or_attached_with_equals() {
    let parsed = parse_ok(
        "kafka-console-consumer",
        &[
            "--bootstrap-server",
            "a:9092",
            "--topic=t=x",
            "--group",
            "--weird",
        ],
    );
    let values: Vec<_> = parsed
        .occurrences
        .iter()
        .map(|o| (o.option.as_str(), o.values.clone()))
        .collect();
    assert_eq!(
        values,
        vec![
            ("bootstrap-server", vec!["a:9092".to_string()]),
            ("topic", vec!["t=x".to_string()]),
            ("group", vec!["--weird".to_string()]),
        ]
    );
}

#[test]
fn jopt_flag_with_an_attached_value_keeps_the_flag_and_reports_the_value() {
    let parsed = parse_ok("kafka-console-consumer", &["--from-beginning=false"]);
    assert_eq!(parsed.occurrences[0].option, "from-beginning");
    assert_eq!(
        parsed.occurrences[0].ignored_value.as_deref(),
        Some("false")
    );
}

#[test]
fn unknown_and_missing_values_are_errors() {
    let t = table("kafka-console-consumer", "4.3.1");
    assert_eq!(
        parse(t, &argv(&["--from-begining"])),
        Err(ArgError::Unknown {
            given: "from-begining".into()
        })
    );
    assert_eq!(
        parse(t, &argv(&["--topic"])),
        Err(ArgError::MissingValue {
            option: "topic".into()
        })
    );
}

#[test]
fn abbreviations_only_where_the_parser_allows_them() {
    let consumer = table("kafka-console-consumer", "4.3.1");
    assert!(!consumer.abbreviations);
    assert!(parse(consumer, &argv(&["--bootstrap-serv", "x"])).is_err());
    let perf = table("kafka-producer-perf-test", "4.3.1");
    assert!(perf.abbreviations);
    let parsed = parse(perf, &argv(&["--bootstrap-serv", "x"])).expect("prefix");
    assert_eq!(parsed.occurrences[0].option, "bootstrap-server");
}

#[test]
fn double_dash_ends_options() {
    let parsed = parse_ok("kafka-console-consumer", &["--", "--topic", "x"]);
    assert!(parsed.occurrences.is_empty());
    assert_eq!(parsed.positionals, argv(&["--topic", "x"]));
}

#[test]
fn argparse4j_subcommand_comes_first_and_owns_the_options_after_it() {
    let t = table("kafka-metadata-quorum", "4.3.1");
    let parsed = parse(
        t,
        &argv(&["--bootstrap-server", "b:9092", "describe", "--status"]),
    )
    .expect("ok");
    assert_eq!(parsed.subcommands, vec!["describe".to_string()]);
    assert!(parse(t, &argv(&["--bootstrap-server", "b:9092"])).is_err());
    assert!(matches!(
        parse(t, &argv(&["nope"])),
        Err(ArgError::UnknownSubcommand { .. })
    ));
}

#[test]
fn argparse4j_flag_given_a_value_and_type_errors_are_refused() {
    let t = table("kafka-producer-perf-test", "4.3.1");
    let flag = t
        .scope
        .options
        .iter()
        .find(|o| o.argument == Argument::None && o.action.as_deref() == Some("storeTrue"))
        .expect("a storeTrue flag");
    let given = format!("--{}=x", flag.name());
    assert!(matches!(
        parse(t, &argv(&[&given])),
        Err(ArgError::UnexpectedValue { .. })
    ));
    assert!(matches!(
        parse(t, &argv(&["--num-records", "many"])),
        Err(ArgError::InvalidValue { .. })
    ));
}

#[test]
fn complete_command_lines_need_the_required_options() {
    let t = table("kafka-producer-perf-test", "4.3.1");
    let parsed = parse(t, &argv(&["--topic", "t"])).expect("syntax ok");
    assert!(matches!(
        check_complete(t, &parsed),
        Err(ArgError::MissingRequired { .. })
    ));
}

#[test]
fn a_tool_without_a_parser_takes_positionals_only() {
    let t = table("kafka-e2e-latency", "4.1.0");
    assert_eq!(t.parser, ParserKind::None);
    assert!(parse(t, &argv(&["b", "t", "1", "1", "10"])).is_ok());
    assert!(parse(t, &argv(&["b", "t", "1", "1", "10", "p", "extra"])).is_err());
    assert!(parse(t, &argv(&["b"])).is_err());
}

#[test]
fn java_number_rules() {
    assert!(java_integer("+5", 32));
    assert!(java_integer("-2147483648", 32));
    assert!(!java_integer("2147483648", 32));
    assert!(!java_integer(" 5", 32));
    assert!(!java_integer("", 32));
    assert!(java_double(" 1.5 "));
    assert!(java_double("1e3d"));
    assert!(!java_double("abc"));
}
