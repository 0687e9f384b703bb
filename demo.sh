#!/usr/bin/env bash
# Runs the demo: simulated service instances contending for fenced accounts; one instance freezes
# past its lease and its late write is rejected. Needs only a JDK 17: the default store is an
# embedded PostgreSQL whose binaries come from Maven Central (run as the user nobody when this runs
# as root, since PostgreSQL refuses root); --backend=memory needs no server at all.
#   ./demo.sh [--duration=10s] [--workers=4] [--resources=3]
#             [--backend=embedded|memory|redis://host:port|postgresql://user:pw@host:port/db|mariadb://user:pw@host:port/db|etcd://host:port|zookeeper://host:port]
set -euo pipefail
cd "$(dirname "$0")"
./mvnw -q -B -pl examples/demo -am install -DskipTests
./mvnw -q -B -pl examples/demo exec:java -Dexec.args="$*"
