#!/usr/bin/env bash
# A release tag must name the version the sources already carry: Cargo.toml's version, and the
# chart's version and appVersion, all equal to the tag without its `v`. Prints that version.
# Run by .github/workflows/release.yml first (nothing is built or pushed on a mismatch), and by
# e2e/chart/test.sh with the current version (and a wrong one).
#
#   bash .github/release/versions.sh v0.1.0    # -> 0.1.0, or exit 1 naming the file that differs
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
tag=${1:?usage: versions.sh TAG (e.g. v0.1.0)}
version=${tag#v}
[[ $tag == v* && $version =~ ^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$ ]] || {
  echo "release tag '$tag' is not v<semver>" >&2; exit 1; }
cargo=$(awk -F'"' '/^version *=/ { print $2; exit }' "$root/Cargo.toml")
chart=$(awk '$1 == "version:" { print $2 }' "$root/charts/kafka-config-operator/Chart.yaml")
app=$(awk '$1 == "appVersion:" { gsub(/"/, "", $2); print $2 }' "$root/charts/kafka-config-operator/Chart.yaml")
status=0
for pair in "Cargo.toml version:$cargo" "Chart.yaml version:$chart" "Chart.yaml appVersion:$app"; do
  if [[ ${pair##*:} != "$version" ]]; then
    echo "$tag does not match ${pair%:*} ${pair##*:}" >&2
    status=1
  fi
done
[[ $status == 0 ]] && echo "$version"
exit $status
