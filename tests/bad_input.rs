//! Bad input, table-driven (docs/RELIABILITY.md): for every kind of malformed or hostile input the
//! engine and the offline CLI must give one clear condition — the exact Reason, a message that
//! names the object, field and source — never panic, finish in bounded time, and touch nothing
//! else: a well-formed KafkaToolConfig evaluated next to the bad one in the same namespace renders
//! byte for byte as it does alone.
//!

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Instant;

use kafka_config_operator::cli::{RenderFormat, evaluate_manifest, render_text};
use kafka_config_operator::engine::outcome::Reason;
use kafka_config_operator::engine::sources::SourceData;
use kafka_config_operator::engine::spec::Role;
use kafka_config_operator::engine::{Evaluation, properties, render};
use kafka_config_operator::manifest::Workspace;
use kafka_config_operator::status::{self, Live};

/// A well-formed config that shares the namespace with every bad one.
const GOOD: &str = r#"
apiVersion: v1
kind: ConfigMap
metadata: {name: good-base, namespace: ns}
data:
  client.properties: |
    bootstrap.servers=kafka:9092
    linger.ms=7
---
apiVersion: kafkaconfig.dev/v1alpha1
kind: KafkaToolConfig
metadata: {name: good, namespace: ns}
spec:
  tool: client
  roles: [producer]
  configFiles: [{configMapKeyRef: {name: good-base, key: client.properties}}]
  env: [{name: REGION, value: eu-west-1}]
  properties: {producer: {client.id: "${env.REGION}-good"}}
"#;

/// `spec_tail` below a `client`/`producer` KafkaToolConfig named `bad` in namespace `ns`.
fn bad_client(spec_tail: &str) -> String {
    format!(
        "apiVersion: kafkaconfig.dev/v1alpha1\nkind: KafkaToolConfig\nmetadata: {{name: bad, namespace: ns}}\nspec:\n  tool: client\n  roles: [producer]\n{spec_tail}"
    )
}

/// `spec_tail` below a KafkaToolConfig of `tool` named `bad` in namespace `ns`.
fn bad_tool(tool: &str, spec_tail: &str) -> String {
    format!(
        "apiVersion: kafkaconfig.dev/v1alpha1\nkind: KafkaToolConfig\nmetadata: {{name: bad, namespace: ns}}\nspec:\n  tool: {tool}\n{spec_tail}"
    )
}

/// A GlobalClientDefaults named `platform` selecting only `tool` (so GOOD is untouched).
fn global_for(tool: &str, spec_tail: &str) -> String {
    format!(
        "apiVersion: kafkaconfig.dev/v1alpha1\nkind: GlobalClientDefaults\nmetadata: {{name: platform}}\nspec:\n  selector: {{tools: [{tool}]}}\n{spec_tail}"
    )
}

/// MirrorMaker 2 between a and b, under an enforced SASL_SSL and a Denylist on `security.*`.
fn mirror_under_policy(extra: &str) -> Vec<String> {
    vec![
        global_for(
            "connect-mirror-maker",
            "  enforced: {common: {security.protocol: SASL_SSL}}\n  overridePolicy: {mode: Denylist, keys: ['security.*']}\n",
        ),
        bad_tool(
            "connect-mirror-maker",
            &format!(
                "  properties:\n    mirror-maker:\n      clusters: a, b\n      a.bootstrap.servers: a:9092\n      b.bootstrap.servers: b:9092\n      a->b.enabled: true\n{extra}"
            ),
        ),
    ]
}

/// A console producer under an enforced SASL_SSL and a Denylist on `security.*`.
fn producer_under_policy(spec_tail: &str) -> Vec<String> {
    vec![
        global_for(
            "kafka-console-producer",
            "  enforced: {common: {security.protocol: SASL_SSL}}\n  overridePolicy: {mode: Denylist, keys: ['security.*']}\n",
        ),
        bad_tool("kafka-console-producer", spec_tail),
    ]
}

/// A broker config beside a GlobalClientDefaults for kafka-server with `global_tail`.
fn broker_under(global_tail: &str) -> Vec<String> {
    vec![
        global_for("kafka-server", global_tail),
        bad_tool(
            "kafka-server",
            "  roles: [broker]\n  properties: {broker: {node.id: \"1\", process.roles: broker}}\n",
        ),
    ]
}

fn config_map(name: &str, key: &str, text: &str) -> String {
    let mut out = format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: {name}, namespace: ns}}\ndata:\n  {key}: |\n"
    );
    for line in text.lines() {
        out.push_str("    ");
        out.push_str(line);
        out.push('\n');
    }
    out
}

fn workspace(docs: &[&str]) -> Result<Workspace, String> {
    let mut ws = Workspace::default();
    let text = docs.join("\n---\n");
    ws.add_documents(Path::new("bad.yaml"), &text)
        .map_err(|e| e.to_string())?;
    Ok(ws)
}

fn evaluate_named(ws: &Workspace, name: &str) -> Evaluation {
    let config = ws
        .configs
        .iter()
        .find(|c| c.metadata.name == name)
        .unwrap_or_else(|| panic!("no KafkaToolConfig {name}"));
    evaluate_manifest(ws, config)
}

/// Problems as text, each cut to 300 characters so a failing case does not print megabytes.
fn problems(ev: &Evaluation) -> Vec<String> {
    ev.source_problems
        .iter()
        .chain(&ev.problems)
        .map(|p| short(&format!("{} [{}] {}", p.reason, p.field, p.message)))
        .collect()
}

fn short(text: &str) -> String {
    match text.char_indices().nth(300) {
        Some((cut, _)) => format!("{}… ({} bytes)", &text[..cut], text.len()),
        None => text.to_string(),
    }
}

fn good_alone() -> Evaluation {
    evaluate_named(&workspace(&[GOOD]).expect("good parses"), "good")
}

/// "Nothing else is touched": the good config renders the same bytes next to the bad one.
fn assert_good_untouched(ws: &Workspace) {
    let alone = good_alone();
    let beside = evaluate_named(ws, "good");
    assert!(
        beside.is_valid(),
        "good config broken: {:?}",
        problems(&beside)
    );
    assert_eq!(
        alone.rendered.as_ref().map(|r| (&r.files, &r.hash)),
        beside.rendered.as_ref().map(|r| (&r.files, &r.hash)),
        "the bad config changed what the good one renders"
    );
}

fn rendered_file(ev: &Evaluation, file: &str) -> BTreeMap<String, String> {
    let rendered = ev
        .rendered
        .as_ref()
        .unwrap_or_else(|| panic!("not rendered: {:?}", problems(ev)));
    properties::load_str(&rendered.files[file])
        .expect("rendered file loads")
        .into_iter()
        .map(|e| (e.key, e.value))
        .collect()
}

/// What a case must produce.
enum Expect {
    /// Not rendered; one problem with this Reason, in this field, whose message holds every needle.
    Problem {
        reason: Reason,
        field: &'static str,
        needles: &'static [&'static str],
    },
    /// Rendered, with a warning of this Reason whose message holds every needle, and the check.
    Renders {
        warning: Option<(Reason, &'static [&'static str])>,
        check: fn(&Evaluation),
    },
    /// The manifest itself is refused; the error holds every needle.
    ManifestError { needles: &'static [&'static str] },
}

struct Case {
    name: &'static str,
    /// The documents besides GOOD.
    docs: fn() -> Vec<String>,
    expect: Expect,
}

fn props_case(file_text: &'static str) -> Vec<String> {
    vec![
        config_map("bad-file", "client.properties", file_text),
        bad_client(
            "  configFiles: [{configMapKeyRef: {name: bad-file, key: client.properties}}]\n",
        ),
    ]
}

fn cases() -> Vec<Case> {
    vec![
        Case {
            name: "properties: malformed \\u escape",
            docs: || props_case("bootstrap.servers=k:9092\nok=1\nbroken=\\u12G4\n"),
            expect: Expect::Problem {
                reason: Reason::ParseError,
                field: "spec.configFiles[0].configMapKeyRef",
                needles: &["ConfigMap bad-file/client.properties", "line 3", "\\uxxxx"],
            },
        },
        Case {
            name: "properties: \\u escape cut short at end of file",
            docs: || props_case("bootstrap.servers=k:9092\nbroken=\\u00"),
            expect: Expect::Problem {
                reason: Reason::ParseError,
                field: "spec.configFiles[0].configMapKeyRef",
                needles: &["ConfigMap bad-file/client.properties", "line 2"],
            },
        },
        Case {
            name: "properties: lone UTF-16 surrogate \\uD800",
            docs: || props_case("bootstrap.servers=k:9092\nlone=\\uD800x\n"),
            expect: Expect::Problem {
                reason: Reason::ParseError,
                field: "spec.configFiles[0].configMapKeyRef",
                needles: &["ConfigMap bad-file/client.properties", "line 2", "D800"],
            },
        },
        Case {
            // Java's Properties.load drops the backslash of an unknown escape: not an error.
            name: "properties: unknown escapes \\q \\z are read as Java reads them",
            docs: || props_case("bootstrap.servers=k:9092\ncustom.esc=\\q\\z\\\\\n"),
            expect: Expect::Renders {
                warning: None,
                check: |ev| {
                    assert_eq!(
                        rendered_file(ev, "producer.properties")["custom.esc"],
                        "qz\\"
                    )
                },
            },
        },
        Case {
            // A backslash at the very end of the file continues into nothing (Java: dropped).
            name: "properties: lone backslash at end of file",
            docs: || {
                let mut docs = props_case("bootstrap.servers=k:9092\n");
                // The file must end in the backslash itself: use binaryData to control bytes.
                docs[0] = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: bad-file, namespace: ns}\nbinaryData:\n  client.properties: Ym9vdHN0cmFwLnNlcnZlcnM9azo5MDkyCmN1c3RvbS5lbmQ9dmFsdWVc\n".into();
                docs
            },
            expect: Expect::Renders {
                warning: None,
                check: |ev| {
                    assert_eq!(
                        rendered_file(ev, "producer.properties")["custom.end"],
                        "value"
                    )
                },
            },
        },
        Case {
            // binaryData with bytes that are not UTF-8: read as ISO-8859-1, as Kafka does.
            name: "binaryData: non-UTF-8 bytes in a config file",
            docs: || {
                vec![
                    // "bootstrap.servers=k:9092\ncustom.latin=caf\xe9\xff\n"
                    "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: bin, namespace: ns}\nbinaryData:\n  client.properties: Ym9vdHN0cmFwLnNlcnZlcnM9azo5MDkyCmN1c3RvbS5sYXRpbj1jYWbp/wo=\n".into(),
                    bad_client("  configFiles: [{configMapKeyRef: {name: bin, key: client.properties}}]\n"),
                ]
            },
            expect: Expect::Renders {
                warning: Some((
                    Reason::NonAsciiInFile,
                    &["ConfigMap bin/client.properties", "ISO-8859-1"],
                )),
                check: |ev| {
                    assert_eq!(
                        rendered_file(ev, "producer.properties")["custom.latin"],
                        "caf\u{e9}\u{ff}"
                    );
                    let raw = &ev.rendered.as_ref().expect("rendered").files["producer.properties"];
                    assert!(raw.contains("caf\\u00E9\\u00FF"), "{raw}");
                },
            },
        },
        Case {
            name: "binaryData: non-UTF-8 bytes as an env value",
            docs: || {
                vec![
                    "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: bin, namespace: ns}\nbinaryData:\n  region: //7/\n".into(),
                    bad_client("  env: [{name: REGION, valueFrom: {configMapKeyRef: {name: bin, key: region}}}]\n  properties: {producer: {bootstrap.servers: k:9092, client.id: \"${env.REGION}\"}}\n"),
                ]
            },
            expect: Expect::Problem {
                reason: Reason::ParseError,
                field: "spec.env[0].valueFrom.configMapKeyRef",
                needles: &["ConfigMap bin/region", "not UTF-8"],
            },
        },
        Case {
            name: "binaryData: not base64",
            docs: || {
                vec!["apiVersion: v1\nkind: ConfigMap\nmetadata: {name: bin, namespace: ns}\nbinaryData:\n  client.properties: '***not base64***'\n".into()]
            },
            expect: Expect::ManifestError {
                needles: &[
                    "bad.yaml",
                    "ConfigMap bin",
                    "binaryData.client.properties: not valid base64",
                ],
            },
        },
        Case {
            name: "references: deeply repeated ${ nesting (10,000 levels)",
            docs: || {
                let deep = format!("{}x{}", "${".repeat(10_000), "}".repeat(10_000));
                vec![bad_client(&format!(
                    "  properties: {{producer: {{bootstrap.servers: k:9092, custom.deep: '{deep}'}}}}\n"
                ))]
            },
            // A reference inside a reference is refused, not half-resolved (issue 23).
            expect: Expect::Problem {
                reason: Reason::ParseError,
                field: "properties.producer",
                needles: &["custom.deep: reference", "nested references"],
            },
        },
        Case {
            name: "references: 100,000 unclosed ${",
            docs: || {
                let open = "${".repeat(100_000);
                vec![bad_client(&format!(
                    "  properties: {{producer: {{bootstrap.servers: k:9092, custom.open: '{open}'}}}}\n"
                ))]
            },
            expect: Expect::Problem {
                reason: Reason::ParseError,
                field: "properties.producer",
                needles: &["custom.open: reference starting at byte 0 is not closed"],
            },
        },
        Case {
            // Substituted text is never scanned again (DESIGN §4): a cycle is just text.
            name: "references: cycle through env values A→B→A",
            docs: || {
                vec![bad_client(
                    "  env:\n    - {name: A, value: '${env.B}'}\n    - {name: B, value: '${env.A}'}\n  properties: {producer: {bootstrap.servers: k:9092, custom.a: '${env.A}', custom.b: '${env.B}'}}\n",
                )]
            },
            expect: Expect::Renders {
                warning: None,
                check: |ev| {
                    let file = rendered_file(ev, "producer.properties");
                    assert_eq!(file["custom.a"], "${env.B}");
                    assert_eq!(file["custom.b"], "${env.A}");
                },
            },
        },
        Case {
            name: "references: self-reference through a system property",
            docs: || {
                vec![bad_client(
                    "  systemProperties: {loop: '${loop}'}\n  properties: {producer: {bootstrap.servers: k:9092, custom.loop: '${loop}'}}\n",
                )]
            },
            expect: Expect::Renders {
                warning: None,
                check: |ev| {
                    assert_eq!(
                        rendered_file(ev, "producer.properties")["custom.loop"],
                        "${loop}"
                    )
                },
            },
        },
        Case {
            name: "unknown tool",
            docs: || {
                vec!["apiVersion: kafkaconfig.dev/v1alpha1\nkind: KafkaToolConfig\nmetadata: {name: bad, namespace: ns}\nspec:\n  tool: kafka-console-produce\n".into()]
            },
            expect: Expect::Problem {
                reason: Reason::UnknownTool,
                field: "spec.tool",
                needles: &[
                    "\"kafka-console-produce\"",
                    "did you mean kafka-console-producer",
                ],
            },
        },
        Case {
            name: "unknown role for the tool",
            docs: || {
                vec![
                    "apiVersion: kafkaconfig.dev/v1alpha1\nkind: KafkaToolConfig\nmetadata: {name: bad, namespace: ns}\nspec:\n  tool: client\n  roles: [broker]\n".into(),
                ]
            },
            expect: Expect::Problem {
                reason: Reason::UnknownRole,
                field: "spec.roles",
                needles: &["client has no role broker"],
            },
        },
        Case {
            // A section that is no role at all (`wizard`) is an unknown field of the schema, a
            // manifest error (tests/gate.rs); a role the tool does not render reaches the engine.
            name: "properties section of a role the tool does not render",
            docs: || {
                vec![bad_client(
                    "  properties: {consumer: {a: b}, producer: {bootstrap.servers: k:9092}}\n",
                )]
            },
            expect: Expect::Problem {
                reason: Reason::UnknownRole,
                field: "spec.properties.consumer",
                needles: &["use common or one of those"],
            },
        },
        Case {
            name: "metadata.name that YAML reads as a boolean",
            docs: || {
                vec!["apiVersion: kafkaconfig.dev/v1alpha1\nkind: KafkaToolConfig\nmetadata: {name: y, namespace: ns}\nspec:\n  tool: client\n".into()]
            },
            expect: Expect::ManifestError {
                needles: &[
                    "bad.yaml",
                    "KafkaToolConfig",
                    "metadata cannot be read",
                    "boolean",
                    "quote",
                ],
            },
        },
        Case {
            name: "Secret metadata read as a string: its value is not repeated",
            docs: || {
                vec!["apiVersion: v1\nkind: Secret\nmetadata: {name: s, namespace: ns, annotations: 'password=canary-3f9c'}\nstringData: {p: x}\n".into()]
            },
            expect: Expect::ManifestError {
                needles: &[
                    "bad.yaml",
                    "metadata cannot be read",
                    "invalid type: a string",
                    "expected a map",
                ],
            },
        },
        Case {
            name: "role name that does not exist at all",
            docs: || {
                vec!["apiVersion: kafkaconfig.dev/v1alpha1\nkind: KafkaToolConfig\nmetadata: {name: bad, namespace: ns}\nspec:\n  tool: client\n  roles: [wizard]\n".into()]
            },
            expect: Expect::ManifestError {
                needles: &["bad.yaml", "KafkaToolConfig bad", "spec", "wizard"],
            },
        },
        Case {
            name: "key and value with newlines cannot inject a key",
            docs: || {
                vec![bad_client(
                    "  properties:\n    producer:\n      bootstrap.servers: k:9092\n      \"custom.a\\nsasl.jaas.config\": x\n      custom.b: \"v\\nssl.truststore.location=/evil\\r\\nacks=0\"\n",
                )]
            },
            expect: Expect::Renders {
                warning: Some((Reason::UnknownKey, &["custom.a\nsasl.jaas.config"])),
                check: |ev| {
                    let file = rendered_file(ev, "producer.properties");
                    assert_eq!(file["custom.a\nsasl.jaas.config"], "x");
                    assert_eq!(
                        file["custom.b"],
                        "v\nssl.truststore.location=/evil\r\nacks=0"
                    );
                    assert!(!file.contains_key("sasl.jaas.config"));
                    assert!(!file.contains_key("ssl.truststore.location"));
                    assert!(!file.contains_key("acks"));
                },
            },
        },
        Case {
            name: "output over the 1 MiB object limit",
            docs: || {
                let big = "v".repeat(1_100_000);
                vec![bad_client(&format!(
                    "  properties: {{producer: {{bootstrap.servers: k:9092, custom.big: {big}}}}}\n"
                ))]
            },
            expect: Expect::Problem {
                reason: Reason::OutputTooLarge,
                field: "spec",
                needles: &["bytes", "1 MiB"],
            },
        },
        Case {
            name: "missing ConfigMap",
            docs: || {
                vec![bad_client(
                    "  configFiles: [{configMapKeyRef: {name: nope, key: k}}]\n",
                )]
            },
            expect: Expect::Problem {
                reason: Reason::ConfigMapNotFound,
                field: "spec.configFiles[0].configMapKeyRef",
                needles: &["ConfigMap nope does not exist"],
            },
        },
        // ---- issue 23: what the tool runs is what explain says ----
        Case {
            name: "args: a line break in an option name",
            docs: || {
                producer_under_policy(
                    "  args: {topic: t, bootstrap-server: 'k:9092', \"x\\n--producer.config\": /tmp/evil.properties}\n",
                )
            },
            expect: Expect::Problem {
                reason: Reason::InvalidArgument,
                field: "spec.args[\"x\\n--producer.config\"]",
                needles: &["option name contains U+000A"],
            },
        },
        Case {
            name: "args: a line break in a value that maps to no property",
            docs: || {
                producer_under_policy(
                    "  args: {bootstrap-server: 'k:9092', topic: \"t\\n--producer-property\\nsecurity.protocol=PLAINTEXT\"}\n",
                )
            },
            expect: Expect::Problem {
                reason: Reason::InvalidArgument,
                field: "spec.args.topic",
                needles: &["value contains U+000A"],
            },
        },
        Case {
            name: "args: a line break in a property value that becomes --bootstrap-server",
            docs: || {
                producer_under_policy(
                    "  args: {topic: t}\n  properties: {producer: {bootstrap.servers: \"k:9092\\n--producer.config\\n/tmp/evil\"}}\n",
                )
            },
            expect: Expect::Problem {
                reason: Reason::InvalidValue,
                field: "properties.producer",
                needles: &["--bootstrap-server", "U+000A"],
            },
        },
        Case {
            name: "args: a line break brought in by a reference",
            docs: || {
                producer_under_policy(
                    "  env: [{name: T, value: \"t\\n--producer.config\"}]\n  args: {bootstrap-server: 'k:9092', topic: '${env.T}'}\n",
                )
            },
            expect: Expect::Problem {
                reason: Reason::InvalidArgument,
                field: "spec.args.topic",
                needles: &["after resolving references", "U+000A"],
            },
        },
        Case {
            name: "output.mountPath: a line break",
            docs: || {
                vec![bad_client(
                    "  properties: {producer: {bootstrap.servers: 'k:9092'}}\n  output: {mountPath: \"/etc/kafka\\n--producer.config\"}\n",
                )]
            },
            // The CRD's rule refuses it at apply time, so the offline gate does too (the
            // engine's own check, for objects stored before that rule, is safe_text's).
            expect: Expect::ManifestError {
                needles: &["spec.output.mountPath", "U+000A"],
            },
        },
        Case {
            name: "output.mountPath: relative with ..",
            docs: || {
                vec![bad_client(
                    "  properties: {producer: {bootstrap.servers: 'k:9092'}}\n  output: {mountPath: /etc/../root}\n",
                )]
            },
            expect: Expect::ManifestError {
                needles: &["spec.output.mountPath", "normalised", "\"..\""],
            },
        },
        Case {
            name: "args: a property-carrying option spelled name=value",
            docs: || {
                producer_under_policy(
                    "  args: {topic: t, bootstrap-server: 'k:9092', command-config=/tmp/evil.properties: true}\n",
                )
            },
            expect: Expect::Problem {
                reason: Reason::InvalidArgument,
                field: "spec.args[\"command-config=/tmp/evil.properties\"]",
                needles: &["not after '='"],
            },
        },
        Case {
            name: "args: an empty option name",
            docs: || {
                producer_under_policy("  args: {topic: t, bootstrap-server: 'k:9092', '': x}\n")
            },
            expect: Expect::Problem {
                reason: Reason::InvalidArgument,
                field: "spec.args[\"\"]",
                needles: &["cannot be empty"],
            },
        },
        Case {
            name: "args: an unresolved reference in an argument that maps to no property",
            docs: || {
                producer_under_policy("  args: {bootstrap-server: 'k:9092', topic: '${env.T}'}\n")
            },
            expect: Expect::Problem {
                reason: Reason::UnresolvedReference,
                field: "spec.args.topic",
                needles: &["${env.T}", "spec.env"],
            },
        },
        Case {
            name: "args: a reference in an argument that maps to no property resolves",
            docs: || {
                producer_under_policy(
                    "  env: [{name: T, value: orders}]\n  args: {bootstrap-server: 'k:9092', topic: '${env.T}'}\n  extraArgs: ['--property', 'parse.key=${env.K:false}']\n",
                )
            },
            expect: Expect::Renders {
                warning: None,
                check: |ev| {
                    let args = &ev.rendered.as_ref().expect("rendered").files["tool.args"];
                    assert!(args.contains("--topic\norders\n"), "{args}");
                    assert!(args.contains("--property\nparse.key=false\n"), "{args}");
                    assert!(!args.contains("${"), "{args}");
                },
            },
        },
        Case {
            name: "references: nested default ${env.A:${env.B}}",
            docs: || {
                vec![bad_client(
                    "  env: [{name: A, value: va}]\n  properties: {producer: {bootstrap.servers: 'k:9092', client.id: '${env.A:${env.B}}'}}\n",
                )]
            },
            expect: Expect::Problem {
                reason: Reason::ParseError,
                field: "properties.producer",
                needles: &["client.id", "nested references"],
            },
        },
        Case {
            name: "mirror maker: {cluster}.k beats an enforced security.protocol",
            docs: || mirror_under_policy("      a.security.protocol: PLAINTEXT\n"),
            expect: Expect::Problem {
                reason: Reason::OverrideNotAllowed,
                field: "spec (mirror-maker)",
                needles: &[
                    "a.security.protocol",
                    "sets security.protocol for a cluster",
                ],
            },
        },
        Case {
            name: "mirror maker: {role}.override.k beats an enforced security.protocol",
            docs: || mirror_under_policy("      producer.override.security.protocol: PLAINTEXT\n"),
            expect: Expect::Problem {
                reason: Reason::OverrideNotAllowed,
                field: "spec (mirror-maker)",
                needles: &[
                    "producer.override.security.protocol",
                    "GlobalClientDefaults platform",
                ],
            },
        },
        Case {
            name: "mirror maker: {cluster}.{role}.k with an enforced key and no Denylist",
            docs: || {
                vec![
                    global_for(
                        "connect-mirror-maker",
                        "  enforced: {common: {security.protocol: SASL_SSL}}\n",
                    ),
                    bad_tool(
                        "connect-mirror-maker",
                        "  properties:\n    mirror-maker:\n      clusters: a, b\n      a.bootstrap.servers: a:9092\n      b.bootstrap.servers: b:9092\n      b.consumer.security.protocol: PLAINTEXT\n",
                    ),
                ]
            },
            expect: Expect::Problem {
                reason: Reason::OverrideNotAllowed,
                field: "spec (mirror-maker)",
                needles: &[
                    "b.consumer.security.protocol",
                    "would beat security.protocol enforced by GlobalClientDefaults platform",
                ],
            },
        },
        Case {
            name: "global defaults: a value of the wrong type stops the configs it selects",
            docs: || {
                vec![
                    global_for(
                        "kafka-console-consumer",
                        "  defaults: {consumer: {max.partition.fetch.bytes: lots}}\n",
                    ),
                    bad_tool(
                        "kafka-console-consumer",
                        "  args: {topic: t, bootstrap-server: 'k:9092'}\n",
                    ),
                ]
            },
            expect: Expect::Problem {
                reason: Reason::GlobalDefaultsInvalid,
                field: "GlobalClientDefaults platform",
                needles: &["spec.defaults.consumer.max.partition.fetch.bytes", "lots"],
            },
        },
        Case {
            name: "global defaults: an enforced local-only broker key",
            docs: || broker_under("  enforced: {broker: {node.id: \"7\"}}\n"),
            expect: Expect::Problem {
                reason: Reason::GlobalDefaultsInvalid,
                field: "GlobalClientDefaults platform",
                needles: &["spec.enforced.broker.node.id", "local to each broker"],
            },
        },
        Case {
            name: "global defaults: a local-only broker key as a default",
            docs: || broker_under("  defaults: {broker: {node.id: \"99\"}}\n"),
            expect: Expect::Problem {
                reason: Reason::GlobalDefaultsInvalid,
                field: "GlobalClientDefaults platform",
                needles: &["spec.defaults.broker.node.id"],
            },
        },
        Case {
            name: "global defaults: an enforced value written as a reference",
            docs: || {
                vec![
                    global_for(
                        "kafka-console-producer",
                        "  enforced: {common: {client.id: '${env.CID:platform}'}}\n",
                    ),
                    bad_tool(
                        "kafka-console-producer",
                        "  env: [{name: CID, value: tenant}]\n  args: {topic: t, bootstrap-server: 'k:9092'}\n",
                    ),
                ]
            },
            expect: Expect::Problem {
                reason: Reason::GlobalDefaultsInvalid,
                field: "GlobalClientDefaults platform",
                needles: &["cannot hold a reference"],
            },
        },
        Case {
            name: "bootstrap.servers: empty",
            docs: || {
                producer_under_policy(
                    "  args: {topic: t}\n  properties: {producer: {bootstrap.servers: ''}}\n",
                )
            },
            expect: Expect::Problem {
                reason: Reason::InvalidValue,
                field: "properties.producer",
                needles: &["bootstrap.servers", "is empty"],
            },
        },
        Case {
            name: "bootstrap.servers: not host:port",
            docs: || {
                vec![bad_client(
                    "  properties: {producer: {bootstrap.servers: 'kafka, b:9092'}}\n",
                )]
            },
            expect: Expect::Problem {
                reason: Reason::InvalidValue,
                field: "properties.producer",
                needles: &["bootstrap.servers", "entry 1 is not host:port"],
            },
        },
        Case {
            name: "e2e-latency: group.id is computed by the tool",
            docs: || {
                vec![bad_tool(
                    "kafka-e2e-latency",
                    "  args: {bootstrap-server: 'k:9092', topic: t, num-records: 10, producer-acks: all, record-size: 100}\n  properties: {consumer: {group.id: mine}}\n",
                )]
            },
            expect: Expect::Renders {
                warning: Some((Reason::ForcedByTool, &["group.id", "test-group-"])),
                check: |_| {},
            },
        },
        Case {
            name: "streams-application-reset: no bootstrap anywhere",
            docs: || {
                vec![bad_tool(
                    "kafka-streams-application-reset",
                    "  args: {application-id: app}\n",
                )]
            },
            expect: Expect::Renders {
                warning: Some((
                    Reason::DefaultAddress,
                    &["bootstrap.servers", "localhost:9092"],
                )),
                check: |ev| {
                    let args = &ev.rendered.as_ref().expect("rendered").files["tool.args"];
                    assert!(
                        args.contains("--bootstrap-server\nlocalhost:9092\n"),
                        "{args}"
                    );
                },
            },
        },
        Case {
            name: "extraArgs: a client-property option",
            docs: || {
                producer_under_policy(
                    "  args: {topic: t, bootstrap-server: 'k:9092'}\n  extraArgs: [--producer-property, security.protocol=PLAINTEXT]\n",
                )
            },
            expect: Expect::Problem {
                reason: Reason::InvalidArgument,
                field: "spec.extraArgs[0]",
                needles: &[
                    "--producer-property carries client properties",
                    "spec.properties",
                ],
            },
        },
        Case {
            name: "extraArgs: --producer.config=FILE spelling",
            docs: || {
                producer_under_policy(
                    "  args: {topic: t, bootstrap-server: 'k:9092'}\n  extraArgs: ['--producer.config=/tmp/evil.properties']\n",
                )
            },
            expect: Expect::Problem {
                reason: Reason::InvalidArgument,
                field: "spec.extraArgs[0]",
                needles: &["--producer.config carries"],
            },
        },
        Case {
            name: "args: unknown options get a did-you-mean",
            docs: || {
                vec![bad_tool(
                    "kafka-console-consumer",
                    "  args: {topic: t, bootstrap-server: 'k:9092', from-begining: true, max-mesages: 10}\n",
                )]
            },
            expect: Expect::Problem {
                reason: Reason::UnknownArgument,
                field: "spec.args.from-begining",
                needles: &[
                    "not an option of kafka-console-consumer",
                    "did you mean --from-beginning?",
                ],
            },
        },
        Case {
            name: "extraArgs: a flag given a value (jopt would drop it)",
            docs: || {
                vec![bad_tool(
                    "kafka-console-consumer",
                    "  args: {topic: t, bootstrap-server: 'k:9092'}\n  extraArgs: ['--skip-message-on-error=false']\n",
                )]
            },
            expect: Expect::Problem {
                reason: Reason::InvalidArgument,
                field: "spec.extraArgs[0]",
                needles: &["--skip-message-on-error takes no value"],
            },
        },
        Case {
            name: "extraArgs: an option that sets a client property",
            docs: || {
                producer_under_policy(
                    "  args: {topic: t, bootstrap-server: 'k:9092'}\n  extraArgs: [--bootstrap-server, 'evil:9092']\n",
                )
            },
            expect: Expect::Problem {
                reason: Reason::InvalidArgument,
                field: "spec.extraArgs[0]",
                needles: &["--bootstrap-server sets bootstrap.servers"],
            },
        },
        Case {
            name: "extraArgs: an option that needs a value, at the end",
            docs: || {
                vec![bad_tool(
                    "kafka-console-consumer",
                    "  args: {topic: t, bootstrap-server: 'k:9092'}\n  extraArgs: [--max-messages]\n",
                )]
            },
            expect: Expect::Problem {
                reason: Reason::InvalidArgument,
                field: "spec.extraArgs[0]",
                needles: &["--max-messages needs a value"],
            },
        },
        Case {
            name: "kafkaVersion: not a release",
            docs: || {
                vec![bad_client(
                    "  kafkaVersion: banana\n  properties: {producer: {bootstrap.servers: 'k:9092'}}\n",
                )]
            },
            expect: Expect::ManifestError {
                needles: &["spec.kafkaVersion: must be a Kafka release number"],
            },
        },
        Case {
            // Shaped like a release, unknown to the catalogue: the engine's check.
            name: "kafkaVersion: a release the catalogue does not know",
            docs: || {
                vec![bad_client(
                    "  kafkaVersion: '9.9'\n  properties: {producer: {bootstrap.servers: 'k:9092'}}\n",
                )]
            },
            expect: Expect::Problem {
                reason: Reason::InvalidValue,
                field: "spec.kafkaVersion",
                needles: &["\"9.9\" is not a Kafka release", "4.0 up to 4.3"],
            },
        },
        Case {
            name: "extraArgs: reader properties stay the user's",
            docs: || {
                vec![bad_tool(
                    "kafka-console-producer",
                    "  args: {topic: t, bootstrap-server: 'k:9092'}\n  extraArgs: [--reader-property, parse.key=true]\n",
                )]
            },
            expect: Expect::Renders {
                warning: None,
                check: |ev| {
                    let args = &ev.rendered.as_ref().expect("rendered").files["tool.args"];
                    assert!(
                        args.ends_with("--reader-property\nparse.key=true\n"),
                        "{args}"
                    );
                },
            },
        },
        Case {
            // Issue 24: 10,000 references to a 100 KB value would build 1 GB; substitution
            // stops as soon as a value passes the output limit (time and RSS bounds:
            // e2e/bench/hostile-input.sh).
            name: "references: amplification (10,000 x 100 KB)",
            docs: || {
                let big = "x".repeat(100_000);
                let many = "${env.BIG}".repeat(10_000);
                vec![bad_client(&format!(
                    "  env: [{{name: BIG, value: '{big}'}}]\n  properties: {{producer: {{bootstrap.servers: 'k:9092', custom.big: '{many}'}}}}\n"
                ))]
            },
            expect: Expect::Problem {
                reason: Reason::OutputTooLarge,
                field: "properties.producer",
                needles: &["custom.big", "beyond 1000000 bytes"],
            },
        },
        Case {
            // Issue 24: Deferred keeps every Secret byte out of the ConfigMap, tool.args included.
            name: "deferred: a Secret-sourced value that becomes an argument",
            docs: || {
                vec![
                    "apiVersion: v1\nkind: Secret\nmetadata: {name: conn, namespace: ns}\nstringData: {bs: 'secret-broker:9092'}\n".into(),
                    bad_tool(
                        "kafka-console-producer",
                        "  env: [{name: BS, valueFrom: {secretKeyRef: {name: conn, key: bs}}}]\n  args: {topic: t}\n  properties: {producer: {bootstrap.servers: '${env.BS}'}}\n  output: {secrets: Deferred}\n",
                    ),
                ]
            },
            expect: Expect::Problem {
                reason: Reason::SensitiveArgument,
                field: "tool.args",
                needles: &["--bootstrap-server would carry data of Secret ns/conn key bs"],
            },
        },
        Case {
            // Issue 26: a misspelt kind of our group is an error, not a document skipped.
            name: "manifest: a misspelt kind of kafkaconfig.dev",
            docs: || {
                vec!["apiVersion: kafkaconfig.dev/v1alpha1\nkind: KafkaToolConfg\nmetadata: {name: bad, namespace: ns}\nspec: {tool: client}\n".into()]
            },
            expect: Expect::ManifestError {
                needles: &[
                    "\"KafkaToolConfg\" is not a kind of kafkaconfig.dev",
                    "did you mean KafkaToolConfig?",
                ],
            },
        },
        Case {
            name: "manifest: our kind under a wrong apiVersion",
            docs: || {
                vec!["apiVersion: kafkaconfig.dev/v1\nkind: KafkaToolConfig\nmetadata: {name: bad, namespace: ns}\nspec: {tool: client}\n".into()]
            },
            expect: Expect::ManifestError {
                needles: &[
                    "apiVersion \"kafkaconfig.dev/v1\" is not served",
                    "kafkaconfig.dev/v1alpha1",
                ],
            },
        },
    ]
}

fn check_case(case: &Case) {
    let docs = (case.docs)();
    let mut all: Vec<&str> = vec![GOOD];
    all.extend(docs.iter().map(String::as_str));
    let started = Instant::now();
    let ws = workspace(&all);
    match (&case.expect, ws) {
        (Expect::ManifestError { needles }, Err(message)) => {
            for needle in *needles {
                assert!(
                    message.contains(needle),
                    "{}: {message:?} lacks {needle:?}",
                    case.name
                );
            }
            assert!(
                !message.contains("canary-3f9c"),
                "{}: a value of the input is repeated: {message:?}",
                case.name
            );
            // The manifest error stops the file; the good config still renders from its own file.
            assert!(good_alone().is_valid());
        }
        (Expect::ManifestError { .. }, Ok(_)) => panic!("{}: manifest was accepted", case.name),
        (_, Err(message)) => panic!("{}: manifest refused: {message}", case.name),
        (
            Expect::Problem {
                reason,
                field,
                needles,
            },
            Ok(ws),
        ) => {
            let ev = evaluate_named(&ws, "bad");
            assert!(ev.rendered.is_none(), "{}: rendered anyway", case.name);
            let found = ev
                .source_problems
                .iter()
                .chain(&ev.problems)
                .find(|p| p.reason == *reason && p.field == *field)
                .unwrap_or_else(|| {
                    panic!("{}: no {reason} at {field}: {:?}", case.name, problems(&ev))
                });
            for needle in *needles {
                assert!(
                    found.message.contains(needle),
                    "{}: {:?} lacks {needle:?}",
                    case.name,
                    short(&found.message)
                );
            }
            // The size of the message is checked by `condition_messages_are_bounded`.
            assert_good_untouched(&ws);
        }
        (Expect::Renders { warning, check }, Ok(ws)) => {
            let ev = evaluate_named(&ws, "bad");
            assert!(ev.is_valid(), "{}: {:?}", case.name, problems(&ev));
            if let Some((reason, needles)) = warning {
                let w = ev
                    .warnings
                    .iter()
                    .find(|w| {
                        w.reason == *reason
                            && needles
                                .iter()
                                .all(|n| w.message.contains(n) || w.key.contains(n))
                    })
                    .unwrap_or_else(|| {
                        panic!(
                            "{}: no {reason} warning with {needles:?}: {:?}",
                            case.name, ev.warnings
                        )
                    });
                let _ = w;
            }
            check(&ev);
            assert_good_untouched(&ws);
        }
    }
    eprintln!("{:<60} {:>8.1?}", case.name, started.elapsed());
}

#[test]
fn bad_input_table() {
    let cases = cases();
    for case in &cases {
        check_case(case);
    }
    eprintln!("bad-input cases: {}", cases.len());
}

/// Workspace with GOOD plus `bad` reading ConfigMap `big`/`client.properties` = `bytes`.
fn with_big_file(bytes: Vec<u8>) -> Workspace {
    let mut ws = workspace(&[
        GOOD,
        &bad_client("  configFiles: [{configMapKeyRef: {name: big, key: client.properties}}]\n"),
    ])
    .expect("parses");
    ws.sources
        .entry("ns".into())
        .or_default()
        .config_maps
        .insert(
            "big".into(),
            SourceData {
                data: BTreeMap::from([("client.properties".to_string(), bytes)]),
            },
        );
    ws
}

#[test]
fn one_mib_source_evaluates() {
    // 1 MiB of comments and blank lines around a handful of real keys.
    let mut text = String::from("bootstrap.servers=k:9092\ncustom.first=1\n");
    let filler = format!("# {}\n", "c".repeat(1021));
    while text.len() + filler.len() < (1 << 20) - 64 {
        text.push_str(&filler);
    }
    text.push_str("custom.last=2\n");
    assert!(text.len() > 1_000_000);
    let ws = with_big_file(text.into_bytes());
    let started = Instant::now();
    let ev = evaluate_named(&ws, "bad");
    eprintln!("1 MiB source: evaluated in {:?}", started.elapsed());
    let file = rendered_file(&ev, "producer.properties");
    assert_eq!(file["custom.first"], "1");
    assert_eq!(file["custom.last"], "2");
    assert_good_untouched(&ws);
}

#[test]
fn one_mib_source_of_keys_is_output_too_large() {
    let mut text = String::from("bootstrap.servers=k:9092\n");
    let mut i = 0;
    while text.len() < (1 << 20) {
        text.push_str(&format!("custom.key{i:07}={}\n", "v".repeat(40)));
        i += 1;
    }
    let ws = with_big_file(text.into_bytes());
    let started = Instant::now();
    let ev = evaluate_named(&ws, "bad");
    eprintln!(
        "1 MiB source of {i} keys: evaluated in {:?}",
        started.elapsed()
    );
    let problem = ev
        .problems
        .iter()
        .find(|p| p.reason == Reason::OutputTooLarge)
        .unwrap_or_else(|| panic!("{:?}", problems(&ev)));
    assert!(problem.message.contains("1 MiB"));
    assert!(ev.rendered.is_none());
    assert_good_untouched(&ws);
}

#[test]
fn hundred_thousand_keys_evaluate() {
    let mut text = String::from("bootstrap.servers=k:9092\n");
    for i in 0..100_000 {
        text.push_str(&format!("k{i}=v\n"));
    }
    let ws = with_big_file(text.into_bytes());
    let started = Instant::now();
    let ev = evaluate_named(&ws, "bad");
    eprintln!("100,000 keys: evaluated in {:?}", started.elapsed());
    let rendered = ev
        .rendered
        .as_ref()
        .unwrap_or_else(|| panic!("{:?}", problems(&ev)));
    let size: usize = rendered.files.values().map(String::len).sum();
    assert!(size <= render::MAX_OUTPUT_BYTES);
    let file = rendered_file(&ev, "producer.properties");
    assert_eq!(file.len(), 100_001);
    assert_eq!(file["k99999"], "v");
    let status = status::build(&ev, Some(1), None, &Live::default(), "2026-01-01T00:00:00Z");
    let status_bytes = serde_json::to_vec(&status).expect("serializes").len();
    eprintln!(
        "100,000 keys: {} warnings, status {status_bytes} bytes",
        ev.warnings.len()
    );
    assert_good_untouched(&ws);
}

/// The status the operator writes must fit in one Kubernetes object (etcd's limit is 1.5 MiB;
/// keep it well under 1 MiB). Today every unknown key is one warning, so a file of 100,000
/// unknown keys gives 100,000 warnings (about 10 MB of status) and the status write fails.
#[test]
fn status_stays_under_the_object_limit() {
    let mut text = String::from("bootstrap.servers=k:9092\n");
    for i in 0..100_000 {
        text.push_str(&format!("k{i}=v\n"));
    }
    let ws = with_big_file(text.into_bytes());
    let ev = evaluate_named(&ws, "bad");
    let status = status::build(&ev, Some(1), None, &Live::default(), "2026-01-01T00:00:00Z");
    let status_bytes = serde_json::to_vec(&status).expect("serializes").len();
    assert!(status_bytes < 256 * 1024, "status of {status_bytes} bytes");
}

/// Issue 24: echoed text is bounded, so the status stays under its budget whatever the input:
/// long keys in every list a status has (warnings, shadowed keys with many layers, conditions).
#[test]
fn status_stays_under_its_budget_in_the_worst_case() {
    // 60 such keys per ConfigMap stay under the 1 MiB of data the API server stores.
    let long_key = |i: usize| format!("custom.{i}.{}", "k".repeat(17_000));
    let mut docs = Vec::new();
    let mut files = Vec::new();
    for f in 0..6 {
        let text: String = (0..60).map(|i| format!("{}=v{f}\n", long_key(i))).collect();
        docs.push(config_map(&format!("f{f}"), "client.properties", &text));
        files.push(format!(
            "{{configMapKeyRef: {{name: f{f}, key: client.properties}}}}"
        ));
    }
    docs.push(bad_client(&format!(
        "  configFiles: [{}]\n  properties: {{producer: {{bootstrap.servers: 'k:9092'}}}}\n",
        files.join(", ")
    )));
    let refs: Vec<&str> = docs.iter().map(String::as_str).collect();
    let ws = workspace(&refs).expect("parses");
    let ev = evaluate_named(&ws, "bad");
    assert!(
        ev.shadowed.len() >= 60 && ev.warnings.len() >= 60,
        "the case must fill every list"
    );
    let mut status = status::build(&ev, Some(1), None, &Live::default(), "2026-01-01T00:00:00Z");
    for revision in 0..12 {
        let changed: Vec<String> = (0..60).map(long_key).collect();
        status::record_history(
            &mut status,
            &format!("sha256:{revision}"),
            "t",
            changed,
            "x".repeat(50_000),
            Some(status::Author {
                kind: "k".repeat(50_000),
                name: "n".repeat(50_000),
                manager: "m".repeat(50_000),
                operation: Some("o".repeat(50_000)),
                time: Some("t".repeat(50_000)),
            }),
        );
    }
    let bytes = serde_json::to_vec(&status).expect("serializes").len();
    eprintln!("worst-case status: {bytes} bytes");
    assert!(
        bytes < status::STATUS_BUDGET_BYTES,
        "status of {bytes} bytes"
    );

    // Two 450 KB keys: a valid 0.9 MB output, and a status far below the budget.
    let huge = |c: char| format!("custom.{}", c.to_string().repeat(450_000));
    let docs = [bad_client(&format!(
        // YAML simple keys stop at 1024 characters: explicit keys (`? key`) have no limit.
        "  properties:\n    producer:\n      bootstrap.servers: 'k:9092'\n      ? {}\n      : a\n      ? {}\n      : b\n",
        huge('a'),
        huge('b')
    ))];
    let ws = workspace(&[docs[0].as_str()]).expect("parses");
    let ev = evaluate_named(&ws, "bad");
    assert!(ev.is_valid(), "{:?}", problems(&ev));
    let status = status::build(&ev, Some(1), None, &Live::default(), "2026-01-01T00:00:00Z");
    let bytes = serde_json::to_vec(&status).expect("serializes").len();
    assert!(
        bytes < 16 * 1024,
        "status of {bytes} bytes for two long keys"
    );
}

#[test]
fn nested_references_in_a_config_file() {
    let mut text = String::from("bootstrap.servers=k:9092\ncustom.deep=");
    text.push_str(&"${".repeat(50_000));
    text.push_str(&"}".repeat(50_000));
    text.push('\n');
    let ws = with_big_file(text.into_bytes());
    let ev = evaluate_named(&ws, "bad");
    let problem = ev
        .source_problems
        .iter()
        .find(|p| p.reason == Reason::ParseError)
        .unwrap_or_else(|| panic!("{:?}", problems(&ev)));
    eprintln!(
        "nested file reference: field {:?}, message {} bytes",
        problem.field,
        problem.message.len()
    );
    assert_eq!(problem.field, "configFiles[0] big/client.properties:2");
    assert!(
        problem.message.starts_with("custom.deep: reference"),
        "{}",
        short(&problem.message)
    );
    assert!(ev.rendered.is_none());
    assert_good_untouched(&ws);
}

/// A condition message is read by people and stored in status (etcd objects are limited to
/// 1.5 MiB): it must stay short whatever the input. Today an unresolved reference echoes its
/// whole body, so a 100 kB value gives a 200 kB message.
#[test]
fn condition_messages_are_bounded() {
    // A 1 MB tool name is quoted cut, not whole (issue 24).
    let ws = workspace(&[&format!(
        "apiVersion: kafkaconfig.dev/v1alpha1\nkind: KafkaToolConfig\nmetadata: {{name: bad, namespace: ns}}\nspec:\n  tool: {}\n",
        "t".repeat(1_000_000)
    )])
    .expect("parses");
    let ev = evaluate_named(&ws, "bad");
    let problem = ev
        .problems
        .iter()
        .find(|p| p.reason == Reason::UnknownTool)
        .unwrap_or_else(|| panic!("{:?}", problems(&ev)));
    assert!(
        problem.message.len() <= 4096 + 32,
        "{} bytes",
        problem.message.len()
    );
    assert!(problem.message.contains("bytes)"), "says it was cut");

    let long = format!("${{{}}}", "n".repeat(100_000));
    let ws = workspace(&[&bad_client(&format!(
        "  properties: {{producer: {{bootstrap.servers: k:9092, custom.long: '{long}'}}}}\n"
    ))])
    .expect("parses");
    let ev = evaluate_named(&ws, "bad");
    let problem = ev
        .source_problems
        .iter()
        .find(|p| p.reason == Reason::UnresolvedReference)
        .unwrap_or_else(|| panic!("{:?}", problems(&ev)));
    assert!(
        problem.message.len() <= 4096,
        "message of {} bytes: {}",
        problem.message.len(),
        short(&problem.message)
    );
}

#[test]
fn output_name_collision_is_reported() {
    let other = "apiVersion: kafkaconfig.dev/v1alpha1\nkind: KafkaToolConfig\nmetadata: {name: other, namespace: ns}\nspec:\n  tool: client\n  roles: [consumer]\n  properties: {consumer: {bootstrap.servers: k:9092, group.id: g}}\n  output: {name: good-kafka}\n";
    let ws = workspace(&[GOOD, other]).expect("parses");
    let (json, all_valid) = render_text(&ws, RenderFormat::Json, false);
    let objects: Vec<serde_json::Value> = serde_json::from_str(&json).expect("json");
    assert!(
        !all_valid,
        "render must exit 1 when two configs write ConfigMap ns/good-kafka"
    );
    assert_eq!(
        objects.len(),
        1,
        "at most one object per (kind, namespace, name)"
    );
}

#[test]
fn cross_namespace_reference_is_reported() {
    let docs = [
        // Same name in the config's own namespace: today the reference silently reads this one.
        "apiVersion: v1\nkind: Secret\nmetadata: {name: shared, namespace: ns}\nstringData: {pw: 'own=namespace'}\n",
        "apiVersion: v1\nkind: Secret\nmetadata: {name: shared, namespace: other}\nstringData: {pw: 'other=namespace'}\n",
        &bad_client(
            "  configFiles: [{secretKeyRef: {name: shared, key: pw, namespace: other}}]\n  properties: {producer: {bootstrap.servers: k:9092}}\n  output: {kind: Secret}\n",
        ),
    ];
    let ws = workspace(&docs).expect("parses");
    let ev = evaluate_named(&ws, "bad");
    let p = ev
        .source_problems
        .iter()
        .chain(&ev.problems)
        .find(|p| p.reason == Reason::CrossNamespaceReference)
        .unwrap_or_else(|| {
            panic!(
                "no CrossNamespaceReference: {:?}, rendered={}",
                problems(&ev),
                ev.rendered.is_some()
            )
        });
    assert!(p.field.starts_with("spec.configFiles[0]"));
    assert!(p.message.contains("other"));
}

#[test]
fn roles_are_parsed() {
    // Guard for the table's role cases: `client` builds producer.
    let ev = good_alone();
    assert!(ev.views.contains_key(&Role::Producer));
}
