#!/usr/bin/env bash
# Regenerate catalogue/kafka-configs.json from Apache Kafka's own ConfigDefs.
#
#   catalogue/generate.sh              # rewrites catalogue/kafka-configs.json
#   catalogue/generate.sh OUT.json     # writes OUT.json instead (check.sh uses this)
#   KAFKA_VERSION=4.x.y catalogue/generate.sh /tmp/try.json   # try another release
#
# Needs: Java 17+ (java, javac), Maven 3.8+. Jars come from Maven Central into
# <repo>/.cache/m2 (gitignored; CI caches it; CATALOGUE_M2=DIR overrides it).
# The Kafka release is the <kafka.version> property of catalogue/generator/pom.xml.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(git -C "$here" rev-parse --show-toplevel)
gen="$root/catalogue/generator"
out=${1:-"$root/catalogue/kafka-configs.json"}
m2=${CATALOGUE_M2:-"$root/.cache/m2"}   # override only to time a cold run

pom_version=$(sed -n 's:.*<kafka.version>\(.*\)</kafka.version>.*:\1:p' "$gen/pom.xml")
version=${KAFKA_VERSION:-$pom_version}

mkdir -p "$gen/target"
log="$gen/target/mvn.log"
if ! mvn -B -f "$gen/pom.xml" "-Dmaven.repo.local=$m2" "-Dkafka.version=$version" \
    compile dependency:build-classpath "-Dmdep.outputFile=$gen/target/classpath.txt" >"$log" 2>&1; then
  cat "$log" >&2
  echo "catalogue/generate.sh: Maven failed (log above, also in $log)" >&2
  exit 1
fi

tmp=$(mktemp "${out}.XXXXXX")
trap 'rm -f "$tmp"' EXIT
# Fixed locale, encoding and tmpdir: streams' state.dir default is ${java.io.tmpdir}/kafka-streams.
java -Djava.io.tmpdir=/tmp -Dfile.encoding=UTF-8 -Duser.language=en -Duser.country=US \
  -Dorg.slf4j.simpleLogger.defaultLogLevel=warn -Dorg.slf4j.simpleLogger.logFile=System.err \
  -cp "$gen/target/classes:$(cat "$gen/target/classpath.txt")" \
  io.kafkaconfigoperator.catalogue.Generate "$version" "$tmp"
chmod 0644 "$tmp"
mv -f "$tmp" "$out"
trap - EXIT
echo "wrote $out" >&2
