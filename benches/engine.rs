//! Engine benchmarks: parse, merge (evaluate) and render of configs with ~20, ~200 and ~5,000
//! keys. Run: `cargo bench --bench engine`; results go to docs/BENCHMARKS.md.

use std::collections::BTreeMap;
use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use kafka_config_operator::engine::properties;
use sha2::{Digest, Sha256};

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
        // Not an engine operation of its own: the SHA-256 that every render pays over its output,
        // measured alone as the floor under `evaluate_and_render`.
        let stored = properties::store(map.iter().map(|(k, v)| (k.as_str(), v.as_str())));
        c.bench_with_input(BenchmarkId::new("content_hash", n), &stored, |b, stored| {
            b.iter(|| Sha256::digest(black_box(stored.as_bytes())))
        });
    }
}

criterion_group! {
    name = engine;
    config = Criterion::default().sample_size(30).measurement_time(std::time::Duration::from_secs(2)).warm_up_time(std::time::Duration::from_millis(500));
    targets = benches
}
criterion_main!(engine);
