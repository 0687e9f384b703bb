#!/usr/bin/env bash
# Runs the demo: simulated service instances contending for fenced accounts on the in-memory
# backend; one instance freezes past its lease and its late write is rejected.
#   ./demo.sh [--duration=10s] [--workers=4] [--resources=3]
set -euo pipefail
cd "$(dirname "$0")"
./mvnw -q -B -pl examples/demo -am install -DskipTests
./mvnw -q -B -pl examples/demo exec:java -Dexec.args="$*"
