//! Engine benchmarks: parse, merge (evaluate) and render of configs with ~20, ~200 and ~5,000
//! keys. Run: `cargo bench --bench engine`; results go to docs/BENCHMARKS.md.

use std::collections::BTreeMap;
use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use kafka_config_operator::engine::properties;
use kafka_config_operator::engine::sources::{SourceData, SourceSet};
use kafka_config_operator::engine::spec::{ConfigFileSource, KeyRef, Scalar, ToolConfigSpec};
use kafka_config_operator::engine::{Request, evaluate};

/// A `.properties` file of `n` keys: real producer keys first, then custom ones.
fn properties_file(n: usize) -> String {
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

fn spec(n: usize) -> ToolConfigSpec {
    let mut producer = BTreeMap::new();
    for i in 0..(n / 10).max(1) {
        producer.insert(
            format!("custom.interceptor.setting.{i}"),
            Scalar::Str(format!("override-{i}")),
        );
    }
    ToolConfigSpec {
        tool: "kafka-console-producer".into(),
        args: BTreeMap::from([("topic".to_string(), Scalar::from("bench"))]),
        properties: BTreeMap::from([("producer".to_string(), producer)]),
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

fn sources(n: usize) -> SourceSet {
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

fn benches(c: &mut Criterion) {
    for n in [20usize, 200, 5000] {
        let file = properties_file(n);
        c.bench_with_input(BenchmarkId::new("parse", n), &file, |b, file| {
            b.iter(|| properties::load(black_box(file.as_bytes())))
        });
        let spec = spec(n);
        let sources = sources(n);
        let labels = BTreeMap::new();
        c.bench_with_input(BenchmarkId::new("evaluate_and_render", n), &n, |b, _| {
            b.iter(|| {
                let ev = evaluate(&Request {
                    name: "bench",
                    namespace: "ns",
                    spec: black_box(&spec),
                    namespace_labels: &labels,
                    globals: &[],
                    sources: &sources,
                });
                assert!(ev.rendered.is_some(), "{:?}", ev.problems);
                ev
            })
        });
        let map: BTreeMap<String, String> =
            properties::load_map(file.as_bytes()).unwrap_or_default();
        c.bench_with_input(BenchmarkId::new("store", n), &map, |b, map| {
            b.iter(|| {
                properties::store(black_box(map).iter().map(|(k, v)| (k.as_str(), v.as_str())))
            })
        });
    }
}

criterion_group! {
    name = engine;
    config = Criterion::default().sample_size(30).measurement_time(std::time::Duration::from_secs(2)).warm_up_time(std::time::Duration::from_millis(500));
    targets = benches
}
criterion_main!(engine);
