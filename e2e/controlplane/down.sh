#!/usr/bin/env bash
# Stops the control plane started by up.sh: exactly the pids recorded in e2e/.run/*.pid (each one
# checked to still be that binary), then removes e2e/.run (data, certs, logs, kubeconfig).
# Binaries in e2e/.bin stay. E2E_KEEP_RUN=1 keeps e2e/.run (logs) after stopping.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

mkdir -p "$BIN_DIR"
exec 9>"$BIN_DIR/.lock"; flock 9

# Reverse dependency order: controller-manager, apiserver, etcd.
for ((i = ${#COMPONENTS[@]} - 1; i >= 0; i--)); do
  c=${COMPONENTS[i]}
  if pid="$(running_pid "$c")"; then
    log "stopping $c (pid $pid)"
  fi
  stop_component "$c"
done
if [[ "${E2E_KEEP_RUN:-}" == 1 ]]; then
  log "stopped; state kept in $RUN_DIR"
else
  rm -rf "$RUN_DIR"
  log "stopped; removed $RUN_DIR"
fi
