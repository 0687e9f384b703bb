#!/usr/bin/env bash
# Installs the real servers that the test fixtures (reactive-locks-test, io.reactivelocks.test.server)
# start as child processes: Redis, PostgreSQL, MariaDB, etcd and ZooKeeper from Debian's packages; and Debian's
# headless Chromium for the dashboard's browser test.
# Also installs podman + runc, configures them (/etc/containers/containers.conf), starts podman's
# Docker-API service on $PODMAN_SOCKET (default /run/podman/podman.sock) for Testcontainers and builds
# the local store images (.ci/build-images.sh) that reactive-locks-testcontainers' tests run.
# Idempotent and quick when everything is present. The packages' own system services are stopped and
# disabled: the tests start their own servers on random loopback ports and must not depend on them.
set -euo pipefail

missing=()
have_exec() { command -v "$1" >/dev/null 2>&1 || [ -x "/usr/bin/$1" ]; }

have_exec redis-server || missing+=(redis-server)
have_exec etcd || missing+=(etcd-server)
{ [ -f /usr/share/java/zookeeper.jar ] && [ -f /usr/share/java/zookeeper-jute.jar ]; } || missing+=(zookeeper)
{ [ -x /usr/lib/postgresql/15/bin/postgres ] && [ -x /usr/lib/postgresql/15/bin/initdb ]; } || missing+=(postgresql)
# MariaDB 10.11 (reactive-locks-r2dbc's second dialect): mariadbd, mariadb-install-db and the mariadb client;
# mariadbd refuses root too: the fixture runs it as the 'mysql' OS user the package creates
{ [ -x /usr/sbin/mariadbd ] && have_exec mariadb-install-db && have_exec mariadb; } || missing+=(mariadb-server)
# initdb refuses root: the fixtures run PostgreSQL as the 'postgres' OS user through setpriv
have_exec setpriv || missing+=(util-linux)
# containers for reactive-locks-testcontainers (rootful podman on runc; the Docker API for Testcontainers)
have_exec podman || missing+=(podman)
{ have_exec runc || [ -x /usr/sbin/runc ]; } || missing+=(runc)
# the dashboard's browser test (reactive-locks-spring-boot-starter, LockDashboardBrowserTest)
have_exec chromium-headless-shell || missing+=(chromium-headless-shell)

if [ "$(id -u)" -eq 0 ]; then SUDO=(); else SUDO=(sudo); fi

if [ "${#missing[@]}" -gt 0 ]; then
  echo "install-servers: installing ${missing[*]}"
  # keep the packages' services from starting during the install (they would hold default ports)
  policy=/usr/sbin/policy-rc.d
  created_policy=false
  if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\nexit 101\n' | "${SUDO[@]}" tee "$policy" >/dev/null
    "${SUDO[@]}" chmod 755 "$policy"
    created_policy=true
  fi
  trap '[ "$created_policy" = true ] && "${SUDO[@]}" rm -f "$policy"' EXIT
  "${SUDO[@]}" apt-get update -q
  "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

if ! id postgres >/dev/null 2>&1; then
  echo "install-servers: no 'postgres' OS user after installing postgresql" >&2
  exit 1
fi
if ! id mysql >/dev/null 2>&1; then
  echo "install-servers: no 'mysql' OS user after installing mariadb-server" >&2
  exit 1
fi

# stop and disable the packages' own services if anything started them (best effort, quiet)
for svc in redis-server etcd zookeeper postgresql mariadb; do
  if [ -d /run/systemd/system ] && command -v systemctl >/dev/null 2>&1; then
    "${SUDO[@]}" systemctl disable --now "$svc" >/dev/null 2>&1 || true
  elif command -v service >/dev/null 2>&1 && [ -e "/etc/init.d/$svc" ]; then
    "${SUDO[@]}" service "$svc" stop >/dev/null 2>&1 || true
  fi
done
if command -v pg_lsclusters >/dev/null 2>&1; then
  pg_lsclusters -h 2>/dev/null | awk '$4 == "online" { print $1, $2 }' | while read -r version cluster; do
    "${SUDO[@]}" pg_ctlcluster "$version" "$cluster" stop >/dev/null 2>&1 || true
  done
fi

echo "install-servers: redis-server, etcd, zookeeper, postgresql 15 and mariadb-server are present"

# podman: runc, cgroupfs and raised ulimits, merged into containers.conf (other settings are kept)
"${SUDO[@]}" mkdir -p /etc/containers
"${SUDO[@]}" python3 - /etc/containers/containers.conf <<'PY'
import os, re, sys
path = sys.argv[1]
wanted = {'containers': {'default_ulimits': '["nofile=20000:20000", "nproc=4096:4096"]'},
          'engine': {'runtime': '"runc"', 'cgroup_manager': '"cgroupfs"'}}
lines = open(path).read().splitlines() if os.path.exists(path) else []
out, section, done = [], None, set()
def flush(sec):
    for key, value in wanted.get(sec, {}).items():
        if (sec, key) not in done:
            out.append('%s = %s' % (key, value))
            done.add((sec, key))
for line in lines:
    m = re.match(r'\s*\[([^\]]+)\]\s*$', line)
    if m:
        flush(section)
        section = m.group(1).strip()
        out.append(line)
        continue
    k = re.match(r'\s*([A-Za-z_]+)\s*=', line)
    if k and section in wanted and k.group(1) in wanted[section]:
        if (section, k.group(1)) not in done:
            out.append('%s = %s' % (k.group(1), wanted[section][k.group(1)]))
            done.add((section, k.group(1)))
        continue
    out.append(line)
flush(section)
for sec in wanted:
    if any((sec, key) not in done for key in wanted[sec]):
        out.append('')
        out.append('[%s]' % sec)
        flush(sec)
text = '\n'.join(out).strip('\n') + '\n'
if not os.path.exists(path) or open(path).read() != text:
    open(path, 'w').write(text)
PY

# podman's Docker-API service, which Testcontainers talks to (left running, like a Docker engine)
PODMAN_SOCKET=${PODMAN_SOCKET:-/run/podman/podman.sock}
# a service started from a directory deleted since (an earlier clone) still answers pings but cannot
# create containers ("write child: broken pipe"): stop it, and start services from / from now on
for pid in $(pgrep -f "podman system service" || true); do
  if readlink "/proc/$pid/cwd" 2>/dev/null | grep -q '(deleted)$'; then
    echo "install-servers: restarting podman's service (its working directory was deleted)"
    "${SUDO[@]}" kill "$pid" 2>/dev/null || true
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  fi
done
if ! curl -sf --unix-socket "$PODMAN_SOCKET" http://localhost/_ping >/dev/null 2>&1; then
  "${SUDO[@]}" mkdir -p "$(dirname "$PODMAN_SOCKET")"
  "${SUDO[@]}" rm -f "$PODMAN_SOCKET"
  pushd / >/dev/null # the service outlives this clone: it must not work in it
  "${SUDO[@]}" setsid nohup podman system service --time=0 "unix://$PODMAN_SOCKET" \
    >/var/tmp/podman-service.log 2>&1 < /dev/null &
  popd >/dev/null
  for _ in $(seq 1 100); do
    curl -sf --unix-socket "$PODMAN_SOCKET" http://localhost/_ping >/dev/null 2>&1 && break
    sleep 0.1
  done
  if ! curl -sf --unix-socket "$PODMAN_SOCKET" http://localhost/_ping >/dev/null 2>&1; then
    echo "install-servers: podman system service did not answer on $PODMAN_SOCKET:" >&2
    cat /var/tmp/podman-service.log >&2 || true
    exit 1
  fi
fi
echo "install-servers: podman's Docker API answers on unix://$PODMAN_SOCKET"

bash "$(dirname "$0")/build-images.sh"
