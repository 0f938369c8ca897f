//! Differential test of `engine::tool_cli` against the real option parsers of Kafka's tools:
//! thousands of argument lists, many of them hostile (`--opt=value`, abbreviations, `--`, values
//! that start with `--` or hold `=`, unicode, empty strings, unknown options, short clusters,
//! subcommand prefixes), are parsed by the tool's own jopt-simple / argparse4j parser (through
//! `tests/jdk/ToolCliOracle.java`, with Kafka's jars) and by `tool_cli::parse` +
//! `check_complete`. Accept/reject must agree, and so must the values the parser read.
//!
//! Needs `javac`/`java` and the Kafka jars of `conformance/fetch.sh` (`.cache/kafka-jars/<v>`);
//! `scripts/test.sh` fetches them before this test. It fails, never skips, without them.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use kafka_config_operator::engine::catalogue::options::{Argument, OptionTable, ToolOptions};
use kafka_config_operator::engine::tool_cli;
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::{Config, TestRunner};

const TOOLS: &[&str] = &[
    "kafka-console-consumer",
    "kafka-console-producer",
    "kafka-consumer-groups",
    "kafka-producer-perf-test",
    "kafka-metadata-quorum",
];

const CASES_PER_TOOL: usize = 1500;

fn kafka_jars() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let pom =
        std::fs::read_to_string(root.join("conformance/pom.xml")).expect("conformance/pom.xml");
    let version = pom
        .split("<kafka.version>")
        .nth(1)
        .and_then(|s| s.split("</kafka.version>").next())
        .expect("kafka.version in conformance/pom.xml");
    let dir = root.join(".cache/kafka-jars").join(version);
    assert!(
        dir.join("kafka-tools-".to_string() + version + ".jar")
            .exists(),
        "Kafka jars missing in {}: run conformance/fetch.sh (scripts/test.sh does)",
        dir.display()
    );
    dir
}

fn classpath(jars: &Path, extra: &Path) -> String {
    let mut entries = vec![extra.display().to_string()];
    let mut found: Vec<String> = std::fs::read_dir(jars)
        .expect("jar dir")
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "jar"))
        .map(|p| p.display().to_string())
        .collect();
    found.sort();
    entries.extend(found);
    entries.join(":")
}

fn hex(s: &str) -> String {
    s.encode_utf16().map(|u| format!("{u:04x}")).collect()
}

fn unhex(word: &str) -> String {
    let units: Vec<u16> = (0..word.len() / 4)
        .map(|i| u16::from_str_radix(&word[i * 4..i * 4 + 4], 16).expect("oracle hex"))
        .collect();
    String::from_utf16(&units).expect("oracle utf-16")
}

/// The oracle's verdict: None = the parser threw, else option → values.
type Verdict = Option<BTreeMap<String, String>>;

fn run_oracle(cases: &[(String, Vec<String>)]) -> Vec<Verdict> {
    let jars = kafka_jars();
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("tool-cli-oracle");
    std::fs::create_dir_all(&dir).expect("oracle dir");
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/jdk/ToolCliOracle.java");
    let cp = classpath(&jars, &dir);
    let status = Command::new("javac")
        .arg("-d")
        .arg(&dir)
        .arg("-cp")
        .arg(&cp)
        .arg(&source)
        .status()
        .expect("javac must be installed for the differential test");
    assert!(status.success(), "javac failed");
    let input: String = cases
        .iter()
        .map(|(tool, argv)| {
            let mut fields = vec![hex(tool)];
            fields.extend(argv.iter().map(|a| hex(a)));
            fields.join("\t") + "\n"
        })
        .collect();
    let input_path = dir.join("cases.txt");
    let output_path = dir.join("cases.out");
    std::fs::write(&input_path, input).expect("write cases");
    let status = Command::new("java")
        .arg("-cp")
        .arg(&cp)
        .arg("ToolCliOracle")
        .arg(&input_path)
        .arg(&output_path)
        .status()
        .expect("java must be installed for the differential test");
    assert!(status.success(), "the Java oracle failed");
    let text = std::fs::read_to_string(&output_path).expect("oracle output");
    text.lines()
        .map(|line| {
            let mut words = line.split(' ');
            if words.next() != Some("OK") {
                return None;
            }
            Some(
                words
                    .map(|w| {
                        let (k, v) = w.split_once('=').expect("name=values");
                        (unhex(k), unhex(v))
                    })
                    .collect(),
            )
        })
        .collect()
}

/// Java's `Integer.toString(Integer.valueOf(s))` for the values argparse4j converts.
fn normalise_number(value: &str) -> String {
    value
        .parse::<i128>()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| value.to_string())
}

/// What our parser says, in the oracle's terms; plus the option names whose values are compared
/// (argparse4j: store actions of String/integer type and flags; everything for jopt-simple).
fn ours(table: &OptionTable, argv: &[String]) -> Option<(BTreeMap<String, String>, bool)> {
    let parsed = tool_cli::parse(table, argv).ok()?;
    tool_cli::check_complete(table, &parsed).ok()?;
    let jopt =
        table.parser == kafka_config_operator::engine::catalogue::options::ParserKind::JoptSimple;
    let mut map: BTreeMap<String, String> = BTreeMap::new();
    if jopt {
        let mut values: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for o in &parsed.occurrences {
            values
                .entry(o.option.clone())
                .or_default()
                .extend(o.values.iter().cloned());
        }
        for (k, v) in values {
            map.insert(k, v.join("\u{1}"));
        }
        if !parsed.positionals.is_empty() {
            map.insert("[arguments]".into(), parsed.positionals.join("\u{1}"));
        }
        return Some((map, true));
    }
    // argparse4j: find each option's definition in the scopes the parse went through
    let mut scopes = vec![&table.scope];
    let mut scope = &table.scope;
    for name in &parsed.subcommands {
        if let Some(sub) = scope.subcommands.iter().find(|s| &s.name == name) {
            scope = &sub.scope;
            scopes.push(scope);
        }
    }
    for o in &parsed.occurrences {
        let def = scopes
            .iter()
            .rev()
            .find_map(|s| s.lookup(&o.option))
            .expect("occurrence of a known option");
        let value = match (def.action.as_deref(), def.argument) {
            (Some("storeTrue"), _) => "true".to_string(),
            (Some("storeFalse"), _) => "false".to_string(),
            (Some("store"), Argument::Required | Argument::Optional) => {
                if o.values.is_empty() {
                    continue;
                }
                match def.value_type.as_deref() {
                    None | Some("File") => o.values.join("\u{1}"),
                    Some("Integer" | "Long") => o
                        .values
                        .iter()
                        .map(|v| normalise_number(v))
                        .collect::<Vec<_>>()
                        .join("\u{1}"),
                    _ => "\u{0}presence".to_string(),
                }
            }
            _ => "\u{0}presence".to_string(),
        };
        map.insert(o.option.clone(), value);
    }
    Some((map, false))
}

/// Argument lists built from the tool's own names, prefixes and hostile values.
fn corpus(table: &OptionTable) -> impl Strategy<Value = Vec<String>> {
    let mut tokens: Vec<String> = Vec::new();
    let values = [
        "v", "", "--", "-", "--topic", "-5", "5", "+7", "a=b", "=", "é😀", " x", "1e3", "true",
        "x\ty", "describe",
    ];
    let mut scopes = vec![&table.scope];
    for sub in &table.scope.subcommands {
        scopes.push(&sub.scope);
        tokens.push(sub.name.clone());
        tokens.push(sub.name.chars().take(3).collect());
    }
    for scope in &scopes {
        for option in &scope.options {
            for name in &option.names {
                if let Some(short) = name.strip_prefix('-') {
                    tokens.push(format!("-{short}"));
                    tokens.push(format!("-{short}v"));
                    tokens.push(format!("-{short}=v"));
                    continue;
                }
                tokens.push(format!("--{name}"));
                tokens.push(format!("--{name}=v"));
                tokens.push(format!("--{name}=--x=y"));
                tokens.push(format!("-{name}"));
                let chars: Vec<char> = name.chars().collect();
                if chars.len() > 3 {
                    let cut: String = chars[..chars.len() - 2].iter().collect();
                    tokens.push(format!("--{cut}"));
                    tokens.push(format!("--{cut}=v"));
                    tokens.push(format!("--{}", &cut[..2.min(cut.len())]));
                }
            }
        }
    }
    for unknown in [
        "--nope",
        "-Z",
        "---x",
        "--=x",
        "-",
        "-x1",
        "--from-begining",
        "-5",
    ] {
        tokens.push(unknown.to_string());
    }
    tokens.extend(values.iter().map(|v| v.to_string()));
    let base: Vec<String> = match table.name.as_str() {
        "kafka-producer-perf-test" => vec![
            "--topic",
            "t",
            "--num-records",
            "1",
            "--record-size",
            "1",
            "--throughput",
            "-1",
            "--producer-props",
            "a=b",
        ],
        "kafka-metadata-quorum" => vec!["--bootstrap-server", "b:1", "describe", "--status"],
        _ => vec!["--bootstrap-server", "b:1"],
    }
    .into_iter()
    .map(String::from)
    .collect();
    let token = prop::sample::select(tokens);
    (any::<bool>(), prop::collection::vec(token, 0..7)).prop_map(move |(with_base, rest)| {
        let mut argv = if with_base { base.clone() } else { Vec::new() };
        argv.extend(rest);
        argv
    })
}

#[test]
fn tool_cli_agrees_with_the_real_kafka_parsers() {
    let options = ToolOptions::get();
    let mut runner = TestRunner::new(Config {
        rng_algorithm: proptest::test_runner::RngAlgorithm::ChaCha,
        ..Config::default()
    });
    let mut cases: Vec<(String, Vec<String>)> = Vec::new();
    for tool in TOOLS {
        let table = options.table(tool, "4.3.1").expect("4.3.1 table");
        let strategy = corpus(table);
        for _ in 0..CASES_PER_TOOL {
            cases.push((
                tool.to_string(),
                strategy.new_tree(&mut runner).expect("generate").current(),
            ));
        }
    }
    let verdicts = run_oracle(&cases);
    assert_eq!(verdicts.len(), cases.len(), "one oracle line per case");
    let mut failures = Vec::new();
    let mut accepted: BTreeMap<&str, usize> = BTreeMap::new();
    for ((tool, argv), java) in cases.iter().zip(&verdicts) {
        let table = options.table(tool, "4.3.1").expect("table");
        let rust = ours(table, argv);
        let agree = match (&rust, java) {
            (None, None) => true,
            (Some((ours, true)), Some(java)) => ours == java,
            (Some((ours, false)), Some(java)) => {
                // every option Java stored is one we saw; compared values must match
                java.keys().all(|k| ours.contains_key(k))
                    && ours
                        .iter()
                        .all(|(k, v)| v == "\u{0}presence" || java.get(k).is_none_or(|j| j == v))
            }
            _ => false,
        };
        if java.is_some() {
            *accepted.entry(tool.as_str()).or_default() += 1;
        }
        if !agree {
            failures.push(format!(
                "{tool} {argv:?}\n    java: {java:?}\n    ours: {:?}\n    error: {:?}",
                rust.map(|r| r.0),
                tool_cli::parse(table, argv).and_then(|p| tool_cli::check_complete(table, &p))
            ));
        }
    }
    eprintln!("accepted by the real parsers, of {CASES_PER_TOOL} each: {accepted:?}");
    for tool in TOOLS {
        let n = accepted.get(tool).copied().unwrap_or(0);
        assert!(
            n > CASES_PER_TOOL / 20,
            "the corpus must reach accepted command lines of {tool} too ({n} of {CASES_PER_TOOL})"
        );
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases disagree; first ones:\n{}",
        failures.len(),
        cases.len(),
        failures
            .iter()
            .take(15)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}
