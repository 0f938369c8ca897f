//! The precedence, reference, policy and tool rules of DESIGN sections 3–6, one test per rule,
//! and every tool row of the catalogue, table-driven. No Kubernetes: manifests are read the way
//! the CLI reads them.

use std::collections::BTreeMap;
use std::path::Path;

use kafka_config_operator::cli::evaluate_manifest;
use kafka_config_operator::engine::Evaluation;
use kafka_config_operator::engine::catalogue::options::ToolOptions;
use kafka_config_operator::engine::catalogue::tools::ToolCatalogue;
use kafka_config_operator::engine::layers::Layer;
use kafka_config_operator::engine::outcome::Reason;
use kafka_config_operator::engine::render::HashKey;
use kafka_config_operator::engine::spec::Role;
use kafka_config_operator::manifest::Workspace;

/// Every row of the tool catalogue against Kafka's reference table, and every forced key in
/// Modern and Legacy (a module of this suite, so the test command that runs it runs them too).
mod tool_rows;

fn workspace(yaml: &str) -> Workspace {
    let mut ws = Workspace::default();
    ws.add_documents(Path::new("test.yaml"), yaml)
        .expect("valid manifests");
    ws
}

/// Evaluates the first KafkaToolConfig of `yaml`.
fn eval(yaml: &str) -> Evaluation {
    let ws = workspace(yaml);
    let config = ws.configs.first().expect("a KafkaToolConfig");
    evaluate_manifest(&ws, config)
}

fn value(ev: &Evaluation, role: Role, key: &str) -> Option<String> {
    ev.views
        .get(&role)?
        .effective_value(key)
        .map(|c| c.value.shown().into_owned())
}

fn winner_layer(ev: &Evaluation, role: Role, key: &str) -> Option<Layer> {
    ev.views.get(&role)?.effective_value(key).map(|c| c.layer)
}

fn file(ev: &Evaluation, name: &str) -> BTreeMap<String, String> {
    let rendered = ev
        .rendered
        .as_ref()
        .unwrap_or_else(|| panic!("not rendered: {:?} {:?}", ev.problems, ev.source_problems));
    let text = rendered
        .files
        .get(name)
        .unwrap_or_else(|| panic!("no file {name}"));
    kafka_config_operator::engine::properties::load_str(text)
        .expect("rendered file loads")
        .into_iter()
        .map(|e| (e.key, e.value))
        .collect()
}

fn tool_args(ev: &Evaluation) -> Vec<String> {
    let rendered = ev
        .rendered
        .as_ref()
        .unwrap_or_else(|| panic!("not rendered: {:?}", ev.problems));
    rendered.files["tool.args"]
        .lines()
        .map(str::to_string)
        .collect()
}

fn reasons(ev: &Evaluation) -> Vec<Reason> {
    ev.problems
        .iter()
        .chain(&ev.source_problems)
        .map(|p| p.reason)
        .collect()
}

fn warning_reasons(ev: &Evaluation) -> Vec<Reason> {
    ev.warnings.iter().map(|w| w.reason).collect()
}

const BASE: &str = r#"
apiVersion: v1
kind: ConfigMap
metadata: {name: base, namespace: ns}
data:
  client.properties: |
    bootstrap.servers=file:9092
    linger.ms=20
    acks=1
    client.id=from-file
---
apiVersion: v1
kind: ConfigMap
metadata: {name: second, namespace: ns}
data:
  client.properties: |
    linger.ms=30
"#;

/// A console producer; `spec_tail` may bring its own `args`, else the topic alone is given.
fn producer(spec_tail: &str) -> String {
    let args = if spec_tail.contains("  args:") {
        ""
    } else {
        "  args: {topic: t}\n"
    };
    format!(
        "{BASE}\n---\napiVersion: kafkaconfig.dev/v1alpha1\nkind: KafkaToolConfig\nmetadata: {{name: p, namespace: ns}}\nspec:\n  tool: kafka-console-producer\n{args}{spec_tail}"
    )
}

#[test]
fn file_value_beats_tool_default() {
    let ev = eval(&producer(
        "  configFiles: [{configMapKeyRef: {name: base, key: client.properties}}]\n",
    ));
    assert_eq!(
        value(&ev, Role::Producer, "client.id").as_deref(),
        Some("from-file")
    );
    assert_eq!(
        value(&ev, Role::Producer, "linger.ms").as_deref(),
        Some("20")
    );
    assert_eq!(
        winner_layer(&ev, Role::Producer, "linger.ms"),
        Some(Layer::ConfigFiles)
    );
}

#[test]
fn later_config_file_wins() {
    let ev = eval(&producer(
        "  configFiles:\n    - configMapKeyRef: {name: base, key: client.properties}\n    - configMapKeyRef: {name: second, key: client.properties}\n",
    ));
    assert_eq!(
        value(&ev, Role::Producer, "linger.ms").as_deref(),
        Some("30")
    );
    let sources: Vec<String> = ev.views[&Role::Producer].keys["linger.ms"]
        .chain
        .iter()
        .map(|c| c.source.to_string())
        .collect();
    assert_eq!(sources[0], "configFiles[1] second/client.properties:1");
    assert_eq!(sources[1], "configFiles[0] base/client.properties:2");
}

#[test]
fn properties_beat_files_and_args_beat_properties() {
    let ev = eval(&producer(
        "  configFiles: [{configMapKeyRef: {name: base, key: client.properties}}]\n  properties: {producer: {linger.ms: 5, acks: \"0\"}}\n  args: {topic: t, request-required-acks: all}\n",
    ));
    assert_eq!(
        value(&ev, Role::Producer, "linger.ms").as_deref(),
        Some("5")
    );
    assert_eq!(value(&ev, Role::Producer, "acks").as_deref(), Some("all"));
    let shadow = ev
        .shadowed
        .iter()
        .find(|s| s.key == "acks")
        .expect("acks is shadowed");
    assert_eq!(shadow.winner, "args");
    assert_eq!(
        shadow.over,
        vec![
            "properties",
            "configFiles[0] base/client.properties:3",
            "toolDefaults"
        ]
    );
}

#[test]
fn role_entry_beats_common_in_the_same_layer() {
    let ev = eval(&producer(
        "  properties: {common: {linger.ms: 1}, producer: {linger.ms: 2}}\n  args: {topic: t, bootstrap-server: \"b:1\"}\n",
    ));
    assert_eq!(
        value(&ev, Role::Producer, "linger.ms").as_deref(),
        Some("2")
    );
}

const GLOBALS: &str = r#"
---
apiVersion: v1
kind: Namespace
metadata: {name: ns, labels: {kafka-cluster: prod}}
---
apiVersion: kafkaconfig.dev/v1alpha1
kind: GlobalClientDefaults
metadata: {name: low}
spec:
  priority: 1
  defaults: {producer: {linger.ms: "100", batch.size: "1000"}, common: {bootstrap.servers: "global:9092"}}
---
apiVersion: kafkaconfig.dev/v1alpha1
kind: GlobalClientDefaults
metadata: {name: high}
spec:
  priority: 2
  selector: {namespaceSelector: {matchLabels: {kafka-cluster: prod}}}
  defaults: {producer: {batch.size: "2000"}}
  enforced: {common: {security.protocol: SASL_SSL}}
---
apiVersion: kafkaconfig.dev/v1alpha1
kind: GlobalClientDefaults
metadata: {name: other-cluster}
spec:
  selector: {namespaceSelector: {matchLabels: {kafka-cluster: dev}}}
  enforced: {common: {security.protocol: PLAINTEXT}}
"#;

#[test]
fn cluster_defaults_apply_in_ascending_priority_below_tool_defaults() {
    let ev = eval(&format!("{}{GLOBALS}", producer("")));
    assert_eq!(ev.globals_applied, vec!["low", "high"]);
    // batch.size: high (priority 2) beats low, but the tool's --batch-size default beats both.
    assert_eq!(
        value(&ev, Role::Producer, "batch.size").as_deref(),
        Some("16384")
    );
    let chain: Vec<String> = ev.views[&Role::Producer].keys["batch.size"]
        .chain
        .iter()
        .map(|c| c.source.to_string())
        .collect();
    assert_eq!(chain[1], "GlobalClientDefaults high defaults.producer");
    assert_eq!(chain[2], "GlobalClientDefaults low defaults.producer");
    // A cluster default satisfies a required argument.
    assert!(
        tool_args(&ev)
            .windows(2)
            .any(|w| w[0] == "--bootstrap-server" && w[1] == "global:9092")
    );
}

#[test]
fn enforced_beats_everything_a_namespace_writes_and_is_reported() {
    let ev = eval(&format!(
        "{}{GLOBALS}",
        producer("  properties: {common: {security.protocol: PLAINTEXT}}\n")
    ));
    assert_eq!(
        value(&ev, Role::Producer, "security.protocol").as_deref(),
        Some("SASL_SSL")
    );
    let warning = ev
        .warnings
        .iter()
        .find(|w| w.reason == Reason::Enforced)
        .expect("Enforced warning");
    assert!(
        warning.message.contains("GlobalClientDefaults high"),
        "{}",
        warning.message
    );
    assert!(
        warning.message.contains("properties.common"),
        "{}",
        warning.message
    );
}

#[test]
fn selectors_filter_by_tool_and_role() {
    let yaml = format!(
        "{}\n---\napiVersion: kafkaconfig.dev/v1alpha1\nkind: GlobalClientDefaults\nmetadata: {{name: consumers-only}}\nspec:\n  selector: {{roles: [consumer]}}\n  enforced: {{common: {{client.rack: r1}}}}\n---\napiVersion: kafkaconfig.dev/v1alpha1\nkind: GlobalClientDefaults\nmetadata: {{name: topics-tool}}\nspec:\n  selector: {{tools: [kafka-topics.sh]}}\n  enforced: {{common: {{client.id: x}}}}\n",
        producer("  args: {topic: t, bootstrap-server: \"b:1\"}\n")
    );
    let ev = eval(&yaml);
    assert_eq!(value(&ev, Role::Producer, "client.rack"), None);
    assert_eq!(
        value(&ev, Role::Producer, "client.id").as_deref(),
        Some("console-producer")
    );
}

#[test]
fn override_policy_refuses_keys_it_does_not_allow_and_names_them() {
    let yaml = format!(
        "{}\n---\napiVersion: kafkaconfig.dev/v1alpha1\nkind: GlobalClientDefaults\nmetadata: {{name: strict}}\nspec:\n  overridePolicy: {{mode: Allowlist, keys: [\"ssl.*\", bootstrap.servers]}}\n",
        producer(
            "  args: {topic: t, bootstrap-server: \"b:1\"}\n  properties: {producer: {linger.ms: 5, ssl.protocol: TLSv1.3}}\n"
        )
    );
    let ev = eval(&yaml);
    assert!(
        reasons(&ev).contains(&Reason::OverrideNotAllowed),
        "{:?}",
        ev.problems
    );
    let message = &ev
        .problems
        .iter()
        .find(|p| p.reason == Reason::OverrideNotAllowed)
        .expect("problem")
        .message;
    assert!(
        message.contains("linger.ms (properties.producer)"),
        "{message}"
    );
    assert!(!message.contains("ssl.protocol"), "{message}");
    assert!(!message.contains("bootstrap.servers ("), "{message}");
    assert!(ev.rendered.is_none(), "nothing is rendered while invalid");
}

/// A GlobalClientDefaults `prod-policy` with `overridePolicy` (`policy` is its YAML), selecting
/// every config.
fn with_policy(policy: &str, spec_tail: &str) -> String {
    format!(
        "{}\n---\napiVersion: kafkaconfig.dev/v1alpha1\nkind: GlobalClientDefaults\nmetadata: {{name: prod-policy}}\nspec:\n  overridePolicy: {policy}\n",
        producer(spec_tail)
    )
}

fn override_refusal(ev: &Evaluation) -> String {
    ev.problems
        .iter()
        .find(|p| p.reason == Reason::OverrideNotAllowed)
        .unwrap_or_else(|| panic!("OverrideNotAllowed: {:?}", ev.problems))
        .message
        .clone()
}

#[test]
fn override_policy_none_refuses_every_override_as_valid_false_naming_the_keys() {
    let ev = eval(&with_policy(
        "{mode: None}",
        "  args: {topic: t, bootstrap-server: \"b:1\"}\n  properties: {producer: {linger.ms: 5}}\n",
    ));
    let message = override_refusal(&ev);
    assert!(
        message.contains("GlobalClientDefaults prod-policy"),
        "{message}"
    );
    assert!(
        message.contains("linger.ms (properties.producer)"),
        "{message}"
    );
    assert!(
        message.contains("bootstrap.servers (args.bootstrap-server)"),
        "{message}"
    );
    // Keys only the tool sets (its defaults) are not overrides.
    assert!(!message.contains("client.id"), "{message}");
    let status = kafka_config_operator::status::build(
        &ev,
        Some(1),
        None,
        &kafka_config_operator::status::Live {
            hash: None,
            write_failure: None,
        },
        "2026-01-01T00:00:00Z",
    );
    let valid = status
        .conditions
        .iter()
        .find(|c| c.type_ == "Valid")
        .expect("Valid condition");
    assert_eq!(
        (valid.status.as_str(), valid.reason.as_str()),
        ("False", "OverrideNotAllowed")
    );
    assert!(valid.message.contains("linger.ms"), "{}", valid.message);
    assert!(ev.rendered.is_none(), "nothing is rendered while invalid");
}

#[test]
fn override_policy_denylist_refuses_a_denied_key_and_a_prefix_pattern_and_allows_the_rest() {
    let policy = "{mode: Denylist, keys: [linger.ms, \"ssl.*\"]}";
    let ev = eval(&with_policy(
        policy,
        "  args: {topic: t, bootstrap-server: \"b:1\"}\n  properties: {producer: {linger.ms: 5, ssl.protocol: TLSv1.3, acks: all}}\n",
    ));
    let message = override_refusal(&ev);
    assert!(
        message.contains("linger.ms (properties.producer)"),
        "{message}"
    );
    assert!(
        message.contains("ssl.protocol (properties.producer)"),
        "the prefix pattern ssl.* denies ssl.protocol: {message}"
    );
    assert!(!message.contains("acks ("), "{message}");
    assert!(!message.contains("bootstrap.servers ("), "{message}");
    let allowed = eval(&with_policy(
        policy,
        "  args: {topic: t, bootstrap-server: \"b:1\"}\n  properties: {producer: {acks: all, sslx.custom: x}}\n",
    ));
    assert!(
        !reasons(&allowed).contains(&Reason::OverrideNotAllowed),
        "keys outside the denylist (sslx.* is not ssl.*) are allowed: {:?}",
        allowed.problems
    );
}

#[test]
fn render_defaults_renders_kafkas_defaults_under_every_layer() {
    let spec = "  args: {topic: t, bootstrap-server: \"b:1\"}\n  properties: {producer: {max.in.flight.requests.per.connection: 3}}\n";
    let ev = eval(&producer(&format!(
        "{spec}  output: {{renderDefaults: true}}\n"
    )));
    let rendered = file(&ev, "producer.properties");
    // Layer 0 is rendered: a key nobody sets has Kafka's default ...
    let catalogue = kafka_config_operator::engine::catalogue::configs::ConfigCatalogue::get();
    let kafka_default = |key: &str| {
        catalogue
            .key(Role::Producer, key)
            .and_then(|k| k.default.clone())
            .unwrap_or_else(|| panic!("{key} has a Kafka default"))
    };
    assert_eq!(
        rendered["enable.idempotence"],
        kafka_default("enable.idempotence")
    );
    assert_eq!(
        rendered["delivery.timeout.ms"],
        kafka_default("delivery.timeout.ms")
    );
    assert_eq!(value(&ev, Role::Producer, "delivery.timeout.ms"), None);
    // ... every other layer beats it, and the provenance of a set key ends with it.
    assert_eq!(rendered["max.in.flight.requests.per.connection"], "3");
    assert_eq!(
        rendered["linger.ms"], "1000",
        "the tool's --timeout default"
    );
    let chain = &ev.views[&Role::Producer].keys["max.in.flight.requests.per.connection"].chain;
    assert_eq!(chain[0].layer, Layer::Properties);
    let lowest = chain.last().expect("a chain");
    assert_eq!(
        (lowest.layer, lowest.value.shown().into_owned()),
        (
            Layer::KafkaDefaults,
            kafka_default("max.in.flight.requests.per.connection")
        )
    );
    // Without it, only what a layer sets is rendered.
    let plain = eval(&producer(spec));
    assert!(!file(&plain, "producer.properties").contains_key("delivery.timeout.ms"));
}

#[test]
fn explain_names_the_source_of_every_line_render_defaults_writes() {
    let spec = "  args: {topic: t, bootstrap-server: \"b:1\"}\n  properties: {producer: {max.in.flight.requests.per.connection: 3}}\n";
    let ev = eval(&producer(&format!(
        "{spec}  output: {{renderDefaults: true}}\n"
    )));
    let rendered = file(&ev, "producer.properties");
    let entries = kafka_config_operator::cli::explain_entries("ns", "p", &ev, None);
    let explained: BTreeMap<&str, (&str, Layer)> = entries
        .iter()
        .map(|e| (e.key.as_str(), (e.value.as_str(), e.layer)))
        .collect();
    assert_eq!(explained.len(), entries.len(), "one entry per key");
    let keys: Vec<&str> = rendered.keys().map(String::as_str).collect();
    assert_eq!(explained.keys().copied().collect::<Vec<_>>(), keys);
    assert_eq!(
        explained["delivery.timeout.ms"],
        (
            rendered["delivery.timeout.ms"].as_str(),
            Layer::KafkaDefaults
        )
    );
    assert_eq!(
        explained["max.in.flight.requests.per.connection"],
        ("3", Layer::Properties)
    );
    // Without it, an unset key is not in the file and not explained.
    let plain = eval(&producer(spec));
    let plain_entries = kafka_config_operator::cli::explain_entries("ns", "p", &plain, None);
    assert!(
        plain_entries
            .iter()
            .all(|e| e.layer != Layer::KafkaDefaults)
    );
}

#[test]
fn namespace_selector_match_expressions_select_by_in_not_in_exists_and_does_not_exist() {
    // (expression, namespace labels, selected?)
    let cases: &[(&str, &str, bool)] = &[
        (
            "{key: env, operator: In, values: [prod, staging]}",
            "{env: prod}",
            true,
        ),
        (
            "{key: env, operator: In, values: [prod, staging]}",
            "{env: dev}",
            false,
        ),
        ("{key: env, operator: In, values: [prod]}", "{}", false),
        (
            "{key: env, operator: NotIn, values: [dev]}",
            "{env: prod}",
            true,
        ),
        (
            "{key: env, operator: NotIn, values: [dev]}",
            "{env: dev}",
            false,
        ),
        ("{key: env, operator: NotIn, values: [dev]}", "{}", true),
        ("{key: pci, operator: Exists}", "{pci: \"true\"}", true),
        ("{key: pci, operator: Exists}", "{env: prod}", false),
        ("{key: pci, operator: DoesNotExist}", "{env: prod}", true),
        ("{key: pci, operator: DoesNotExist}", "{pci: \"\"}", false),
    ];
    for (expression, labels, selected) in cases {
        let yaml = format!(
            "{}\n---\napiVersion: v1\nkind: Namespace\nmetadata: {{name: ns, labels: {labels}}}\n---\napiVersion: kafkaconfig.dev/v1alpha1\nkind: GlobalClientDefaults\nmetadata: {{name: selected}}\nspec:\n  selector: {{namespaceSelector: {{matchExpressions: [{expression}]}}}}\n  enforced: {{common: {{client.rack: r1}}}}\n",
            producer("  args: {topic: t, bootstrap-server: \"b:1\"}\n")
        );
        let ev = eval(&yaml);
        assert_eq!(
            ev.globals_applied == ["selected"],
            *selected,
            "{expression} on labels {labels}: applied {:?}",
            ev.globals_applied
        );
        assert_eq!(
            value(&ev, Role::Producer, "client.rack").is_some(),
            *selected,
            "{expression} on labels {labels}"
        );
    }
}

/// A broker config beside a GlobalClientDefaults whose spec is `global_spec`.
fn broker_with_global(global_spec: &str) -> Evaluation {
    eval(&format!(
        r#"
apiVersion: kafkaconfig.dev/v1alpha1
kind: KafkaToolConfig
metadata: {{name: b, namespace: ns}}
spec:
  tool: kafka-server
  roles: [broker]
  properties: {{broker: {{node.id: "1", process.roles: broker}}}}
---
apiVersion: kafkaconfig.dev/v1alpha1
kind: GlobalClientDefaults
metadata: {{name: bad}}
spec:
{global_spec}"#
    ))
}

#[test]
fn a_server_with_two_role_files_is_refused() {
    // kafka.Kafka refuses a second positional file (found with the real broker, issue 28)
    let ev = eval(
        r#"
apiVersion: kafkaconfig.dev/v1alpha1
kind: KafkaToolConfig
metadata: {name: b, namespace: ns}
spec:
  tool: kafka-server
  roles: [broker, controller]
  properties: {broker: {node.id: "1", process.roles: "broker,controller"}}
"#,
    );
    assert_eq!(reasons(&ev), vec![Reason::RoleConflict]);
    assert!(ev.rendered.is_none());
}

#[test]
fn enforcing_a_local_only_broker_key_makes_the_global_invalid_and_the_broker_unrendered() {
    let ev =
        broker_with_global("  enforced: {broker: {node.id: \"7\", num.network.threads: \"8\"}}\n");
    // Never a partial application and never Ready while policy is not applied.
    assert_eq!(reasons(&ev), vec![Reason::GlobalDefaultsInvalid]);
    let message = &ev.problems[0].message;
    assert!(
        message.contains("GlobalClientDefaults bad")
            && message.contains("spec.enforced.broker.node.id"),
        "{message}"
    );
    assert!(ev.rendered.is_none());
    assert!(ev.globals_applied.is_empty());
    assert_eq!(value(&ev, Role::Broker, "node.id").as_deref(), Some("1"));
    assert_eq!(value(&ev, Role::Broker, "num.network.threads"), None);
}

#[test]
fn a_local_only_key_as_a_default_is_refused_too() {
    // Applied, it would give every broker that omits node.id the same id.
    let ev = broker_with_global("  defaults: {broker: {node.id: \"99\"}}\n");
    assert_eq!(reasons(&ev), vec![Reason::GlobalDefaultsInvalid]);
    assert!(
        ev.problems[0]
            .message
            .contains("spec.defaults.broker.node.id")
    );
}

#[test]
fn globals_are_checked_as_objects_typed_values_selectors_and_enforced_references() {
    use kafka_config_operator::engine::globals::GlobalDefaults;
    let global = |yaml: &str| -> Vec<(Reason, String)> {
        let spec = serde_saphyr::from_str(yaml).expect("spec parses");
        GlobalDefaults {
            name: "g".into(),
            spec,
        }
        .problems()
        .into_iter()
        .map(|p| (p.reason, format!("{} {}", p.field, p.message)))
        .collect()
    };
    let typed = global("defaults: {consumer: {max.partition.fetch.bytes: lots}}");
    assert_eq!(typed.len(), 1, "{typed:?}");
    assert_eq!(typed[0].0, Reason::InvalidValue);
    assert!(
        typed[0]
            .1
            .starts_with("spec.defaults.consumer.max.partition.fetch.bytes"),
        "{typed:?}"
    );
    // `common` is checked for every role it reaches.
    let common = global("defaults: {common: {request.timeout.ms: soon}}");
    assert_eq!(
        common.first().map(|p| p.0),
        Some(Reason::InvalidValue),
        "{common:?}"
    );
    let tools = global("selector: {tools: [kafka-console-consumr]}");
    assert_eq!(tools[0].0, Reason::UnknownTool);
    assert!(
        tools[0].1.contains("did you mean kafka-console-consumer"),
        "{tools:?}"
    );
    let labels = global(
        "selector: {namespaceSelector: {matchExpressions: [{key: team, operator: In}, {key: 'bad key', operator: Exists, values: [x]}]}}",
    );
    assert_eq!(labels.len(), 3, "{labels:?}");
    assert!(labels.iter().all(|p| p.0 == Reason::InvalidValue));
    let reference = global("enforced: {common: {client.id: '${env.CID:platform}'}}");
    assert_eq!(reference[0].0, Reason::InvalidValue);
    assert!(
        reference[0].1.contains("cannot hold a reference"),
        "{reference:?}"
    );
    // A provider the object itself declares is Kafka's to resolve in the pod: allowed.
    let provider = global(
        "enforced: {common: {config.providers: file, config.providers.file.class: org.apache.kafka.common.config.provider.FileConfigProvider, sasl.jaas.config: '${file:/mnt/jaas.properties:jaas}'}}",
    );
    assert_eq!(provider, vec![], "{provider:?}");
    let fine = global(
        "defaults: {common: {request.timeout.ms: '30000'}}\nenforced: {common: {security.protocol: SASL_SSL}}",
    );
    assert_eq!(fine, vec![]);
}

#[test]
fn legacy_reproduces_keys_the_tool_forces_and_modern_warns() {
    let spec = "  args: {topic: t, bootstrap-server: \"b:1\"}\n  properties: {producer: {key.serializer: org.apache.kafka.common.serialization.StringSerializer}}\n";
    let modern = eval(&producer(spec));
    assert_eq!(
        value(&modern, Role::Producer, "key.serializer").as_deref(),
        Some("org.apache.kafka.common.serialization.StringSerializer")
    );
    let warning = modern
        .warnings
        .iter()
        .find(|w| w.reason == Reason::ForcedByTool)
        .expect("ForcedByTool");
    assert_eq!(warning.key, "key.serializer");
    assert!(warning.message.contains("kafka-console-producer"));

    let legacy = eval(&producer(&format!("  precedence: Legacy\n{spec}")));
    assert_eq!(
        value(&legacy, Role::Producer, "key.serializer").as_deref(),
        Some("org.apache.kafka.common.serialization.ByteArraySerializer")
    );
    assert_eq!(
        winner_layer(&legacy, Role::Producer, "key.serializer"),
        Some(Layer::ForcedByTool)
    );
}

#[test]
fn an_argument_that_can_carry_the_value_does() {
    let ev = eval(&producer(
        "  args: {topic: t, bootstrap-server: \"b:1\"}\n  properties: {producer: {compression.type: zstd}}\n",
    ));
    let args = tool_args(&ev);
    assert!(
        args.windows(2)
            .any(|w| w[0] == "--compression-codec" && w[1] == "zstd"),
        "{args:?}"
    );
    assert!(!warning_reasons(&ev).contains(&Reason::ForcedByTool));
    assert_eq!(file(&ev, "producer.properties")["compression.type"], "zstd");
}

#[test]
fn required_argument_is_satisfied_by_a_file_and_derived_into_tool_args() {
    let ev = eval(&producer(
        "  configFiles: [{configMapKeyRef: {name: base, key: client.properties}}]\n",
    ));
    assert!(ev.is_valid(), "{:?}", ev.problems);
    let args = tool_args(&ev);
    assert!(
        args.windows(2)
            .any(|w| w[0] == "--bootstrap-server" && w[1] == "file:9092"),
        "{args:?}"
    );
}

#[test]
fn missing_required_argument_names_the_option_and_the_key() {
    let ev = eval(&producer(""));
    let problem = ev
        .problems
        .iter()
        .find(|p| p.reason == Reason::MissingRequired)
        .expect("MissingRequired");
    assert!(
        problem.message.contains("--bootstrap-server"),
        "{}",
        problem.message
    );
    assert!(
        problem.message.contains("bootstrap.servers"),
        "{}",
        problem.message
    );
}

#[test]
fn one_of_groups_accept_either_option() {
    let yaml = "apiVersion: kafkaconfig.dev/v1alpha1\nkind: KafkaToolConfig\nmetadata: {name: c, namespace: ns}\nspec:\n  tool: kafka-configs\n  properties: {admin: {bootstrap.controllers: \"ctl:9093\"}}\n  extraArgs: [--describe, --entity-type, brokers]\n";
    let ev = eval(yaml);
    assert!(ev.is_valid(), "{:?}", ev.problems);
    let args = tool_args(&ev);
    assert!(
        args.windows(2)
            .any(|w| w[0] == "--bootstrap-controller" && w[1] == "ctl:9093"),
        "{args:?}"
    );
    assert!(!args.contains(&"--bootstrap-server".to_string()));
    assert_eq!(
        &args[args.len() - 3..],
        ["--describe", "--entity-type", "brokers"]
    );
}

const SECRET: &str = r#"
---
apiVersion: v1
kind: Secret
metadata: {name: sasl, namespace: ns}
stringData: {password: hunter2}
"#;

fn with_password(output: &str) -> String {
    format!(
        "{}{SECRET}",
        producer(&format!(
            "  args: {{topic: t, bootstrap-server: \"b:1\"}}\n  properties: {{producer: {{sasl.jaas.config: 'x required password=\"${{env.PW}}\";'}}}}\n  env: [{{name: PW, valueFrom: {{secretKeyRef: {{name: sasl, key: password}}}}}}]\n{output}"
        ))
    )
}

#[test]
fn sensitive_values_are_refused_in_a_config_map() {
    let ev = eval(&with_password(""));
    assert!(
        reasons(&ev).contains(&Reason::SensitiveValueInConfigMap),
        "{:?}",
        ev.problems
    );
    let message = format!("{:?}", ev.problems);
    assert!(
        !message.contains("hunter2"),
        "a problem must never carry the secret: {message}"
    );
}

#[test]
fn sensitive_values_are_written_to_a_secret() {
    let ev = eval(&with_password("  output: {kind: Secret}\n"));
    assert!(ev.is_valid(), "{:?}", ev.problems);
    assert!(file(&ev, "producer.properties")["sasl.jaas.config"].contains("hunter2"));
}

#[test]
fn deferred_secrets_become_provider_references_and_still_roll_on_rotation() {
    let ev = eval(&with_password(
        "  output: {secrets: Deferred, mountPath: /etc/k}\n",
    ));
    assert!(ev.is_valid(), "{:?}", ev.problems);
    let props = file(&ev, "producer.properties");
    assert_eq!(
        props["sasl.jaas.config"],
        "x required password=\"${dir:/etc/k/secrets/sasl:password}\";"
    );
    assert_eq!(props["config.providers"], "dir");
    assert_eq!(
        props["config.providers.dir.class"],
        "org.apache.kafka.common.config.provider.DirectoryConfigProvider"
    );
    let rendered = ev.rendered.as_ref().expect("rendered");
    assert!(
        rendered
            .files
            .values()
            .all(|content| !content.contains("hunter2"))
    );
    assert_eq!(rendered.secret_mounts.len(), 1);
    assert_eq!(rendered.secret_mounts[0].mount_path, "/etc/k/secrets/sasl");
    let rotated = eval(
        &with_password("  output: {secrets: Deferred, mountPath: /etc/k}\n")
            .replace("hunter2", "hunter3"),
    );
    assert_ne!(
        rotated.rendered.expect("rendered").hash,
        rendered.hash,
        "a rotated password changes the hash"
    );
}

#[test]
fn explain_redacts_password_keys_and_secret_sourced_values() {
    let ev = eval(&with_password("  output: {kind: Secret}\n"));
    let entries = kafka_config_operator::cli::explain_entries("ns", "p", &ev, None);
    let json = serde_json::to_string(&entries).expect("json");
    assert!(!json.contains("hunter2"), "{json}");
    // Secret data is shown by the Secret key it came from; a plain password by "[redacted]".
    assert!(
        json.contains("[from Secret ns/sasl key password]"),
        "{json}"
    );
    let plain = eval(&producer(
        "  args: {topic: t, bootstrap-server: \"b:1\"}\n  properties: {producer: {ssl.key.password: hunter2}}\n  output: {kind: Secret}\n",
    ));
    let entries = kafka_config_operator::cli::explain_entries("ns", "p", &plain, None);
    let json = serde_json::to_string(&entries).expect("json");
    assert!(!json.contains("hunter2"), "{json}");
    assert!(json.contains("[redacted]"), "{json}");
}

#[test]
fn strict_references_fail_and_lenient_ones_are_empty() {
    let spec = "  args: {topic: t, bootstrap-server: \"b:1\"}\n  properties: {producer: {client.id: \"${env.MISSING}x\"}}\n";
    let strict = eval(&producer(spec));
    assert!(reasons(&strict).contains(&Reason::UnresolvedReference));
    let lenient = eval(&producer(&format!("  references: Lenient\n{spec}")));
    assert_eq!(
        value(&lenient, Role::Producer, "client.id").as_deref(),
        Some("x")
    );
}

#[test]
fn references_resolve_in_every_layer_from_the_configs_own_values() {
    let yaml = format!(
        "{}\n---\napiVersion: kafkaconfig.dev/v1alpha1\nkind: GlobalClientDefaults\nmetadata: {{name: g}}\nspec:\n  defaults: {{common: {{client.rack: \"${{env.ZONE:unknown}}\"}}}}\n",
        producer(
            "  args: {topic: t, bootstrap-server: \"${app.bootstrap}\"}\n  env: [{name: ZONE, value: eu-1a}]\n  systemProperties: {app.bootstrap: \"k:9092\"}\n"
        )
    );
    let ev = eval(&yaml);
    assert_eq!(
        value(&ev, Role::Producer, "client.rack").as_deref(),
        Some("eu-1a")
    );
    assert_eq!(
        value(&ev, Role::Producer, "bootstrap.servers").as_deref(),
        Some("k:9092")
    );
}

#[test]
fn declared_provider_references_are_left_for_kafka() {
    let ev = eval(&producer(
        "  args: {topic: t, bootstrap-server: \"b:1\"}\n  properties: {producer: {config.providers: vault, ssl.key.password: \"${vault:secret/kafka:key}\"}}\n",
    ));
    assert!(ev.is_valid(), "{:?}", ev.problems);
    assert_eq!(
        file(&ev, "producer.properties")["ssl.key.password"],
        "${vault:secret/kafka:key}"
    );
}

#[test]
fn missing_sources_are_named_precisely() {
    let ev = eval(&producer(
        "  configFiles:\n    - configMapKeyRef: {name: nope, key: a}\n    - configMapKeyRef: {name: base, key: nope}\n    - secretKeyRef: {name: nope, key: a}\n    - configMapKeyRef: {name: gone, key: a, optional: true}\n",
    ));
    let got = reasons(&ev);
    assert!(got.contains(&Reason::ConfigMapNotFound));
    assert!(got.contains(&Reason::KeyNotFound));
    assert!(got.contains(&Reason::SecretNotFound));
    assert_eq!(
        ev.source_problems.len(),
        3,
        "the optional source is skipped: {:?}",
        ev.source_problems
    );
}

#[test]
fn malformed_files_report_the_line() {
    let yaml = producer("  configFiles: [{configMapKeyRef: {name: broken, key: f}}]\n")
        + "\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: broken, namespace: ns}\ndata: {f: \"a=1\\nb=\\\\u12\"}\n";
    let ev = eval(&yaml);
    let problem = ev
        .source_problems
        .iter()
        .find(|p| p.reason == Reason::ParseError)
        .expect("ParseError");
    assert!(problem.message.contains("line 2"), "{}", problem.message);
}

#[test]
fn a_shared_file_refuses_role_values_that_differ() {
    let yaml = "apiVersion: kafkaconfig.dev/v1alpha1\nkind: KafkaToolConfig\nmetadata: {name: l, namespace: ns}\nspec:\n  tool: kafka-e2e-latency\n  args: {bootstrap-server: \"b:1\", topic: t, num-records: 10, producer-acks: all, record-size: 100}\n  properties: {producer: {client.id: a}, consumer: {client.id: b}}\n";
    let ev = eval(yaml);
    assert!(
        reasons(&ev).contains(&Reason::RoleConflict),
        "{:?}",
        ev.problems
    );
    let same = eval(&yaml.replace("client.id: b", "client.id: a"));
    assert!(same.is_valid(), "{:?}", same.problems);
    assert!(
        same.rendered
            .expect("rendered")
            .files
            .contains_key("client.properties")
    );
}

#[test]
fn legacy_verifiable_producer_lets_the_file_beat_its_options() {
    let yaml = format!(
        "{BASE}\n---\napiVersion: kafkaconfig.dev/v1alpha1\nkind: KafkaToolConfig\nmetadata: {{name: v, namespace: ns}}\nspec:\n  tool: kafka-verifiable-producer\n  precedence: PREC\n  args: {{topic: t, acks: \"0\"}}\n  configFiles: [{{configMapKeyRef: {{name: base, key: client.properties}}}}]\n"
    );
    let legacy = eval(&yaml.replace("PREC", "Legacy"));
    assert_eq!(value(&legacy, Role::Producer, "acks").as_deref(), Some("1"));
    let modern = eval(&yaml.replace("PREC", "Modern"));
    assert_eq!(value(&modern, Role::Producer, "acks").as_deref(), Some("0"));
}

#[test]
fn kafka_version_selects_the_config_file_option_spelling() {
    let spec = "  args: {topic: t, bootstrap-server: \"b:1\"}\n  kafkaVersion: \"VERSION\"\n";
    let old = eval(&producer(&spec.replace("VERSION", "4.1.2")));
    assert_eq!(tool_args(&old)[0], "--producer.config");
    let new = eval(&producer(&spec.replace("VERSION", "4.2")));
    assert_eq!(tool_args(&new)[0], "--command-config");
    assert_eq!(tool_args(&new)[1], "/etc/kafka-config/producer.properties");
}

#[test]
fn rendering_is_deterministic_and_the_hash_follows_content() {
    let spec = "  args: {topic: t, bootstrap-server: \"b:1\"}\n  properties: {producer: {linger.ms: 5, acks: all}}\n";
    let a = eval(&producer(spec)).rendered.expect("rendered");
    let b = eval(&producer(
        &spec.replace("linger.ms: 5, acks: all", "acks: all, linger.ms: 5"),
    ))
    .rendered
    .expect("rendered");
    assert_eq!(a, b);
    let c = eval(&producer(&spec.replace("linger.ms: 5", "linger.ms: 6")))
        .rendered
        .expect("rendered");
    assert_ne!(a.hash, c.hash);
    assert!(a.hash.starts_with("sha256:") && a.hash.len() == 71);
}

/// The hash of the first KafkaToolConfig of `yaml`, keyed with `key` (none: unkeyed).
fn hash_with(yaml: &str, key: Option<&[u8]>) -> String {
    let mut ws = workspace(yaml);
    ws.hash_key = key.map(|k| HashKey::new(k.to_vec()).expect("a 32-byte key"));
    let config = ws.configs.first().expect("a KafkaToolConfig");
    let ev = evaluate_manifest(&ws, config);
    ev.rendered.as_ref().expect("rendered").hash.clone()
}

#[test]
fn the_keyed_hash_follows_content_and_key_and_differs_from_the_unkeyed_one() {
    let key_a = [0x11u8; 32];
    let key_b = [0x22u8; 32];
    for output in [
        "  output: {kind: Secret}\n",
        "  output: {secrets: Deferred, mountPath: /etc/k}\n",
    ] {
        let yaml = with_password(output);
        let unkeyed = hash_with(&yaml, None);
        let keyed = hash_with(&yaml, Some(&key_a));
        assert!(
            unkeyed.starts_with("sha256:") && unkeyed.len() == 71,
            "{unkeyed}"
        );
        assert!(
            keyed.starts_with("hmac-sha256:") && keyed.len() == 76,
            "{keyed}"
        );
        assert_ne!(
            keyed["hmac-".len()..],
            unkeyed[..],
            "keyed and unkeyed digests differ"
        );
        assert_eq!(
            keyed,
            hash_with(&yaml, Some(&key_a)),
            "stable for the same content and key"
        );
        assert_ne!(
            keyed,
            hash_with(&yaml, Some(&key_b)),
            "another key, another hash"
        );
        // Content changes change it: a rotated password (Secret data, also when Deferred keeps it
        // out of the files) and a plain property.
        let rotated = yaml.replace("hunter2", "hunter3");
        assert_ne!(keyed, hash_with(&rotated, Some(&key_a)));
        let edited = yaml.replace("topic: t", "topic: u");
        assert_ne!(keyed, hash_with(&edited, Some(&key_a)));
    }
}

#[test]
fn a_right_password_guess_does_not_reproduce_the_keyed_hash_without_the_key() {
    // Someone who can read the config, `explain` and the output's annotation but not the Secret
    // rebuilds the manifest with a guess for the password.
    let key = [0x5au8; 32];
    let real = with_password("  output: {kind: Secret}\n");
    let annotation = hash_with(&real, Some(&key));
    let right_guess = real.clone();
    // Unkeyed, a right guess is confirmed offline: the weakness the keyed hash removes.
    assert_eq!(hash_with(&right_guess, None), hash_with(&real, None));
    assert_ne!(hash_with(&right_guess, None), annotation);
    for guessed_key in [[0u8; 32], [0xffu8; 32], [0x5bu8; 32]] {
        assert_ne!(hash_with(&right_guess, Some(&guessed_key)), annotation);
    }
    // With the key (what `--hash-key-file` gives a pipeline) the annotation is reproduced.
    assert_eq!(hash_with(&right_guess, Some(&key)), annotation);
}

#[test]
fn unknown_tools_and_roles_are_refused_with_suggestions() {
    let ev = eval(
        "apiVersion: kafkaconfig.dev/v1alpha1\nkind: KafkaToolConfig\nmetadata: {name: x, namespace: ns}\nspec: {tool: kafka-topic}\n",
    );
    assert_eq!(reasons(&ev), vec![Reason::UnknownTool]);
    assert!(
        ev.problems[0].message.contains("did you mean kafka-topics"),
        "{}",
        ev.problems[0].message
    );
    let role = eval(&producer(
        "  args: {topic: t, bootstrap-server: \"b:1\"}\n  properties: {consumer: {group.id: g}}\n",
    ));
    assert!(reasons(&role).contains(&Reason::UnknownRole));
}

#[test]
fn arguments_the_operator_writes_itself_are_refused() {
    let ev = eval(&producer(
        "  args: {topic: t, bootstrap-server: \"b:1\", producer.config: /tmp/x}\n",
    ));
    assert!(reasons(&ev).contains(&Reason::InvalidArgument));
}

/// The tools of the KIP-1137 table and the keys its first column lists for each: the catalogue
/// must force exactly those (plus keys documented as forced through options).
const KIP_1137_FORCED: &[(&str, &[&str])] = &[
    (
        "kafka-console-consumer",
        &["key.deserializer", "value.deserializer"],
    ),
    (
        "kafka-console-producer",
        &["key.serializer", "value.serializer"],
    ),
    (
        "kafka-console-share-consumer",
        &["key.deserializer", "value.deserializer"],
    ),
    (
        "kafka-consumer-perf-test",
        &["key.deserializer", "value.deserializer", "check.crcs"],
    ),
    (
        "kafka-e2e-latency",
        &[
            "key.serializer",
            "linger.ms",
            "enable.auto.commit",
            "fetch.max.wait.ms",
        ],
    ),
    ("kafka-get-offsets", &["client.id"]),
    (
        "kafka-producer-perf-test",
        &["key.serializer", "value.serializer"],
    ),
    (
        "kafka-share-consumer-perf-test",
        &["key.deserializer", "check.crcs"],
    ),
    (
        "kafka-verifiable-consumer",
        &["key.deserializer", "value.deserializer"],
    ),
    (
        "kafka-verifiable-producer",
        &["key.serializer", "value.serializer"],
    ),
];

#[test]
fn catalogue_forces_what_the_kip_1137_table_lists() {
    let catalogue = ToolCatalogue::get();
    for (tool, keys) in KIP_1137_FORCED {
        let tool = catalogue.tool(tool).expect("tool in catalogue");
        let forced: Vec<&String> = tool.forced.values().flat_map(|m| m.keys()).collect();
        for key in *keys {
            assert!(
                forced.iter().any(|k| k == key),
                "{} should force {key}",
                tool.name
            );
        }
    }
}

/// Every tool row: with bootstrap.servers from a file and every required non-key argument given,
/// the tool renders, its file and config-file argument are in place, every required group is on
/// the command line or satisfied. Every forced key, set to another value, is checked one by one
/// in Modern and Legacy in tests/tool_rows.rs, with the rows against Kafka's reference.
#[test]
fn every_tool_row_renders_with_its_required_arguments() {
    let catalogue = ToolCatalogue::get();
    let mut checked = 0;
    for tool in catalogue
        .tools
        .iter()
        .filter(|t| !t.select_roles && !t.positional_config_file)
    {
        let mut args: Vec<String> = Vec::new();
        for group in &tool.required {
            let first = &group[0];
            let bootstrap = group.iter().any(|n| n.starts_with("bootstrap-"));
            if !bootstrap && !tool.is_config_file_option(first) {
                args.push(format!("{first}: \"1\""));
            }
        }
        // A tool with subcommands runs one.
        let subcommand = ToolOptions::get()
            .table(&tool.name, "4.3.1")
            .and_then(|t| {
                // One that needs no option of its own (bootstrap comes from the file).
                t.scope.subcommands.iter().find(|s| {
                    s.scope.options.iter().all(|o| !o.required)
                        && s.scope.positionals.is_empty()
                        && s.scope.mutex_groups.iter().all(|g| {
                            !g.required || g.options.iter().any(|o| o.starts_with("bootstrap-"))
                        })
                })
            })
            .map(|s| format!("  extraArgs: [{}]\n", s.name))
            .unwrap_or_default();
        let yaml = format!(
            "{BASE}\n---\napiVersion: kafkaconfig.dev/v1alpha1\nkind: KafkaToolConfig\nmetadata: {{name: t, namespace: ns}}\nspec:\n  tool: {}\n  args: {{{}}}\n{subcommand}  configFiles: [{{configMapKeyRef: {{name: base, key: client.properties}}}}]\n",
            tool.name,
            args.join(", "),
        );
        let ev = eval(&yaml);
        assert!(
            ev.is_valid(),
            "{}: {:?} {:?}",
            tool.name,
            ev.problems,
            ev.source_problems
        );
        let rendered = ev.rendered.as_ref().expect("rendered");
        let mut argv = tool_args(&ev);
        if tool.subcommand_first && !subcommand.is_empty() {
            argv.remove(0);
        }
        let file_option = &tool.config_file.as_ref().expect("config file option");
        let expected_option = [Some(file_option.option.clone()), file_option.legacy.clone()];
        assert!(
            expected_option
                .iter()
                .flatten()
                .any(|o| argv[0] == format!("--{o}")),
            "{}: {argv:?}",
            tool.name
        );
        let file_name = argv[1].rsplit('/').next().expect("path");
        assert!(
            rendered.files.contains_key(file_name),
            "{}: {file_name}",
            tool.name
        );
        for group in &tool.required {
            let on_line = group.iter().any(|n| argv.contains(&format!("--{n}")));
            let via_file = group.iter().all(|n| tool.option(n).is_none())
                && group.iter().any(|n| tool.is_config_file_option(n));
            assert!(
                on_line || via_file,
                "{}: required {group:?} not on {argv:?}",
                tool.name
            );
        }
        checked += 1;
    }
    assert_eq!(checked, 30, "the 30 tools of the KIP-1137 table");
}

#[test]
fn verifiable_consumer_protocol_options_follow_the_group_protocol() {
    let yaml = "apiVersion: kafkaconfig.dev/v1alpha1\nkind: KafkaToolConfig\nmetadata: {name: v, namespace: ns}\nspec:\n  tool: kafka-verifiable-consumer\n  args: {bootstrap-server: \"b:1\", topic: t, group-id: g, group-protocol: PROTOCOL}\n";
    let consumer = eval(&yaml.replace("PROTOCOL", "consumer"));
    assert!(consumer.is_valid(), "{:?}", consumer.problems);
    assert_eq!(
        value(&consumer, Role::Consumer, "partition.assignment.strategy"),
        None
    );
    assert!(!tool_args(&consumer).contains(&"--assignment-strategy".to_string()));
    let classic = eval(&yaml.replace("PROTOCOL", "classic"));
    assert_eq!(
        value(&classic, Role::Consumer, "partition.assignment.strategy").as_deref(),
        Some("org.apache.kafka.clients.consumer.RangeAssignor")
    );
    // Kafka refuses a consumer with settings of the other protocol.
    let refused = eval(&format!(
        "{}  properties: {{consumer: {{session.timeout.ms: 10000}}}}\n",
        yaml.replace("PROTOCOL", "consumer")
    ));
    assert!(
        reasons(&refused).contains(&Reason::InvalidValue),
        "{:?}",
        refused.problems
    );
}

#[test]
fn the_connection_key_from_the_higher_layer_is_used_and_the_other_dropped() {
    let yaml = format!(
        "{BASE}\n---\napiVersion: kafkaconfig.dev/v1alpha1\nkind: KafkaToolConfig\nmetadata: {{name: q, namespace: ns}}\nspec:\n  tool: kafka-metadata-quorum\n  args: {{bootstrap-controller: \"ctl:9093\"}}\n  configFiles: [{{configMapKeyRef: {{name: base, key: client.properties}}}}]\n  extraArgs: [describe, --status]\n"
    );
    let ev = eval(&yaml);
    assert!(ev.is_valid(), "{:?}", ev.problems);
    let args = tool_args(&ev);
    assert!(
        args.windows(2)
            .any(|w| w[0] == "--bootstrap-controller" && w[1] == "ctl:9093"),
        "{args:?}"
    );
    assert!(
        !args.contains(&"--bootstrap-server".to_string()),
        "{args:?}"
    );
    assert!(!file(&ev, "admin.properties").contains_key("bootstrap.servers"));
    let warning = ev
        .warnings
        .iter()
        .find(|w| w.reason == Reason::ConflictingKeys)
        .expect("ConflictingKeys");
    assert_eq!(warning.key, "bootstrap.servers");
}

#[test]
fn explain_shows_the_providers_deferred_secrets_add() {
    let ev = eval(&with_password("  output: {secrets: Deferred}\n"));
    let entries =
        kafka_config_operator::cli::explain_entries("ns", "p", &ev, Some("config.providers"));
    assert_eq!(entries.len(), 1);
    assert_eq!(entries[0].value, "dir");
    assert_eq!(entries[0].layer, Layer::Operator);
}

#[test]
fn a_reference_to_another_namespace_is_refused_not_ignored() {
    let ev = eval(&producer(
        "  configFiles: [{configMapKeyRef: {name: base, key: client.properties, namespace: other}}]\n",
    ));
    let problem = ev
        .source_problems
        .iter()
        .find(|p| p.reason == Reason::CrossNamespaceReference)
        .expect("refused");
    assert!(
        problem.field.starts_with("spec.configFiles[0]"),
        "{}",
        problem.field
    );
    assert!(
        problem.message.contains("other/base"),
        "{}",
        problem.message
    );
    let own = eval(&producer(
        "  configFiles: [{configMapKeyRef: {name: base, key: client.properties, namespace: ns}}]\n",
    ));
    assert!(
        own.is_valid(),
        "its own namespace may be named: {:?}",
        own.source_problems
    );
}

#[test]
fn mirror_maker_clients_get_the_enforced_value_and_explain_shows_it_per_cluster() {
    use kafka_config_operator::cli::explain_entries;
    let ev = eval(
        r#"
apiVersion: kafkaconfig.dev/v1alpha1
kind: KafkaToolConfig
metadata: {name: mm, namespace: ns}
spec:
  tool: connect-mirror-maker
  properties:
    mirror-maker:
      clusters: a, b
      a.bootstrap.servers: a:9092
      b.bootstrap.servers: b:9092
      producer.override.acks: "1"
      b.producer.acks: all
      a.acks: "0"
---
apiVersion: kafkaconfig.dev/v1alpha1
kind: GlobalClientDefaults
metadata: {name: platform}
spec:
  enforced: {common: {security.protocol: SASL_SSL}}
"#,
    );
    assert!(ev.is_valid(), "{:?}", ev.problems);
    let entries = explain_entries("ns", "mm", &ev, None);
    let get = |role: &str, key: &str| {
        entries
            .iter()
            .find(|e| e.role == role && e.key == key)
            .map(|e| (e.value.clone(), e.source.clone()))
    };
    for cluster in ["a", "b"] {
        for client in ["producer", "consumer", "admin"] {
            let (value, source) = get(
                &format!("mirror-maker/{cluster}/{client}"),
                "security.protocol",
            )
            .unwrap_or_else(|| panic!("{cluster} {client}"));
            assert_eq!(value, "SASL_SSL");
            assert!(source.contains("GlobalClientDefaults platform"), "{source}");
        }
    }
    // {cluster}.{client}.k beats {client}.override.k; `a.acks` is not a client key of cluster a.
    assert_eq!(
        get("mirror-maker/a/producer", "acks")
            .map(|e| e.0)
            .as_deref(),
        Some("1")
    );
    assert_eq!(
        get("mirror-maker/b/producer", "acks")
            .map(|e| e.0)
            .as_deref(),
        Some("all")
    );
    assert_eq!(get("mirror-maker/a/consumer", "acks"), None);
}
