#!/usr/bin/env bash
# Fetch Apache Kafka's command-line tools (org.apache.kafka:kafka-tools) with their runtime
# dependencies, plus slf4j-simple, from Maven Central into <repo>/.cache/kafka-jars/<version>.
#
#   conformance/fetch.sh          # prints the jar directory on stdout
#   conformance/fetch.sh mirror   # MirrorMaker 2's two jars (mirror-pom.xml) into
#                                 # .cache/kafka-jars/<version>-mirror; prints that directory
#
# Maven's local repository is <repo>/.cache/m2 (gitignored, shared with catalogue/generate.sh;
# CONFORMANCE_M2=DIR overrides it). Maven Central only (conformance/pom.xml).
# Cached: when the jar directory is complete (stamp file present) nothing is run.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(git -C "$here" rev-parse --show-toplevel)
pom="$here/pom.xml"
suffix=""
include=()
if [[ "${1:-}" == mirror ]]; then
  # only connect-mirror and connect-mirror-client: the rest is in pom.xml's directory already
  pom="$here/mirror-pom.xml"
  suffix="-mirror"
  include=(-DincludeArtifactIds=connect-mirror,connect-mirror-client)
fi
version=$(sed -n 's:.*<kafka.version>\(.*\)</kafka.version>.*:\1:p' "$pom")
m2=${CONFORMANCE_M2:-"$root/.cache/m2"}   # override only to time a cold run
jars="$root/.cache/kafka-jars/$version$suffix"
stamp="$jars/.complete"

# The stamp records the pom's digest, so editing the pom refetches.
digest=$(sha256sum "$pom" | cut -d' ' -f1)
if [[ -f "$stamp" && "$(cat "$stamp")" == "$digest" ]]; then
  echo "$jars"
  exit 0
fi

rm -rf "$jars"
mkdir -p "$jars" "$root/.cache"
log="$root/.cache/kafka-jars/fetch-$version$suffix.log"
if ! nice mvn -B -f "$pom" "-Dmaven.repo.local=$m2" \
    dependency:copy-dependencies -DincludeScope=runtime "${include[@]}" "-DoutputDirectory=$jars" >"$log" 2>&1; then
  cat "$log" >&2
  echo "conformance/fetch.sh: Maven failed (log above, also in $log)" >&2
  exit 1
fi
if [[ -n "$suffix" ]]; then
  if [[ ! -f "$jars/connect-mirror-$version.jar" || ! -f "$jars/connect-mirror-client-$version.jar" ]]; then
    echo "conformance/fetch.sh: connect-mirror/connect-mirror-client $version missing from $jars" >&2
    exit 1
  fi
elif [[ ! -f "$jars/kafka-tools-$version.jar" || ! -f "$jars/kafka-clients-$version.jar" ]]; then
  echo "conformance/fetch.sh: kafka-tools/kafka-clients $version missing from $jars" >&2
  exit 1
fi
echo "$digest" >"$stamp"
echo "$jars"
