#!/usr/bin/env bash
# install.yaml (repository root): the chart rendered by `helm template` with its defaults, CRDs
# included, in namespace kafka-config-operator, for `kubectl apply -f install.yaml` without Helm.
# The chart is the source; this file is generated, and e2e/chart/test.sh fails when it drifts.
#
#   bash scripts/gen-install.sh            # rewrite install.yaml
#   bash scripts/gen-install.sh --check    # exit 1 when install.yaml is not what the chart renders
#
# Helm: $HELM, else the pinned one e2e/controlplane builds (E2E_BUILD_ONLY=1 bash e2e/controlplane/up.sh).
# The release workflow (.github/workflows/release.yml) renders the same with the released image.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
helm="${HELM:-$root/e2e/.bin/helm}"
[[ -x "$helm" ]] || { echo "gen-install.sh: no helm at $helm (E2E_BUILD_ONLY=1 bash e2e/controlplane/up.sh builds it)" >&2; exit 2; }
ns=kafka-config-operator

render() {
  local version
  version="$(awk '$1 == "appVersion:" { gsub(/"/, "", $2); print $2 }' "$root/charts/kafka-config-operator/Chart.yaml")"
  cat <<HEAD
# kafka-config-operator $version: CRDs, RBAC and the operator's Deployment in namespace $ns.
# Generated from charts/kafka-config-operator by scripts/gen-install.sh (helm template, default
# values); do not edit. Install: kubectl apply -f install.yaml
# The image is the chart's default (kafka-config-operator:$version, built from the Dockerfile):
# point it at your registry, or use the install.yaml attached to a release, which names the
# released image.
---
apiVersion: v1
kind: Namespace
metadata:
  name: $ns
HEAD
  "$helm" template kafka-config-operator "$root/charts/kafka-config-operator" \
    --namespace "$ns" --include-crds "$@"
}

case "${1:-}" in
  --check)
    if ! diff -u "$root/install.yaml" <(render) >/dev/null; then
      echo "install.yaml is not what the chart renders: run bash scripts/gen-install.sh" >&2
      diff -u "$root/install.yaml" <(render) | head -40 >&2
      exit 1
    fi ;;
  --set*) render "$@" ;;   # the release workflow: the same with values set, to stdout
  "") render > "$root/install.yaml.tmp" && mv "$root/install.yaml.tmp" "$root/install.yaml" ;;
  *) echo "usage: gen-install.sh [--check | --set …]" >&2; exit 2 ;;
esac
