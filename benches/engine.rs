//! Engine benchmarks: parse, merge (evaluate) and render of configs with ~20, ~200 and ~5,000
//! keys. Run: `cargo bench --bench engine`; results go to docs/BENCHMARKS.md.

use std::collections::BTreeMap;
use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use kafka_config_operator::engine::properties;

mod inputs;
use inputs::{evaluate_bench, properties_file, sources, spec};

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
            b.iter(|| evaluate_bench(&spec, &sources, &labels))
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
