#!/usr/bin/env bash
# Long mode of the safety harness: every backend x fault kind for --duration each (default 5 min),
# then docs/SAFETY.md and docs/safety-timeline.png.
#   reactive-locks-safety/run-long.sh                         # the whole set
#   reactive-locks-safety/run-long.sh --duration=PT2M --backends=REDIS --faults=PAUSE_WORKER
#   reactive-locks-safety/run-long.sh --primitives=SEMAPHORE,RWLOCK,FAIR --duration=PT30S --workers=4 --names=4
#     (the new primitives, one per run; their rows go to their own section of docs/SAFETY.md: I6, I7, FIFO)
set -euo pipefail
cd "$(dirname "$0")/.."
bash .ci/install-servers.sh
# package, not install (nothing of this work tree goes into the shared ~/.m2); the reactor writes every module's
# classpath to the same file and reactive-locks-safety, built last, is what stays
mkdir -p reactive-locks-safety/target
./mvnw -q -B -ntp -pl reactive-locks-safety -am package -DskipTests dependency:build-classpath \
    -Dmdep.outputFile="$(pwd)/reactive-locks-safety/target/classpath.txt" >/dev/null
CP="reactive-locks-safety/target/classes:$(cat reactive-locks-safety/target/classpath.txt)"
# every run's history (docs/SAFETY.md, "History format") goes to reactive-locks-safety/target/safety-histories/, judged by
# the checkers of io.reactivelocks.safety.check after the run ([history] lines)
exec java -Xmx2g -Dorg.slf4j.simpleLogger.defaultLogLevel=warn -Dsafety.histories=reactive-locks-safety/target/safety-histories -cp "$CP" io.reactivelocks.safety.SafetyReport "$@"
