#!/usr/bin/env bash
# Restarts one component of the running control plane, keeping its data, ports and certificates,
# and returns once the control plane is ready again.
#
#   e2e/controlplane/restart.sh etcd|kube-apiserver|kube-controller-manager
#
# "Ready again" means: the component's own health endpoint answers, and kube-apiserver's /readyz is
# ok (after an etcd restart the apiserver has to reconnect first).
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

c=${1:-}
case $c in
  etcd | kube-apiserver | kube-controller-manager) ;;
  *) die "usage: $0 etcd|kube-apiserver|kube-controller-manager" ;;
esac

mkdir -p "$BIN_DIR"
exec 9>"$BIN_DIR/.lock"; flock 9
load_state
running_pid "$c" >/dev/null || log "$c was not running; starting it"

t0=$(now)
stop_component "$c"
t_stop=$(elapsed "$t0"); t1=$(now)
start_component "$c"
wait_ready "$c" 120
t_ready=$(elapsed "$t1"); t1=$(now)
[[ $c == kube-apiserver ]] || wait_ready kube-apiserver 120
log "restarted $c (pid $(running_pid "$c")) in $(elapsed "$t0"): stop $t_stop, start until ready $t_ready, apiserver /readyz after $(elapsed "$t1") more"
