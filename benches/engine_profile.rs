//! A plain driver for instruction counts under `valgrind --tool=callgrind` (which counts the same
//! on a loaded machine as on an idle one, unlike wall time): runs one operation of the engine
//! benches `iterations` times after a warm-up that builds the catalogues.
//!
//! `cargo bench --bench engine_profile -- OP KEYS ITERATIONS` with OP = parse | evaluate | store.
//! e2e/bench/engine-instructions.sh runs it twice (0 and N iterations) and divides the difference.

mod inputs;
use inputs::Case;

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let (Some(op), Some(keys), Some(iterations)) = (
        args.first()
            .filter(|op| ["parse", "evaluate", "store"].contains(&op.as_str())),
        args.get(1).and_then(|a| a.parse::<usize>().ok()),
        args.get(2).and_then(|a| a.parse::<usize>().ok()),
    ) else {
        eprintln!("usage: engine_profile parse|evaluate|store KEYS ITERATIONS");
        std::process::exit(2);
    };
    let case = Case::new(keys);
    // Warm-up: the catalogues are parsed once per process, not per evaluation.
    case.run(op);
    for _ in 0..iterations {
        case.run(op);
    }
}
