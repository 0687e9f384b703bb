#!/bin/sh
# Like the official redis image: runs redis-server reachable from outside the container.
set -e
if [ "$#" -eq 0 ] || [ "${1#-}" != "$1" ]; then set -- redis-server "$@"; fi
if [ "$1" = redis-server ]; then
  shift
  exec /usr/bin/redis-server --bind 0.0.0.0 --protected-mode no --save '' --appendonly no --dir /data "$@"
fi
exec "$@"
