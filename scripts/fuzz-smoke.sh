#!/usr/bin/env bash
# Bounded fuzz smoke run (docs/RELIABILITY.md): builds the cargo-fuzz targets in fuzz/ and runs
# each for FUZZ_SECONDS (default 20) from the committed seed corpus. Fails on any crash, leak,
# timeout or out-of-memory; prints one line per target with its exec count.
#
#   scripts/fuzz-smoke.sh                 # every target, 20 s each
#   FUZZ_SECONDS=60 scripts/fuzz-smoke.sh render properties_load
#
# cargo-fuzz needs nightly-only rustc flags (-Z sanitizer, -C passes=sancov…); the stable
# toolchain accepts them with RUSTC_BOOTSTRAP=1. cargo-fuzz itself is installed from crates.io
# into .cache/cargo-bin (cached by CI). New inputs go to fuzz/target/corpus-work/<target>, so the
# committed corpus (fuzz/corpus/<target>) changes only when someone copies inputs over on purpose.
set -euo pipefail

ROOT=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)
SECONDS_EACH=${FUZZ_SECONDS:-20}
RSS_MB=${FUZZ_RSS_MB:-2048}
CARGO_FUZZ_VERSION=${CARGO_FUZZ_VERSION:-0.13.2}
BIN_ROOT="$ROOT/.cache/cargo-bin"
FUZZ_DIR="$ROOT/fuzz"
TARGET_DIR=${FUZZ_TARGET_DIR:-$FUZZ_DIR/target}
export RUSTC_BOOTSTRAP=1
export PATH="$BIN_ROOT/bin:$PATH"

if ! command -v cargo-fuzz >/dev/null 2>&1; then
    echo "fuzz-smoke: installing cargo-fuzz $CARGO_FUZZ_VERSION into $BIN_ROOT" >&2
    cargo install --locked --root "$BIN_ROOT" --version "$CARGO_FUZZ_VERSION" cargo-fuzz >&2
fi

targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    mapfile -t targets < <(cd "$FUZZ_DIR" && cargo fuzz list)
fi

cd "$FUZZ_DIR"
start=$(date +%s)
# One build for all targets (release + debug assertions, AddressSanitizer), then the binaries are
# run directly.
nice cargo fuzz build --target-dir "$TARGET_DIR" >&2
built=$(date +%s)
BIN_DIR="$TARGET_DIR/$(rustc -vV | sed -n 's/^host: //p')/release"
echo "fuzz-smoke: built in $((built - start)) s" >&2

failed=0
for target in "${targets[@]}"; do
    work="$TARGET_DIR/corpus-work/$target"
    logs="$TARGET_DIR/fuzz-logs"
    mkdir -p "$work" "$logs" "$FUZZ_DIR/artifacts/$target"
    log="$logs/$target.log"
    status=0
    # Run the binary built above: `cargo fuzz run` would rebuild whenever src/ changed meanwhile.
    nice "$BIN_DIR/$target" "$work" "$FUZZ_DIR/corpus/$target" \
        -artifact_prefix="$FUZZ_DIR/artifacts/$target/" -max_total_time="$SECONDS_EACH" -rss_limit_mb="$RSS_MB" -timeout=10 \
        -max_len="${FUZZ_MAX_LEN:-8192}" -print_final_stats=1 >"$log" 2>&1 || status=$?
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    peak=$(sed -n 's/^stat::peak_rss_mb: *//p' "$log" | tail -1)
    corpus=$(find "$work" -type f | wc -l)
    if [ "$status" -ne 0 ]; then
        failed=1
        crash=$(grep -o 'Test unit written to [^ ]*' "$log" | tail -1 | sed 's/Test unit written to //' || true)
        printf '%-20s FAILED (exit %s) execs=%s artifact=%s log=%s\n' "$target" "$status" "${execs:-?}" "${crash:-none}" "$log"
        grep -m1 -E 'panicked at|ERROR: (libFuzzer|AddressSanitizer)' "$log" | sed 's/^/    /' || true
    else
        printf '%-20s ok execs=%s seconds=%s corpus=%s peak_rss_mb=%s\n' "$target" "${execs:-?}" "$SECONDS_EACH" "$corpus" "${peak:-?}"
    fi
done
echo "fuzz-smoke: total $(( $(date +%s) - start )) s" >&2
exit "$failed"
