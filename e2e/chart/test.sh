#!/usr/bin/env bash
# e2e for the Helm chart (charts/kafka-config-operator) on the real control plane (e2e/controlplane):
# lint, CRD drift, values schema, server-side dry run, install (cluster mode and namespaced mode),
# the operator's RBAC checked with `kubectl auth can-i` as its ServiceAccount (impersonation), the
# operator binary run with the Deployment's args and a real token of the chart's ServiceAccount in
# both modes (renders, no authorization error, a request outside its role denied),
# aggregated user roles, upgrade, uninstall, OpenShift-style security contexts, use as a subchart,
# install.yaml (generated from the chart: drift, `kubectl apply -f`, the operator run from it), and
# the Argo CD health checks run by Argo CD's own Lua code (e2e/argocd).
# There is no kubelet: pods never run, so the checks are on the API objects.
# Ends with "N passed, N failed"; exits non-zero on failure. Starts the control plane if needed
# (never stops it).
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
source "$root/e2e/lib.sh"
chart="$root/charts/kafka-config-operator"
ns=kafka-config-operator          # release namespace
rel=kco                           # cluster mode
tenant=kco-tenant                 # namespaced mode, watching team-a
k() { "$KUBECTL" "$@"; }
h() { "$HELM" "$@"; }

"$KUBECTL" get --raw /readyz >/dev/null 2>&1 || e2e_up >/dev/null || { fail "control plane did not start"; e2e_finish; exit 1; }

# Leftovers of an interrupted run.
for r in "$rel" "$tenant"; do
  h status "$r" -n "$ns" >/dev/null 2>&1 && h uninstall "$r" -n "$ns" --wait --timeout 60s >/dev/null 2>&1
done
for n in "$ns" team-a team-b; do
  k get namespace "$n" >/dev/null 2>&1 || k create namespace "$n" >/dev/null
done

# ---- the operator as the chart's pod would run it (no kubelet, so as a local process): the
# container args of the installed Deployment, the POD_* variables, and a real bound token of the
# chart's ServiceAccount. KCO_OPERATOR_BIN: the binary (scripts/test.sh passes the static musl
# build of the Dockerfile's command, i.e. the image's binary); default: the debug build.
op_bin="${KCO_OPERATOR_BIN:-${CARGO_TARGET_DIR:-$root/target}/debug/kafka-config-operator}"
op_pid=""
op_log=""
op_port=""
start_chart_operator() { # deployment-name sa-name log
  local deployment=$1 sa_name=$2 token_kc
  op_log=$3
  op_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  token_kc="$(e2e_sa_token_kubeconfig "$ns" "$sa_name")" || return 1
  local op_args=()
  while IFS= read -r a; do
    case "$a" in
      --metrics-address=*) op_args+=("--metrics-address=127.0.0.1:$op_port") ;;
      ?*) op_args+=("$a") ;;
    esac
  done < <(k -n "$ns" get "deployment/$deployment" -o json |
    python3 -c 'import json,sys; print("\n".join(json.load(sys.stdin)["spec"]["template"]["spec"]["containers"][0]["args"]))')
  # The container's literal env (KCO_LOG_FORMAT, RUST_LOG from logFormat/logLevel) as the pod has it.
  local op_env=()
  while IFS= read -r a; do [[ -n "$a" ]] && op_env+=("$a"); done < <(k -n "$ns" get "deployment/$deployment" -o json |
    python3 -c 'import json,sys; [print(e["name"] + "=" + e["value"]) for e in json.load(sys.stdin)["spec"]["template"]["spec"]["containers"][0].get("env", []) if "value" in e]')
  env KUBECONFIG="$token_kc" POD_NAME="$deployment-e2e" POD_NAMESPACE="$ns" "${op_env[@]}" \
    "$op_bin" run "${op_args[@]}" >"$op_log" 2>&1 &
  op_pid=$!
}
# Not inside `check` (a subshell): op_pid and op_log must stay set in this shell.
operator_ready() { eventually 60 curl -fsS "http://127.0.0.1:$op_port/readyz"; }
stop_chart_operator() {
  [[ -n "$op_pid" ]] && kill "$op_pid" 2>/dev/null && wait "$op_pid" 2>/dev/null
  op_pid=""
}
trap stop_chart_operator EXIT
# A KafkaToolConfig as Argo CD would apply it (tracking label and annotation on it), with its
# source ConfigMap.
apply_config() { # namespace name
  k apply -f - >/dev/null <<EOF
apiVersion: v1
kind: ConfigMap
metadata: {name: $2-base, namespace: $1}
data:
  client.properties: |
    bootstrap.servers=kafka-0.kafka:9092
    linger.ms=5
---
apiVersion: kafkaconfig.dev/v1alpha1
kind: KafkaToolConfig
metadata:
  name: $2
  namespace: $1
  labels: {app.kubernetes.io/instance: argo-app}
  annotations: {argocd.argoproj.io/tracking-id: "argo-app:kafkaconfig.dev/KafkaToolConfig:$1/$2"}
spec:
  tool: kafka-console-producer
  args: {topic: orders}
  configFiles: [{configMapKeyRef: {name: $2-base, key: client.properties}}]
EOF
}
ready_of() { k -n "$1" get kafkatoolconfig "$2" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null; }
is_ready() { [[ "$(ready_of "$1" "$2")" == True ]]; }
# The operator never needed a permission it lacks: no authorization error in its log.
no_denials() { [[ -s "$op_log" ]] && ! grep -Eiq 'forbidden|code: 403' "$op_log"; }

echo "# static checks"
check "helm lint (defaults)" h lint --strict "$chart"
check "helm lint (namespaced mode)" h lint --strict "$chart" --set 'watchNamespaces={team-a,team-b}'
check "chart crds/ equals crds/kafkaconfig.dev_crds.yaml (charts/kafka-config-operator/sync-crds.sh)" \
  "$chart/sync-crds.sh" --check

out="$(h template x "$chart" --set replicas=zero 2>&1)"
check_fails "schema rejects replicas=zero" h template x "$chart" --set replicas=zero
check_contains "  ... with a message naming /replicas" "at '/replicas': got string, want integer" "$out"
out="$(h template x "$chart" --set replicas=0 2>&1)"
check_contains "schema rejects replicas=0 (minimum 1)" "at '/replicas': minimum: got 0, want 1" "$out"
out="$(h template x "$chart" --set 'watchNamespaces={Team_A}' 2>&1)"
check_contains "schema rejects a watchNamespace that is not DNS-1123" "at '/watchNamespaces/0'" "$out"
out="$(h template x "$chart" --set image.pullPolicy=Sometimes 2>&1)"
check_contains "schema rejects image.pullPolicy outside the enum" "value must be one of 'Always', 'IfNotPresent', 'Never'" "$out"
out="$(h template x "$chart" --set nosuchkey=1 2>&1)"
check_contains "schema rejects unknown top-level keys" "additional properties 'nosuchkey' not allowed" "$out"
out="$(h template x "$chart" --set leaderElection.enabled=false 2>&1)"
check_contains "replicas > 1 without leader election is refused" "needs leaderElection.enabled=true" "$out"
check "replicas=1 without leader election renders" h template x "$chart" --set replicas=1 --set leaderElection.enabled=false
out="$(h template x "$chart" --set metrics.serviceMonitor.enabled=true 2>&1)"
check_contains "ServiceMonitor rendered when enabled" "kind: ServiceMonitor" "$out"

# OpenShift's restricted SCC assigns the UID: the chart must render without any fixed ID.
openshift=(--set podSecurityContext.runAsUser=null --set podSecurityContext.runAsGroup=null
           --set securityContext.runAsUser=null --set securityContext.runAsGroup=null)
out="$(h template x "$chart" "${openshift[@]}" 2>&1)"
check_eq "OpenShift values: no runAsUser/runAsGroup rendered" "" "$(grep -E 'runAs(User|Group):' <<<"$out")"
check_contains "  ... runAsNonRoot and the restricted profile stay" "runAsNonRoot: true" "$out"
check "  ... and the API server accepts it (dry run)" \
  bash -c "'$HELM' template x '$chart' -n $ns ${openshift[*]} | '$KUBECTL' apply --dry-run=server -f -"
out="$(h template x "$chart" --set logLevel=debug --set logFormat=text 2>&1)"
check_contains "logFormat=text sets KCO_LOG_FORMAT" $'name: KCO_LOG_FORMAT\n              value: "text"' "$out"
check_contains "logLevel=debug sets RUST_LOG" $'name: RUST_LOG\n              value: "debug,kube=warn"' "$out"
out="$(h template x "$chart" --set-json 'extraEnv=[{"name":"RUST_LOG","value":"trace"}]' 2>&1)"
check_eq "an extraEnv RUST_LOG replaces logLevel's (one RUST_LOG)" 1 "$(grep -c 'name: RUST_LOG' <<<"$out")"
out="$(h template x "$chart" --set logFormat=xml 2>&1)"
check_contains "schema rejects logFormat=xml" "at '/logFormat': value must be one of 'json', 'text'" "$out"
# As a subchart: a parent with `global` values and a `condition:` on this chart's `enabled`.
parent="$E2E_RUN_DIR/chart-parent"
rm -rf "$parent"; mkdir -p "$parent"
cat >"$parent/Chart.yaml" <<PARENT
apiVersion: v2
name: platform
version: 1.0.0
dependencies:
  - name: kafka-config-operator
    version: "$(awk '$1 == "version:" { print $2 }' "$chart/Chart.yaml")"
    repository: "file://$chart"
    condition: kafka-config-operator.enabled
PARENT
printf 'global:\n  imageRegistry: registry.example.com\nkafka-config-operator:\n  enabled: true\n' >"$parent/values.yaml"
check "subchart: helm dependency update (file://)" h dependency update "$parent"
out="$(h template p "$parent" 2>&1)"
check_contains "subchart: renders with the parent's global values (schema accepts global, enabled)" "kind: Deployment" "$out"
out="$(h template p "$parent" --set kafka-config-operator.enabled=false 2>&1)"
check_eq "subchart: condition enabled=false leaves it out" "" "$(grep -E '^kind: Deployment' <<<"$out")"

# The operator engineer keeps the verbs the code uses in e2e/rbac/cluster.yaml; the chart must grant
# the same (group, resource, verb) set, leases included, no more and no less.
rbac_matches() {
  "$HELM" template "$rel" "$chart" -n "$ns" --set userRoles.create=false | python3 -c '
import sys, yaml
def triples(docs):
    out = set()
    for d in docs:
        if d and d.get("kind") in ("ClusterRole", "Role"):
            for r in d.get("rules", []):
                for g in r.get("apiGroups", []):
                    for res in r.get("resources", []):
                        for v in r.get("verbs", []):
                            out.add((g, res, v))
    return out
chart = triples(yaml.safe_load_all(sys.stdin))
ref = triples(yaml.safe_load_all(open(sys.argv[1])))
if chart != ref:
    print("only in the chart:", sorted(chart - ref)); print("only in e2e/rbac/cluster.yaml:", sorted(ref - chart))
    sys.exit(1)
' "$root/e2e/rbac/cluster.yaml"
}
check "chart RBAC grants exactly the verbs listed in e2e/rbac/cluster.yaml" rbac_matches

echo "# server-side dry run of the rendered chart"
check "helm template | kubectl apply --dry-run=server (cluster mode)" \
  bash -c "'$HELM' template $rel '$chart' -n $ns | '$KUBECTL' apply --dry-run=server -f -"
check "helm template | kubectl apply --dry-run=server (namespaced mode)" \
  bash -c "'$HELM' template $tenant '$chart' -n $ns --set 'watchNamespaces={team-a}' --set userRoles.create=false | '$KUBECTL' apply --dry-run=server -f -"

echo "# install, cluster mode"
check "helm install $rel" h install "$rel" "$chart" -n "$ns" --create-namespace
full=$rel-kafka-config-operator
for obj in "deployment/$full" "serviceaccount/$full" "service/$full-metrics" "poddisruptionbudget/$full" \
           "role/$full-leader-election" "rolebinding/$full-leader-election" \
           "role/$full-hash-key" "rolebinding/$full-hash-key"; do
  check "$obj exists in $ns" k -n "$ns" get "$obj"
done
for obj in "clusterrole/$full" "clusterrolebinding/$full" clusterrole/kafkaconfig-view clusterrole/kafkaconfig-edit \
           clusterrole/kafkaconfig-global-admin crd/kafkatoolconfigs.kafkaconfig.dev crd/globalclientdefaults.kafkaconfig.dev; do
  check "$obj exists" k get "$obj"
done
dep() { k -n "$ns" get "deployment/$full" -o jsonpath="$1"; }
check_eq "replicas default 2" 2 "$(dep '{.spec.replicas}')"
args="$(dep '{.spec.template.spec.containers[0].args}')"
check_contains "leader election on" '--leader-election=true' "$args"
check_contains "lease named after the release" "--lease-name=$full" "$args"
check_contains "hash-key Secret named after the release" "--hash-key-secret=$full-hash-key" "$args"
check_eq "POD_NAME from the downward API" metadata.name "$(dep '{.spec.template.spec.containers[0].env[?(@.name=="POD_NAME")].valueFrom.fieldRef.fieldPath}')"
check_eq "POD_NAMESPACE from the downward API" metadata.namespace "$(dep '{.spec.template.spec.containers[0].env[?(@.name=="POD_NAMESPACE")].valueFrom.fieldRef.fieldPath}')"
check_eq "liveness /healthz on port metrics" "/healthz metrics" "$(dep '{.spec.template.spec.containers[0].livenessProbe.httpGet.path} {.spec.template.spec.containers[0].livenessProbe.httpGet.port}')"
check_eq "readiness /readyz on port metrics" "/readyz metrics" "$(dep '{.spec.template.spec.containers[0].readinessProbe.httpGet.path} {.spec.template.spec.containers[0].readinessProbe.httpGet.port}')"
check_eq "resources set" "64Mi 256Mi" "$(dep '{.spec.template.spec.containers[0].resources.requests.memory} {.spec.template.spec.containers[0].resources.limits.memory}')"
check_eq "container securityContext" "true 65532 true false [\"ALL\"] RuntimeDefault" \
  "$(dep '{.spec.template.spec.containers[0].securityContext.runAsNonRoot} {.spec.template.spec.containers[0].securityContext.runAsUser} {.spec.template.spec.containers[0].securityContext.readOnlyRootFilesystem} {.spec.template.spec.containers[0].securityContext.allowPrivilegeEscalation} {.spec.template.spec.containers[0].securityContext.capabilities.drop} {.spec.template.spec.containers[0].securityContext.seccompProfile.type}')"
check_eq "pod securityContext" "true 65532 RuntimeDefault" "$(dep '{.spec.template.spec.securityContext.runAsNonRoot} {.spec.template.spec.securityContext.runAsUser} {.spec.template.spec.securityContext.seccompProfile.type}')"
check_eq "metrics Service targets port metrics" metrics "$(k -n "$ns" get "service/$full-metrics" -o jsonpath='{.spec.ports[0].targetPort}')"
check_eq "no wildcard in the operator's roles" "" \
  "$(k get "clusterrole/$full" -o json | grep -n '"\*"'; k -n "$ns" get "role/$full-leader-election" -o json | grep -n '"\*"'; k -n "$ns" get "role/$full-hash-key" -o json | grep -n '"\*"')"

echo "# RBAC of the operator's ServiceAccount (cluster mode)"
sa="$(e2e_sa_kubeconfig "$ns" "$full")"
can() { "$KUBECTL" --kubeconfig="$sa" auth can-i "$@" >/dev/null 2>&1; }
yes_() { local d="$*"; check "can-i $d" can "$@"; }
no_() { local d="$*"; check_fails "cannot $d" can "$@"; }
for verb in list watch; do yes_ "$verb" kafkatoolconfigs.kafkaconfig.dev -A; done
# Evaluations build the next status from the cache: no read of a config is needed (issue 7).
no_ get kafkatoolconfigs.kafkaconfig.dev -A
yes_ patch kafkatoolconfigs.kafkaconfig.dev --subresource=status -n team-b
for verb in list watch; do yes_ "$verb" globalclientdefaults.kafkaconfig.dev; done
yes_ patch globalclientdefaults.kafkaconfig.dev --subresource=status
for res in configmaps secrets; do
  for verb in get list watch create patch delete; do yes_ "$verb" "$res" -n team-b; done
done
for verb in list watch; do yes_ "$verb" namespaces; done
for res in deployments statefulsets daemonsets; do
  for verb in get list watch patch; do yes_ "$verb" "$res.apps" -n team-b; done
done
yes_ create events.events.k8s.io -n team-b
# Events are created, never patched into a series (src/operator/events.rs).
no_ patch events.events.k8s.io -n team-b
yes_ create leases.coordination.k8s.io -n "$ns"
for verb in get patch; do yes_ "$verb" "leases.coordination.k8s.io/$full" -n "$ns"; done
no_ patch leases.coordination.k8s.io/someone-elses-lease -n "$ns"
no_ create leases.coordination.k8s.io -n team-b
yes_ get "secrets/$full-hash-key" -n "$ns"
yes_ create secrets -n "$ns"
no_ delete namespaces
no_ create clusterroles.rbac.authorization.k8s.io
no_ create rolebindings.rbac.authorization.k8s.io -n team-b
no_ create globalclientdefaults.kafkaconfig.dev
no_ update kafkatoolconfigs.kafkaconfig.dev -n team-b
no_ delete kafkatoolconfigs.kafkaconfig.dev -n team-b
no_ update configmaps -n team-b
no_ delete deployments.apps -n team-b
no_ create pods -n team-b

echo "# the operator runs as the chart's ServiceAccount (cluster mode, real token, the Deployment's args)"
start_chart_operator "$full" "$full" "$E2E_RUN_DIR/chart-operator-cluster.log"
check "operator ready as $full (binary: ${op_bin#"$root"/})" operator_ready
apply_config team-b orders
check "team-b/orders rendered: Ready=True" eventually 60 is_ready team-b orders
check_eq "the operator created its content-hash key Secret (32 bytes)" 32 \
  "$(k -n "$ns" get "secret/$full-hash-key" -o jsonpath='{.data.key}' | base64 -d | wc -c | xargs)"
check_contains "the output's hash is keyed" "hmac-sha256:" \
  "$(k -n team-b get configmap orders-kafka -o jsonpath='{.metadata.annotations.kafkaconfig\.dev/config-hash}')"
check_eq "team-b/orders output carries the config hash" \
  "$(k -n team-b get kafkatoolconfig orders -o jsonpath='{.status.configHash}')" \
  "$(k -n team-b get configmap orders-kafka -o jsonpath='{.metadata.annotations.kafkaconfig\.dev/config-hash}')"
check_eq "the output carries no Argo CD tracking label or annotation" "" \
  "$(k -n team-b get configmap orders-kafka -o json | grep -E 'argocd.argoproj.io|"app.kubernetes.io/instance"')"
check "no authorization error in the operator's log" no_denials
check "logFormat=json (default): every log line is a JSON object" \
  python3 -c 'import json,sys; [json.loads(l) for l in open(sys.argv[1]) if l.strip()]' "$op_log"
check_fails "a request outside the role is denied (get pods in team-b with the chart's token)" \
  k --kubeconfig="$(e2e_sa_token_kubeconfig "$ns" "$full")" -n team-b get pods
stop_chart_operator
k -n team-b delete kafkatoolconfig orders --wait=false >/dev/null

echo "# install, namespaced mode (watchNamespaces={team-a})"
check "helm install $tenant --set watchNamespaces={team-a}" \
  h install "$tenant" "$chart" -n "$ns" --set 'watchNamespaces={team-a}' --set userRoles.create=false --set logFormat=text
tfull=$tenant-kafka-config-operator
check_eq "namespaced Roles of $tenant: team-a (watched) and $ns (leader Lease, hash key) only" \
  "$ns/$tfull-hash-key $ns/$tfull-leader-election team-a/$tfull" \
  "$(k get roles -A -l app.kubernetes.io/instance=$tenant -o jsonpath='{range .items[*]}{.metadata.namespace}/{.metadata.name}{" "}{end}' | xargs)"
check_eq "RoleBindings of $tenant: team-a and $ns only" \
  "$ns/$tfull-hash-key $ns/$tfull-leader-election team-a/$tfull" \
  "$(k get rolebindings -A -l app.kubernetes.io/instance=$tenant -o jsonpath='{range .items[*]}{.metadata.namespace}/{.metadata.name}{" "}{end}' | xargs)"
check_eq "the ClusterRole of $tenant covers only cluster-scoped kinds" "globalclientdefaults globalclientdefaults/status namespaces" \
  "$(k get clusterrole "$tfull" -o jsonpath='{range .rules[*]}{.resources[*]}{" "}{end}' | xargs)"
check_contains "--watch-namespace=team-a passed" "--watch-namespace=team-a" \
  "$(k -n "$ns" get "deployment/$tfull" -o jsonpath='{.spec.template.spec.containers[0].args}')"
tsa="$(e2e_sa_kubeconfig "$ns" "$tfull")"
tcan() { "$KUBECTL" --kubeconfig="$tsa" auth can-i "$@" >/dev/null 2>&1; }
for a in "get secrets -n team-a" "patch configmaps -n team-a" "list kafkatoolconfigs.kafkaconfig.dev -n team-a" \
         "patch kafkatoolconfigs.kafkaconfig.dev --subresource=status -n team-a" "patch deployments.apps -n team-a" \
         "create events.events.k8s.io -n team-a" "list globalclientdefaults.kafkaconfig.dev" \
         "patch globalclientdefaults.kafkaconfig.dev --subresource=status" "watch namespaces" \
         "create leases.coordination.k8s.io -n $ns" "patch leases.coordination.k8s.io/$tfull -n $ns" \
         "get secrets/$tfull-hash-key -n $ns" "create secrets -n $ns"; do
  # shellcheck disable=SC2086
  check "tenant can-i $a" tcan $a
done
for a in "get secrets -n team-b" "list secrets -A" "list configmaps -n team-b" "list kafkatoolconfigs.kafkaconfig.dev -n team-b" \
         "list kafkatoolconfigs.kafkaconfig.dev -A" "patch deployments.apps -n team-b" "delete namespaces" \
         "create clusterroles.rbac.authorization.k8s.io" "patch leases.coordination.k8s.io/$full -n $ns" \
         "get secrets/$full-hash-key -n $ns" "list secrets -n $ns" "update secrets/$tfull-hash-key -n $ns" \
         "delete secrets/$tfull-hash-key -n $ns"; do
  # shellcheck disable=SC2086
  check_fails "tenant cannot $a" tcan $a
done

echo "# the operator runs as the tenant's ServiceAccount (namespaced mode: --watch-namespace=team-a)"
start_chart_operator "$tfull" "$tfull" "$E2E_RUN_DIR/chart-operator-tenant.log"
check "operator ready as $tfull" operator_ready
apply_config team-a payments
apply_config team-b invoices
check "team-a/payments (watched) rendered: Ready=True" eventually 60 is_ready team-a payments
check "team-a/payments output exists" k -n team-a get configmap payments-kafka
check "the tenant operator created its own content-hash key Secret" k -n "$ns" get "secret/$tfull-hash-key"
sleep 3
check_eq "team-b/invoices (not watched) untouched: no status, no output" "|NotFound" \
  "$(ready_of team-b invoices)|$(k -n team-b get configmap invoices-kafka 2>&1 | grep -o NotFound)"
check "no authorization error in the tenant operator's log" no_denials
check_fails "logFormat=text: the tenant operator's log is text, not JSON" \
  python3 -c 'import json,sys; json.loads(open(sys.argv[1]).readline())' "$op_log"
check_fails "a request outside the tenant's Roles is denied (list secrets in team-b)" \
  k --kubeconfig="$(e2e_sa_token_kubeconfig "$ns" "$tfull")" -n team-b get secrets
stop_chart_operator
k -n team-a delete kafkatoolconfig payments --wait=false >/dev/null
k -n team-b delete kafkatoolconfig invoices --wait=false >/dev/null
k -n team-a delete configmap payments-base >/dev/null
k -n team-b delete configmap invoices-base orders-base >/dev/null

echo "# aggregated user roles (kube-controller-manager aggregates them into view/edit/admin)"
k -n team-a create rolebinding kco-e2e-alice-edit --clusterrole=edit --user=kco-e2e-alice >/dev/null 2>&1
k -n team-a create rolebinding kco-e2e-victor-view --clusterrole=view --user=kco-e2e-victor >/dev/null 2>&1
ascan() { local who=$1; shift; "$KUBECTL" auth can-i "$@" --as="$who" >/dev/null 2>&1; }
check "edit aggregates kafkaconfig-edit: alice can create KafkaToolConfigs in team-a" \
  eventually 20 ascan kco-e2e-alice create kafkatoolconfigs.kafkaconfig.dev -n team-a
check "view aggregates kafkaconfig-view: victor can list KafkaToolConfigs in team-a" \
  eventually 20 ascan kco-e2e-victor list kafkatoolconfigs.kafkaconfig.dev -n team-a
check_fails "view cannot create KafkaToolConfigs" ascan kco-e2e-victor create kafkatoolconfigs.kafkaconfig.dev -n team-a
check_fails "edit cannot create GlobalClientDefaults" ascan kco-e2e-alice create globalclientdefaults.kafkaconfig.dev
check_fails "edit cannot patch KafkaToolConfig status" ascan kco-e2e-alice patch kafkatoolconfigs.kafkaconfig.dev --subresource=status -n team-a
k create clusterrolebinding kco-e2e-carol-global --clusterrole=kafkaconfig-global-admin --user=kco-e2e-carol >/dev/null 2>&1
check "kafkaconfig-global-admin can create GlobalClientDefaults" ascan kco-e2e-carol create globalclientdefaults.kafkaconfig.dev
check_eq "kafkaconfig-global-admin is not aggregated" "" "$(k get clusterrole kafkaconfig-global-admin -o jsonpath='{.metadata.labels}' | grep -o 'aggregate-to[^"]*')"
k -n team-a delete rolebinding kco-e2e-alice-edit kco-e2e-victor-view >/dev/null 2>&1
k delete clusterrolebinding kco-e2e-carol-global >/dev/null 2>&1

echo "# upgrade"
check "helm upgrade $rel --set replicas=3 --set metrics.port=9090" \
  h upgrade "$rel" "$chart" -n "$ns" --reuse-values --set replicas=3 --set metrics.port=9090
check_eq "replicas now 3" 3 "$(dep '{.spec.replicas}')"
check_contains "metrics address follows metrics.port" "--metrics-address=0.0.0.0:9090" "$(dep '{.spec.template.spec.containers[0].args}')"
check_eq "container port metrics now 9090" 9090 "$(dep '{.spec.template.spec.containers[0].ports[?(@.name=="metrics")].containerPort}')"
check_eq "release revision 2" 2 "$(h list -n "$ns" -f "^$rel\$" -o json | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["revision"])')"

echo "# uninstall"
check "helm uninstall $rel" h uninstall "$rel" -n "$ns" --wait --timeout 60s
check "helm uninstall $tenant" h uninstall "$tenant" -n "$ns" --wait --timeout 60s
leftovers() {
  local inst=$1
  k get deployments,replicasets,pods,services,endpointslices,serviceaccounts,poddisruptionbudgets,roles,rolebindings -A \
    -l "app.kubernetes.io/instance=$inst" -o name 2>/dev/null
  k get clusterroles,clusterrolebindings -l "app.kubernetes.io/instance=$inst" -o name 2>/dev/null
}
no_leftovers() { [[ -z "$(leftovers "$1")" ]]; }
check "no object of $rel left (incl. ReplicaSets/Pods the controller-manager made)" eventually 30 no_leftovers "$rel"
check "no object of $tenant left" eventually 30 no_leftovers "$tenant"
[[ -z "$(leftovers "$rel")$(leftovers "$tenant")" ]] || leftovers "$rel" | sed 's/^/         left: /'
check_fails "aggregated roles removed with their release" k get clusterrole kafkaconfig-view
check "CRD kafkatoolconfigs.kafkaconfig.dev kept" k get crd kafkatoolconfigs.kafkaconfig.dev
check "CRD globalclientdefaults.kafkaconfig.dev kept" k get crd globalclientdefaults.kafkaconfig.dev

echo "# install.yaml (the chart rendered by scripts/gen-install.sh): drift, kubectl apply -f, the operator it describes"
check "install.yaml is what the chart renders (bash scripts/gen-install.sh)" env HELM="$HELM" bash "$root/scripts/gen-install.sh" --check
check "kubectl apply -f install.yaml" k apply -f "$root/install.yaml"
check "the CRDs of install.yaml are established" \
  k wait --for=condition=Established --timeout=60s crd/kafkatoolconfigs.kafkaconfig.dev crd/globalclientdefaults.kafkaconfig.dev
start_chart_operator kafka-config-operator kafka-config-operator "$E2E_RUN_DIR/chart-operator-install-yaml.log"
check "the operator of install.yaml is ready (its args, env and ServiceAccount token)" operator_ready
apply_config team-b shipped
check "team-b/shipped rendered by it: Ready=True" eventually 60 is_ready team-b shipped
check "no authorization error in its log" no_denials
stop_chart_operator
k -n team-b delete kafkatoolconfig shipped --wait=false >/dev/null
k -n team-b delete configmap shipped-base >/dev/null
# Everything but the Namespace and the CRDs (other suites use both).
check "kubectl delete of what install.yaml created" \
  k delete -f "$root/install.yaml" -l app.kubernetes.io/instance=kafka-config-operator --wait=false

echo "# Argo CD health checks, run by Argo CD's own code (e2e/argocd: argo-cd/v3 util/lua)"
argocd_bin="$(bash "$root/e2e/go-tool.sh" argocd)" || fail "could not build e2e/argocd"
dirs=("$chart"/argocd/*/*/)
while IFS= read -r line; do
  case "$line" in
    "ok     - "*) pass "${line#ok     - }" ;;
    "FAILED - "*) fail "${line#FAILED - }" ;;
    *) fail "e2e/argocd: unexpected output: $line" ;;
  esac
done < <("$argocd_bin" "${dirs[@]%/}" 2>&1)

embedded() {
  python3 - "$root" <<'PY'
import sys
root = sys.argv[1]
doc = open(root + "/docs/argocd.md").read()
for kind in ("KafkaToolConfig", "GlobalClientDefaults"):
    lua = open(root + "/charts/kafka-config-operator/argocd/kafkaconfig.dev/" + kind + "/health.lua").read()
    block = "".join("    " + l if l.strip() else "\n" for l in lua.splitlines(True))
    if block not in doc:
        sys.exit("docs/argocd.md does not embed the current " + kind + "/health.lua")
PY
}
check "docs/argocd.md embeds both health.lua verbatim" embedded

echo "# Dockerfile"
# The toolchains stage of scripts/test.sh installs hadolint; a missing linter is a failure, not a skip.
check "hadolint Dockerfile" hadolint "$root/Dockerfile"

echo "# release workflow (.github/workflows/release.yml cannot run here: lint it, run its steps that can)"
actionlint_bin="$(bash "$root/e2e/go-tool.sh" actionlint)" || fail "could not build e2e/actionlint"
check "actionlint .github/workflows/release.yml (with shellcheck on its run: scripts)" \
  "$actionlint_bin" -shellcheck="$(command -v shellcheck)" "$root/.github/workflows/release.yml"
while IFS= read -r line; do
  case "$line" in
    "ok     - "*) pass "${line#ok     - }" ;;
    "FAILED - "*) fail "${line#FAILED - }" ;;
    *) fail "check_workflow.py: $line" ;;
  esac
done < <(python3 "$root/.github/release/check_workflow.py" 2>&1)
check "hadolint .github/release/Dockerfile" hadolint "$root/.github/release/Dockerfile"
version="$(awk -F'"' '/^version *=/ { print $2; exit }' "$root/Cargo.toml")"
check_eq "versions.sh v$version (the tag of this version) prints it" "$version" "$(bash "$root/.github/release/versions.sh" "v$version")"
check_fails "versions.sh refuses a tag that is not the sources' version" bash "$root/.github/release/versions.sh" v999.0.0
release_dir="$E2E_RUN_DIR/release"
rm -rf "$release_dir"; mkdir -p "$release_dir"
check "helm package (the chart job's step)" h package "$chart" --destination "$release_dir"
check "helm lint --strict of the package" h lint --strict "$release_dir/kafka-config-operator-$version.tgz"
env HELM="$HELM" bash "$root/scripts/gen-install.sh" --set image.repository=ghcr.io/example/kafka-config-operator \
  --set "image.tag=$version" >"$release_dir/install.yaml"
check_contains "the release install.yaml names the released image" \
  "image: \"ghcr.io/example/kafka-config-operator:$version\"" "$(cat "$release_dir/install.yaml")"
check "the release install.yaml passes a server-side dry run" k apply --dry-run=server -f "$release_dir/install.yaml"

e2e_finish
