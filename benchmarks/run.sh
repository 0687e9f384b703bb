#!/usr/bin/env bash
# Runs the benchmarks of issue 8 and writes docs/BENCHMARKS.md with its PNG plots.
#
#   benchmarks/run.sh                       everything (B1, B3, B4, B5, B7, B8 on all backends), about 25 min on 2 cores
#   benchmarks/run.sh --quick               a smoke run of everything, about 5 min (fewer, shorter rounds)
#   benchmarks/run.sh --only b1,b3 --backends redis,postgres      a part (b1, b3, b4 with b7, b5, b8); backends: redis,
#                                           postgres, etcd, zookeeper (the default set) and mariadb (only when named)
#   benchmarks/run.sh --quick --only b8     B8, the new primitives (semaphore, read-write lock, fair lock) against
#                                           Redisson and Curator, a few minutes
#   benchmarks/run.sh ... --out DIR         where BENCHMARKS.md and the PNGs go
#   benchmarks/run.sh ... --offline         pass -o to Maven (dependencies already downloaded)
#
# A complete run writes to docs/; a partial run writes to benchmarks/target/report/ unless --out is given.
# The servers are started like the tests start them: the reactive-locks-test fixtures run the Debian-packaged
# redis-server, postgres, etcd, zookeeper and mariadbd as child processes on random loopback ports (.ci/install-servers.sh
# installs them). Nothing is left running afterwards.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

quick=false
only="b1,b3,b4,b5,b8"
backends="redis,postgres,etcd,zookeeper"
out=""
offline=()
extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) quick=true ;;
    --only) only=$(echo "$2" | tr 'A-Z' 'a-z'); shift ;;
    --backends) backends=$(echo "$2" | tr 'A-Z' 'a-z'); shift ;;
    --out) out="$2"; shift ;;
    --offline) offline=(-o) ;;
    --contenders) extra+=(--contenders "$2"); shift ;;
    -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
    *) echo "run.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done

has() { [[ ",$only," == *",$1,"* ]]; }
if has b7 && ! has b4; then only="$only,b4"; fi
complete=false
if has b1 && has b3 && has b4 && has b5 && has b8 && [ "$backends" = "redis,postgres,etcd,zookeeper" ] && [ ${#extra[@]} -eq 0 ]; then
  complete=true
fi
if [ -z "$out" ]; then
  if $complete; then out="$root/docs"; else out="$root/benchmarks/target/report"; fi
fi
mkdir -p "$out"

command="benchmarks/run.sh"
$quick && command="$command --quick"
$complete || command="$command --only $only --backends $backends"
started=$(date +%s)
revision="$(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
if ! git diff --quiet HEAD 2>/dev/null; then revision="$revision + uncommitted changes in the work tree"; fi

# package, not install: the classpath points at this work tree's jars, so nothing goes into the shared ~/.m2
# (two checkouts benchmarking at once do not see each other's snapshots). The reactor writes the classpath of every
# module it builds to the same file; benchmarks is built last, so its classpath is what stays.
echo "run.sh: building (./mvnw -pl benchmarks -am package -DskipTests)" >&2
./mvnw -q -B "${offline[@]}" -pl benchmarks -am package -DskipTests dependency:build-classpath \
    -Dmdep.outputFile="$root/benchmarks/target/classpath.txt" >/dev/null
cp="$root/benchmarks/target/classes:$(cat "$root/benchmarks/target/classpath.txt")"
java=java
[ -n "${JAVA_HOME:-}" ] && java="$JAVA_HOME/bin/java"

jmh_csv="$root/benchmarks/target/b5.csv"
rm -f "$jmh_csv"
if has b5; then
  if $quick; then jmh_opts=(-wi 2 -w 1s -i 3 -r 1s -f 1); else jmh_opts=(-wi 3 -w 2s -i 5 -r 2s -f 1); fi
  echo "run.sh: B5 (JMH EngineOverheadBenchmark -prof gc)" >&2
  "$java" -cp "$cp" org.openjdk.jmh.Main 'EngineOverheadBenchmark' -prof gc "${jmh_opts[@]}" \
      -rf csv -rff "$jmh_csv" -jvmArgsAppend "-Xmx1g" >&2
fi

load_only=""
for b in b1 b3 b4 b8; do has "$b" && load_only="$load_only,$b"; done
load_only="${load_only#,}"
if [ -z "$load_only" ]; then load_backends=none; load_only=none; else load_backends="$backends"; fi
quick_flag=()
$quick && quick_flag=(--quick)

echo "run.sh: load harness ($load_only on $load_backends)" >&2
"$java" -Xms3g -Xmx3g -XX:+UseG1GC -Djava.awt.headless=true -Duser.language=en -Duser.country=US \
    -cp "$cp" io.reactivelocks.benchmarks.load.LoadHarness "${quick_flag[@]}" --only "$load_only" \
    --backends "$load_backends" --out "$out" --jmh "$jmh_csv" --command "$command" --started "$started" \
    --revision "$revision" "${extra[@]}"

echo "run.sh: done in $(( ($(date +%s) - started) / 60 )) min $(( ($(date +%s) - started) % 60 )) s; report: $out/BENCHMARKS.md" >&2
