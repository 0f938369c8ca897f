#!/usr/bin/env bash
# Smoke test of the e2e control plane: proves that what the operator's e2e tests will rely on is
# real. Runs e2e/controlplane/up.sh first (a quick no-op when already up; E2E_SKIP_UP=1 skips it).
# Ends with "N passed, N failed"; exit status non-zero on any failure.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

TD="$E2E_DIR/testdata/smoke"
if [[ "${E2E_SKIP_UP:-}" != 1 ]]; then
  e2e_up || { echo "up.sh failed"; echo "0 passed, 1 failed"; exit 1; }
fi
k() { "$KUBECTL" "$@"; }

NS="$(e2e_unique_name smoke)"
echo "# namespace $NS"

# --- versions: ldflags made it into the binaries (Helm's kubeVersion checks depend on it)
server_version="$(k version -o json 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["serverVersion"]["gitVersion"])')"
client_version="$(k version --client -o json 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["clientVersion"]["gitVersion"])')"
check_eq "kube-apiserver /version is a real release" "$client_version" "$server_version"
check "server version is not v0.0.0-master (got $server_version)" test "${server_version#v1.}" != "$server_version"
helm_version="$("$HELM" version --template '{{.Version}}' 2>&1)"
check "helm reports a real version (got $helm_version)" test "${helm_version#v3.}" != "$helm_version"

check "create namespace" k create namespace "$NS"

# --- CRD + custom resource
check "kubectl apply test CRD" k apply -f "$TD/crd.yaml"
check "CRD becomes Established" k wait --for=condition=Established --timeout=30s crd/widgets.smoke.e2e.example.com
# Discovery of a brand-new CRD can lag a moment behind Established.
eventually 30 k -n "$NS" get widgets
check "create custom resource" k -n "$NS" apply -f "$TD/widget.yaml"
check_eq "read custom resource back" "3/green" "$(k -n "$NS" get widget w1 -o jsonpath='{.spec.size}/{.spec.color}' 2>&1)"
check_fails "CEL validation rejects an invalid custom resource" k -n "$NS" apply -f "$TD/widget-invalid.yaml"
check "status subresource accepts a patch" k -n "$NS" patch widget w1 --subresource=status --type=merge -p '{"status":{"ready":true}}'
check_eq "status was stored" "true" "$(k -n "$NS" get widget w1 -o jsonpath='{.status.ready}' 2>&1)"

# --- garbage collector: dependant ConfigMaps deleted after their owner
dependant() { # name ownerApiVersion ownerKind ownerName ownerUid
  k -n "$NS" apply -f - <<EOF
apiVersion: v1
kind: ConfigMap
metadata:
  name: $1
  ownerReferences:
  - apiVersion: $2
    kind: $3
    name: $4
    uid: $5
data:
  owned: "yes"
EOF
}
gone() { ! k -n "$NS" get "$1" "$2" >/dev/null 2>&1; }

check "create owner ConfigMap" k -n "$NS" create configmap gc-owner --from-literal=a=b
owner_uid="$(k -n "$NS" get configmap gc-owner -o jsonpath='{.metadata.uid}')"
check "create dependant ConfigMap owned by the ConfigMap" dependant gc-dependant v1 ConfigMap gc-owner "$owner_uid"
check "delete owner ConfigMap" k -n "$NS" delete configmap gc-owner --wait=false
t0=$SECONDS
if eventually 30 gone configmap gc-dependant; then pass "GC deleted the dependant of a ConfigMap (in $((SECONDS - t0))s)"
else fail "GC did not delete the dependant of a ConfigMap within 30s"; fi


# --- RBAC: an impersonated ServiceAccount identity without any binding is denied, then allowed
check "create ConfigMap to read" k -n "$NS" create configmap readme --from-literal=x=1
SA_KC="$(e2e_sa_kubeconfig "$NS" reader)"
check "impersonating kubeconfig written" test -s "$SA_KC"
check_contains "kubeconfig impersonates the ServiceAccount" "as: system:serviceaccount:$NS:reader" "$(cat "$SA_KC")"
check_eq "kubectl auth can-i: denied without RBAC" "no" "$(k --kubeconfig="$SA_KC" auth can-i get configmaps -n "$NS" 2>/dev/null)"
out="$(k --kubeconfig="$SA_KC" -n "$NS" get configmap readme 2>&1)"; rc=$?
check "get as ServiceAccount fails without RBAC" test "$rc" -ne 0
check_contains "get as ServiceAccount is Forbidden" "Forbidden" "$out"
check_contains "the error names the impersonated identity" "system:serviceaccount:$NS:reader" "$out"
check "create Role" k -n "$NS" create role configmap-reader --verb=get,list --resource=configmaps
check "create RoleBinding" k -n "$NS" create rolebinding reader --role=configmap-reader --serviceaccount="$NS:reader"
can_i() { [[ "$(k --kubeconfig="$SA_KC" auth can-i get configmaps -n "$NS" 2>/dev/null)" == yes ]]; }
if eventually 15 can_i; then pass "kubectl auth can-i: allowed after Role+RoleBinding"; else fail "kubectl auth can-i still denied after Role+RoleBinding"; fi
check_eq "get as ServiceAccount allowed after Role+RoleBinding" "1" "$(k --kubeconfig="$SA_KC" -n "$NS" get configmap readme -o jsonpath='{.data.x}' 2>&1)"
check_fails "still denied for a verb the Role does not grant" k --kubeconfig="$SA_KC" -n "$NS" delete configmap readme

# Same with a real token (TokenRequest: service-account issuer + signing key work).
check "create ServiceAccount" k -n "$NS" create serviceaccount reader
TOKEN_KC="$(e2e_sa_token_kubeconfig "$NS" reader)"
check "kubeconfig with a real ServiceAccount token written" test -s "$TOKEN_KC"
check_eq "token of the ServiceAccount authenticates and is authorized" "1" "$(k --kubeconfig="$TOKEN_KC" get configmap readme -o jsonpath='{.data.x}' 2>&1)"
check_contains "token identity is the ServiceAccount" "system:serviceaccount:$NS:reader" "$(k --kubeconfig="$TOKEN_KC" auth whoami 2>&1)"

# --- controllers: Deployment -> ReplicaSet -> Pod objects (pods never run: no scheduler/kubelet)
check "create Deployment" k -n "$NS" create deployment web --image=registry.invalid/web:1 --replicas=1
rs_exists() { [[ -n "$(k -n "$NS" get replicasets -l app=web -o name 2>/dev/null)" ]]; }
if eventually 30 rs_exists; then pass "deployment controller created a ReplicaSet"; else fail "no ReplicaSet for the Deployment within 30s"; fi
pod_exists() { [[ -n "$(k -n "$NS" get pods -l app=web -o name 2>/dev/null)" ]]; }
if eventually 30 pod_exists; then pass "replicaset controller created a Pod (it stays Pending)"; else fail "no Pod for the ReplicaSet within 30s"; fi
check_eq "the Pod is not scheduled (no scheduler)" "" "$(k -n "$NS" get pods -l app=web -o jsonpath='{.items[0].spec.nodeName}' 2>&1)"
check "root-ca publisher created kube-root-ca.crt" eventually 30 k -n "$NS" get configmap kube-root-ca.crt

# --- garbage collector and a custom resource as owner. The GC only watches a new CRD's resource
# after its next discovery sync (every 30 s): wait for that first (the tests above gave it time).
t0=$SECONDS
if e2e_wait_gc_watches smoke.e2e.example.com v1 widgets 75; then pass "GC watches the new CRD's resource ($((SECONDS - t0))s more wait)"
else fail "GC did not pick up widgets.smoke.e2e.example.com within 75s"; fi
w_uid="$(k -n "$NS" get widget w1 -o jsonpath='{.metadata.uid}')"
check "create dependant ConfigMap owned by the custom resource" dependant w1-dependant smoke.e2e.example.com/v1 Widget w1 "$w_uid"
check "delete the custom resource" k -n "$NS" delete widget w1 --wait=false
t0=$SECONDS
if eventually 30 gone configmap w1-dependant; then pass "GC deleted the dependant of a custom resource (in $((SECONDS - t0))s)"
else fail "GC did not delete the dependant of a custom resource within 30s"; fi

# --- audit log records writes
n="$(e2e_audit_count create configmaps "$NS")"
check "audit log counts ConfigMap creates in the namespace (got $n)" test "${n:-0}" -ge 3
n="$(e2e_audit_count delete configmaps "$NS" "system:serviceaccount:$NS:reader")"
check_eq "audit log records the denied delete by the impersonated ServiceAccount" "1" "$n"

# --- namespace controller: deleting the namespace removes everything in it
check "delete namespace" k delete namespace "$NS" --wait=false
ns_gone() { ! k get namespace "$NS" >/dev/null 2>&1; }
if eventually 60 ns_gone; then pass "namespace controller finished deleting the namespace"; else fail "namespace $NS still there after 60s"; fi
k delete -f "$TD/crd.yaml" --wait=false >/dev/null 2>&1 || true

e2e_finish
