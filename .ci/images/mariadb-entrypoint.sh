#!/bin/sh
# Like the official mariadb image: on first start mariadb-install-db, then (through a server without
# networking, which logs "port: 0") the root password from MARIADB_ROOT_PASSWORD (or none with
# MARIADB_ALLOW_EMPTY_ROOT_PASSWORD), the database MARIADB_DATABASE and the user MARIADB_USER /
# MARIADB_PASSWORD with every privilege on it; then run the server on all interfaces (its "port: 3306"
# line is what Testcontainers waits for).
set -e
DATADIR=/var/lib/mysql
SOCKET=/run/mysqld/mysqld.sock
if [ "$#" -eq 0 ] || [ "${1#-}" != "$1" ]; then set -- mariadbd "$@"; fi
if [ "$1" != mariadbd ]; then exec "$@"; fi
shift
mkdir -p "$DATADIR" /run/mysqld
chown mysql:mysql "$DATADIR" /run/mysqld
if [ ! -d "$DATADIR/mysql" ]; then
  if [ -z "$MARIADB_ROOT_PASSWORD" ] && [ -z "$MARIADB_ALLOW_EMPTY_ROOT_PASSWORD" ]; then
    echo "mariadb-entrypoint: set MARIADB_ROOT_PASSWORD or MARIADB_ALLOW_EMPTY_ROOT_PASSWORD" >&2
    exit 1
  fi
  mariadb-install-db --no-defaults --user=mysql --datadir="$DATADIR" --auth-root-authentication-method=normal \
    --skip-test-db --skip-name-resolve >/dev/null
  mariadbd --no-defaults --user=mysql --datadir="$DATADIR" --socket="$SOCKET" --skip-networking \
    --skip-log-bin &
  pid=$!
  tries=0
  until mariadb --no-defaults --socket="$SOCKET" --user=root -e "SELECT 1" >/dev/null 2>&1; do
    tries=$((tries + 1))
    if [ "$tries" -gt 300 ] || ! kill -0 "$pid" 2>/dev/null; then
      echo "mariadb-entrypoint: the setup server did not start" >&2
      exit 1
    fi
    sleep 0.2
  done
  sql=""
  if [ -n "$MARIADB_DATABASE" ]; then
    sql="$sql CREATE DATABASE IF NOT EXISTS \`$MARIADB_DATABASE\`;"
  fi
  if [ -n "$MARIADB_USER" ]; then
    sql="$sql CREATE USER '$MARIADB_USER'@'%' IDENTIFIED BY '$MARIADB_PASSWORD';"
    if [ -n "$MARIADB_DATABASE" ]; then
      sql="$sql GRANT ALL PRIVILEGES ON \`$MARIADB_DATABASE\`.* TO '$MARIADB_USER'@'%';"
    fi
  fi
  if [ -n "$MARIADB_ROOT_PASSWORD" ]; then
    sql="$sql CREATE USER IF NOT EXISTS 'root'@'%' IDENTIFIED BY '$MARIADB_ROOT_PASSWORD';"
    sql="$sql GRANT ALL PRIVILEGES ON *.* TO 'root'@'%' WITH GRANT OPTION;"
    sql="$sql ALTER USER 'root'@'localhost' IDENTIFIED BY '$MARIADB_ROOT_PASSWORD';"
  fi
  mariadb --no-defaults --socket="$SOCKET" --user=root -e "$sql FLUSH PRIVILEGES; SHUTDOWN;"
  wait "$pid" || true
fi
exec mariadbd --no-defaults --user=mysql --datadir="$DATADIR" --socket="$SOCKET" --port=3306 \
  --bind-address=0.0.0.0 --skip-name-resolve --skip-log-bin --character-set-server=utf8mb4 "$@"
