#!/usr/bin/env bash
# Instructions per engine operation, counted by valgrind's callgrind: the same count whatever else
# the machine is doing, so before/after comparisons of the engine hold on shared 2-core machines
# where wall times do not. Not a substitute for the timed comparison with the JVM
# (e2e/bench/engine-vs-jvm.sh); a complement that makes small changes visible.
#
#   e2e/bench/engine-instructions.sh [ITERATIONS]     (default 50)
#
# Builds benches/engine_profile.rs in cargo's target dir (CARGO_TARGET_DIR when set, so people
# sharing one work tree keep their own builds). ENGINE_PROFILE_BIN=path counts an already built
# driver instead (for example a copy kept from before a change) without building anything.
#
# Prints one line per operation and size: instructions per op = (count(N) - count(0)) / N.
set -euo pipefail
cd "$(dirname "$0")/../.."
iterations=${1:-50}
command -v valgrind >/dev/null || { echo "valgrind is needed (Debian package valgrind)" >&2; exit 1; }
# Line tables for callgrind_annotate; the bench profile strips symbols otherwise.
export CARGO_PROFILE_BENCH_STRIP=none CARGO_PROFILE_BENCH_DEBUG=line-tables-only
if [[ -n ${ENGINE_PROFILE_BIN:-} ]]; then
  bin=$ENGINE_PROFILE_BIN
else
  bin=$(e2e/bench/bench-bin.sh engine_profile)
fi
echo "driver: $bin (target dir: ${CARGO_TARGET_DIR:-target})" >&2
count() { # op keys iterations
  local out
  out=$(mktemp)
  valgrind --tool=callgrind --callgrind-out-file="$out" "$bin" "$1" "$2" "$3" >/dev/null 2>&1
  awk '/^summary:/ {print $2}' "$out"
  rm -f "$out"
}
printf '%-9s %6s %16s %14s\n' op keys instructions/op instr/key
for op in parse evaluate store; do
  for keys in 20 200 5000; do
    n=$iterations
    [[ $keys == 5000 ]] && n=$(( (iterations + 9) / 10 ))
    base=$(count "$op" "$keys" 0)
    total=$(count "$op" "$keys" "$n")
    per=$(( (total - base) / n ))
    printf '%-9s %6d %16d %14d\n' "$op" "$keys" "$per" $(( per / keys ))
  done
done
