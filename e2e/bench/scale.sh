#!/usr/bin/env bash
# The operator at scale on the real control plane (issue 7). Not part of scripts/test.sh.
#
#   e2e/bench/scale.sh                       # N = 1,000 then 10,000, 2,000 x 64 KiB ballast;
#                                            # writes docs/bench/results.json, then
#                                            # e2e/bench/render_table.py rewrites the tables of
#                                            # docs/BENCHMARKS.md
#   SCALE_SIZES=1000 e2e/bench/scale.sh      # one size only
#   SCALE_LABEL="after: bounded concurrency" e2e/bench/scale.sh   # names the run in the history table
#   NO_WRITE=1 e2e/bench/scale.sh            # measure and print only
#   SCALE_KEEP=1 e2e/bench/scale.sh          # leave the control plane running afterwards
#   SCALE_OPERATOR_BIN=path e2e/bench/scale.sh   # measure a prebuilt binary (no build)
#   SCALE_LIBC=gnu e2e/bench/scale.sh        # measure the glibc build instead of the image's musl one
#
# Knobs (defaults): SCALE_SIZES=1000,10000 SCALE_BALLAST=2000 SCALE_BALLAST_KIB=64
#   SCALE_NAMESPACES=4 SCALE_EDITS=200 SCALE_EDIT_RATE=10 SCALE_BURST=1000
#   SCALE_BURST_REPEATS=3 (the burst verdict is the worst of them) SCALE_BUDGET_S=3600
#   (a size is skipped once the run has taken longer than the budget).
#
# What it does: builds the operator (release) into CARGO_TARGET_DIR (default target-bench), starts a
# FRESH control plane in E2E_RUN_DIR (default e2e/.run-bench, so it never touches the test suite's
# e2e/.run), installs the CRDs and the chart's RBAC, then e2e/bench/scale/run.py runs the operator
# as its ServiceAccount and measures (see the docstring there); e2e/bench/scale/report.py writes
# the results (targets: render_table.py's TARGETS). The control plane is stopped at the end; the
# summary, the operator logs and the run's full report (report.md) are kept in
# $CARGO_TARGET_DIR/bench-scale/.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(git -C "$here" rev-parse --show-toplevel)
cd "$root"
export E2E_RUN_DIR=${E2E_RUN_DIR:-$root/e2e/.run-bench}
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$root/target-bench}
out="$CARGO_TARGET_DIR/bench-scale"
mkdir -p "$out"
# shellcheck source=e2e/lib.sh disable=SC1091
source "$root/e2e/lib.sh"

log() { printf '[scale] %s\n' "$*" >&2; }

# By default the binary the image ships: the Dockerfile's static musl build (its allocator is
# musl's, which is what the pods run with). SCALE_LIBC=gnu measures the host's glibc build.
if [[ "${SCALE_LIBC:-musl}" == gnu ]]; then
  build_cmd="cargo build --release --locked"
  built="$CARGO_TARGET_DIR/release/kafka-config-operator"
else
  build_cmd="cargo build --release --locked --target x86_64-unknown-linux-musl"
  built="$CARGO_TARGET_DIR/x86_64-unknown-linux-musl/release/kafka-config-operator"
fi
if [[ -n "${SCALE_OPERATOR_BIN:-}" ]]; then
  # A binary built earlier (e.g. the "before" of a change); its tree is in $SCALE_OPERATOR_BIN.tree
  # (HEAD, then `git status --porcelain -- src Cargo.toml Cargo.lock` at build time) if present.
  bin=$SCALE_OPERATOR_BIN
  if [[ -f "$bin.tree" ]]; then cp "$bin.tree" "$out/tree.txt"; else echo "unknown" > "$out/tree.txt"; fi
  log "using the prebuilt operator $bin (tree: $(head -1 "$out/tree.txt"))"
else
  # The tree the binary is built from (others may edit it concurrently).
  { git rev-parse --short HEAD; git status --porcelain -- src Cargo.toml Cargo.lock; } > "$out/tree.txt"
  log "building the operator: CARGO_TARGET_DIR=$CARGO_TARGET_DIR $build_cmd"
  # shellcheck disable=SC2086 # split into the command's words on purpose
  nice -n 5 $build_cmd
  bin=$built
fi

# shellcheck disable=SC2317 # invoked by the EXIT trap
cleanup() {
  local code=$?
  cp -f "$E2E_RUN_DIR"/operator-*.log "$E2E_RUN_DIR"/scale-summary.json "$out/" 2>/dev/null || true
  if [[ "${SCALE_KEEP:-}" == 1 ]]; then
    log "control plane left running (E2E_RUN_DIR=$E2E_RUN_DIR); stop it with e2e/controlplane/down.sh"
  else
    "$root/e2e/controlplane/down.sh" || true
  fi
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
# Discovery of the new CRDs: the operator's first list must not race it.
eventually 30 "$KUBECTL" get kafkatoolconfigs -A

rc=0
command="e2e/bench/scale.sh"
[[ -n "${SCALE_SIZES:-}" ]] && command="SCALE_SIZES=$SCALE_SIZES $command"
[[ -n "${SCALE_LIBC:-}" ]] && command="SCALE_LIBC=$SCALE_LIBC $command"
python3 "$here/scale/run.py" \
  --run-dir "$E2E_RUN_DIR" --operator "$bin" --sa-kubeconfig "$sa_kubeconfig" \
  --summary "$E2E_RUN_DIR/scale-summary.json" \
  --sizes "${SCALE_SIZES:-1000,10000}" --ballast "${SCALE_BALLAST:-2000}" --ballast-kib "${SCALE_BALLAST_KIB:-64}" \
  --namespaces "${SCALE_NAMESPACES:-4}" --edits "${SCALE_EDITS:-200}" --edit-rate "${SCALE_EDIT_RATE:-10}" \
  --burst "${SCALE_BURST:-1000}" --burst-repeats "${SCALE_BURST_REPEATS:-3}" || rc=$?
# run.py saves its summary after every phase: an interrupted run still reports what it measured.
[[ -f "$E2E_RUN_DIR/scale-summary.json" ]] || exit "${rc:-1}"
(( ${rc:-0} == 0 )) || log "run.py failed (exit $rc); reporting the phases it completed"

if [[ "${NO_WRITE:-}" == 1 ]]; then
  log "NO_WRITE=1: results not written (summary: $out/scale-summary.json)"
  exit 0
fi
python3 "$here/scale/report.py" --summary "$E2E_RUN_DIR/scale-summary.json" \
  --json docs/bench/results.json --doc docs/BENCHMARKS.md --history docs/bench/scale-history.json \
  --detail "$out/report.md" \
  --command "$command" --label "${SCALE_LABEL:-}" --tree "$out/tree.txt" --build-cmd "$build_cmd"
exit "${rc:-0}"
