#!/usr/bin/env bash
# Side by side with stakater Reloader, and the initial sync against the API server's own ceiling
# (issue 30). Not part of scripts/test.sh except as a smoke run (PEER_SMOKE=1: N = 100, nothing
# written), which proves the harness still works.
#
#   e2e/bench/peer.sh                  # N = 1,000 then 10,000; writes docs/bench/results.json's
#                                      # *_vs_reloader and initial_sync_fraction_of_ceiling keys,
#                                      # then e2e/bench/render_table.py rewrites docs/BENCHMARKS.md
#   PEER_SIZES=1000 e2e/bench/peer.sh  # one size only
#   NO_WRITE=1 e2e/bench/peer.sh       # measure and print only
#   PEER_SMOKE=1 e2e/bench/peer.sh     # N = 100, 50 edits, small ballast, 100 ceiling configs; checks
#                                      # that every phase completed, writes nothing
#   PEER_OPERATOR_BIN=path             # a prebuilt operator binary (default: build the image's musl one)
#   PEER_CEILING_BIN=path              # a prebuilt sync-ceiling (example) binary (default: build it)
#
# What it does: builds Reloader from the Go module proxy (e2e/controlplane/reloader/go.mod, cached
# with the control plane's binaries), the operator (release, musl) and the ceiling client (example
# sync-ceiling), starts a FRESH control plane in E2E_RUN_DIR (default e2e/.run-peer), installs the
# CRDs and both tools' RBAC, then e2e/bench/peer/run.py measures (see its docstring) and
# e2e/bench/peer/report.py writes the results. The control plane is stopped at the end.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(git -C "$here" rev-parse --show-toplevel)
cd "$root"
export E2E_RUN_DIR=${E2E_RUN_DIR:-$root/e2e/.run-peer}
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$root/target-bench}
out="$CARGO_TARGET_DIR/bench-peer"
mkdir -p "$out"
# shellcheck source=e2e/lib.sh disable=SC1091
source "$root/e2e/lib.sh"
log() { printf '[peer] %s\n' "$*" >&2; }

# Reloader, built like the control plane (stamp of go.mod/go.sum/go version; cached binary).
# shellcheck source=e2e/controlplane/common.sh disable=SC1091
( source "$root/e2e/controlplane/common.sh"
  mkdir -p "$BIN_DIR" "$GO_CACHE_DIR/mod" "$GO_CACHE_DIR/build"
  build_group reloader "reloader" "github.com/stakater/Reloader" "" )
reloader="$E2E_BIN_DIR/reloader"

# The commit the measured operator was built from: HEAD, or for a prebuilt binary the first line
# of $PEER_OPERATOR_BIN.tree if present (written like scale.sh's).
built_from=$(git rev-parse --short HEAD)
if [[ -n "${PEER_OPERATOR_BIN:-}" ]]; then
  operator=$PEER_OPERATOR_BIN
  if [[ -f "$operator.tree" ]]; then built_from=$(head -1 "$operator.tree"); else built_from=unknown; fi
else
  log "building the operator (release, musl) and the ceiling client"
  nice -n 5 cargo build --release --locked --target x86_64-unknown-linux-musl --bin kafka-config-operator
  operator="$CARGO_TARGET_DIR/x86_64-unknown-linux-musl/release/kafka-config-operator"
fi
if [[ -n "${PEER_CEILING_BIN:-}" ]]; then
  ceiling=$PEER_CEILING_BIN
else
  # The same target as the operator's image build, so the two share their compiled dependencies.
  nice -n 5 cargo build --release --locked --target x86_64-unknown-linux-musl --example sync-ceiling
  ceiling="$CARGO_TARGET_DIR/x86_64-unknown-linux-musl/release/examples/sync-ceiling"
fi

# shellcheck disable=SC2317 # invoked by the EXIT trap
cleanup() {
  local code=$?
  cp -f "$E2E_RUN_DIR"/operator-*.log "$E2E_RUN_DIR"/reloader-*.log "$E2E_RUN_DIR"/peer-summary.json "$out/" 2>/dev/null || true
  "$root/e2e/controlplane/down.sh" || true
  exit "$code"
}
"$root/e2e/controlplane/down.sh"
trap cleanup EXIT
"$root/e2e/controlplane/up.sh"

"$KUBECTL" apply -f crds/ >/dev/null
"$KUBECTL" wait --for=condition=Established --timeout=60s \
  crd/kafkatoolconfigs.kafkaconfig.dev crd/globalclientdefaults.kafkaconfig.dev >/dev/null
"$KUBECTL" apply -f e2e/rbac/cluster.yaml >/dev/null
sa_kubeconfig=$(e2e_sa_kubeconfig kafka-config-operator kafka-config-operator)
# Reloader runs as its own identity (so the audit log tells its writes apart) with the access its
# chart's ClusterRole gives it: read ConfigMaps/Secrets/namespaces, read and patch workloads.
"$KUBECTL" apply -f "$here/peer/reloader-rbac.yaml" >/dev/null
reloader_kubeconfig=$(e2e_sa_kubeconfig reloader reloader)
eventually 30 "$KUBECTL" get kafkatoolconfigs -A

if [[ "${PEER_SMOKE:-}" == 1 ]]; then
  sizes=100 knobs=(--ballast 50 --ballast-secrets 10 --ballast-kib 16 --edits 50 --edit-rate 20 --burst 50 --ceiling-configs 100)
else
  sizes=${PEER_SIZES:-1000,10000} knobs=()
fi
python3 "$here/peer/run.py" --run-dir "$E2E_RUN_DIR" --operator "$operator" --sa-kubeconfig "$sa_kubeconfig" \
  --reloader "$reloader" --reloader-kubeconfig "$reloader_kubeconfig" --ceiling-bin "$ceiling" \
  --summary "$E2E_RUN_DIR/peer-summary.json" --sizes "$sizes" "${knobs[@]}"

if [[ "${PEER_SMOKE:-}" == 1 ]]; then
  python3 "$here/peer/report.py" --summary "$E2E_RUN_DIR/peer-summary.json" --check-complete
elif [[ "${NO_WRITE:-}" == 1 ]]; then
  python3 "$here/peer/report.py" --summary "$E2E_RUN_DIR/peer-summary.json"
else
  python3 "$here/peer/report.py" --summary "$E2E_RUN_DIR/peer-summary.json" --json docs/bench/results.json \
    --commit "$built_from" --command "e2e/bench/peer.sh${PEER_SIZES:+ (PEER_SIZES=$PEER_SIZES)}"
  python3 "$here/render_table.py"
fi
