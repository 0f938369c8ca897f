//! The round trip of issue 23: what the tool runs with is what `explain` says.
//!
//! Random specs, hostile strings included (control characters, line separators, `=`/`:`,
//! leading `--`, unicode, references, nested references, option names that are not options or
//! that carry property files), are evaluated. A config the engine refuses is fine; a config it
//! renders must round-trip:
//! - `tool.args`, split one argument per line as the launcher does, parses with the tool's own
//!   option table (`tool_cli`, differentially tested against the real parsers), including the
//!   checks its parser makes at the end;
//! - the only option that carries a file is the operator's own config-file option, pointing at a
//!   rendered file; no option carries properties;
//! - every option that sets a client property carries exactly explain's winner for that key;
//! - every rendered file, loaded with `Properties.load` semantics, holds exactly explain's winners
//!   of its roles, key by key.

use std::collections::BTreeMap;

use kafka_config_operator::cli::explain_entries;
use kafka_config_operator::engine::catalogue::options::{OptionTable, ToolOptions};
use kafka_config_operator::engine::catalogue::tools::ToolCatalogue;
use kafka_config_operator::engine::layers::Layer;
use kafka_config_operator::engine::sources::SourceSet;
use kafka_config_operator::engine::spec::{EnvVar, Role, Scalar, ToolConfigSpec};
use kafka_config_operator::engine::{Request, evaluate, properties, render, tool_cli};
use proptest::prelude::*;

const TOOLS: &[&str] = &[
    "kafka-console-producer",
    "kafka-console-consumer",
    "kafka-producer-perf-test",
    "kafka-consumer-groups",
    "kafka-e2e-latency",
    "kafka-verifiable-consumer",
];

const VERSION: &str = "4.3.1";

fn table(tool: &str) -> &'static OptionTable {
    ToolOptions::get()
        .table(tool, VERSION)
        .unwrap_or_else(|| panic!("no option table for {tool}"))
}

/// Strings a hostile tenant would try, and ordinary ones.
fn hostile() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => "[a-z0-9.:_-]{1,12}",
        2 => Just("k:9092".to_string()),
        1 => Just("h1:1,h2:2".to_string()),
        1 => Just("--producer.config".to_string()),
        1 => Just("x\n--producer-property\nsecurity.protocol=PLAINTEXT".to_string()),
        1 => Just("v\r".to_string()),
        1 => Just("a\u{2028}b".to_string()),
        1 => Just("nul\0".to_string()),
        1 => Just("k=v:w".to_string()),
        1 => Just("-x".to_string()),
        1 => Just(String::new()),
        1 => Just("é✓ ü".to_string()),
        1 => Just("${env.T}".to_string()),
        1 => Just("${env.NL}".to_string()),
        1 => Just("${env.MISSING:dflt}".to_string()),
        1 => Just("${env.A:${env.B}}".to_string()),
        1 => Just("$${env.T}".to_string()),
        1 => any::<String>().prop_map(|s| s.chars().take(16).collect()),
    ]
}

/// Option names: mostly the tool's own (so that configs render), some that are not options or
/// that the operator owns.
fn option_name(tool: &'static str, hostile_names: bool) -> BoxedStrategy<String> {
    let names: Vec<String> = table(tool)
        .scope
        .options
        .iter()
        .filter(|o| !o.help && (hostile_names || o.carries.is_none()))
        .map(|o| o.name().to_string())
        .filter(|n| !n.starts_with('-'))
        .collect();
    if !hostile_names {
        return prop::sample::select(names).boxed();
    }
    prop_oneof![
        6 => prop::sample::select(names),
        1 => prop::sample::select(vec![
            "from-begining".to_string(),
            "producer.config".to_string(),
            "command-property".to_string(),
            "command-config=/tmp/evil.properties".to_string(),
            String::new(),
            "topic\n--producer.config".to_string(),
            "--topic".to_string(),
        ]),
    ]
    .boxed()
}

fn scalar() -> impl Strategy<Value = Scalar> {
    prop_oneof![
        4 => hostile().prop_map(Scalar::Str),
        1 => any::<bool>().prop_map(Scalar::Bool),
    ]
}

const KEYS: &[&str] = &[
    "bootstrap.servers",
    "client.id",
    "linger.ms",
    "acks",
    "security.protocol",
    "group.id",
    "max.poll.records",
    "custom.key",
];

/// Ordinary values (most configs are not attacks; these should render).
fn tame() -> impl Strategy<Value = Scalar> {
    prop_oneof![
        3 => "[a-z][a-z0-9]{0,7}".prop_map(Scalar::Str),
        1 => Just(Scalar::Bool(true)),
    ]
}

/// A spec of `tool`; `hostile` decides whether the strings are attacks or ordinary.
fn spec_for(tool: &'static str, hostile_strings: bool) -> impl Strategy<Value = ToolConfigSpec> {
    let roles: Vec<Role> = ToolCatalogue::get()
        .tool(tool)
        .map(|t| t.roles.clone())
        .unwrap_or_default();
    let (value, text, keys): (BoxedStrategy<Scalar>, BoxedStrategy<String>, &[&str]) =
        if hostile_strings {
            (scalar().boxed(), hostile().boxed(), KEYS)
        } else {
            (
                tame().boxed(),
                "[a-z][a-z0-9]{0,7}".boxed(),
                &["client.id", "custom.key", "group.id"],
            )
        };
    let extra = if hostile_strings { 0..3 } else { 0..1 };
    (
        prop::collection::vec((option_name(tool, hostile_strings), value), 0..4),
        prop::collection::vec(
            prop_oneof![
                2 => option_name(tool, true).prop_map(|n| format!("--{n}")),
                1 => hostile(),
            ],
            extra,
        ),
        prop::collection::vec(
            (
                prop::sample::select(roles),
                prop::sample::select(keys),
                text.clone(),
            ),
            0..5,
        ),
        text,
    )
        .prop_map(move |(args, extra_args, properties, t)| {
            let mut spec = ToolConfigSpec {
                tool: tool.to_string(),
                ..ToolConfigSpec::default()
            };
            // Enough to render often: a bootstrap server and the tool's required options.
            spec.args
                .insert("bootstrap-server".into(), Scalar::Str("k:9092".into()));
            for (name, value) in [
                ("topic", "t"),
                ("num-records", "10"),
                ("producer-acks", "all"),
                ("record-size", "100"),
                ("throughput", "-1"),
                ("group-id", "g"),
            ] {
                if table(tool).lookup(name).is_some_and(|o| o.required)
                    || name == "topic" && tool.starts_with("kafka-console")
                    || tool == "kafka-e2e-latency"
                        && matches!(
                            name,
                            "topic" | "num-records" | "producer-acks" | "record-size"
                        )
                    || tool == "kafka-producer-perf-test"
                        && matches!(name, "topic" | "num-records" | "record-size" | "throughput")
                {
                    spec.args.insert(name.into(), Scalar::Str(value.into()));
                }
            }
            if tool == "kafka-consumer-groups" {
                spec.extra_args.push("--list".into());
            }
            for (name, value) in args {
                spec.args.insert(name, value);
            }
            spec.extra_args.extend(extra_args);
            for (role, key, value) in properties {
                spec.properties
                    .entry(role.as_str().to_string())
                    .or_default()
                    .insert(key.to_string(), Scalar::Str(value));
            }
            spec.env = vec![
                EnvVar {
                    name: "T".into(),
                    value: Some(t),
                    value_from: None,
                },
                EnvVar {
                    name: "NL".into(),
                    value: Some("a\nb".into()),
                    value_from: None,
                },
                EnvVar {
                    name: "A".into(),
                    value: Some("va".into()),
                    value_from: None,
                },
            ];
            spec
        })
}

fn any_spec() -> impl Strategy<Value = ToolConfigSpec> {
    (prop::sample::select(TOOLS), any::<bool>())
        .prop_flat_map(|(tool, hostile_strings)| spec_for(tool, hostile_strings))
}

/// Checks one rendered config; returns whether it was rendered.
fn round_trip(spec: &ToolConfigSpec) -> Result<bool, TestCaseError> {
    let sources = SourceSet::default();
    let ev = evaluate(&Request {
        name: "rt",
        namespace: "ns",
        spec,
        namespace_labels: &BTreeMap::new(),
        globals: &[],
        sources: &sources,
        hash_key: None,
    });
    let Some(rendered) = &ev.rendered else {
        if std::env::var_os("RT_DEBUG").is_some() {
            eprintln!(
                "REFUSED {:?}",
                ev.problems
                    .iter()
                    .chain(&ev.source_problems)
                    .map(|p| (p.reason, p.message.chars().take(90).collect::<String>()))
                    .next()
            );
        }
        return Ok(false);
    };
    let catalogue = ToolCatalogue::get();
    let tool = catalogue.tool(&spec.tool).expect("known tool");
    let table = table(&tool.name);
    let explained = explain_entries("ns", "rt", &ev, None);
    let winner = |role: Role, key: &str| {
        explained
            .iter()
            .find(|e| e.role == role.as_str() && e.key == key && e.layer != Layer::KafkaDefaults)
            .map(|e| e.value.as_str())
    };

    // Files: exactly explain's winners, role by role.
    let mut paths = Vec::new();
    for (file, roles) in render::file_layout(tool, &ev.roles) {
        let text = rendered
            .files
            .get(&file)
            .ok_or_else(|| TestCaseError::fail(format!("no {file}")))?;
        paths.push(format!("/etc/kafka-config/{file}"));
        let loaded: BTreeMap<String, String> = properties::load_str(text)
            .map_err(|e| TestCaseError::fail(format!("{file} does not load: {e}")))?
            .into_iter()
            .map(|e| (e.key, e.value))
            .collect();
        // A file several roles share (`kafka-e2e-latency`) holds each role's keys: every key is
        // some role's winner, and no role's winner differs from it.
        for (key, value) in &loaded {
            let winners: Vec<&str> = roles.iter().filter_map(|r| winner(*r, key)).collect();
            prop_assert!(
                !winners.is_empty(),
                "{} in {} is nobody's winner",
                key,
                file
            );
            prop_assert!(
                winners.iter().all(|w| w == value),
                "{}: file says {:?}, explain {:?}",
                key,
                value,
                winners
            );
        }
        for role in &roles {
            for entry in explained.iter().filter(|e| e.role == role.as_str()) {
                prop_assert!(
                    loaded.contains_key(&entry.key) || entry.layer == Layer::KafkaDefaults,
                    "{} {} explained but not in {}",
                    role,
                    entry.key,
                    file
                );
            }
        }
    }

    // tool.args: one argument per line, parsed as the tool parses it.
    let argv: Vec<String> = rendered.files[render::TOOL_ARGS_KEY]
        .lines()
        .map(str::to_string)
        .collect();
    let parsed = tool_cli::parse(table, &argv)
        .map_err(|e| TestCaseError::fail(format!("tool.args {argv:?} refused: {e}")))?;
    tool_cli::check_complete(table, &parsed)
        .map_err(|e| TestCaseError::fail(format!("tool.args {argv:?} incomplete: {e}")))?;
    for occurrence in &parsed.occurrences {
        let Some(option) = table.lookup(&occurrence.option) else {
            continue;
        };
        if option.carries.is_some() {
            let ours = tool.is_config_file_option(option.name())
                && occurrence.values.len() == 1
                && paths.contains(&occurrence.values[0]);
            let message_format = matches!(
                option.name(),
                "property"
                    | "reader-property"
                    | "reader-config"
                    | "formatter-property"
                    | "formatter-config"
            );
            prop_assert!(ours || message_format, "{:?} in {:?}", occurrence, argv);
            continue;
        }
        let Some(mapped) = tool.option(&occurrence.option) else {
            continue;
        };
        let value = ev
            .views
            .iter()
            .filter(|(role, _)| mapped.feeds(**role, tool))
            .find_map(|(role, view)| view.effective_value(&mapped.key).map(|_| *role))
            .and_then(|role| winner(role, &mapped.key));
        match &mapped.flag {
            Some(flag_value) => prop_assert_eq!(value, Some(flag_value.as_str())),
            None => prop_assert_eq!(
                value,
                occurrence.values.first().map(String::as_str),
                "--{} in {:?}",
                occurrence.option,
                argv
            ),
        }
    }
    Ok(true)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn what_the_tool_runs_with_is_what_explain_says(spec in any_spec()) {
        round_trip(&spec)?;
    }
}

/// The generator is not vacuous: a fair share of its configs render and are checked.
#[test]
fn a_fair_share_of_random_configs_render() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::deterministic();
    let strategy = any_spec();
    let (mut rendered, mut refused) = (0, 0);
    for _ in 0..300 {
        let spec = strategy.new_tree(&mut runner).expect("a value").current();
        match round_trip(&spec) {
            Ok(true) => rendered += 1,
            Ok(false) => refused += 1,
            Err(e) => panic!("{e}"),
        }
    }
    eprintln!("round trip: {rendered} rendered, {refused} refused");
    assert!(rendered >= 60, "only {rendered} of 300 rendered");
    assert!(
        refused >= 30,
        "only {refused} of 300 refused: the hostile strings are not reaching it"
    );
}
