#!/usr/bin/env bash
# Build benchcast's YCSB bindings (ycsb/, YCSB core + RocksDB + MariaDB JDBC) into one runnable jar.
#
#   scripts/build_ycsb.sh OUT.jar
#
# Run it with java 17 and maven 3.8.7 on PATH (envs/ycsb.yaml). Builds offline when the local Maven
# repository already holds every dependency, else online (first build downloads from Maven Central).
# The build happens in a scratch directory, so concurrent builds and ycsb/target/ do not collide.
# Run the jar with: java -cp OUT.jar site.ycsb.Client -db benchcast.ycsb.RocksDBClient ...
set -euo pipefail
if [ $# -ne 1 ]; then
    echo "usage: $0 OUT.jar" >&2
    exit 2
fi
out=$1
here=$(cd "$(dirname "$0")/.." && pwd)
pom="$here/ycsb/pom.xml"
for prog in java mvn; do
    command -v "$prog" >/dev/null || { echo "build_ycsb: $prog not found on PATH (use envs/ycsb.yaml)" >&2; exit 1; }
done
build=$(mktemp -d "${TMPDIR:-/tmp}/benchcast-ycsb-build.XXXXXX")
trap 'rm -rf "$build" "$build.offline.log"' EXIT
args=(-B -q -f "$pom" "-Dbenchcast.build.dir=$build" package)
if ! mvn -o "${args[@]}" >"$build.offline.log" 2>&1; then
    echo "build_ycsb: offline build failed, building online (downloads from Maven Central)" >&2
    mvn "${args[@]}" >&2
fi
rm -f "$build.offline.log"
mkdir -p "$(dirname "$out")"
cp "$build/benchcast-ycsb.jar" "$out.tmp.$$"
mv -f "$out.tmp.$$" "$out"
echo "build_ycsb: wrote $out" >&2
