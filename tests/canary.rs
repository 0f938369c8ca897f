//! Secrets stay in Secrets (issue 24): the offline canary harness.
//!
//! Distinct canary strings sit in every Secret-sourced position a config can have: a value read
//! through `secretKeyRef` env, a password value, a value that fails type validation, a key and a
//! whole line of a Secret file (a PEM body pasted without line continuations; lowercase tokens
//! and key-shaped `token=x` lines too, which look like config names), a reference body
//! inside a Secret file value, an argument value, under every output mode (Secret output,
//! ConfigMap output, `output.secrets: Deferred`). Then `render` (yaml, json, properties),
//! `explain` (table, json) and `validate` (table, json) run as a user runs them, and every byte
//! they print, stdout and stderr, is searched for every canary, its base64 and its reverse,
//! except inside the `data` of Secret objects (the one place Secret content belongs;
//! `render -o properties` does not print a Secret output's files). A leaking fixture (a canary
//! copied into a ConfigMap) proves the search finds what it looks for, and the Secret output is
//! checked to hold the canaries.
//!
//! The same promise on a real control plane (operator logs at debug level, /metrics, Events,
//! every object) is `canary_secret_value_never_leaks` in tests/e2e_security.rs.

use std::path::Path;
use std::process::Command;

use base64::Engine as _;

/// Canaries, each in one position. Most are upper-case hex; the `LOWER_*` ones are shaped like
/// config names (lowercase letters, digits, `.`): a key read from a Secret file is Secret content
/// whatever it looks like, unless Kafka defines it.
const VALUE: &str = "KCOCANARYVALUE7F3A91";
const PASSWORD: &str = "KCOCANARYPASSWD2B8C04";
const TYPED: &str = "KCOCANARYTYPED9D1E55";
const FILE_KEY: &str = "MIIKCOCANARYFILEKEY4C2A";
const FILE_LINE: &str = "KCOCANARYFILELINE8E7B";
const REF_BODY: &str = "KCOCANARYREFBODY3A6F";
const ARGUMENT: &str = "KCOCANARYARGUMENT5C9D";
/// A lowercase token alone on a line (a key with an empty value).
const LOWER_TOKEN: &str = "kcocanarylowertoken5e1f";
/// A lowercase PEM/base64 body line, no `=` or `:`.
const LOWER_PEM_LINE: &str = "kcocanarypemline0a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6e7f8a9b";
/// A key-shaped token with a value (`deadbeef01=x`).
const LOWER_KEY_SHAPED: &str = "kcocanarykeyshaped7a2c";
/// A dotted one, shaped exactly like a custom config name.
const LOWER_DOTTED: &str = "kco.canary.dotted9b3d";

const CANARIES: &[&str] = &[
    VALUE,
    PASSWORD,
    TYPED,
    FILE_KEY,
    FILE_LINE,
    REF_BODY,
    ARGUMENT,
    LOWER_TOKEN,
    LOWER_PEM_LINE,
    LOWER_KEY_SHAPED,
    LOWER_DOTTED,
];

fn secrets() -> String {
    format!(
        r#"apiVersion: v1
kind: Namespace
metadata: {{name: team}}
---
apiVersion: v1
kind: Secret
metadata: {{name: creds, namespace: team}}
stringData:
  value: "{VALUE}"
  password: "{PASSWORD}"
  typed: "{TYPED}"
  argument: "{ARGUMENT}"
  client.properties: |
    bootstrap.servers=kafka:9092
    sasl.mechanism=PLAIN
    {FILE_KEY}abcdEFGH+/0123
    {FILE_LINE}=
    {LOWER_TOKEN}
    {LOWER_PEM_LINE}
    {LOWER_KEY_SHAPED}=x
    {LOWER_DOTTED}=x
    custom.ref=${{{REF_BODY}}}
"#
    )
}

/// A console producer of `team` named `name`, with `tail` below its spec.
fn producer(name: &str, tail: &str) -> String {
    format!(
        r#"---
apiVersion: kafkaconfig.dev/v1alpha1
kind: KafkaToolConfig
metadata: {{name: {name}, namespace: team}}
spec:
  tool: kafka-console-producer
  env:
    - {{name: V, valueFrom: {{secretKeyRef: {{name: creds, key: value}}}}}}
    - {{name: PW, valueFrom: {{secretKeyRef: {{name: creds, key: password}}}}}}
    - {{name: TY, valueFrom: {{secretKeyRef: {{name: creds, key: typed}}}}}}
    - {{name: ARG, valueFrom: {{secretKeyRef: {{name: creds, key: argument}}}}}}
{tail}"#
    )
}

/// The configs: each mode, and each failure that quotes something.
fn fixtures() -> Vec<(&'static str, String)> {
    let file = "  configFiles: [{secretKeyRef: {name: creds, key: client.properties}}]\n";
    vec![
        (
            "secret-output",
            producer(
                "secret-output",
                &format!(
                    "{file}  args: {{topic: '${{env.ARG}}'}}\n  properties:\n    producer:\n      client.id: '${{env.V}}'\n      sasl.jaas.config: 'org.apache.kafka.common.security.plain.PlainLoginModule required username=\"u\" password=\"${{env.PW}}\";'\n  references: Lenient\n  output: {{kind: Secret}}\n"
                ),
            ),
        ),
        (
            "configmap-output",
            producer(
                "configmap-output",
                "  args: {topic: t, bootstrap-server: 'kafka:9092'}\n  properties: {producer: {client.id: '${env.V}'}}\n",
            ),
        ),
        (
            "deferred",
            producer(
                "deferred",
                &format!(
                    "{file}  args: {{topic: '${{env.ARG}}'}}\n  properties: {{producer: {{client.id: '${{env.V}}'}}}}\n  references: Lenient\n  output: {{secrets: Deferred}}\n"
                ),
            ),
        ),
        (
            // Secret file keys listed in a SensitiveValueInConfigMap message.
            "secret-file-to-configmap",
            producer(
                "secret-file-to-configmap",
                &format!("{file}  args: {{topic: t}}\n  references: Lenient\n"),
            ),
        ),
        (
            "invalid-typed-value",
            producer(
                "invalid-typed-value",
                "  args: {topic: t, bootstrap-server: 'kafka:9092'}\n  properties: {producer: {linger.ms: '${env.TY}', compression.type: '${env.TY}', acks: '${env.TY}'}}\n  output: {kind: Secret}\n",
            ),
        ),
        (
            // Secret data that is not an address list: the check answers without quoting.
            "invalid-secret-address",
            producer(
                "invalid-secret-address",
                "  args: {topic: t, bootstrap-server: '${env.V}'}\n  output: {kind: Secret}\n",
            ),
        ),
        (
            "unresolved-in-secret-file",
            producer(
                "unresolved-in-secret-file",
                &format!("{file}  args: {{topic: t}}\n  output: {{kind: Secret}}\n"),
            ),
        ),
    ]
}

fn binary() -> &'static str {
    env!("CARGO_BIN_EXE_kafka-config-operator")
}

/// Everything a command prints, stdout and stderr.
fn run(args: &[&str]) -> String {
    let out = Command::new(binary())
        .args(args)
        .output()
        .expect("the binary runs");
    format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// The render JSON with the `data`/`stringData` of Secret objects removed.
fn render_json_without_secret_data(text: &str) -> String {
    let json_end = text.rfind(']').map_or(0, |i| i + 1);
    let (json, rest) = text.split_at(json_end);
    let mut objects: Vec<serde_json::Value> = serde_json::from_str(json).unwrap_or_default();
    for object in &mut objects {
        if object["kind"] == "Secret"
            && let Some(map) = object.as_object_mut()
        {
            map.remove("data");
            map.remove("stringData");
        }
    }
    format!("{}{rest}", serde_json::to_string(&objects).expect("json"))
}

/// The render YAML with every Secret document's data removed.
fn render_yaml_without_secret_data(text: &str) -> String {
    text.split("\n---")
        .map(|doc| {
            if doc.contains("\nkind: Secret") {
                let mut kept = String::new();
                let mut in_data = false;
                for line in doc.lines() {
                    if line.starts_with("data:") || line.starts_with("stringData:") {
                        in_data = true;
                        continue;
                    }
                    if in_data && line.starts_with(' ') {
                        continue;
                    }
                    in_data = false;
                    kept.push_str(line);
                    kept.push('\n');
                }
                kept
            } else {
                doc.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n---")
}

/// Which canaries (plain, base64, reversed, or as the hex of their SHA-256: a plain digest of a
/// secret is a guessing oracle) occur in `text`.
fn leaks(text: &str) -> Vec<String> {
    let b64 = base64::engine::general_purpose::STANDARD;
    CANARIES
        .iter()
        .flat_map(|c| {
            let reversed: String = c.chars().rev().collect();
            [
                (c.to_string(), "plain"),
                (b64.encode(c), "base64"),
                (reversed, "reversed"),
                (sha256_hex(c), "sha256"),
            ]
        })
        .filter(|(needle, _)| text.contains(needle.as_str()))
        .map(|(needle, how)| format!("{needle} ({how})"))
        .collect()
}

fn sha256_hex(text: &str) -> String {
    use sha2::Digest as _;
    sha2::Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Every sink of the offline CLI for the manifest at `path`, named.
fn sinks(path: &Path) -> Vec<(String, String)> {
    let p = path.to_str().expect("utf-8 path");
    let mut out = vec![
        (
            "render -o yaml".to_string(),
            render_yaml_without_secret_data(&run(&["render", "-o", "yaml", "-f", p])),
        ),
        (
            "render -o json".to_string(),
            render_json_without_secret_data(&run(&["render", "-o", "json", "-f", p])),
        ),
        ("explain".to_string(), run(&["explain", "-f", p])),
        (
            "explain -o json".to_string(),
            run(&["explain", "-o", "json", "-f", p]),
        ),
        ("validate".to_string(), run(&["validate", "-f", p])),
        (
            "validate -o json".to_string(),
            run(&["validate", "-o", "json", "-f", p]),
        ),
    ];
    out.push((
        "render -o properties".to_string(),
        run(&["render", "-o", "properties", "-f", p]),
    ));
    out
}

#[test]
fn no_canary_reaches_any_sink_of_the_cli() {
    let dir = tempfile_dir();
    let mut found = Vec::new();
    for (name, config) in fixtures() {
        let path = dir.join(format!("{name}.yaml"));
        std::fs::write(&path, format!("{}{config}", secrets())).expect("write fixture");
        for (sink, text) in sinks(&path) {
            for leak in leaks(&text) {
                found.push(format!("{name}: {sink}: {leak}"));
            }
        }
    }
    assert!(
        found.is_empty(),
        "Secret content reached a sink:\n{}",
        found.join("\n")
    );
}

#[test]
fn the_fixtures_reach_the_failures_they_are_for() {
    // Without this the harness could pass because nothing was evaluated.
    let dir = tempfile_dir();
    let expect = [
        ("secret-output", "Ready=True"),
        ("configmap-output", "SensitiveValueInConfigMap"),
        ("deferred", "SensitiveArgument"),
        ("secret-file-to-configmap", "SensitiveValueInConfigMap"),
        ("invalid-typed-value", "InvalidValue"),
        ("invalid-secret-address", "InvalidValue"),
        ("unresolved-in-secret-file", "UnresolvedReference"),
    ];
    for (name, config) in fixtures() {
        let path = dir.join(format!("check-{name}.yaml"));
        std::fs::write(&path, format!("{}{config}", secrets())).expect("write fixture");
        let text = run(&["validate", "-f", path.to_str().expect("utf-8")]);
        let want = expect
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, w)| *w)
            .expect("an expectation per fixture");
        assert!(text.contains(want), "{name}: no {want} in\n{text}");
    }
    // The Secret output holds the canaries (positive control: they are there to be found).
    let path = dir.join("positive.yaml");
    std::fs::write(&path, format!("{}{}", secrets(), fixtures()[0].1)).expect("write");
    let json = run(&["render", "-o", "json", "-f", path.to_str().expect("utf-8")]);
    let json = &json[..json.rfind(']').map_or(0, |i| i + 1)];
    let objects: Vec<serde_json::Value> = serde_json::from_str(json).expect("render json");
    let decoded: String = objects
        .iter()
        .filter(|o| o["kind"] == "Secret")
        .flat_map(|o| o["data"].as_object().into_iter().flat_map(|m| m.values()))
        .filter_map(|v| v.as_str())
        .filter_map(|v| base64::engine::general_purpose::STANDARD.decode(v).ok())
        .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
        .collect();
    assert!(
        decoded.contains(VALUE) && decoded.contains(PASSWORD) && decoded.contains(ARGUMENT),
        "the Secret output should hold the canaries: {decoded}"
    );
    // The keys of the Secret file are written into the Secret output, and warned about (as
    // unknown keys) by where they were read.
    for key in [LOWER_TOKEN, LOWER_PEM_LINE, LOWER_KEY_SHAPED, LOWER_DOTTED] {
        assert!(decoded.contains(key), "{key} missing from {decoded}");
    }
    let validated = run(&["validate", "-f", path.to_str().expect("utf-8")]);
    assert!(
        validated.contains("[key from Secret team/creds key client.properties, line 7]"),
        "{validated}"
    );
}

#[test]
fn a_leaking_fixture_is_caught() {
    // A canary deliberately copied into a ConfigMap value: the search must find it.
    let dir = tempfile_dir();
    let path = dir.join("leaking.yaml");
    let leaking = format!(
        "{}---\napiVersion: v1\nkind: ConfigMap\nmetadata: {{name: copied, namespace: team}}\ndata:\n  client.properties: |\n    bootstrap.servers=kafka:9092\n    client.id={VALUE}\n    custom.digest={}\n{}",
        secrets(),
        sha256_hex(PASSWORD),
        producer(
            "leaks",
            "  configFiles: [{configMapKeyRef: {name: copied, key: client.properties}}]\n  args: {topic: t}\n"
        )
    );
    std::fs::write(&path, leaking).expect("write fixture");
    let caught: Vec<String> = sinks(&path)
        .into_iter()
        .flat_map(|(sink, text)| {
            leaks(&text)
                .into_iter()
                .map(move |l| format!("{sink}: {l}"))
        })
        .collect();
    assert!(
        caught.iter().any(|c| c.contains(VALUE)),
        "the harness missed a canary in a ConfigMap: {caught:?}"
    );
    assert!(
        caught.iter().any(|c| c.ends_with("(sha256)")),
        "the harness missed a plain digest of a canary: {caught:?}"
    );
}

fn tempfile_dir() -> std::path::PathBuf {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static N: AtomicUsize = AtomicUsize::new(0);
    let dir = std::env::temp_dir().join(format!(
        "kco-canary-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::SeqCst)
    ));
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}
