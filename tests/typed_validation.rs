//! Typed validation against Kafka's generated ConfigDef catalogue: every type and every validator
//! kind Kafka uses, with real keys, plus unknown and deprecated keys.

use kafka_config_operator::engine::catalogue::configs::{
    ConfigCatalogue, ConfigKey, ConfigType, Validator,
};
use kafka_config_operator::engine::outcome::Reason;
use kafka_config_operator::engine::spec::Role;
use kafka_config_operator::engine::validate::check_value;

fn key(role: Role, name: &str) -> &'static ConfigKey {
    ConfigCatalogue::get()
        .key(role, name)
        .unwrap_or_else(|| panic!("{name} is in the {role} catalogue"))
}

/// (role, key, value, valid?)
const CASES: &[(Role, &str, &str, bool)] = &[
    // BOOLEAN
    (Role::Producer, "enable.idempotence", "TRUE", true),
    (Role::Producer, "enable.idempotence", "yes", false),
    // INT with a range
    (Role::Producer, "batch.size", "16384", true),
    (Role::Producer, "batch.size", "1.5", false),
    (Role::Producer, "batch.size", "2147483648", false),
    (Role::Consumer, "max.poll.records", "1", true),
    (Role::Consumer, "max.poll.records", "0", false),
    // SHORT
    (
        Role::Producer,
        "sasl.login.refresh.buffer.seconds",
        "300",
        true,
    ),
    (
        Role::Producer,
        "sasl.login.refresh.buffer.seconds",
        "40000",
        false,
    ),
    // LONG
    (Role::Producer, "linger.ms", " 5 ", true),
    (Role::Producer, "linger.ms", "five", false),
    // DOUBLE with a range
    (
        Role::Producer,
        "sasl.login.refresh.window.factor",
        "0.8",
        true,
    ),
    (
        Role::Producer,
        "sasl.login.refresh.window.factor",
        "2.0",
        false,
    ),
    (
        Role::Producer,
        "sasl.kerberos.ticket.renew.window.factor",
        "x",
        false,
    ),
    // CLASS
    (
        Role::Producer,
        "key.serializer",
        "org.apache.kafka.common.serialization.StringSerializer",
        true,
    ),
    (Role::Producer, "key.serializer", "not a class", false),
    // STRING with ValidString
    (Role::Producer, "acks", "all", true),
    (Role::Producer, "acks", "2", false),
    // STRING with a case-insensitive ValidString
    (Role::Producer, "security.protocol", "sasl_ssl", true),
    (Role::Producer, "security.protocol", "TLS", false),
    // LIST with ValidList (no empty list allowed)
    (Role::Broker, "process.roles", "broker,controller", true),
    (Role::Broker, "process.roles", "broker,zookeeper", false),
    (Role::Broker, "process.roles", "", false),
    // NonEmptyString
    (Role::Producer, "transactional.id", "tx-1", true),
    (
        Role::Broker,
        "remote.log.metadata.manager.listener.name",
        "",
        false,
    ),
    // PASSWORD: any text
    (Role::Producer, "ssl.key.password", "anything at all", true),
];

#[test]
fn every_type_and_validator_kind_parses_as_kafka_does() {
    for (role, name, value, valid) in CASES {
        let result = check_value(key(*role, name), value);
        assert_eq!(
            result.is_ok(),
            *valid,
            "{role} {name}={value:?}: {result:?}"
        );
        if let Err(message) = result {
            assert!(!message.is_empty());
        }
    }
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
fn composite_list_size_and_control_character_validators() {
    let mut def = key(Role::Producer, "acks").clone();
    def.config_type = ConfigType::List;
    def.validator = Some(Validator::Composite {
        validators: vec![
            Validator::ListSize { max_size: 2 },
            Validator::NonEmptyStringWithoutControlChars,
        ],
    });
    assert!(check_value(&def, "a,b").is_ok());
    assert!(check_value(&def, "a,b,c").is_err());
    assert!(check_value(&def, "a\u{7}").is_err());
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
