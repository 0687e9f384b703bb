#!/usr/bin/env bash
# Runs every test of every module against real servers. Installs the Debian packages of the
# servers the tests start (redis-server, postgresql, etcd-server, zookeeper) and podman + runc when
# missing, starts podman's Docker-API service and builds the local images (Testcontainers tests);
# the tests start and stop the servers themselves on random loopback ports.
# Three modules build and test at once (-T 3) on the 2-core CI machine: much of the test time is waiting on
# servers, leases and fault cycles, so a third module fills the cores while two wait (measured with one core kept
# busy: -T 2 15:01, -T 3 13:58, both green).
#   ./test.sh [extra maven arguments]
set -euo pipefail
cd "$(dirname "$0")"
if [ -f .ci/install-servers.sh ]; then
  bash .ci/install-servers.sh
fi
# When the javadoc jars are built (see below), Dokka's Kotlin analysis (reactive-locks-kotlin's) runs inside Maven's JVM and needs
# idea.home.path. The POM sets it at prepare-package, but with -T 3 a surefire run of another module that
# started earlier puts back the system properties it saw at its start once its forks end
# (System.setProperties), which can wipe it before Dokka reads it (a loaded run failed "Could not find
# installation home path"). Given at JVM start, it is in every such snapshot.
kt="$PWD/reactive-locks-kotlin/target"
case "$kt" in
  *" "*) ;; # MAVEN_OPTS is split on spaces: the POM's own setting has to do
  *) export MAVEN_OPTS="${MAVEN_OPTS:-} -Didea.home.path=$kt -Didea.config.path=$kt/dokka-idea/config"\
" -Didea.system.path=$kt/dokka-idea/system -Didea.log.path=$kt/dokka-idea/log -Didea.plugins.path=$kt/dokka-idea/plugins" ;;
esac
# Maven's own JVM compiles with C1 only: a build's JVM lives minutes, and C2's compilations cost more CPU than they
# save (measured on a 2-core machine: a clean test-compile of every module took 140 CPU s with C2 and 79 without, and
# 55 s instead of 72-82 s by the clock). The test JVMs get the same from the root POM (test.jvm.argLine).
export MAVEN_OPTS="${MAVEN_OPTS:-} -XX:TieredStopAtLevel=1"
started=$(mktemp)
rc=0
# A build still running after HANG_DUMP_AFTER seconds (a loaded full run takes ~14 minutes) has a test JVM that hangs
# where no test timeout reaches it (root POM: test.method.timeout, test.fork.timeout): the stacks of every test JVM are
# taken then, before the fork timeout kills it, and the summary below prints them if the build fails.
dumps=$(mktemp -d)
( sleep "${HANG_DUMP_AFTER:-1500}"
  # the test JVMs of this checkout only: surefire starts each through `sh -c`, and jcmd's attach signal (SIGQUIT)
  # would end that shell, so the pattern asks for the java binary at the start of the command line
  for p in $(pgrep -f '^[^ ]*/java .*surefirebooter'); do
    if tr '\0' ' ' < "/proc/$p/cmdline" 2>/dev/null | grep -qF "$PWD/"; then
      jcmd "$p" Thread.print > "$dumps/$p.txt" 2>&1 || true
    fi
  done ) &
watchdog=$!
# The sources and javadoc jars are release artifacts, not tests: skipped here (measured on a 2-core machine: a clean
# build without tests took 185 CPU seconds with them and 99 without, and each module's javadoc ran before its
# dependants could start; in a loaded full run the javadoc tool alone took 71 of ~1,230 CPU seconds). The comments are still checked — missing ones by checkstyle, broken references and HTML by javac's
# doclint (root POM) — and `./test.sh -Dmaven.javadoc.skip=false -Dmaven.source.skip=false` builds the jars too.
# The Kotlin compile daemon (its own JVM) likewise: C1 only (the plugin puts the leading dash; measured: the daemon's CPU
# for reactive-locks-kotlin, -spring and examples/kotlin 46.8 s with C2, 23.7 s without).
./mvnw -B -ntp -T 3 verify -Dmaven.javadoc.skip=true -Dmaven.source.skip=true \
  -Dkotlin.compiler.daemon.jvmArgs=XX:TieredStopAtLevel=1 "$@" || rc=$?
# one line per module (tests, failures, errors, skipped, seconds), so a red run says at once where it broke
pkill -P "$watchdog" 2>/dev/null || true
kill "$watchdog" 2>/dev/null || true
if [ "$rc" -ne 0 ]; then
  python3 .ci/test-summary.py . "$started" "$dumps" || true
else
  python3 .ci/test-summary.py . "$started" || true
fi
rm -rf "$started" "$dumps"
exit "$rc"
