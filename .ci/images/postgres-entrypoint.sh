#!/bin/sh
# Like the official postgres image: on first start initdb with POSTGRES_USER / POSTGRES_PASSWORD and
# create POSTGRES_DB; remote clients authenticate by POSTGRES_HOST_AUTH_METHOD (scram-sha-256) (through a socket-only server, which logs "ready to accept connections" once),
# then run the server on all interfaces (the second "ready" line, which Testcontainers waits for).
set -e
BIN=/usr/lib/postgresql/15/bin
: "${PGDATA:=/var/lib/postgresql/data}"
: "${POSTGRES_USER:=postgres}"
: "${POSTGRES_DB:=$POSTGRES_USER}"
export PGDATA
as_pg() { setpriv --reuid=postgres --regid=postgres --init-groups "$@"; }
if [ "$#" -eq 0 ] || [ "${1#-}" != "$1" ]; then set -- postgres "$@"; fi
if [ "$1" != postgres ]; then exec "$@"; fi
shift
mkdir -p "$PGDATA" /var/run/postgresql
chown postgres:postgres "$PGDATA" /var/run/postgresql
chmod 700 "$PGDATA"
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  if [ -z "$POSTGRES_PASSWORD" ]; then
    echo "postgres-entrypoint: POSTGRES_PASSWORD is not set" >&2
    exit 1
  fi
  printf '%s\n' "$POSTGRES_PASSWORD" > /tmp/pwfile
  chown postgres /tmp/pwfile
  as_pg "$BIN/initdb" -D "$PGDATA" --username="$POSTGRES_USER" --pwfile=/tmp/pwfile -E UTF8 --locale=C \
    --auth-local=trust --auth-host=scram-sha-256 >/dev/null
  rm -f /tmp/pwfile
  echo "host all all all ${POSTGRES_HOST_AUTH_METHOD:-scram-sha-256}" >> "$PGDATA/pg_hba.conf"
  as_pg "$BIN/pg_ctl" -D "$PGDATA" -w -o "-c listen_addresses='' -c jit=off" start
  if [ "$POSTGRES_DB" != postgres ]; then
    as_pg "$BIN/psql" -v ON_ERROR_STOP=1 -h /var/run/postgresql -U "$POSTGRES_USER" -d postgres \
      -c "CREATE DATABASE \"$POSTGRES_DB\"" >/dev/null
  fi
  as_pg "$BIN/pg_ctl" -D "$PGDATA" -m fast -w stop
fi
exec setpriv --reuid=postgres --regid=postgres --init-groups "$BIN/postgres" -D "$PGDATA" \
  -c listen_addresses='*' -c jit=off "$@"
