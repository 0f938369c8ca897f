#!/usr/bin/env bash
# Starts a real Kubernetes control plane for tests (envtest-style: etcd + kube-apiserver +
# kube-controller-manager as local processes, no kubelet, no scheduler, no containers).
#
#   e2e/controlplane/up.sh        build what is missing/outdated, start what is not running, wait until ready
#
# Idempotent: with everything running and healthy it only checks and exits 0.
# Afterwards: admin kubeconfig in e2e/.run/kubeconfig, binaries in e2e/.bin/ (see e2e/lib.sh).
# Env: E2E_GO (go binary), E2E_GO_CACHE_DIR (default <repo>/.cache/go), E2E_BUILD_ONLY=1 (build, start nothing).
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

gen_certs() {
  mkdir -p "$PKI_DIR"
  local d="$PKI_DIR" days=365
  (
    cd "$d"
    local ec=(-newkey ec -pkeyopt ec_paramgen_curve:prime256v1)
    # One CA signs the serving certificate and the client certificates (--client-ca-file).
    openssl req -x509 -new -nodes "${ec[@]}" -keyout ca.key -out ca.crt -days $days -subj /CN=e2e-ca 2>/dev/null
    openssl req -new -nodes "${ec[@]}" -keyout apiserver.key -out apiserver.csr -subj /CN=kube-apiserver 2>/dev/null
    openssl x509 -req -in apiserver.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days $days -out apiserver.crt \
      -extfile <(printf 'subjectAltName=DNS:localhost,IP:127.0.0.1,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,IP:10.0.0.1\nextendedKeyUsage=serverAuth\n') 2>/dev/null
    client_cert() { # file CN O [CA]
      local subj="/CN=$2" ca=${4:-ca}; [[ -n "$3" ]] && subj="/O=$3/CN=$2"
      openssl req -new -nodes "${ec[@]}" -keyout "$1.key" -out "$1.csr" -subj "$subj" 2>/dev/null
      openssl x509 -req -in "$1.csr" -CA "$ca.crt" -CAkey "$ca.key" -CAcreateserial -days $days -out "$1.crt" \
        -extfile <(printf 'extendedKeyUsage=clientAuth\n') 2>/dev/null
    }
    client_cert admin admin system:masters
    # Bound by the bootstrap ClusterRoleBinding system:kube-controller-manager (its controllers then
    # use their own ServiceAccounts: --use-service-account-credentials).
    client_cert kube-controller-manager system:kube-controller-manager ""
    # Front-proxy (request-header) CA: kube-apiserver publishes it in kube-system/extension-apiserver-authentication;
    # without it kube-controller-manager's delegated authentication logs an error every few seconds.
    openssl req -x509 -new -nodes "${ec[@]}" -keyout front-proxy-ca.key -out front-proxy-ca.crt -days $days -subj /CN=e2e-front-proxy-ca 2>/dev/null
    client_cert front-proxy-client front-proxy-client "" front-proxy-ca
    # ServiceAccount token signing key pair (RSA, as kube-apiserver/kube-controller-manager expect PEM RSA/EC).
    openssl genrsa -out sa.key 2048 2>/dev/null
    openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null
    rm -f ./*.csr ./*.srl
    chmod 600 ./*.key
  ) || die "certificate generation failed"
}

write_kubeconfig() { # file user cert key
  local f=$1 k="$BIN_DIR/kubectl"
  rm -f "$f"
  "$k" --kubeconfig="$f" config set-cluster e2e --server="https://127.0.0.1:$APISERVER_PORT" \
    --certificate-authority="$PKI_DIR/ca.crt" --embed-certs=true >/dev/null
  "$k" --kubeconfig="$f" config set-credentials "$2" --client-certificate="$3" --client-key="$4" --embed-certs=true >/dev/null
  "$k" --kubeconfig="$f" config set-context e2e --cluster=e2e --user="$2" >/dev/null
  "$k" --kubeconfig="$f" config use-context e2e >/dev/null
  chmod 600 "$f"
}

main() {
  local t_all t0; t_all=$(now)
  mkdir -p "$BIN_DIR"
  # Serialise concurrent up/down/restart runs.
  exec 9>"$BIN_DIR/.lock"; flock 9

  t0=$(now)
  ensure_binaries
  log "stage build: $(elapsed "$t0")${REBUILT[*]:+ (rebuilt: ${REBUILT[*]})}"
  [[ "${E2E_BUILD_ONLY:-}" == 1 ]] && return 0

  # Anything alive from an earlier up.sh? If nothing is, start from a clean state.
  local c alive=()
  for c in "${COMPONENTS[@]}"; do running_pid "$c" >/dev/null && alive+=("$c"); done
  t0=$(now)
  if ((${#alive[@]} == 0)) || [[ ! -f "$STATE_FILE" || ! -f "$PKI_DIR/ca.crt" ]]; then
    for c in "${alive[@]}"; do log "stopping $c left without state"; stop_component "$c"; done
    alive=()
    rm -rf "$RUN_DIR"
    mkdir -p "$RUN_DIR"
    gen_certs
    {
      echo "ETCD_PORT=$(free_port)"
      echo "ETCD_PEER_PORT=$(free_port)"
      echo "ETCD_METRICS_PORT=$(free_port)"
      echo "APISERVER_PORT=$(free_port)"
      echo "KCM_PORT=$(free_port)"
    } > "$STATE_FILE"
    log "stage certs: $(elapsed "$t0")"
  else
    log "stage certs: reused (running: ${alive[*]})"
  fi
  load_state
  [[ -f "$KUBECONFIG_FILE" ]] || write_kubeconfig "$KUBECONFIG_FILE" admin "$PKI_DIR/admin.crt" "$PKI_DIR/admin.key"
  [[ -f "$KCM_KUBECONFIG_FILE" ]] || write_kubeconfig "$KCM_KUBECONFIG_FILE" kube-controller-manager \
    "$PKI_DIR/kube-controller-manager.crt" "$PKI_DIR/kube-controller-manager.key"

  # Restart components whose binary was just rebuilt, start the missing ones, in dependency order.
  local t_start; t_start=$(now)
  for c in "${COMPONENTS[@]}"; do
    t0=$(now)
    local group=k8s; [[ $c == etcd ]] && group=etcd
    if running_pid "$c" >/dev/null && [[ " ${REBUILT[*]} " == *" $group "* ]]; then
      log "$c binary was rebuilt: restarting it"
      stop_component "$c"
    fi
    if running_pid "$c" >/dev/null; then
      wait_ready "$c" 60
      continue
    fi
    start_component "$c"
    wait_ready "$c" 120
    log "started $c (pid $(running_pid "$c"), port $(case $c in etcd) echo "$ETCD_PORT" ;; kube-apiserver) echo "$APISERVER_PORT" ;; *) echo "$KCM_PORT" ;; esac)) in $(elapsed "$t0")"
  done
  t0=$(now)
  wait_kcm_controllers 90
  log "stage start: $(elapsed "$t_start") (controllers ready after $(elapsed "$t0") more)"
  log "ready in $(elapsed "$t_all"): export KUBECONFIG=$KUBECONFIG_FILE"
}

main "$@"
