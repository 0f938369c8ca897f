#!/usr/bin/env bash
# Argo CD health checks of the chart (charts/kafka-config-operator/argocd/<group>/<Kind>/health.lua)
# against their fixtures (health_test.yaml + testdata/*.yaml, Argo's own test format), with Debian's
# lua5.1 and no `string`/`math` (Argo's sandbox). Installs lua5.1 and PyYAML when missing.
# Ends with "N passed, N failed"; exits non-zero on failure.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
source "$root/e2e/lib.sh"

if ! command -v lua5.1 >/dev/null; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq lua5.1 >/dev/null
fi
python3 -c 'import yaml' 2>/dev/null || python3 -m pip install --quiet pyyaml

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

shopt -s nullglob
dirs=("$root"/charts/kafka-config-operator/argocd/*/*/)
[[ ${#dirs[@]} -gt 0 ]] || fail "no health checks found under charts/kafka-config-operator/argocd"
for dir in "${dirs[@]}"; do
  dir=${dir%/}
  kind="$(basename "$(dirname "$dir")")/$(basename "$dir")"
  cases="$tmp/$(basename "$dir").lua"
  if ! python3 - "$dir" > "$cases" <<'PY'
import sys, os, yaml

def lua(v):
    if v is None:
        return "nil"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        out = []
        for b in v.encode("utf-8"):
            c = chr(b)
            if c in '\\"':
                out.append("\\" + c)
            elif 32 <= b < 127:
                out.append(c)
            else:
                out.append("\\%d" % b)
        return '"' + "".join(out) + '"'
    if isinstance(v, list):
        return "{" + ", ".join(lua(x) for x in v) + "}"
    if isinstance(v, dict):
        return "{" + ", ".join("[%s] = %s" % (lua(str(k)), lua(x)) for k, x in v.items()) + "}"
    raise TypeError(type(v))

d = sys.argv[1]
with open(os.path.join(d, "health_test.yaml")) as f:
    tests = yaml.safe_load(f)["tests"]
print("return {")
for t in tests:
    with open(os.path.join(d, t["inputPath"])) as f:
        obj = yaml.safe_load(f)
    hs = t["healthStatus"]
    print("  {name = %s, status = %s, message = %s, obj = %s}," % (
        lua(t["inputPath"]), lua(hs["status"]), lua(hs.get("message", "")), lua(obj)))
print("}")
PY
  then
    fail "$kind: could not read health_test.yaml or its fixtures"
    continue
  fi
  while IFS= read -r line; do
    case "$line" in
      "ok     - "*) pass "${line#ok     - }" ;;
      "FAILED - "*) fail "${line#FAILED - }" ;;
      *) fail "$kind: unexpected output: $line" ;;
    esac
  done < <(cd "$dir" && lua5.1 "$here/lua_health_test.lua" health.lua "$cases" "$kind" 2>&1)
done
e2e_finish
