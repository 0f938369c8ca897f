#!/usr/bin/env bash
# Fail (exit 1) when catalogue/kafka-configs.json or catalogue/kafka-tool-options.json differs
# from what generate.sh produces now, i.e. when a committed file has drifted from the generator
# or from the Kafka releases it reads (catalogue/generator/pom.xml, generate.sh).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(git -C "$here" rev-parse --show-toplevel)

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$here/generate.sh" "$tmp/kafka-configs.json" "$tmp/kafka-tool-options.json"

status=0
for name in kafka-configs.json kafka-tool-options.json; do
  committed="$root/catalogue/$name"
  if [ ! -f "$committed" ]; then
    echo "catalogue/check.sh: FAIL: catalogue/$name is missing." >&2
    echo "Run catalogue/generate.sh and commit catalogue/$name." >&2
    status=1
    continue
  fi
  if ! cmp -s "$tmp/$name" "$committed"; then
    echo "catalogue/check.sh: FAIL: catalogue/$name is out of date (drift from the generator)." >&2
    echo "First differences (--- committed, +++ regenerated):" >&2
    diff -u --label committed --label regenerated "$committed" "$tmp/$name" | head -n 40 >&2 || true
    echo "Run catalogue/generate.sh and commit catalogue/$name." >&2
    status=1
    continue
  fi
  echo "catalogue/check.sh: OK: catalogue/$name matches the generator ($(sed -n '2s/.*"kafkaVersion": "\(.*\)".*/Kafka \1/p' "$committed"))."
done
exit $status
