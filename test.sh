#!/usr/bin/env bash
# Runs every test of every module against real servers. Installs the Debian packages of the
# servers the tests start (redis-server, postgresql, etcd-server, zookeeper) and podman + runc when
# missing, starts podman's Docker-API service and builds the local images (Testcontainers tests);
# the tests start and stop the servers themselves on random loopback ports.
#   ./test.sh [extra maven arguments]
set -euo pipefail
cd "$(dirname "$0")"
if [ -f .ci/install-servers.sh ]; then
  bash .ci/install-servers.sh
fi
./mvnw -B -ntp verify "$@"
