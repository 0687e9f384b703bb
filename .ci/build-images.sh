#!/usr/bin/env bash
# Builds the local container images that reactive-locks-testcontainers' tests run, from the Debian
# packages installed on this machine (images cannot be pulled here). Each image is declared in the
# tests as a compatible substitute for the official one:
#   localhost/reactivelocks-redis:7         for redis:7
#   localhost/reactivelocks-postgres:15     for postgres:15
#   localhost/reactivelocks-etcd:3.4        for quay.io/coreos/etcd
#   localhost/reactivelocks-zookeeper:3.8   for zookeeper:3.8
#   localhost/reactivelocks-mariadb:10.11   for mariadb:10.11
# No download: the root file system is the installed files of the servers' packages and their
# dependencies (dpkg's file lists), imported once as localhost/reactivelocks-debian, then one small
# image per store adds an entrypoint that behaves like the official image's. Does nothing when the
# images of this IMAGES_VERSION exist. Needs podman and the packages .ci/install-servers.sh installs.
set -euo pipefail
cd "$(dirname "$0")"

IMAGES_VERSION=3
LABEL=io.reactivelocks.images
STORES=(redis:7 postgres:15 etcd:3.4 zookeeper:3.8 mariadb:10.11)

current() {
  local image=$1
  podman image exists "$image" &&
    [ "$(podman image inspect --format "{{ index .Config.Labels \"$LABEL\" }}" "$image" 2>/dev/null)" = "$IMAGES_VERSION" ]
}

all_current=true
for s in "${STORES[@]}"; do
  current "localhost/reactivelocks-$s" || all_current=false
done
if [ "$all_current" = true ]; then
  echo "build-images: local images are present (version $IMAGES_VERSION)"
  exit 0
fi

start=$(date +%s)
work=$(mktemp -d /var/tmp/reactivelocks-images.XXXXXX)
trap 'rm -rf "$work"' EXIT
root="$work/root"
mkdir -p "$root"

# the packages whose files make the root file system (and, recursively, what they depend on)
ROOTS=(base-files bash dash coreutils util-linux grep sed findutils procps netbase tzdata libc-bin
       redis-server postgresql-15 etcd-server libzookeeper-java libslf4j-java openjdk-17-jre-headless
       mariadb-server-core mariadb-client-core)
# not needed to run the servers: the full desktop JRE, PostgreSQL's JIT (jit=off), package tooling
EXCLUDE=(default-jre default-jre-headless openjdk-17-jre zookeeper java-common ca-certificates-java
         libllvm14 libz3-4 locales postgresql-common ssl-cert adduser debconf perl perl-base
         libtomcat9-java libeclipse-jdt-core-java libjetty9-java libjetty9-extra-java)

# the files (not directories) of those packages, with usr-merged paths resolved to /usr; read from
# dpkg's database directly (apt-cache per package is slow on a loaded machine)
python3 - "$work" "${ROOTS[*]}" "${EXCLUDE[*]}" <<'PY'
import os, re, sys
work, roots, excluded = sys.argv[1], sys.argv[2].split(), set(sys.argv[3].split())
packages, provides = {}, {}
for stanza in open('/var/lib/dpkg/status', encoding='utf-8').read().split('\n\n'):
    fields, key = {}, None
    for line in stanza.splitlines():
        if line[:1] in (' ', '\t') and key:
            fields[key] += line
        elif ':' in line:
            key, value = line.split(':', 1)
            fields[key] = value.strip()
    if 'Package' not in fields or not fields.get('Status', '').endswith('install ok installed'):
        continue
    name = fields['Package']
    deps = ','.join(f for f in (fields.get('Pre-Depends'), fields.get('Depends')) if f)
    packages[name] = (fields.get('Architecture', 'all'), [
        [re.split(r'[\s(:]', alt.strip(), 1)[0] for alt in group.split('|')]
        for group in deps.split(',') if group.strip()])
    for p in fields.get('Provides', '').split(','):
        if p.strip():
            provides.setdefault(re.split(r'[\s(:]', p.strip(), 1)[0], []).append(name)
missing = [r for r in roots if r not in packages]
if missing:
    sys.exit('build-images: not installed: ' + ' '.join(missing) + ' (run .ci/install-servers.sh)')
seen, todo = set(), list(roots)
while todo:
    p = todo.pop()
    if p in seen or p in excluded:
        continue
    seen.add(p)
    for group in packages[p][1]:
        choice = [c for alt in group for c in ([alt] if alt in packages else provides.get(alt, []))
                  if c not in excluded]
        if choice:
            todo.append(choice[0])
files = []
done = set()
for p in sorted(seen):
    arch = packages[p][0]
    info = '/var/lib/dpkg/info/%s.list' % p
    if not os.path.exists(info):
        info = '/var/lib/dpkg/info/%s:%s.list' % (p, arch)
    for line in open(info, encoding='utf-8'):
        f = line.rstrip('\n')
        if not f.startswith('/') or f.startswith(('/usr/share/doc/', '/usr/share/man/', '/usr/share/locale/')):
            continue
        if (os.path.isdir(f) and not os.path.islink(f)) or not os.path.lexists(f):
            continue
        q = os.path.join(os.path.realpath(os.path.dirname(f)), os.path.basename(f))
        if q not in done:
            done.add(q)
            files.append(q[1:])
open(os.path.join(work, 'packages'), 'w').write('\n'.join(sorted(seen)) + '\n')
open(os.path.join(work, 'files'), 'w').write('\n'.join(files) + '\n')
PY
for d in bin sbin lib lib64; do ln -s "usr/$d" "$root/$d"; done
mkdir -p "$root"/{usr/bin,usr/sbin,usr/lib,usr/lib64,etc,tmp,data,var/tmp,var/lib/postgresql,var/lib/mysql,var/run,run/mysqld,proc,sys,dev,root}
chmod 1777 "$root/tmp" "$root/var/tmp"
tar -C / --no-recursion -cf - -T "$work/files" | tar -C "$root" -xf - --keep-directory-symlink
cat > "$root/etc/passwd" <<'PW'
root:x:0:0:root:/root:/bin/sh
postgres:x:999:999:PostgreSQL administrator:/var/lib/postgresql:/bin/sh
mysql:x:998:998:MariaDB Server:/nonexistent:/bin/false
nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin
PW
cat > "$root/etc/group" <<'GR'
root:x:0:
postgres:x:999:
mysql:x:998:
nogroup:x:65534:
GR
chown 999:999 "$root/var/lib/postgresql"
chown 998:998 "$root/var/lib/mysql" "$root/run/mysqld"
ldconfig -r "$root"
mkdir -p "$root/usr/local/bin"
install -m 755 images/redis-entrypoint.sh images/postgres-entrypoint.sh images/zookeeper-entrypoint.sh \
  images/mariadb-entrypoint.sh "$root/usr/local/bin/"
echo "build-images: $(( $(date +%s) - start )) s: $(wc -l < "$work/packages") packages, $(du -sm "$root" | cut -f1) MB; importing"

base=localhost/reactivelocks-debian:bookworm
tar -C "$root" -cf - . | podman import --change "LABEL $LABEL=$IMAGES_VERSION" \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' - "$base" \
  >"$work/import.log" 2>&1 || { cat "$work/import.log" >&2; exit 1; }
mkdir "$work/context"  # the per-store images copy nothing: an empty build context

build() { # tag, Containerfile lines
  local tag=$1; shift
  printf "%s\n" "FROM $base" "LABEL $LABEL=$IMAGES_VERSION" "$@" | podman build -q -t "$tag" -f - "$work/context" >"$work/build.log" 2>&1 || { cat "$work/build.log" >&2; exit 1; }
}
build localhost/reactivelocks-redis:7 'WORKDIR /data' 'EXPOSE 6379' \
  'ENTRYPOINT ["/usr/local/bin/redis-entrypoint.sh"]' 'CMD ["redis-server"]'
build localhost/reactivelocks-postgres:15 'ENV PGDATA=/var/lib/postgresql/data' 'EXPOSE 5432' \
  'STOPSIGNAL SIGINT' 'ENTRYPOINT ["/usr/local/bin/postgres-entrypoint.sh"]' 'CMD ["postgres"]'
build localhost/reactivelocks-etcd:3.4 'EXPOSE 2379 2380' 'CMD ["/usr/bin/etcd"]'
build localhost/reactivelocks-zookeeper:3.8 'EXPOSE 2181' \
  'ENTRYPOINT ["/usr/local/bin/zookeeper-entrypoint.sh"]' 'CMD ["zkServer.sh", "start-foreground"]'
build localhost/reactivelocks-mariadb:10.11 'EXPOSE 3306' \
  'ENTRYPOINT ["/usr/local/bin/mariadb-entrypoint.sh"]' 'CMD ["mariadbd"]'
podman image prune -f >/dev/null 2>&1 || true  # the previous version's images, now untagged
echo "build-images: built ${STORES[*]/#/localhost/reactivelocks-} in $(( $(date +%s) - start )) s"
