#!/usr/bin/env bash
# Builds one bench target in the bench profile and prints the path of its executable, for the
# drivers the bench scripts run themselves (outside criterion). Cargo's own output goes to stderr.
#
#   e2e/bench/bench-bin.sh NAME        # NAME: a [[bench]] of Cargo.toml, e.g. engine_paired
set -euo pipefail
name=${1:?usage: bench-bin.sh NAME}
cargo bench --locked --bench "$name" --no-run 2>&1 | tail -1 >&2
bin=$(cargo bench --locked --bench "$name" --no-run --message-format=json 2>/dev/null |
  python3 -c 'import json,sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m["target"]["name"] == sys.argv[1] and m.get("executable"):
        print(m["executable"])' "$name")
[[ -x $bin ]] || { echo "bench-bin.sh: $name was not built" >&2; exit 1; }
echo "$bin"
