#!/usr/bin/env bash
# Builds one of the small Go test programs of e2e/ (e2e/kstatus, e2e/argocd: each its own module,
# pinned by its go.mod/go.sum, from the Go module proxy) into e2e/.bin/kco-NAME, the way the
# control plane is built (e2e/controlplane/common.sh: same Go, same module and build caches under
# .cache/go, rebuilt only when go.mod, go.sum, the sources or Go change), and prints its path.
#
#   bash e2e/go-tool.sh kstatus    # -> /…/e2e/.bin/kco-kstatus
set -euo pipefail
name=${1:?usage: go-tool.sh NAME (a folder of e2e/ with a go.mod)}
here="$(cd "$(dirname "$0")" && pwd)"
[[ -f "$here/$name/go.mod" ]] || { echo "go-tool.sh: no e2e/$name/go.mod" >&2; exit 2; }
# shellcheck source=controlplane/common.sh
source "$here/controlplane/common.sh"
mkdir -p "$BIN_DIR" "$GO_CACHE_DIR/mod" "$GO_CACHE_DIR/build"
# A module may need a newer Go than the machine's (e2e/argocd: argo-cd v3.6 needs 1.27): its go.mod
# names the toolchain, which the go command fetches from the Go module proxy like a module (into
# the module cache above, so it is cached too).
export GOTOOLCHAIN=auto
# The sources are part of the stamp (build_group hashes go.mod, go.sum and the flags).
sources="$(cat "$here/$name"/*.go | sha256sum | cut -c1-16)"
module="$(awk '$1 == "module" { print $2 }' "$here/$name/go.mod")"
# -X of a variable the program does not have is a no-op: it only puts the sources into the stamp.
build_group "$name" "kco-$name" "$module" "-X main.sources=$sources" "$here/$name" >&2
echo "$BIN_DIR/kco-$name"
