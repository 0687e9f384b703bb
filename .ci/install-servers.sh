#!/usr/bin/env bash
# Installs the real servers that the test fixtures (reactive-locks-test, io.reactivelocks.test.server)
# start as child processes: Redis, PostgreSQL, etcd and ZooKeeper from Debian's packages.
# Idempotent and quick when everything is present. The packages' own system services are stopped and
# disabled: the tests start their own servers on random loopback ports and must not depend on them.
set -euo pipefail

missing=()
have_exec() { command -v "$1" >/dev/null 2>&1 || [ -x "/usr/bin/$1" ]; }

have_exec redis-server || missing+=(redis-server)
have_exec etcd || missing+=(etcd-server)
{ [ -f /usr/share/java/zookeeper.jar ] && [ -f /usr/share/java/zookeeper-jute.jar ]; } || missing+=(zookeeper)
{ [ -x /usr/lib/postgresql/15/bin/postgres ] && [ -x /usr/lib/postgresql/15/bin/initdb ]; } || missing+=(postgresql)
# initdb refuses root: the fixtures run PostgreSQL as the 'postgres' OS user through setpriv
have_exec setpriv || missing+=(util-linux)

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

# stop and disable the packages' own services if anything started them (best effort, quiet)
for svc in redis-server etcd zookeeper postgresql; do
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

echo "install-servers: redis-server, etcd, zookeeper and postgresql 15 are present"
