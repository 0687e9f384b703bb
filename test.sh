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
started=$(mktemp)
rc=0
./mvnw -B -ntp -T 3 verify "$@" || rc=$?
# one line per module (tests, failures, errors, skipped, seconds), so a red run says at once where it broke
python3 .ci/test-summary.py . "$started" || true
rm -f "$started"
exit "$rc"
