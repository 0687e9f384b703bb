#!/usr/bin/env bash
# Runs the demo: simulated service instances contending for fenced accounts on the in-memory
# backend (or a real server with --backend); one instance freezes past its lease and its late
# write is rejected.
#   ./demo.sh [--duration=10s] [--workers=4] [--resources=3] [--backend=redis://host:port|postgresql://user:pw@host:port/db|zookeeper://host:port]
set -euo pipefail
cd "$(dirname "$0")"
./mvnw -q -B -pl examples/demo -am install -DskipTests
./mvnw -q -B -pl examples/demo exec:java -Dexec.args="$*"
