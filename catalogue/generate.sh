#!/usr/bin/env bash
# Regenerate catalogue/kafka-configs.json from Apache Kafka's own ConfigDefs.
#
# and catalogue/kafka-tool-options.json from the tools' own option parsers (one table per
# release line: the pinned release, and OLDER_KAFKA_VERSION for the lines before 4.2).
#
#   catalogue/generate.sh              # rewrites catalogue/kafka-configs.json and kafka-tool-options.json
#   catalogue/generate.sh OUT.json [OPTIONS_OUT.json]   # writes elsewhere (check.sh uses this)
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
options_out=${2:-"$(dirname "$out")/kafka-tool-options.json"}
m2=${CATALOGUE_M2:-"$root/.cache/m2"}   # override only to time a cold run

pom_version=$(sed -n 's:.*<kafka.version>\(.*\)</kafka.version>.*:\1:p' "$gen/pom.xml")
version=${KAFKA_VERSION:-$pom_version}
# The newest 4.1.x: its tools have the option names from before KIP-1147 (catalogue/README.md,
# "Release lines"). It is read from its own classpath in its own JVM.
older_version=${OLDER_KAFKA_VERSION:-4.1.2}
# tools.yaml's commandConfigSince: where the newer line starts
since=$(sed -n 's/^commandConfigSince: "\(.*\)"$/\1/p' "$root/catalogue/tools.yaml")
[ -n "$since" ] || { echo "catalogue/generate.sh: no commandConfigSince in tools.yaml" >&2; exit 1; }

mkdir -p "$gen/target"
log="$gen/target/mvn.log"
if ! mvn -B -f "$gen/pom.xml" "-Dmaven.repo.local=$m2" "-Dkafka.version=$version" \
    compile dependency:build-classpath "-Dmdep.outputFile=$gen/target/classpath.txt" >"$log" 2>&1; then
  cat "$log" >&2
  echo "catalogue/generate.sh: Maven failed (log above, also in $log)" >&2
  exit 1
fi

# The older release's jars only: no compile, the generator's classes run against them.
if ! mvn -B -f "$gen/pom.xml" "-Dmaven.repo.local=$m2" "-Dkafka.version=$older_version" \
    dependency:build-classpath "-Dmdep.outputFile=$gen/target/classpath-$older_version.txt" >>"$log" 2>&1; then
  cat "$log" >&2
  echo "catalogue/generate.sh: Maven failed for Kafka $older_version (log above, also in $log)" >&2
  exit 1
fi

# The generator compiles against jopt-simple/argparse4j at the versions in its pom; each
# release's kafka-tools must name the same ones, else the parser read is not the tool's.
for v in "$version" "$older_version"; do
  tools_pom="$m2/org/apache/kafka/kafka-tools/$v/kafka-tools-$v.pom"
  for lib in jopt-simple argparse4j; do
    want=$(sed -n "s:.*<$lib.version>\(.*\)</$lib.version>.*:\1:p" "$gen/pom.xml")
    have=$(grep -A2 "<artifactId>$lib</artifactId>" "$tools_pom" | sed -n 's:.*<version>\(.*\)</version>.*:\1:p')
    if [ "$want" != "$have" ]; then
      echo "catalogue/generate.sh: kafka-tools $v uses $lib $have, the generator's pom pins $want" >&2
      exit 1
    fi
  done
done

tmp=$(mktemp "${out}.XXXXXX")
work=$(mktemp -d)
trap 'rm -rf "$tmp" "$work"' EXIT
jvm=(java -Djava.security.manager=allow -Djava.io.tmpdir=/tmp -Dfile.encoding=UTF-8 -Duser.language=en -Duser.country=US
  -Dorg.slf4j.simpleLogger.defaultLogLevel=warn -Dorg.slf4j.simpleLogger.logFile=System.err)
# One JVM per release: each sees only its own Kafka jars.
"${jvm[@]}" -cp "$gen/target/classes:$(cat "$gen/target/classpath.txt")" \
  io.kafkaconfigoperator.catalogue.ToolOptions read "$version" "$since" "$root/catalogue/tools.yaml" "$work/new.json" &
new_pid=$!
"${jvm[@]}" -cp "$gen/target/classes:$(cat "$gen/target/classpath-$older_version.txt")" \
  io.kafkaconfigoperator.catalogue.ToolOptions read "$older_version" "4.0" "$root/catalogue/tools.yaml" "$work/old.json" &
old_pid=$!
# Fixed locale, encoding and tmpdir: streams' state.dir default is ${java.io.tmpdir}/kafka-streams.
java -Djava.io.tmpdir=/tmp -Dfile.encoding=UTF-8 -Duser.language=en -Duser.country=US \
  -Dorg.slf4j.simpleLogger.defaultLogLevel=warn -Dorg.slf4j.simpleLogger.logFile=System.err \
  -cp "$gen/target/classes:$(cat "$gen/target/classpath.txt")" \
  io.kafkaconfigoperator.catalogue.Generate "$version" "$tmp"
wait "$new_pid" || { echo "catalogue/generate.sh: reading the tools of Kafka $version failed" >&2; exit 1; }
wait "$old_pid" || { echo "catalogue/generate.sh: reading the tools of Kafka $older_version failed" >&2; exit 1; }
"${jvm[@]}" -cp "$gen/target/classes" io.kafkaconfigoperator.catalogue.ToolOptions combine "$version" \
  "$work/options.json" "$work/new.json" "$work/old.json"
chmod 0644 "$tmp" "$work/options.json"
mv -f "$tmp" "$out"
mv -f "$work/options.json" "$options_out"
rm -rf "$work"
trap - EXIT
echo "wrote $out and $options_out" >&2
