//! Property tests of the engine's invariants: the codec round-trips, a higher layer always wins,
//! rendering is deterministic, and a Secret-sourced value never reaches a ConfigMap.

use std::collections::BTreeMap;

use kafka_config_operator::engine::layers::Layer;
use kafka_config_operator::engine::properties;
use kafka_config_operator::engine::sources::{SourceData, SourceSet};
use kafka_config_operator::engine::spec::{
    ConfigFileSource, EnvVar, EnvVarSource, KeyRef, OutputKind, OutputSpec, Role, Scalar,
    SecretsMode, ToolConfigSpec,
};
use kafka_config_operator::engine::{Evaluation, Request, evaluate};
use proptest::prelude::*;

fn key() -> impl Strategy<Value = String> {
    "[a-z]{1,6}(\\.[a-z]{1,6}){0,2}".prop_map(|k| format!("custom.{k}"))
}

fn text() -> impl Strategy<Value = String> {
    prop::collection::vec(any::<char>().prop_filter("no NUL", |c| *c != '\0'), 0..12)
        .prop_map(|v| v.into_iter().collect::<String>().replace("${", "$ {"))
}

fn run(spec: &ToolConfigSpec, sources: &SourceSet) -> Evaluation {
    evaluate(&Request {
        name: "p",
        namespace: "ns",
        spec,
        namespace_labels: &BTreeMap::new(),
        globals: &[],
        sources,
        hash_key: None,
    })
}

fn base_spec() -> ToolConfigSpec {
    ToolConfigSpec {
        tool: "client".into(),
        roles: vec![Role::Producer],
        ..ToolConfigSpec::default()
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn stored_maps_load_back_unchanged(map in prop::collection::btree_map(text(), text(), 0..8)) {
        let stored = properties::store(map.iter().map(|(k, v)| (k.as_str(), v.as_str())));
        prop_assert!(stored.is_ascii());
        prop_assert_eq!(properties::load_map(stored.as_bytes()).expect("loads"), map);
    }

    #[test]
    fn a_higher_layer_always_wins(
        file_values in prop::collection::btree_map(key(), "[a-z0-9]{1,8}", 1..6),
        property_values in prop::collection::btree_map(key(), "[a-z0-9]{1,8}", 1..6),
    ) {
        let file_text: String = file_values.iter().map(|(k, v)| format!("{k}={v}\n")).collect();
        let mut sources = SourceSet::default();
        sources.config_maps.insert("f".into(), SourceData { data: BTreeMap::from([("p".to_string(), file_text.into_bytes())]) });
        let mut spec = base_spec();
        spec.config_files.push(ConfigFileSource {
            config_map_key_ref: Some(KeyRef { name: "f".into(), key: "p".into(), namespace: None, optional: None }),
            secret_key_ref: None,
            role: None,
        });
        spec.properties.insert(
            "producer".into(),
            property_values.iter().map(|(k, v)| (k.clone(), Scalar::Str(v.clone()))).collect(),
        );
        let ev = run(&spec, &sources);
        let view = &ev.views[&Role::Producer];
        for (k, v) in &property_values {
            let winner = view.effective_value(k).expect("set");
            prop_assert_eq!(winner.value.as_plain(), Some(v.as_str()));
            prop_assert_eq!(winner.layer, Layer::Properties);
        }
        for (k, v) in file_values.iter().filter(|(k, _)| !property_values.contains_key(*k)) {
            prop_assert_eq!(
                view.effective_value(k).expect("set").value.as_plain(),
                Some(v.as_str())
            );
        }
        // Rendering twice gives identical bytes.
        let again = run(&spec, &sources);
        prop_assert_eq!(ev.rendered, again.rendered);
    }

    #[test]
    fn secret_values_never_reach_a_config_map(secret in "[A-Za-z0-9]{12,20}", deferred in any::<bool>()) {
        let mut sources = SourceSet::default();
        sources.secrets.insert("s".into(), SourceData { data: BTreeMap::from([("pw".to_string(), secret.clone().into_bytes())]) });
        let mut spec = base_spec();
        spec.env.push(EnvVar {
            name: "PW".into(),
            value: None,
            value_from: Some(EnvVarSource {
                config_map_key_ref: None,
                secret_key_ref: Some(KeyRef { name: "s".into(), key: "pw".into(), namespace: None, optional: None }),
            }),
        });
        spec.properties.insert(
            "producer".into(),
            [("custom.token".to_string(), Scalar::Str("prefix-${env.PW}".into()))]
                .into_iter()
                .collect(),
        );
        spec.output = Some(OutputSpec {
            kind: Some(OutputKind::ConfigMap),
            secrets: deferred.then_some(SecretsMode::Deferred),
            ..OutputSpec::default()
        });
        let ev = run(&spec, &sources);
        if let Some(rendered) = &ev.rendered {
            prop_assert!(deferred);
            for content in rendered.files.values() {
                prop_assert!(!content.contains(&secret));
            }
        } else {
            prop_assert!(!deferred);
        }
        let problems = format!("{:?}{:?}", ev.problems, ev.warnings);
        prop_assert!(!problems.contains(&secret));
    }
}
