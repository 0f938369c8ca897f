//! The benchmark inputs, shared by the criterion bench and the paired comparison with the JVM:
//! a `.properties` file of `n` keys, a KafkaToolConfig reading it with n/10 inline overrides,
//! and the ConfigMap holding the file. e2e/bench/engine-vs-jvm.sh cuts `properties_file` out of
//! this file so the JVM parses the same bytes.

use std::collections::BTreeMap;

use kafka_config_operator::engine::sources::{SourceData, SourceSet};
use kafka_config_operator::engine::spec::{ConfigFileSource, KeyRef, Scalar, ToolConfigSpec};
use kafka_config_operator::engine::{Evaluation, Request, evaluate};

/// A `.properties` file of `n` keys: real producer keys first, then custom ones.
pub fn properties_file(n: usize) -> String {
    let mut text = String::from(
        "# generated for the benchmark\nbootstrap.servers=kafka-0:9092,kafka-1:9092\n",
    );
    let real = [
        "linger.ms=5",
        "acks=all",
        "batch.size=65536",
        "compression.type=zstd",
        "client.id=bench",
    ];
    for line in real.iter().take(n.saturating_sub(1)) {
        text.push_str(line);
        text.push('\n');
    }
    for i in real.len() + 1..n {
        text.push_str(&format!(
            "custom.interceptor.setting.{i}=value-{i} with spaces and \\u00e9\n"
        ));
    }
    text
}

pub fn spec(n: usize) -> ToolConfigSpec {
    let mut producer = kafka_config_operator::engine::spec::SpecMap::new();
    for i in 0..(n / 10).max(1) {
        producer.insert(
            format!("custom.interceptor.setting.{i}"),
            Scalar::Str(format!("override-{i}")),
        );
    }
    ToolConfigSpec {
        tool: "kafka-console-producer".into(),
        args: [("topic".to_string(), Scalar::from("bench"))]
            .into_iter()
            .collect(),
        properties: [("producer".to_string(), producer)].into_iter().collect(),
        config_files: vec![ConfigFileSource {
            config_map_key_ref: Some(KeyRef {
                name: "base".into(),
                key: "client.properties".into(),
                namespace: None,
                optional: None,
            }),
            secret_key_ref: None,
            role: None,
        }],
        ..ToolConfigSpec::default()
    }
}

pub fn sources(n: usize) -> SourceSet {
    let mut set = SourceSet::default();
    set.config_maps.insert(
        "base".into(),
        SourceData {
            data: BTreeMap::from([(
                "client.properties".to_string(),
                properties_file(n).into_bytes(),
            )]),
        },
    );
    set
}

/// One evaluation of the bench config, as both benches run it; a config that does not render
/// would measure the error path, so it stops the bench.
pub fn evaluate_bench(
    spec: &ToolConfigSpec,
    sources: &SourceSet,
    labels: &BTreeMap<String, String>,
) -> Evaluation {
    let ev = evaluate(&Request {
        name: "bench",
        namespace: "ns",
        spec: std::hint::black_box(spec),
        namespace_labels: labels,
        globals: &[],
        sources,
        hash_key: None,
    });
    assert!(ev.rendered.is_some(), "{:?}", ev.problems);
    ev
}

/// One size's inputs and the operations the paired driver (`engine_paired`) times; criterion's
/// `engine` bench does not use it.
#[allow(dead_code)]
pub struct Case {
    file: String,
    spec: ToolConfigSpec,
    sources: SourceSet,
    map: BTreeMap<String, String>,
}

#[allow(dead_code)]
impl Case {
    /// The operations, named as the criterion benches (`evaluate` is `evaluate_and_render`).
    pub const OPS: [&'static str; 4] = ["parse", "evaluate", "evaluate_and_render", "store"];

    pub fn new(keys: usize) -> Self {
        let file = properties_file(keys);
        let map = kafka_config_operator::engine::properties::load_map(file.as_bytes())
            .unwrap_or_default();
        Case {
            spec: spec(keys),
            sources: sources(keys),
            file,
            map,
        }
    }

    /// One run of `op` (one of [`Case::OPS`]; others do nothing).
    pub fn run(&self, op: &str) {
        use kafka_config_operator::engine::properties;
        use std::hint::black_box;
        match op {
            "parse" => {
                black_box(
                    properties::load(black_box(self.file.as_bytes()))
                        .map(|e| e.len())
                        .ok(),
                );
            }
            "evaluate" | "evaluate_and_render" => {
                black_box(evaluate_bench(&self.spec, &self.sources, &BTreeMap::new()));
            }
            "store" => {
                black_box(properties::store(
                    black_box(&self.map)
                        .iter()
                        .map(|(k, v)| (k.as_str(), v.as_str())),
                ));
            }
            _ => {}
        }
    }
}
