//! The offline gate (issue 26): what `kubectl apply` or the operator's write would be refused is
//! refused by `validate`/`render` too, with the document, line and field path. One row per case:
//! a manifest error (exit 2) names its field and line; a write the API server would refuse and
//! an output conflict make `validate` and `render` agree (exit 1, `Ready=False` with the
//! operator's reason); `-o json` is the same bytes on every run.

use std::path::Path;
use std::process::Command;

use kafka_config_operator::manifest::Workspace;

/// `spec_tail` below a KafkaToolConfig named `name` in namespace `ns` (line 5 is the first line
/// of the tail).
fn config(name: &str, spec_tail: &str) -> String {
    format!(
        "apiVersion: kafkaconfig.dev/v1alpha1\nkind: KafkaToolConfig\nmetadata: {{name: {name}, namespace: ns}}\nspec:\n  tool: kafka-console-producer\n  args: {{bootstrap-server: 'kafka:9092', topic: orders}}\n{spec_tail}"
    )
}

fn load(text: &str) -> Result<Workspace, String> {
    let mut ws = Workspace::default();
    ws.add_documents(Path::new("gate.yaml"), text)
        .map_err(|e| e.to_string())?;
    Ok(ws)
}

/// (case, manifest, what the error must contain)
fn manifest_errors() -> Vec<(&'static str, String, Vec<&'static str>)> {
    let long = "a".repeat(250);
    vec![
        (
            "misspelt spec field",
            config("c", "  outptu: {kind: Secret}\n"),
            vec!["line 7, column", "spec.outptu: unknown field", "did you mean output?"],
        ),
        (
            "misspelt nested field",
            config("c", "  output:\n    kindd: Secret\n"),
            vec!["line 8", "spec.output.kindd: unknown field", "did you mean kind?"],
        ),
        (
            "misspelt properties section",
            config("c", "  properties:\n    producr: {linger.ms: 5}\n"),
            vec!["line 8", "spec.properties.producr", "did you mean producer?"],
        ),
        (
            "misspelt field in a list entry",
            config("c", "  env:\n  - {name: A, valu: x}\n"),
            vec!["spec.env[0].valu: unknown field", "did you mean value?"],
        ),
        (
            "misspelt metadata field",
            "apiVersion: kafkaconfig.dev/v1alpha1\nkind: KafkaToolConfig\nmetadata:\n  name: c\n  lables: {a: b}\nspec: {tool: client}\n".into(),
            vec!["line 5", "metadata.lables: unknown field", "did you mean labels?"],
        ),
        (
            "misspelt top-level field",
            "apiVersion: kafkaconfig.dev/v1alpha1\nkind: KafkaToolConfig\nmetadata: {name: c}\nsepc: {tool: client}\n".into(),
            vec!["line 4", "sepc: unknown field", "did you mean spec?"],
        ),
        (
            "misspelt ConfigMap field",
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: base}\ndta: {a: b}\n".into(),
            vec!["dta: unknown field", "did you mean data?"],
        ),
        (
            "misspelt GlobalClientDefaults field",
            "apiVersion: kafkaconfig.dev/v1alpha1\nkind: GlobalClientDefaults\nmetadata: {name: g}\nspec:\n  enforcd: {common: {acks: all}}\n".into(),
            vec!["spec.enforcd: unknown field", "did you mean enforced?"],
        ),
        (
            "type error deep in properties",
            config("c", "  properties:\n    producer:\n      linger.ms: [1, 2]\n"),
            vec![
                "line 9, column",
                "spec.properties.producer.linger.ms: must be a string, number or boolean",
            ],
        ),
        (
            "type error of a section",
            config("c", "  properties: {producer: 100}\n"),
            vec!["line 7", "spec.properties.producer: invalid type: integer `100`, expected a mapping"],
        ),
        (
            "object name the API server refuses",
            config("Bad_Name", ""),
            vec!["metadata.name", "\"Bad_Name\" is not a DNS-1123 subdomain"],
        ),
        (
            "namespace name the API server refuses",
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: base, namespace: team.a}\n".into(),
            vec!["metadata.namespace", "is not a DNS-1123 label"],
        ),
        (
            "label value over 63 characters",
            format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: base\n  labels: {{team: {}}}\n", "t".repeat(64)),
            vec!["metadata.labels.team: must be no more than 63 characters"],
        ),
        (
            "output name the API server refuses",
            config("c", "  output: {name: My_Output}\n"),
            vec!["line 7", "spec.output.name", "not a DNS-1123 subdomain"],
        ),
        (
            "output name over 253 characters",
            config("c", &format!("  output: {{name: {}}}\n", "a".repeat(254))),
            vec!["spec.output.name: must be no more than 253 characters"],
        ),
        (
            "immutable output name over the limit",
            config("c", &format!("  output: {{name: {long}, immutable: true}}\n")),
            vec!["spec.output", "name may have at most 244"],
        ),
        (
            "relative mount path",
            config("c", "  output: {mountPath: etc/kafka}\n"),
            vec!["spec.output.mountPath", "must be an absolute path"],
        ),
        (
            "keep without immutable",
            config("c", "  output: {keep: 2}\n"),
            vec!["spec.output: keep counts previous immutable outputs"],
        ),
        (
            "duplicate env names",
            config("c", "  env: [{name: A, value: x}, {name: A, value: v2}]\n"),
            vec!["spec.env[1]", "duplicate entries for key [name=\"A\"]"],
        ),
        (
            "duplicate rollout targets",
            config("c", "  rollout: {targets: [{kind: Deployment, name: a}, {kind: Deployment, name: a}]}\n"),
            vec!["spec.rollout.targets[1]", "duplicate entries for key [kind=Deployment,name=\"a\"]"],
        ),
        (
            "kafkaVersion that is no release number",
            config("c", "  kafkaVersion: 4.x\n"),
            vec!["spec.kafkaVersion: must be a Kafka release number"],
        ),
        (
            "ConfigMap over 1 MiB of data",
            format!("apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: big}}\ndata:\n  a: {}\n", "x".repeat(1_048_577)),
            vec!["data: holds 1048577 bytes; a ConfigMap holds at most 1048576"],
        ),
    ]
}

#[test]
fn what_kubectl_apply_would_refuse_is_a_manifest_error_naming_line_and_field() {
    for (case, text, needles) in manifest_errors() {
        let message = match load(&text) {
            Ok(_) => panic!("{case}: accepted"),
            Err(message) => message,
        };
        assert!(
            message.starts_with("gate.yaml: document 0"),
            "{case}: {message}"
        );
        for needle in needles {
            assert!(
                message.contains(needle),
                "{case}: {message:?} lacks {needle:?}"
            );
        }
    }
}

#[test]
fn a_valid_manifest_with_every_checked_field_passes_the_gate() {
    let text = config(
        "orders",
        "  kafkaVersion: '4.1'\n  env: [{name: A, value: x}, {name: B, value: v2}]\n  properties: {producer: {linger.ms: 5}, common: {acks: all}}\n  output: {name: orders-out, immutable: true, keep: 2, mountPath: /etc/kafka}\n  rollout: {targets: [{kind: Deployment, name: a}, {kind: StatefulSet, name: a}]}\n",
    );
    let ws = load(&text).expect("accepted");
    assert_eq!(ws.configs.len(), 1);
}

fn binary() -> Command {
    Command::new(env!("CARGO_BIN_EXE_kafka-config-operator"))
}

/// Runs `args` on `text` written to a temporary file: (exit code, stdout, stderr).
fn run(args: &[&str], text: &str) -> (i32, String, String) {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("input.yaml");
    std::fs::write(&file, text).expect("write input");
    let out = binary()
        .args(args)
        .arg("-f")
        .arg(&file)
        .output()
        .expect("runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The `Ready` condition of the entry named `name` in `validate -o json`.
fn ready_of(json: &str, name: &str) -> serde_json::Value {
    let entries: serde_json::Value = serde_json::from_str(json).expect("validate prints JSON");
    let entry = entries
        .as_array()
        .expect("an array")
        .iter()
        .find(|e| e["metadata"]["name"] == name)
        .unwrap_or_else(|| panic!("no entry {name}: {json}"))
        .clone();
    entry["status"]["conditions"]
        .as_array()
        .expect("conditions")
        .iter()
        .find(|c| c["type"] == "Ready")
        .expect("a Ready condition")
        .clone()
}

#[test]
fn a_manifest_error_exits_2_in_validate_and_render() {
    let text = config("c", "  outptu: {kind: Secret}\n");
    for command in ["validate", "render"] {
        let (code, _, stderr) = run(&[command], &text);
        assert_eq!(code, 2, "{command}: {stderr}");
        assert!(
            stderr.contains("spec.outptu: unknown field"),
            "{command}: {stderr}"
        );
    }
}

/// (case, manifests, config that fails, reason, words of the message)
fn write_failures() -> Vec<(&'static str, String, String, &'static str, &'static str)> {
    let long_name = "n".repeat(64);
    let longest = "n".repeat(250);
    vec![
        (
            "two configs write one output",
            format!(
                "{}\n---\n{}",
                config("first", "  output: {name: shared}\n"),
                config("second", "  output: {name: shared}\n")
            ),
            "second".into(),
            "OutputConflict",
            "ConfigMap ns/shared is already written by KafkaToolConfig first",
        ),
        (
            "an unowned ConfigMap of the input holds the name",
            format!(
                "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: c-kafka, namespace: ns}}\ndata: {{a: b}}\n---\n{}",
                config("c", "")
            ),
            "c".into(),
            "OutputConflict",
            "ConfigMap c-kafka already exists and is not controlled by this KafkaToolConfig",
        ),
        (
            "an unowned Secret of the input holds the name",
            format!(
                "apiVersion: v1\nkind: Secret\nmetadata: {{name: c-kafka, namespace: ns}}\nstringData: {{a: b}}\n---\n{}",
                config("c", "  output: {kind: Secret}\n")
            ),
            "c".into(),
            "OutputConflict",
            "Secret c-kafka already exists and is not controlled by this KafkaToolConfig",
        ),
        (
            "the config's name is over 63 characters, the label value of its output",
            config(&long_name, ""),
            long_name.clone(),
            "OutputWriteFailed",
            "metadata.labels[kafkaconfig.dev/config]: must be no more than 63 characters",
        ),
        (
            "the default output name is over 253 characters",
            config(&longest, ""),
            longest.clone(),
            "OutputWriteFailed",
            "metadata.name: must be no more than 253 characters",
        ),
    ]
}

#[test]
fn validate_and_render_agree_on_writes_that_would_fail() {
    for (case, text, failing, reason, words) in write_failures() {
        let (code, stdout, stderr) = run(&["validate", "-o", "json"], &text);
        assert_eq!(code, 1, "{case}: validate: {stderr}");
        let ready = ready_of(&stdout, &failing);
        assert_eq!(ready["status"], "False", "{case}: {ready}");
        assert_eq!(ready["reason"], reason, "{case}: {ready}");
        let message = ready["message"].as_str().unwrap_or_default();
        assert!(message.contains(words), "{case}: {message}");

        let (code, stdout, stderr) = run(&["render", "-o", "json"], &text);
        assert_eq!(code, 1, "{case}: render: {stderr}");
        assert!(
            stderr.contains(reason) && stderr.contains(words),
            "{case}: {stderr}"
        );
        let objects: serde_json::Value = serde_json::from_str(&stdout).expect("render prints JSON");
        let written_for_failing = objects.as_array().expect("array").iter().any(|o| {
            o["metadata"]["labels"]["kafkaconfig.dev/config"].as_str() == Some(failing.as_ref())
        });
        assert!(
            !written_for_failing,
            "{case}: render printed the failing output"
        );
    }
}

#[test]
fn an_output_the_config_already_controls_is_no_conflict() {
    let text = format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c-kafka\n  namespace: ns\n  ownerReferences: [{{apiVersion: kafkaconfig.dev/v1alpha1, kind: KafkaToolConfig, name: c, uid: u1, controller: true}}]\ndata: {{a: b}}\n---\n{}",
        config("c", "")
    );
    let (code, stdout, stderr) = run(&["validate", "-o", "json"], &text);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(ready_of(&stdout, "c")["status"], "True");
}

#[test]
fn validate_json_is_the_same_bytes_on_every_run() {
    let examples = concat!(env!("CARGO_MANIFEST_DIR"), "/examples");
    let once = || {
        let out = binary()
            .args(["validate", "-o", "json", "-f", examples])
            .output()
            .expect("runs");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let first = once();
    // Across a second boundary: a wall-clock time would differ.
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let second = once();
    assert!(first.len() > 1000, "validate printed too little: {first}");
    assert_eq!(first, second);
    assert!(first.contains("\"lastTransitionTime\": \"1970-01-01T00:00:00Z\""));
}

/// A producer whose SASL file and password live in Secrets the repository does not hold.
fn with_secrets_kept_out(output_tail: &str) -> String {
    config(
        "orders",
        &format!(
            "  configFiles:\n  - secretKeyRef: {{name: kafka-sasl, key: sasl.properties}}\n  env:\n  - name: PW\n    valueFrom: {{secretKeyRef: {{name: kafka-creds, key: password}}}}\n  properties:\n    producer: {{sasl.jaas.config: 'x password=\"${{env.PW}}\";'}}\n{output_tail}"
        ),
    )
}

#[test]
fn placeholders_stand_in_for_sources_kept_out_of_git_and_stay_secret() {
    let text = with_secrets_kept_out("  output: {kind: Secret}\n");
    let (code, stdout, _) = run(&["validate", "-o", "json"], &text);
    assert_eq!(
        code, 1,
        "without placeholders a missing Secret stops the check"
    );
    assert_eq!(ready_of(&stdout, "orders")["reason"], "SecretNotFound");

    let (code, stdout, stderr) = run(
        &["validate", "-o", "json", "--missing-sources=placeholder"],
        &text,
    );
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert_eq!(ready_of(&stdout, "orders")["status"], "True");
    for stub in [
        "placeholder for missing Secret ns/kafka-sasl key sasl.properties (first used by configFiles[0] of ns/orders)",
        "placeholder for missing Secret ns/kafka-creds key password (first used by env PW of ns/orders)",
    ] {
        assert!(stderr.contains(stub), "{stderr}");
    }

    // A stand-in for a Secret key is secret material: it cannot go into a ConfigMap.
    let text = with_secrets_kept_out("");
    let (code, stdout, _) = run(
        &["validate", "-o", "json", "--missing-sources=placeholder"],
        &text,
    );
    assert_eq!(code, 1);
    assert_eq!(
        ready_of(&stdout, "orders")["reason"],
        "SensitiveValueInConfigMap"
    );
}

#[test]
fn a_key_missing_from_an_object_the_input_holds_is_still_an_error() {
    let text = format!(
        "apiVersion: v1\nkind: Secret\nmetadata: {{name: kafka-sasl, namespace: ns}}\nstringData: {{other: x}}\n---\n{}",
        config(
            "orders",
            "  configFiles: [{secretKeyRef: {name: kafka-sasl, key: sasl.properties}}]\n  output: {kind: Secret}\n"
        )
    );
    let (code, stdout, stderr) = run(
        &["validate", "-o", "json", "--missing-sources=placeholder"],
        &text,
    );
    assert_eq!(code, 1, "{stderr}");
    assert_eq!(ready_of(&stdout, "orders")["reason"], "KeyNotFound");
    assert!(
        stderr.contains("no missing source needed a placeholder"),
        "{stderr}"
    );
}
