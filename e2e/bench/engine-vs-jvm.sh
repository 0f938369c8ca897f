#!/usr/bin/env bash
# Engine vs the JVM on the same bytes, in one run (issue 7).
#
#   e2e/bench/engine-vs-jvm.sh            # full run: paired rounds, then criterion engine bench +
#                                         # JVM harness; writes docs/bench/results.json, then
#                                         # e2e/bench/render_table.py rewrites the tables of
#                                         # docs/BENCHMARKS.md; full report: $TARGET/bench-engine-vs-jvm/report.md
#   JVM_WARMUP_S=2 JVM_BATCHES=10 JVM_BATCH_MS=200   # JVM harness knobs (defaults shown)
#   PAIRED_ROUNDS=7 PAIRED_MS=1000 PAIRED_BATCHES=5  # paired-round knobs (defaults shown)
#   NO_WRITE=1 e2e/bench/engine-vs-jvm.sh  # measure and print only
#   RUST_SAMPLE_SIZE=10 e2e/bench/engine-vs-jvm.sh  # criterion --sample-size (min 10); default is
#                                         # the bench's own 30
#
# Target (docs/BENCHMARKS.md): the engine is never slower than the warmed JVM path at any size,
# i.e. every paired engine_*_speedup_vs_jvm >= 1.0. The report prints whether it is met.
#
# Inputs: the Rust bench's own generator, `properties_file(n)` from benches/inputs/mod.rs, is cut out
# of that file verbatim, compiled with rustc and made to write $TARGET/bench-inputs/client-N.properties;
# the JVM harness reads those files, so both sides see the same bytes by construction (the
# sha256 of each file is recorded in the report).
#
# Both sides run in this one invocation: on the shared 2-core machine absolute numbers drift
# between runs, so only ratios from the same run are compared. The headline ratios come from the
# paired rounds (e2e/bench/jvm/paired.py), which measure the two sides of each case seconds apart
# and alternate which goes first; the sequential criterion + JVM runs give the detail (confidence
# intervals, the content hash's own time).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(git -C "$here" rev-parse --show-toplevel)
cd "$root"
target=${CARGO_TARGET_DIR:-$root/target}
work="$target/bench-engine-vs-jvm"
inputs="$target/bench-inputs"
mkdir -p "$work" "$inputs"

log() { printf '[engine-vs-jvm] %s\n' "$*" >&2; }

# 0. Never two Rust benches at once on 2 cores: wait for someone else's `cargo bench`.
waited=0
while pgrep -f "cargo bench" >/dev/null; do
  if (( waited % 60 == 0 )); then log "another cargo bench is running; waiting ($waited s)"; fi
  sleep 5; waited=$((waited + 5))
  if (( waited > 1800 )); then log "gave up waiting for the other cargo bench"; exit 1; fi
done

started=$(date +%s)

# 1. Inputs, from the Rust bench's own generator.
gen_src="$work/gen_inputs.rs"
{
  awk '/^pub fn properties_file\(n: usize\) -> String \{/,/^\}/' benches/inputs/mod.rs
  cat <<'RS'
fn main() {
    let dir = std::env::args().nth(1).expect("output dir");
    for n in [20usize, 200, 5000] {
        std::fs::write(format!("{dir}/client-{n}.properties"), properties_file(n)).expect("write");
    }
}
RS
} >"$gen_src"
grep -q '^pub fn properties_file' "$gen_src" || { log "properties_file(n) not found in benches/inputs/mod.rs"; exit 1; }
rustc --edition 2021 -O -o "$work/gen_inputs" "$gen_src"
"$work/gen_inputs" "$inputs"
log "inputs: $(cd "$inputs" && sha256sum client-*.properties | tr '\n' ' ')"

# 2. JVM harness: plain javac against the cached kafka-clients jar.
jars=$(conformance/fetch.sh)
cp_jars="$jars/kafka-clients-4.3.1.jar:$jars/slf4j-api-1.7.36.jar"
classes="$work/classes"
rm -rf "$classes"; mkdir -p "$classes"
javac -d "$classes" -cp "$cp_jars" "$here/jvm/src/JvmConfigBench.java"

# The tree as built (others may edit it while the benches run).
{ git rev-parse --short HEAD; git status --porcelain -- src benches Cargo.toml Cargo.lock catalogue; } >"$work/tree.txt"

# 3. Paired rounds: the engine half (benches/engine_paired.rs) and the JVM half, interleaved.
paired_bin=$("$here/bench-bin.sh" engine_paired)
paired_knobs="--rounds ${PAIRED_ROUNDS:-7} --millis ${PAIRED_MS:-1000} --batches ${PAIRED_BATCHES:-5}"
log "running: paired rounds ($paired_knobs)"
python3 "$here/jvm/paired.py" $paired_knobs --log "$work/paired.log" --out "$work/paired.json" \
  --engine-cmd "$paired_bin" \
  --jvm-cmd "java -Xms512m -Xmx512m -cp $classes:$cp_jars JvmConfigBench --serve $inputs ${JVM_WARMUP_S:-2}"

# 4. Engine: the criterion bench, unchanged.
rust_cmd="cargo bench --bench engine${RUST_SAMPLE_SIZE:+ -- --sample-size $RUST_SAMPLE_SIZE}"
log "running: $rust_cmd"
bench_started=$(date +%s)
$rust_cmd >"$work/criterion.log" 2>&1 || { tail -40 "$work/criterion.log" >&2; exit 1; }
# Copy criterion's estimates now, before anyone else's run can overwrite them.
rm -rf "$work/criterion"; mkdir -p "$work/criterion"
for b in parse evaluate_and_render store content_hash; do
  for n in 20 200 5000; do
    f="$target/criterion/$b/$n/new/estimates.json"
    if [[ ! -f "$f" ]] || (( $(stat -c %Y "$f") < bench_started )); then
      log "missing or stale criterion result: $f"; exit 1
    fi
    mkdir -p "$work/criterion/$b/$n"; cp "$f" "$(dirname "$f")/sample.json" "$work/criterion/$b/$n/"
  done
done

# 5. JVM, right after, same inputs.
jvm_cmd="java -Xms512m -Xmx512m -cp $classes:$cp_jars JvmConfigBench $inputs ${JVM_WARMUP_S:-2} ${JVM_BATCHES:-10} ${JVM_BATCH_MS:-200}"
log "running: $jvm_cmd"
$jvm_cmd >"$work/jvm.json" 2> >(grep -v '^SLF4J' >&2)

# 6. Report.
python3 "$here/jvm/report.py" \
  --criterion "$work/criterion" --jvm "$work/jvm.json" --inputs "$inputs" \
  --paired "$work/paired.json" \
  --paired-cmd "e2e/bench/jvm/paired.py $paired_knobs (engine: cargo bench --bench engine_paired; JVM: JvmConfigBench --serve target/bench-inputs ${JVM_WARMUP_S:-2})" \
  --rust-cmd "$rust_cmd" \
  --jvm-cmd "java -Xms512m -Xmx512m -cp <classes>:kafka-clients-4.3.1.jar:slf4j-api-1.7.36.jar JvmConfigBench target/bench-inputs ${JVM_WARMUP_S:-2} ${JVM_BATCHES:-10} ${JVM_BATCH_MS:-200}" \
  --script "e2e/bench/engine-vs-jvm.sh" --tree "$work/tree.txt" \
  --started "$started" --detail "$work/report.md" \
  ${NO_WRITE:+--no-write} \
  --json docs/bench/results.json --doc docs/BENCHMARKS.md
