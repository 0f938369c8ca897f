//! The engine half of the paired rounds of e2e/bench/engine-vs-jvm.sh: a long-lived process that
//! times one operation when asked, so the script can alternate engine and JVM measurements of the
//! same case (ABBA order) instead of timing all of one side, then all of the other. On a shared
//! machine the load drifts over minutes; paired rounds put both sides under the same drift.
//!
//! Protocol (stdin → stdout, one line each): after setup it prints `ready`; then for each
//! `OP KEYS MILLIS BATCHES` line (OP = parse | evaluate_and_render | store, as benches/engine.rs)
//! it runs ~MILLIS of the operation in BATCHES equal batches and prints one JSON object with the
//! median, min and max ns/op of the batches. The JVM half is `JvmConfigBench --serve`.

use std::collections::BTreeMap;
use std::io::{BufRead, Write};
use std::time::{Duration, Instant};

mod inputs;
use inputs::Case;

const SIZES: [usize; 3] = [20, 200, 5000];

/// ns/op of each of `batches` batches sized to fill `millis` together.
fn measure(case: &Case, op: &str, millis: u64, batches: u32) -> Vec<f64> {
    // Calibrate on ~20 ms (also the warm-up: caches, branch predictors, allocator state).
    let start = Instant::now();
    let mut calibration = 0u64;
    while start.elapsed() < Duration::from_millis(20) {
        case.run(op);
        calibration += 1;
    }
    let ns_per_op = start.elapsed().as_nanos() as f64 / calibration as f64;
    let per_batch = ((millis as f64 * 1e6 / f64::from(batches.max(1))) / ns_per_op).max(1.0) as u64;
    (0..batches.max(1))
        .map(|_| {
            let t0 = Instant::now();
            for _ in 0..per_batch {
                case.run(op);
            }
            t0.elapsed().as_nanos() as f64 / per_batch as f64
        })
        .collect()
}

fn main() {
    let cases: BTreeMap<usize, Case> = SIZES.iter().map(|&n| (n, Case::new(n))).collect();
    // The catalogues are parsed once per process, not per evaluation.
    for case in cases.values() {
        case.run("evaluate_and_render");
    }
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let _ = writeln!(out, "ready");
    let _ = out.flush();
    for line in std::io::stdin().lock().lines() {
        let Ok(line) = line else { break };
        let words: Vec<&str> = line.split_whitespace().collect();
        let parsed = match words.as_slice() {
            [op, keys, millis, batches] => keys
                .parse::<usize>()
                .ok()
                .and_then(|k| cases.get(&k))
                .zip(millis.parse::<u64>().ok())
                .zip(batches.parse::<u32>().ok())
                .map(|((case, millis), batches)| (*op, case, millis, batches)),
            _ => None,
        };
        let Some((op, case, millis, batches)) = parsed.filter(|(op, ..)| Case::OPS.contains(op))
        else {
            let _ = writeln!(out, "{{\"error\":\"bad request\"}}");
            let _ = out.flush();
            continue;
        };
        let mut per = measure(case, op, millis, batches);
        per.sort_by(f64::total_cmp);
        let m = per.len();
        let median = if m % 2 == 1 {
            per[m / 2]
        } else {
            (per[m / 2 - 1] + per[m / 2]) / 2.0
        };
        let _ = writeln!(
            out,
            "{{\"op\":\"{op}\",\"n\":{},\"median_ns\":{median:.1},\"min_ns\":{:.1},\"max_ns\":{:.1},\"batches\":{m}}}",
            words[1],
            per[0],
            per[m - 1]
        );
        let _ = out.flush();
    }
}
