#!/bin/sh
# Like the official zookeeper image: a standalone server on 2181 configured from ZOO_* variables.
set -e
if [ "$#" -gt 0 ] && [ "$1" != zkServer.sh ]; then exec "$@"; fi
mkdir -p /data /conf
cat > /conf/zoo.cfg <<CFG
tickTime=${ZOO_TICK_TIME:-2000}
dataDir=/data
clientPort=2181
maxClientCnxns=${ZOO_MAX_CLIENT_CNXNS:-0}
admin.enableServer=false
4lw.commands.whitelist=${ZOO_4LW_COMMANDS_WHITELIST:-srvr}
CFG
exec /usr/lib/jvm/java-17-openjdk-amd64/bin/java -Xms32m -Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 \
  -Djava.awt.headless=true -Dzookeeper.admin.enableServer=false -Dzookeeper.jmx.log4j.disable=true \
  -cp /usr/share/java/zookeeper.jar:/usr/share/java/slf4j-simple.jar \
  org.apache.zookeeper.server.ZooKeeperServerMain /conf/zoo.cfg
