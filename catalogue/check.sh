#!/usr/bin/env bash
# Fail (exit 1) when catalogue/kafka-configs.json differs from what generate.sh
# produces now, i.e. when the committed catalogue has drifted from the generator
# or from the Kafka release pinned in catalogue/generator/pom.xml.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(git -C "$here" rev-parse --show-toplevel)
committed="$root/catalogue/kafka-configs.json"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$here/generate.sh" "$tmp/kafka-configs.json"

if [ ! -f "$committed" ]; then
  echo "catalogue/check.sh: FAIL: catalogue/kafka-configs.json is missing." >&2
  echo "Run catalogue/generate.sh and commit catalogue/kafka-configs.json." >&2
  exit 1
fi
if ! cmp -s "$tmp/kafka-configs.json" "$committed"; then
  echo "catalogue/check.sh: FAIL: catalogue/kafka-configs.json is out of date (drift from the generator)." >&2
  echo "First differences (--- committed, +++ regenerated):" >&2
  diff -u --label committed --label regenerated "$committed" "$tmp/kafka-configs.json" | head -n 40 >&2 || true
  echo "Run catalogue/generate.sh and commit catalogue/kafka-configs.json." >&2
  exit 1
fi
echo "catalogue/check.sh: OK: catalogue/kafka-configs.json matches the generator ($(sed -n 's/.*"kafkaVersion": "\(.*\)".*/Kafka \1/p' "$committed"))."
