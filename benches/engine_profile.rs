//! A plain driver for instruction counts under `valgrind --tool=callgrind` (which counts the same
//! on a loaded machine as on an idle one, unlike wall time): runs one operation of the engine
//! benches `iterations` times after a warm-up that builds the catalogues.
//!
//! `cargo bench --bench engine_profile -- OP KEYS ITERATIONS` with OP = parse | evaluate | store.
//! e2e/bench/engine-instructions.sh runs it twice (0 and N iterations) and divides the difference.

use std::collections::BTreeMap;
use std::hint::black_box;

use kafka_config_operator::engine::properties;

mod inputs;
use inputs::{evaluate_bench, properties_file, sources, spec};

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let (Some(op), Some(keys), Some(iterations)) = (
        args.first(),
        args.get(1).and_then(|a| a.parse::<usize>().ok()),
        args.get(2).and_then(|a| a.parse::<usize>().ok()),
    ) else {
        eprintln!("usage: engine_profile parse|evaluate|store KEYS ITERATIONS");
        std::process::exit(2);
    };
    let file = properties_file(keys);
    let spec = spec(keys);
    let sources = sources(keys);
    let labels = BTreeMap::new();
    let map: BTreeMap<String, String> = properties::load_map(file.as_bytes()).unwrap_or_default();
    let run = |_: usize| match op.as_str() {
        "parse" => {
            black_box(
                properties::load(black_box(file.as_bytes()))
                    .map(|e| e.len())
                    .ok(),
            );
        }
        "evaluate" => {
            black_box(evaluate_bench(&spec, &sources, &labels));
        }
        "store" => {
            black_box(properties::store(
                black_box(&map)
                    .iter()
                    .map(|(k, v)| (k.as_str(), v.as_str())),
            ));
        }
        other => {
            eprintln!("unknown operation {other}");
            std::process::exit(2);
        }
    };
    // Warm-up: the catalogues are parsed once per process, not per evaluation.
    run(0);
    for i in 0..iterations {
        run(i);
    }
}
