# shellcheck shell=bash
# Helpers for e2e scripts. Source it:   source "$(dirname "$0")/lib.sh"
#
# Sets (and exports): E2E_DIR, E2E_BIN_DIR, E2E_RUN_DIR, KUBECONFIG (admin, from up.sh), KUBECTL,
# HELM, AUDIT_LOG. It does not change shell options of the caller.
#
# Functions:
#   e2e_up                          start (or check) the control plane: e2e/controlplane/up.sh
#   e2e_down                        stop it and remove its state
#   e2e_restart COMPONENT           etcd | kube-apiserver | kube-controller-manager
#   e2e_sa_kubeconfig NS NAME       kubeconfig (admin cert + `as: system:serviceaccount:NS:NAME`);
#                                   prints its path
#   e2e_sa_token_kubeconfig NS NAME kubeconfig with a real ServiceAccount token (TokenRequest, 1h);
#                                   the ServiceAccount must exist; prints its path
#   e2e_unique_name PREFIX          PREFIX-<random>, for namespaces etc.
#   e2e_wait_gc_watches GROUP VERSION RESOURCE [TIMEOUT_S]
#                                   waits until kube-controller-manager's garbage collector watches a
#                                   (new) resource: it rediscovers resources only every 30 s, and until
#                                   then dependants of a new CRD's objects are not collected
#   e2e_audit_count VERB RESOURCE [NAMESPACE [USER]]
#                                   number of audit events (ResponseComplete) matching, e.g. how many
#                                   times an identity wrote configmaps
# Assertions (counters E2E_PASSED / E2E_FAILED):
#   pass MSG | fail MSG
#   check MSG CMD...                passes if CMD exits 0
#   check_fails MSG CMD...          passes if CMD exits non-zero
#   check_eq MSG EXPECTED ACTUAL
#   check_contains MSG NEEDLE HAYSTACK
#   eventually TIMEOUT_S CMD...     polls CMD (every 0.5s) until it succeeds; returns 1 on timeout
#   e2e_finish                      prints "N passed, N failed"; returns non-zero if anything failed

E2E_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
E2E_BIN_DIR="${E2E_BIN_DIR:-$E2E_DIR/.bin}"
E2E_RUN_DIR="${E2E_RUN_DIR:-$E2E_DIR/.run}"
KUBECTL="$E2E_BIN_DIR/kubectl"
HELM="$E2E_BIN_DIR/helm"
KUBECONFIG="$E2E_RUN_DIR/kubeconfig"
AUDIT_LOG="$E2E_RUN_DIR/audit.log"
export E2E_DIR E2E_BIN_DIR E2E_RUN_DIR KUBECTL HELM KUBECONFIG AUDIT_LOG

e2e_up() { "$E2E_DIR/controlplane/up.sh"; }
e2e_down() { "$E2E_DIR/controlplane/down.sh"; }
e2e_restart() { "$E2E_DIR/controlplane/restart.sh" "$@"; }

e2e_unique_name() { printf '%s-%s\n' "$1" "$(head -c 4 /dev/urandom | od -An -tx1 | tr -d ' \n')"; }

# Writes a kubeconfig for the same cluster, with the admin client certificate and
# `as: system:serviceaccount:NS:NAME` in the user entry (impersonation: kube-apiserver then adds
# the groups system:serviceaccounts, system:serviceaccounts:NS and system:authenticated).
# The ServiceAccount need not exist: RBAC only looks at the name.
e2e_sa_kubeconfig() {
  local ns=$1 name=$2 f="$E2E_RUN_DIR/kubeconfig-sa-$1-$2"
  local server ca cert key
  server="$("$KUBECTL" --kubeconfig="$KUBECONFIG" config view --raw -o jsonpath='{.clusters[0].cluster.server}')" || return 1
  ca="$("$KUBECTL" --kubeconfig="$KUBECONFIG" config view --raw -o jsonpath='{.clusters[0].cluster.certificate-authority-data}')" || return 1
  cert="$("$KUBECTL" --kubeconfig="$KUBECONFIG" config view --raw -o jsonpath='{.users[0].user.client-certificate-data}')" || return 1
  key="$("$KUBECTL" --kubeconfig="$KUBECONFIG" config view --raw -o jsonpath='{.users[0].user.client-key-data}')" || return 1
  (umask 077 && cat > "$f" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: e2e
  cluster:
    server: $server
    certificate-authority-data: $ca
users:
- name: sa-$ns-$name
  user:
    client-certificate-data: $cert
    client-key-data: $key
    as: system:serviceaccount:$ns:$name
contexts:
- name: sa-$ns-$name
  context:
    cluster: e2e
    user: sa-$ns-$name
    namespace: $ns
current-context: sa-$ns-$name
EOF
  ) || return 1
  echo "$f"
}

# Kubeconfig authenticating with a real bound token of an existing ServiceAccount.
e2e_sa_token_kubeconfig() {
  local ns=$1 name=$2 f="$E2E_RUN_DIR/kubeconfig-sa-token-$1-$2"
  local server ca token
  server="$("$KUBECTL" --kubeconfig="$KUBECONFIG" config view --raw -o jsonpath='{.clusters[0].cluster.server}')" || return 1
  ca="$("$KUBECTL" --kubeconfig="$KUBECONFIG" config view --raw -o jsonpath='{.clusters[0].cluster.certificate-authority-data}')" || return 1
  token="$("$KUBECTL" --kubeconfig="$KUBECONFIG" -n "$ns" create token "$name" --duration=1h)" || return 1
  (umask 077 && cat > "$f" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: e2e
  cluster:
    server: $server
    certificate-authority-data: $ca
users:
- name: sa-token-$ns-$name
  user:
    token: $token
contexts:
- name: sa-token-$ns-$name
  context:
    cluster: e2e
    user: sa-token-$ns-$name
    namespace: $ns
current-context: sa-token-$ns-$name
EOF
  ) || return 1
  echo "$f"
}

# The garbage collector of kube-controller-manager re-reads discovery every 30 s (hard-coded) and
# only then watches the resources of a new CRD; an owner of such a kind that is deleted before that
# leaves its dependants in place until the GC catches up (seen: 42 s; retries back off). Waits for
# the last discovery sync mentioning the resource to be an addition, followed by "synced garbage
# collector" (kube-controller-manager runs with --v=2 for this), since the last start of the process.
e2e_gc_watches() {
  python3 - "$E2E_RUN_DIR/kube-controller-manager.log" "$1" "$2" "$3" <<'EOF'
import re, sys
path, group, version, resource = sys.argv[1:5]
# diff="added: [smoke.example.com/v1, Resource=widgets /v1, Resource=configmaps], removed: []"
key = re.compile(r"[\[ ]%s/%s, Resource=%s[\] ]" % tuple(map(re.escape, (group, version, resource))))
lines = open(path, errors="replace").read().split("\n")
start = max([i for i, l in enumerate(lines) if l.startswith("===== kube-controller-manager start")] or [0])
state = None  # None | "added" | "synced" | "removed"
for l in lines[start:]:
    if "syncing garbage collector with updated resources from discovery" in l and key.search(l):
        added, _, removed = l.partition("removed:")
        state = "added" if key.search(added) else "removed"
    elif '"synced garbage collector"' in l and state == "added":
        state = "synced"
sys.exit(0 if state == "synced" else 1)
EOF
}
e2e_wait_gc_watches() { eventually "${4:-75}" e2e_gc_watches "$1" "$2" "$3"; }

# e2e_audit_count VERB RESOURCE [NAMESPACE [USER]]: counts audit events (one per request, logged at
# ResponseComplete; see controlplane/audit-policy.yaml: only write verbs are logged).
e2e_audit_count() {
  local verb=$1 resource=$2 ns=${3:-} user=${4:-}
  [[ -f "$AUDIT_LOG" ]] || { echo 0; return; }
  python3 - "$AUDIT_LOG" "$verb" "$resource" "$ns" "$user" <<'EOF'
import json, sys
path, verb, resource, ns, user = sys.argv[1:6]
n = 0
with open(path) as f:
    for line in f:
        try:
            e = json.loads(line)
        except ValueError:
            continue
        ref = e.get("objectRef") or {}
        if e.get("stage") != "ResponseComplete" or e.get("verb") != verb or ref.get("resource") != resource:
            continue
        if ns and ref.get("namespace") != ns:
            continue
        if user and (e.get("impersonatedUser") or e.get("user") or {}).get("username") != user:
            continue
        n += 1
print(n)
EOF
}

# ---------------------------------------------------------------- assertions
E2E_PASSED=${E2E_PASSED:-0}
E2E_FAILED=${E2E_FAILED:-0}

pass() { E2E_PASSED=$((E2E_PASSED + 1)); printf 'ok     - %s\n' "$*"; }
fail() { E2E_FAILED=$((E2E_FAILED + 1)); printf 'FAILED - %s\n' "$*"; }

check() {
  local msg=$1; shift
  local out
  if out="$("$@" 2>&1)"; then pass "$msg"; else fail "$msg"; printf '         %s\n' "${out//$'\n'/$'\n'         }"; fi
}

check_fails() {
  local msg=$1; shift
  local out
  if out="$("$@" 2>&1)"; then fail "$msg (command succeeded: $*)"; printf '         %s\n' "${out//$'\n'/$'\n'         }"; else pass "$msg"; fi
}

check_eq() {
  if [[ "$2" == "$3" ]]; then pass "$1"; else fail "$1 (expected '$2', got '$3')"; fi
}

check_contains() {
  if [[ "$3" == *"$2"* ]]; then pass "$1"; else fail "$1 (expected to contain '$2', got '$3')"; fi
}

eventually() {
  local timeout=$1; shift
  local deadline=$((SECONDS + timeout))
  until "$@" >/dev/null 2>&1; do
    ((SECONDS < deadline)) || return 1
    sleep 0.5
  done
}

e2e_finish() {
  echo "$E2E_PASSED passed, $E2E_FAILED failed"
  [[ $E2E_FAILED -eq 0 ]]
}
