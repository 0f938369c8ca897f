#!/usr/bin/env bash
# Conformance against Apache Kafka itself: renders each fixture of tests/fixtures/conformance/
# and every KafkaToolConfig of examples/ with kafka-config-operator, runs the real Kafka tool
# (kafka-tools jars from Maven Central) with the rendered tool.args and files, and compares the
# configuration each Kafka client logs with the merged values `explain` reports; then compares the
# engine's typed validation with Kafka's ConfigDef.parseValue (conformance/validators.py).
# See docs/conformance.md.
#
#   conformance/run.sh                      # fixtures, examples, validators; last line
#                                           # "N passed, N failed, validators: N failed"
#   conformance/run.sh console-producer-modern   # some fixtures only (names or paths)
#   conformance/run.sh -v                   # also list forced and not-logged keys
#   conformance/run.sh --write-doc          # rewrite the tables in docs/conformance.md
#   conformance/run.sh --write-verdicts     # rewrite tests/fixtures/conformance/validator-verdicts.json
#
# Needs Java 17+, Maven 3.8+ (first run only), python3 with PyYAML, and the binary
# $CARGO_TARGET_DIR/debug/kafka-config-operator, default target/ (`cargo build`; KCO_BIN=PATH to use
# another).
# CONFORMANCE_JOBS=N runs N tools at once (default 2).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(git -C "$here" rev-parse --show-toplevel)
command -v java >/dev/null || { echo "conformance/run.sh: java (17+) is required" >&2; exit 2; }
python3 -c 'import yaml' 2>/dev/null || python3 -m pip install --quiet pyyaml
jars=$("$here/fetch.sh")
mirror_jars=$("$here/fetch.sh" mirror)
exec nice python3 "$here/conformance.py" --root "$root" --jars "$jars" --mirror-jars "$mirror_jars" "$@"
