//! Typed validation against Kafka's generated ConfigDef catalogue: every type and every validator
//! kind Kafka uses, with real keys, plus unknown and deprecated keys; and the engine's verdict on
//! every value Kafka itself judged (tests/fixtures/conformance/validator-verdicts.json, written
//! and re-checked against Kafka's own `ConfigDef.parseValue` by conformance/run.sh).

use std::collections::BTreeSet;

use kafka_config_operator::engine::catalogue::configs::{
    ConfigCatalogue, ConfigKey, ConfigType, Validator,
};
use kafka_config_operator::engine::outcome::Reason;
use kafka_config_operator::engine::spec::Role;
use kafka_config_operator::engine::validate::{check_value, is_checked};

/// The definition of `name` in the catalogue set `set` (`producer`, `broker`, `topic`, ...).
fn key(set: &str, name: &str) -> &'static ConfigKey {
    ConfigCatalogue::get()
        .sets
        .get(set)
        .and_then(|s| s.get(name))
        .unwrap_or_else(|| panic!("{name} is in the {set} catalogue set"))
}

/// The role whose files are validated against `set`, with the tool that builds it.
fn role_of(set: &str) -> Option<(Role, &'static str)> {
    match set {
        "producer" => Some((Role::Producer, "client")),
        "consumer" => Some((Role::Consumer, "client")),
        "share-consumer" => Some((Role::ShareConsumer, "client")),
        "admin" => Some((Role::Admin, "client")),
        "broker" => Some((Role::Broker, "kafka-server")),
        "mirror-maker" => Some((Role::MirrorMaker, "connect-mirror-maker")),
        _ => None,
    }
}

/// `None`: Kafka accepts the value. `Some(reason)`: Kafka refuses it, and the engine's message
/// says so with this text.
type Expect = Option<&'static str>;
const OK: Expect = None;

/// (catalogue set, key, value, expected). Every validator kind of the catalogue, and every Kafka
/// validator class or lambda behind the `other`/`lambda` kinds that the engine checks.
const CASES: &[(&str, &str, &str, Expect)] = &[
    // BOOLEAN: String.equalsIgnoreCase, after String.trim
    ("producer", "enable.idempotence", "TRUE", OK),
    ("producer", "enable.idempotence", " false ", OK),
    ("producer", "enable.idempotence", "fal\u{17f}e", OK), // LONG S upper-cases to S
    (
        "producer",
        "enable.idempotence",
        "yes",
        Some("expected true or false"),
    ),
    // INT with a range (Integer.parseInt accepts any script's digits)
    ("producer", "batch.size", "16384", OK),
    ("producer", "batch.size", "+16384", OK),
    ("producer", "batch.size", "\u{663}", OK),
    (
        "producer",
        "batch.size",
        "1.5",
        Some("expected a 32-bit integer"),
    ),
    (
        "producer",
        "batch.size",
        "2147483648",
        Some("expected a 32-bit integer"),
    ),
    ("consumer", "max.poll.records", "1", OK),
    (
        "consumer",
        "max.poll.records",
        "0",
        Some("must be at least 1"),
    ),
    // SHORT
    ("producer", "sasl.login.refresh.buffer.seconds", "300", OK),
    (
        "producer",
        "sasl.login.refresh.buffer.seconds",
        "3601",
        Some("must be no more than 3600"),
    ),
    (
        "producer",
        "sasl.login.refresh.buffer.seconds",
        "40000",
        Some("expected a 16-bit integer"),
    ),
    // LONG
    ("producer", "linger.ms", " 5 ", OK),
    (
        "producer",
        "linger.ms",
        "five",
        Some("expected a 64-bit integer"),
    ),
    // DOUBLE with a range (Double.parseDouble: suffixes and hex yes, Rust's inf/nan no)
    ("producer", "sasl.login.refresh.window.factor", "0.8", OK),
    ("producer", "sasl.login.refresh.window.factor", "0.8d", OK),
    (
        "producer",
        "sasl.login.refresh.window.factor",
        "0x1.8p-1",
        OK,
    ),
    (
        "producer",
        "sasl.login.refresh.window.factor",
        "2.0",
        Some("must be no more than 1"),
    ),
    (
        "producer",
        "sasl.login.refresh.window.factor",
        "0.4",
        Some("must be at least 0.5"),
    ),
    (
        "producer",
        "sasl.kerberos.ticket.renew.window.factor",
        "inf",
        Some("expected a number"),
    ),
    // CLASS: the form of the name (whether it exists depends on the classpath)
    (
        "producer",
        "key.serializer",
        "org.apache.kafka.common.serialization.StringSerializer",
        OK,
    ),
    (
        "producer",
        "key.serializer",
        "not a class",
        Some("expected a fully qualified Java class name"),
    ),
    // PASSWORD: any text
    ("producer", "ssl.key.password", "anything at all", OK),
    // ConfigDef.ValidString (exact case)
    ("producer", "acks", "all", OK),
    (
        "producer",
        "acks",
        "ALL",
        Some("must be one of all, -1, 0, 1 (exact case)"),
    ),
    (
        "producer",
        "acks",
        "2",
        Some("must be one of all, -1, 0, 1"),
    ),
    // ConfigDef.CaseInsensitiveValidString (toUpperCase(Locale.ROOT))
    ("producer", "security.protocol", "sasl_ssl", OK),
    ("producer", "security.protocol", "\u{17f}asl_ssl", OK),
    (
        "producer",
        "security.protocol",
        "TLS",
        Some("must be one of PLAINTEXT, SASL_PLAINTEXT, SASL_SSL, SSL (any case)"),
    ),
    // ConfigDef.ValidList with values, empty not allowed; repeated items are dropped first
    ("broker", "process.roles", "broker,controller", OK),
    ("broker", "process.roles", "broker,broker", OK),
    (
        "broker",
        "process.roles",
        "broker,zookeeper",
        Some("\"zookeeper\" is not one of broker, controller"),
    ),
    ("broker", "process.roles", "", Some("must not be empty")),
    (
        "broker",
        "process.roles",
        "broker,,controller",
        Some("must not have empty items"),
    ),
    // ConfigDef.ValidList with values, empty allowed
    ("broker", "log.cleanup.policy", "", OK),
    ("broker", "log.cleanup.policy", "compact,delete", OK),
    (
        "broker",
        "log.cleanup.policy",
        "Compact",
        Some("\"Compact\" is not one of compact, delete (exact case)"),
    ),
    // ConfigDef.ValidList.anyNonDuplicateValues, empty not allowed / allowed
    ("producer", "bootstrap.servers", "a:9092,b:9092", OK),
    (
        "producer",
        "bootstrap.servers",
        "",
        Some("must not be empty"),
    ),
    (
        "producer",
        "bootstrap.servers",
        "a:9092,",
        Some("must not have empty items"),
    ),
    ("producer", "config.providers", "", OK),
    (
        "producer",
        "config.providers",
        "file,,dir",
        Some("must not have empty items"),
    ),
    // ConfigDef.NonEmptyString
    ("producer", "transactional.id", "tx-1", OK),
    (
        "broker",
        "remote.log.metadata.manager.listener.name",
        " ",
        Some("must not be empty"),
    ),
    // ConfigDef.NonEmptyStringWithoutControlChars (connector names)
    ("mirror-source", "name", "replicator", OK),
    ("mirror-source", "name", "a\u{1}", OK), // String.trim removes it
    (
        "mirror-source",
        "name",
        "a\u{7}b",
        Some("must not contain control characters (found U+0007)"),
    ),
    ("mirror-source", "name", "", Some("must not be empty")),
    // ConfigDef.NonNullValidator: a value from a file is never null
    ("broker", "authorizer.class.name", "", OK),
    // ConfigDef.ListSize
    ("streams", "rack.aware.assignment.tags", "a,b,c,d,e", OK),
    (
        "streams",
        "rack.aware.assignment.tags",
        "a,b,c,d,e,f",
        Some("may have at most 5 entries, not 6"),
    ),
    // ConfigDef.CompositeValidator: NonNullValidator + ConnectorConfig.aliasValidator (lambda)
    ("mirror-source", "transforms", "a,b", OK),
    (
        "mirror-source",
        "transforms",
        "a,b,a",
        Some("names the alias \"a\" twice"),
    ),
    // lambda: CompressionType.GZIP.levelValidator()
    ("producer", "compression.gzip.level", "-1", OK),
    ("producer", "compression.gzip.level", "9", OK),
    (
        "producer",
        "compression.gzip.level",
        "0",
        Some("must be between 1 and 9, or -1"),
    ),
    (
        "broker",
        "compression.gzip.level",
        "10",
        Some("must be between 1 and 9, or -1"),
    ),
    // lambda: TopicCreationConfig.REPLICATION_FACTOR_VALIDATOR / PARTITIONS_VALIDATOR
    (
        "connect-worker",
        "config.storage.replication.factor",
        "-1",
        OK,
    ),
    (
        "connect-worker",
        "config.storage.replication.factor",
        "3",
        OK,
    ),
    (
        "connect-worker",
        "config.storage.replication.factor",
        "0",
        Some("must be at least 1, or -1"),
    ),
    (
        "connect-worker",
        "offset.storage.partitions",
        "-2",
        Some("must be at least 1, or -1"),
    ),
    // lambda: DistributedConfig connect.protocol (equalsIgnoreCase)
    ("connect-worker", "connect.protocol", "SESSIONED", OK),
    (
        "connect-worker",
        "connect.protocol",
        "default",
        Some("must be one of eager, compatible, sessioned (any case)"),
    ),
    // lambda: DistributedConfig.validateVerificationAlgorithms (the JVM-independent part)
    (
        "connect-worker",
        "inter.worker.verification.algorithms",
        "HmacSHA256",
        OK,
    ),
    (
        "connect-worker",
        "inter.worker.verification.algorithms",
        "",
        Some("needs at least one MAC algorithm"),
    ),
    // lambda: StreamsConfig.verifyTopologyOptimizationConfigs
    (
        "streams",
        "topology.optimization",
        "reuse.ktable.source.topics,merge.repartition.topics",
        OK,
    ),
    (
        "streams",
        "topology.optimization",
        "all,none",
        Some("all and none cannot be combined"),
    ),
    (
        "streams",
        "topology.optimization",
        "fast",
        Some("\"fast\" is not one of all, none"),
    ),
    // AutoOffsetResetStrategy.Validator
    ("consumer", "auto.offset.reset", "earliest", OK),
    ("consumer", "auto.offset.reset", "by_duration:PT1H", OK),
    ("consumer", "auto.offset.reset", "by_duration:p1dt12h", OK),
    (
        "consumer",
        "auto.offset.reset",
        "bogus",
        Some(
            "must be one of latest, earliest, none (exact case) or by_duration:<ISO-8601 duration>",
        ),
    ),
    (
        "consumer",
        "auto.offset.reset",
        "LATEST",
        Some("must be one of latest, earliest, none (exact case)"),
    ),
    (
        "consumer",
        "auto.offset.reset",
        "by_duration:1h",
        Some("\"1h\" is not an ISO-8601 duration"),
    ),
    (
        "consumer",
        "auto.offset.reset",
        "by_duration:-PT1H",
        Some("\"-PT1H\" is a negative duration"),
    ),
    // ShareAcknowledgementMode.Validator (exact case) and ShareAcquireMode.Validator (any case)
    (
        "share-consumer",
        "share.acknowledgement.mode",
        "explicit",
        OK,
    ),
    (
        "share-consumer",
        "share.acknowledgement.mode",
        "EXPLICIT",
        Some("must be one of implicit, explicit (exact case)"),
    ),
    ("share-consumer", "share.acquire.mode", "RECORD_LIMIT", OK),
    ("share-consumer", "share.acquire.mode", "record_limit", OK),
    (
        "share-consumer",
        "share.acquire.mode",
        "greedy",
        Some("must be one of BATCH_OPTIMIZED, RECORD_LIMIT (any case)"),
    ),
    // ThrottledReplicaListValidator (topic configs)
    ("topic", "leader.replication.throttled.replicas", "*", OK),
    (
        "topic",
        "leader.replication.throttled.replicas",
        "0:101,1:102",
        OK,
    ),
    (
        "topic",
        "follower.replication.throttled.replicas",
        "0-101",
        Some("must be * or a list of partition:broker pairs"),
    ),
    // QuorumConfig.ControllerQuorumVotersValidator
    (
        "broker",
        "controller.quorum.voters",
        "1@kafka-0:9093,2@[::1]:9093",
        OK,
    ),
    ("broker", "controller.quorum.voters", "", OK),
    (
        "broker",
        "controller.quorum.voters",
        "kafka-0:9093",
        Some("\"kafka-0:9093\" is not {id}@{host}:{port}: one @ expected"),
    ),
    (
        "broker",
        "controller.quorum.voters",
        "one@kafka-0:9093",
        Some("the id is not a 32-bit integer"),
    ),
    (
        "broker",
        "controller.quorum.voters",
        "1@kafka-0:70000",
        Some("the address is not {host}:{port} (port 0-65535)"),
    ),
    // QuorumConfig.ControllerQuorumBootstrapServersValidator
    (
        "broker",
        "controller.quorum.bootstrap.servers",
        "kafka-0:9093,kafka-1:9093",
        OK,
    ),
    (
        "broker",
        "controller.quorum.bootstrap.servers",
        "kafka-0",
        Some("\"kafka-0\" is not {host}:{port} (port 0-65535)"),
    ),
    // RestServerConfig.ListenersValidator
    ("mirror-maker", "listeners", "http://:8083", OK),
    (
        "mirror-maker",
        "listeners",
        "",
        Some("needs at least one URL"),
    ),
    (
        "mirror-maker",
        "listeners",
        "http://:8083,",
        Some("has an empty URL"),
    ),
    // RestServerConfig.ResponseHttpHeadersValidator (Jetty's csvSplit, then each rule)
    (
        "mirror-maker",
        "response.http.headers.config",
        "set X-Frame-Options:DENY,\"add X:a,b\"",
        OK,
    ),
    (
        "mirror-maker",
        "response.http.headers.config",
        "bogus X:1",
        Some("the action \"bogus\" is not one of set, add, setDate, addDate"),
    ),
    (
        "mirror-maker",
        "response.http.headers.config",
        "set X",
        Some("header rule \"set X\": expected '[header name]:[header value]'"),
    ),
    (
        "mirror-maker",
        "response.http.headers.config",
        "set X Y:1",
        Some("the header name \"X Y\" is empty or contains whitespace"),
    ),
];

#[test]
fn every_validator_kind_accepts_and_refuses_as_kafka_does_with_a_message_naming_key_and_reason() {
    let mut failures = Vec::new();
    for (set, name, value, expect) in CASES {
        let result = check_value(key(set, name), value);
        match (expect, &result) {
            (None, Ok(())) => {}
            (Some(reason), Err(why)) if why.contains(reason) => {}
            _ => failures.push(format!(
                "{set} {name}={value:?}: expected {expect:?}, got {result:?}"
            )),
        }
        // Through the whole engine, for the sets a role's file is checked against: the problem
        // names the key and gives the reason.
        let Some((role, tool)) = role_of(set) else {
            continue;
        };
        let ev = evaluate_one(tool, role, name, value);
        let problem = ev.problems.iter().find(|p| {
            p.reason == Reason::InvalidValue && p.message.starts_with(&format!("{name}="))
        });
        match (expect, problem) {
            (None, None) => {}
            (Some(reason), Some(p))
                if p.message.contains(reason)
                    && p.message
                        .contains(&format!("is not valid for the {role} client")) => {}
            _ => failures.push(format!(
                "{set} {name}={value:?} through {tool}/{role}: expected {expect:?}, got {problem:?}"
            )),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Evaluates one KafkaToolConfig that sets `key=value` for `role`.
fn evaluate_one(
    tool: &str,
    role: Role,
    key: &str,
    value: &str,
) -> kafka_config_operator::engine::Evaluation {
    let roles = if role == Role::MirrorMaker {
        String::new()
    } else {
        format!("  roles: [{role}]\n")
    };
    let yaml = format!(
        "apiVersion: kafkaconfig.dev/v1alpha1\nkind: KafkaToolConfig\nmetadata: {{name: c, namespace: ns}}\nspec:\n  tool: {tool}\n{roles}  properties:\n    {role}:\n      {key}: {}\n",
        serde_json::to_string(value).expect("a JSON string is a YAML string")
    );
    let mut ws = kafka_config_operator::manifest::Workspace::default();
    ws.add_documents(std::path::Path::new("t.yaml"), &yaml)
        .expect("manifest");
    kafka_config_operator::cli::evaluate_manifest(&ws, &ws.configs[0])
}

#[derive(serde::Deserialize)]
struct Verdicts {
    #[serde(rename = "kafkaVersion")]
    kafka_version: String,
    cases: Vec<Verdict>,
}

#[derive(serde::Deserialize)]
struct Verdict {
    set: String,
    key: String,
    value: String,
    kafka: String,
    why: String,
}

#[test]
fn the_engine_accepts_and_refuses_exactly_the_values_kafka_does() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/conformance/validator-verdicts.json");
    let text = std::fs::read_to_string(&path).expect("the committed Kafka verdicts");
    let verdicts: Verdicts = serde_json::from_str(&text).expect("verdicts parse");
    let catalogue = ConfigCatalogue::get();
    assert_eq!(verdicts.kafka_version, catalogue.kafka_version);
    assert!(
        verdicts.cases.len() > 1000,
        "the verdicts cover every validator key: {}",
        verdicts.cases.len()
    );
    let mut disagreements = Vec::new();
    let mut refused = 0;
    for case in &verdicts.cases {
        let ours = check_value(key(&case.set, &case.key), &case.value);
        let kafka_accepts = case.kafka == "accept";
        refused += usize::from(!kafka_accepts);
        if ours.is_ok() != kafka_accepts {
            disagreements.push(format!(
                "{} {}={:?}: Kafka {} ({}), the engine: {ours:?}",
                case.set, case.key, case.value, case.kafka, case.why
            ));
        }
    }
    assert!(refused > 300, "bad values are among the cases: {refused}");
    assert!(
        disagreements.is_empty(),
        "{} of {} values judged differently:\n{}",
        disagreements.len(),
        verdicts.cases.len(),
        disagreements.join("\n")
    );
}

fn parts(v: &Validator) -> Vec<&Validator> {
    match v {
        Validator::Composite { validators } => {
            let mut all = vec![v];
            all.extend(validators.iter().flat_map(parts));
            all
        }
        _ => vec![v],
    }
}

#[test]
fn every_validator_the_engine_does_not_check_is_listed_with_its_reason_in_the_docs() {
    let doc = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/conformance.md"),
    )
    .expect("docs/conformance.md");
    let mut undocumented = BTreeSet::new();
    let mut unchecked = 0;
    for (set, keys) in &ConfigCatalogue::get().sets {
        for def in keys.keys.values() {
            for part in def.validator.iter().flat_map(parts) {
                if matches!(part, Validator::Composite { .. }) {
                    continue; // its parts are looked at one by one
                }
                assert!(
                    !matches!(part, Validator::Unknown),
                    "{set} {}: a validator kind this build does not know",
                    def.name
                );
                // the verification algorithms are checked only in part (JVM-dependent)
                let partial = matches!(part, Validator::Lambda { description: Some(d), .. }
                    if d.starts_with("A list of one or more MAC algorithms"));
                if is_checked(part) && !partial {
                    continue;
                }
                unchecked += 1;
                let class = match part {
                    Validator::Other { class, .. } => class.clone(),
                    Validator::Lambda { defined_in, .. } => defined_in.clone(),
                    _ => None,
                }
                .unwrap_or_else(|| {
                    panic!(
                        "{set} {}: an unchecked validator that names no class",
                        def.name
                    )
                });
                let simple = class.rsplit('.').next().unwrap();
                if !doc.contains(&format!("`{}`", def.name)) || !doc.contains(simple) {
                    undocumented.insert(format!("{set} {} ({class})", def.name));
                }
            }
        }
    }
    assert!(
        unchecked > 0,
        "the catalogue has Kafka validators that need the JVM or classpath"
    );
    assert!(
        undocumented.is_empty(),
        "unchecked validators missing from docs/conformance.md: {undocumented:?}"
    );
}

#[test]
fn the_catalogue_covers_every_type_kafka_uses() {
    let catalogue = ConfigCatalogue::get();
    let producer = catalogue.set_for(Role::Producer).expect("producer set");
    for ty in [
        ConfigType::Boolean,
        ConfigType::String,
        ConfigType::Int,
        ConfigType::Short,
        ConfigType::Long,
        ConfigType::Double,
        ConfigType::List,
        ConfigType::Class,
        ConfigType::Password,
    ] {
        assert!(
            producer.keys.values().any(|k| k.config_type == ty),
            "{ty:?}"
        );
    }
    assert!(
        catalogue.kafka_version.starts_with('4'),
        "{}",
        catalogue.kafka_version
    );
}

#[test]
fn a_composite_of_list_size_and_control_characters_applies_both() {
    let mut def = key("producer", "acks").clone();
    def.config_type = ConfigType::List;
    def.validator = Some(Validator::Composite {
        validators: vec![
            Validator::ListSize { max_size: 2 },
            Validator::NonEmptyStringWithoutControlChars,
        ],
    });
    // NonEmptyStringWithoutControlChars casts the parsed list to String: Kafka fails
    assert!(check_value(&def, "a,b").is_err());
    def.validator = Some(Validator::Composite {
        validators: vec![
            Validator::ListSize { max_size: 2 },
            Validator::ValidList {
                values: vec!["a".into(), "b".into(), "c".into()],
                allow_empty: Some(true),
            },
        ],
    });
    assert!(check_value(&def, "a,b").is_ok());
    assert_eq!(
        check_value(&def, "a,b,c"),
        Err("may have at most 2 entries, not 3".to_string())
    );
    assert_eq!(
        check_value(&def, "a,d"),
        Err("\"d\" is not one of a, b, c (exact case)".to_string())
    );
}

fn evaluate(properties: &str) -> kafka_config_operator::engine::Evaluation {
    let yaml = format!(
        "apiVersion: kafkaconfig.dev/v1alpha1\nkind: KafkaToolConfig\nmetadata: {{name: c, namespace: ns}}\nspec:\n  tool: client\n  roles: [consumer]\n  properties: {{consumer: {{{properties}}}}}\n"
    );
    let mut ws = kafka_config_operator::manifest::Workspace::default();
    ws.add_documents(std::path::Path::new("t.yaml"), &yaml)
        .expect("manifest");
    kafka_config_operator::cli::evaluate_manifest(&ws, &ws.configs[0])
}

#[test]
fn unknown_keys_are_warnings_with_a_suggestion() {
    let ev = evaluate("max.poll.interval.msec: 1000, bootstrap.servers: \"b:1\"");
    assert!(ev.is_valid(), "{:?}", ev.problems);
    let warning = ev
        .warnings
        .iter()
        .find(|w| w.reason == Reason::UnknownKey)
        .expect("UnknownKey");
    assert!(
        warning
            .message
            .contains("did you mean max.poll.interval.ms?"),
        "{}",
        warning.message
    );
}

#[test]
fn invalid_values_name_the_key_the_source_and_why() {
    let ev = evaluate("max.poll.records: 0, bootstrap.servers: \"b:1\"");
    let problem = ev
        .problems
        .iter()
        .find(|p| p.reason == Reason::InvalidValue)
        .expect("InvalidValue");
    assert_eq!(problem.field, "properties.consumer");
    assert!(
        problem.message.contains("max.poll.records=\"0\""),
        "{}",
        problem.message
    );
    assert!(
        problem.message.contains("at least 1"),
        "{}",
        problem.message
    );
}

#[test]
fn deprecated_keys_are_warnings() {
    let yaml = "apiVersion: kafkaconfig.dev/v1alpha1\nkind: KafkaToolConfig\nmetadata: {name: b, namespace: ns}\nspec:\n  tool: kafka-server\n  roles: [broker]\n  properties: {broker: {log.cleaner.enable: \"true\"}}\n";
    let mut ws = kafka_config_operator::manifest::Workspace::default();
    ws.add_documents(std::path::Path::new("t.yaml"), yaml)
        .expect("manifest");
    let ev = kafka_config_operator::cli::evaluate_manifest(&ws, &ws.configs[0]);
    assert!(
        ev.warnings
            .iter()
            .any(|w| w.reason == Reason::DeprecatedKey && w.key == "log.cleaner.enable"),
        "{:?}",
        ev.warnings
    );
}
