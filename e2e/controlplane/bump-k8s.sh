#!/usr/bin/env bash
# Re-pins e2e/controlplane/k8s to another Kubernetes release:
#
#   e2e/controlplane/bump-k8s.sh 1.37.3
#
# Reads the staging module list from that release's own go.mod (every `k8s.io/x => ./staging/...`
# replace) and replaces each one with its published tag v0.<minor>.<patch>; then pins the three
# tools and tidies. Commit go.mod and go.sum afterwards; up.sh rebuilds because the stamp changes.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

K=${1:-}; K=${K#v}
[[ "$K" =~ ^1\.[0-9]+\.[0-9]+$ ]] || die "usage: $0 1.MINOR.PATCH"
S="v0.${K#1.}"
go="$(go_bin)"
export GOMODCACHE="$GO_CACHE_DIR/mod" GOCACHE="$GO_CACHE_DIR/build" GOFLAGS=-mod=mod
cd "$CP_DIR/k8s" || exit 1

upstream_mod="$("$go" mod download -json "k8s.io/kubernetes@v$K" | python3 -c 'import json,sys; print(json.load(sys.stdin)["GoMod"])')"
staging=$(awk '$2 == "=>" && $3 ~ /^\.\/staging\// { print $1 }' "$upstream_mod")
[[ -n "$staging" ]] || die "no staging replaces found in $upstream_mod"

# Drop replaces of modules that are no longer staging modules, (re)pin the current ones.
for m in $("$go" mod edit -json | python3 -c 'import json,sys; [print(r["Old"]["Path"]) for r in json.load(sys.stdin).get("Replace") or []]'); do
  grep -qx "$m" <<<"$staging" || "$go" mod edit -dropreplace="$m"
done
for m in $staging; do "$go" mod edit -replace="$m=$m@$S"; done
"$go" get -tool "k8s.io/kubernetes/cmd/kube-apiserver@v$K" "k8s.io/kubernetes/cmd/kube-controller-manager@v$K" \
  "k8s.io/kubernetes/cmd/kubectl@v$K"
"$go" mod tidy
log "pinned k8s.io/kubernetes v$K with $(wc -w <<<"$staging") staging modules at $S"
