# shellcheck shell=bash
# Shared by up.sh, down.sh and restart.sh. Not meant to be run directly.
#
# Layout (all under the repo, both directories are gitignored):
#   e2e/.bin/   binaries built from the pinned Go modules + one stamp file per module
#   e2e/.run/   state of the running control plane: pki/, etcd data, logs, pids, kubeconfig, audit log
set -euo pipefail

CP_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
E2E_DIR="$(cd "$CP_DIR/.." && pwd)"
REPO_ROOT="$(git -C "$E2E_DIR" rev-parse --show-toplevel 2>/dev/null || (cd "$E2E_DIR/.." && pwd))"
BIN_DIR="${E2E_BIN_DIR:-$E2E_DIR/.bin}"
RUN_DIR="${E2E_RUN_DIR:-$E2E_DIR/.run}"
PKI_DIR="$RUN_DIR/pki"
STATE_FILE="$RUN_DIR/state.env"
KUBECONFIG_FILE="$RUN_DIR/kubeconfig"
KCM_KUBECONFIG_FILE="$RUN_DIR/kube-controller-manager.kubeconfig"

# Go caches live in the repo (gitignored /.cache/) so that CI can keep them between runs.
# E2E_GO_CACHE_DIR lets a measurement use a scratch cache (cold build) without touching the shared one.
GO_CACHE_DIR="${E2E_GO_CACHE_DIR:-$REPO_ROOT/.cache/go}"

# shellcheck disable=SC2034 # used by up.sh/down.sh
COMPONENTS=(etcd kube-apiserver kube-controller-manager)

# Controllers run by kube-controller-manager (names checked against `kube-controller-manager --help`
# of v1.37.2). No node/pod lifecycle, no scheduler-related controllers: there is no kubelet.
KCM_CONTROLLERS="garbage-collector-controller,namespace-controller,serviceaccount-controller,serviceaccount-token-controller,clusterrole-aggregation-controller,root-ca-certificate-publisher-controller,deployment-controller,replicaset-controller"

log() { printf '[controlplane] %s\n' "$*" >&2; }
die() { printf '[controlplane] ERROR: %s\n' "$*" >&2; exit 1; }
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1fs", b - a }'; }

go_bin() {
  if [[ -n "${E2E_GO:-}" ]]; then echo "$E2E_GO"
  elif command -v go >/dev/null 2>&1; then command -v go
  elif [[ -x /usr/local/go/bin/go ]]; then echo /usr/local/go/bin/go
  else
    # None on the machine: the pinned toolchain scripts/test.sh installs, from the Go module proxy.
    . "$(dirname "${BASH_SOURCE[0]}")/../../scripts/go-toolchain.sh" >&2 ||
      die "no Go toolchain found and none could be installed (set E2E_GO)"
    command -v go
  fi
}

# Version of a module required in a go.mod (first field of a require line).
# (Replace lines, "m => m vX", are skipped.)
mod_version() { awk -v m="$2" '($1 == m && $2 != "=>") || ($1 == "require" && $2 == m) { v = ($1 == "require") ? $3 : $2 } END { print v }' "$1"; }

# ---------------------------------------------------------------- build
# build_group NAME "bin1 bin2" "pkg1 pkg2" LDFLAGS [MODDIR]   (binaries and packages pairwise;
# MODDIR defaults to e2e/controlplane/NAME)
# Builds into BIN_DIR unless every binary exists and the stamp (hash of go.mod, go.sum, go version,
# flags) matches. Binaries are built into a temp dir and renamed into place, so a running process
# keeps its (old) inode and a failed build leaves nothing half-written.
BUILD_RECIPE_REV=1
REBUILT=()

build_group() {
  local name=$1 bins=$2 pkgs=$3 ldflags=$4 moddir="${5:-$CP_DIR/$1}"
  local go; go="$(go_bin)"
  local stamp_file="$BIN_DIR/.stamp-$name" stamp missing=0 b
  stamp="$( { cat "$moddir/go.mod" "$moddir/go.sum"; "$go" version; echo "$ldflags rev=$BUILD_RECIPE_REV"; } | sha256sum | cut -d' ' -f1)"
  for b in $bins; do [[ -x "$BIN_DIR/$b" ]] || missing=1; done
  if [[ $missing == 0 && -f "$stamp_file" && "$(cat "$stamp_file")" == "$stamp" ]]; then
    return 0
  fi
  log "building $name ($bins) ..."
  local t0 tmp; t0=$(now); tmp="$(mktemp -d "$BIN_DIR/.build-$name.XXXXXX")"
  # -mod=readonly: the committed go.mod/go.sum must be complete; the build never edits them.
  if ! ( cd "$moddir" && env GOMODCACHE="$GO_CACHE_DIR/mod" GOCACHE="$GO_CACHE_DIR/build" \
        GOFLAGS="-mod=readonly -buildvcs=false" CGO_ENABLED=0 \
        nice -n "${E2E_BUILD_NICE:-10}" "$go" build -trimpath -ldflags "-s -w $ldflags" -o "$tmp/" $pkgs ) >&2; then
    rm -rf "$tmp"; die "build of $name failed"
  fi
  # go build names a binary after the last path element, minus a /vN suffix
  # (go.etcd.io/etcd/server/v3 -> "server"); rename to the wanted names, pairwise.
  local -a ba pa; local i out
  read -ra ba <<<"$bins"; read -ra pa <<<"$pkgs"
  for i in "${!ba[@]}"; do
    out="${pa[i]%/v[0-9]*}"; out="${out##*/}"
    mv -f "$tmp/$out" "$BIN_DIR/${ba[i]}"
  done
  rm -rf "$tmp"
  echo "$stamp" > "$stamp_file"
  REBUILT+=("$name")
  log "built $name in $(elapsed "$t0")"
}

ensure_binaries() {
  mkdir -p "$BIN_DIR" "$GO_CACHE_DIR/mod" "$GO_CACHE_DIR/build"
  local kv ev hv hk
  kv="$(mod_version "$CP_DIR/k8s/go.mod" k8s.io/kubernetes)"        # e.g. v1.37.2
  ev="$(mod_version "$CP_DIR/etcd/go.mod" go.etcd.io/etcd/server/v3)"
  hv="$(mod_version "$CP_DIR/helm/go.mod" helm.sh/helm/v3)"
  hk="$(mod_version "$CP_DIR/helm/go.mod" k8s.io/client-go)"         # e.g. v0.37.0 -> helm's default kube 1.37
  [[ -n "$kv" && -n "$ev" && -n "$hv" && -n "$hk" ]] || die "could not read pinned versions from e2e/controlplane/*/go.mod"
  local kminor; kminor="$(echo "$kv" | cut -d. -f2)"
  # Without these, /version reports v0.0.0-master and Helm's kubeVersion constraints fail.
  local kld="" p
  for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    kld+=" -X $p.gitVersion=$kv -X $p.gitMajor=1 -X $p.gitMinor=$kminor -X $p.gitTreeState=clean"
  done
  build_group k8s "kube-apiserver kube-controller-manager kubectl" \
    "k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager k8s.io/kubernetes/cmd/kubectl" "$kld"
  # etcd needs no ldflags: its version is a constant in go.etcd.io/etcd/api/v3/version.
  build_group etcd "etcd" "go.etcd.io/etcd/server/v3" ""
  local hminor; hminor="$(echo "$hk" | cut -d. -f2)"
  build_group helm "helm" "helm.sh/helm/v3/cmd/helm" \
    "-X helm.sh/helm/v3/internal/version.version=$hv -X helm.sh/helm/v3/internal/version.gitTreeState=clean \
     -X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMajor=1 -X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMinor=$hminor \
     -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMajor=1 -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMinor=$hminor"
}

# ---------------------------------------------------------------- processes
pid_file() { echo "$RUN_DIR/$1.pid"; }

# Prints the recorded pid of a component if that process is alive AND is still that binary.
running_pid() {
  local f pid exe; f="$(pid_file "$1")"
  [[ -f "$f" ]] || return 1
  pid="$(cat "$f")"
  [[ "$pid" =~ ^[0-9]+$ ]] || return 1
  exe="$(readlink "/proc/$pid/exe" 2>/dev/null)" || return 1
  [[ "$(basename "${exe% (deleted)}")" == "$1" ]] || return 1
  echo "$pid"
}

stop_component() {
  local c=$1 pid i
  if pid="$(running_pid "$c")"; then
    kill -TERM "$pid" 2>/dev/null || true
    for ((i = 0; i < 100; i++)); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    if kill -0 "$pid" 2>/dev/null; then
      log "$c (pid $pid) did not stop in 10s, sending KILL"
      kill -KILL "$pid" 2>/dev/null || true
      for ((i = 0; i < 50; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    fi
  fi
  rm -f "$(pid_file "$c")"
}

# A free TCP port on 127.0.0.1 (bind to port 0 and let the kernel choose).
free_port() {
  if command -v python3 >/dev/null 2>&1; then
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
  else
    local p
    while :; do
      p=$((20000 + RANDOM % 40000))
      (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null || { echo "$p"; return; }
    done
  fi
}

# launch NAME ARGS... : runs $BIN_DIR/NAME in its own session (survives the calling shell), stdout and
# stderr appended to $RUN_DIR/NAME.log, pid recorded in $RUN_DIR/NAME.pid. The pid is written by the
# process itself just before exec, so it is the component's own pid even if setsid had to fork.
# fd 9 (the lock of up/down/restart) is closed: a daemon inheriting it would hold the lock forever.
launch() {
  local name=$1; shift
  printf '\n===== %s start %s\n' "$name" "$(date -Is)" >> "$RUN_DIR/$name.log"
  setsid bash -c 'echo $$ > "$1"; shift; exec "$@"' _ "$(pid_file "$name")" "$BIN_DIR/$name" "$@" \
    >> "$RUN_DIR/$name.log" 2>&1 < /dev/null 9>&- &
  local i
  for ((i = 0; i < 50; i++)); do [[ -s "$(pid_file "$name")" ]] && break; sleep 0.1; done
  disown 2>/dev/null || true
}

# shellcheck disable=SC1090 # state.env: ETCD_PORT, ETCD_PEER_PORT, ETCD_METRICS_PORT, APISERVER_PORT, KCM_PORT
load_state() { [[ -f "$STATE_FILE" ]] || die "no control plane state in $RUN_DIR (run e2e/controlplane/up.sh)"; source "$STATE_FILE"; }

start_etcd() {
  launch etcd --name=e2e --data-dir="$RUN_DIR/etcd-data" \
    --listen-client-urls="http://127.0.0.1:$ETCD_PORT" --advertise-client-urls="http://127.0.0.1:$ETCD_PORT" \
    --listen-peer-urls="http://127.0.0.1:$ETCD_PEER_PORT" --initial-advertise-peer-urls="http://127.0.0.1:$ETCD_PEER_PORT" \
    --initial-cluster="e2e=http://127.0.0.1:$ETCD_PEER_PORT" \
    --listen-metrics-urls="http://127.0.0.1:$ETCD_METRICS_PORT" \
    --unsafe-no-fsync=true --quota-backend-bytes=$((2 * 1024 * 1024 * 1024)) --log-level=warn
}

# --endpoint-reconciler-type=none: the apiserver cannot publish 127.0.0.1 as the endpoint of the
#   "kubernetes" Service (loopback is invalid there) and nothing in-cluster would use it anyway.
# --shutdown-send-retry-after: on SIGTERM, drain normal requests, then stop the HTTP server with a
#   2 s timeout instead of --request-timeout (60 s), which long-lived watches would otherwise use up.
start_kube_apiserver() {
  launch kube-apiserver \
    --etcd-servers="http://127.0.0.1:$ETCD_PORT" \
    --bind-address=127.0.0.1 --advertise-address=127.0.0.1 --secure-port="$APISERVER_PORT" \
    --cert-dir="$PKI_DIR" --tls-cert-file="$PKI_DIR/apiserver.crt" --tls-private-key-file="$PKI_DIR/apiserver.key" \
    --client-ca-file="$PKI_DIR/ca.crt" \
    --authorization-mode=RBAC \
    --service-cluster-ip-range=10.0.0.0/24 --allow-privileged=true \
    --service-account-issuer="https://127.0.0.1:$APISERVER_PORT" \
    --service-account-key-file="$PKI_DIR/sa.pub" --service-account-signing-key-file="$PKI_DIR/sa.key" \
    --requestheader-client-ca-file="$PKI_DIR/front-proxy-ca.crt" --requestheader-allowed-names=front-proxy-client \
    --requestheader-username-headers=X-Remote-User --requestheader-group-headers=X-Remote-Group \
    --requestheader-extra-headers-prefix=X-Remote-Extra- \
    --proxy-client-cert-file="$PKI_DIR/front-proxy-client.crt" --proxy-client-key-file="$PKI_DIR/front-proxy-client.key" \
    --endpoint-reconciler-type=none \
    --shutdown-send-retry-after=true \
    --audit-policy-file="$CP_DIR/audit-policy.yaml" --audit-log-path="$RUN_DIR/audit.log" \
    --audit-log-mode=blocking --audit-log-maxsize=0 --audit-log-maxbackup=0
}

start_kube_controller_manager() {
  mkdir -p "$RUN_DIR/kube-controller-manager-certs"
  # --v=2: the garbage collector logs which resources it watches after each discovery sync
  # (e2e_wait_gc_watches in e2e/lib.sh reads that).
  launch kube-controller-manager \
    --kubeconfig="$KCM_KUBECONFIG_FILE" \
    --authentication-kubeconfig="$KCM_KUBECONFIG_FILE" --authorization-kubeconfig="$KCM_KUBECONFIG_FILE" \
    --bind-address=127.0.0.1 --secure-port="$KCM_PORT" --cert-dir="$RUN_DIR/kube-controller-manager-certs" \
    --leader-elect=false \
    --controllers="$KCM_CONTROLLERS" \
    --use-service-account-credentials=true \
    --v=2 \
    --service-account-private-key-file="$PKI_DIR/sa.key" --root-ca-file="$PKI_DIR/ca.crt"
}

start_component() {
  case $1 in
    etcd) start_etcd ;;
    kube-apiserver) start_kube_apiserver ;;
    kube-controller-manager) start_kube_controller_manager ;;
    *) die "unknown component $1" ;;
  esac
}

# ---------------------------------------------------------------- readiness
etcd_healthy() { curl -fsS --max-time 2 "http://127.0.0.1:$ETCD_PORT/health" 2>/dev/null | grep -q '"health":"true"'; }
apiserver_ready() {
  curl -fsS --max-time 3 --cacert "$PKI_DIR/ca.crt" --cert "$PKI_DIR/admin.crt" --key "$PKI_DIR/admin.key" \
    "https://127.0.0.1:$APISERVER_PORT/readyz" 2>/dev/null | grep -qx ok
}
kcm_healthy() { curl -fsSk --max-time 2 "https://127.0.0.1:$KCM_PORT/healthz" 2>/dev/null | grep -qx ok; }

component_ready() {
  case $1 in
    etcd) etcd_healthy ;;
    kube-apiserver) apiserver_ready ;;
    kube-controller-manager) kcm_healthy ;;
  esac
}

# wait_ready COMPONENT TIMEOUT_SECONDS: fails early (with the log tail) if the process dies.
wait_ready() {
  local c=$1 timeout=${2:-60} t0=$SECONDS
  while ! component_ready "$c"; do
    if ! running_pid "$c" >/dev/null; then
      tail -n 30 "$RUN_DIR/$c.log" >&2 || true
      die "$c exited while starting (log: $RUN_DIR/$c.log)"
    fi
    if ((SECONDS - t0 >= timeout)); then
      tail -n 30 "$RUN_DIR/$c.log" >&2 || true
      die "$c not ready after ${timeout}s (log: $RUN_DIR/$c.log)"
    fi
    sleep 0.2
  done
}

# The serviceaccount controller creating "default" in namespace default is the sign that
# kube-controller-manager's controllers are really running, not just its HTTP server.
wait_kcm_controllers() {
  local timeout=${1:-60} t0=$SECONDS
  until "$BIN_DIR/kubectl" --kubeconfig="$KUBECONFIG_FILE" -n default get serviceaccount default >/dev/null 2>&1; do
    ((SECONDS - t0 < timeout)) || die "kube-controller-manager did not create serviceaccount default/default in ${timeout}s"
    sleep 0.5
  done
}
