#!/usr/bin/env bash
# Copies the generated CRDs (crds/kafkaconfig.dev_crds.yaml, written by `kafka-config-operator crds`)
# into the chart. Helm installs charts/kafka-config-operator/crds/ before the templates and never
# upgrades or deletes them (see docs/install.md). `--check` only reports drift (exit 1).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
src="$here/../../crds/kafkaconfig.dev_crds.yaml"
dst="$here/crds/kafkaconfig.dev_crds.yaml"
if [[ "${1:-}" == "--check" ]]; then
  if cmp -s "$src" "$dst"; then exit 0; fi
  echo "chart CRDs differ from crds/: run charts/kafka-config-operator/sync-crds.sh" >&2
  diff -u "$src" "$dst" | head -40 >&2 || true
  exit 1
fi
cp "$src" "$dst"
echo "copied $src -> $dst"
