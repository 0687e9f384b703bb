package io.reactivelocks.test.server;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * Redis primary + one replica under three Sentinels, from the local {@code redis-server}, on
 * loopback: {@value #MASTER_NAME} is monitored with a quorum of 2, {@code down-after-milliseconds}
 * 1000 and {@code failover-timeout} 2000, so a failover completes in a few seconds.
 *
 * <p><b>Proxies.</b> Each data node sits behind a {@link io.reactivelocks.test.fault.FaultProxy} and
 * announces the proxy's port ({@code replica-announce-port}); the Sentinels monitor the proxies and
 * the replica replicates through its master's proxy. Sentinels hand the proxy addresses to clients
 * too, so a client configured with {@link #endpoints()} also goes through the proxy of the master.
 * Hence {@link #partitionLeader()} (the master's proxy cuts its connections and holds new ones) cuts
 * the master off from the Sentinels, the replica <em>and</em> the clients that found it through
 * Sentinel; a client connected to the master's own port ({@link #directUri(ServerHandle)}) stands
 * for the clients on the master's side of the partition and keeps writing to it until the Sentinels
 * demote it after the heal. Sentinel-to-Sentinel traffic is not proxied. {@link #slowNode(Duration)}
 * delays the master's proxy (replication, Sentinel pings and clients).
 */
public final class RedisSentinelTopology implements Topology {

    /** The name the Sentinels monitor the master under. */
    public static final String MASTER_NAME = "mymaster";

    private static final Duration WAIT = Duration.ofSeconds(60);

    private final List<RedisTopologyNode> data;
    private final List<ServerProcess> sentinels;

    private RedisSentinelTopology(List<RedisTopologyNode> data, List<ServerProcess> sentinels) {
        this.data = data;
        this.sentinels = sentinels;
    }

    /**
     * Starts the primary, the replica and three Sentinels and waits until the Sentinels agree on the
     * master and know the replica.
     *
     * @return the running deployment
     * @throws ServerUnavailableException when there is no {@code redis-server}
     */
    public static RedisSentinelTopology start() {
        Path binary = Commands.findExecutable("redis-server", "/usr/bin/redis-server", "/usr/local/bin/redis-server")
                .orElseThrow(() -> new ServerUnavailableException("redis sentinel topology: no redis-server found. "
                        + RedisServer.INSTALL_HINT));
        List<RedisTopologyNode> data = new ArrayList<>();
        List<ServerProcess> sentinels = new ArrayList<>();
        try {
            for (int i = 0; i < 2; i++) {
                data.add(RedisTopologyNode.start("redis-sentinel-data" + i, binary, false, (node, layout) -> {
                    List<String> args = new ArrayList<>();
                    if (node != null) {
                        args.addAll(List.of("--replica-announce-ip", layout.host(),
                                "--replica-announce-port", Integer.toString(node.port())));
                        if (node.replicaOf != 0) {
                            args.addAll(List.of("--replicaof", layout.host(), Integer.toString(node.replicaOf)));
                        }
                    }
                    return args;
                }));
            }
            for (RedisTopologyNode n : data) {
                n.call("CONFIG", "SET", "replica-announce-ip", n.host());
                n.call("CONFIG", "SET", "replica-announce-port", Integer.toString(n.port()));
            }
            RedisTopologyNode master = data.get(0);
            RedisTopologyNode replica = data.get(1);
            replica.replicaOf = master.port();
            replica.call("REPLICAOF", master.host(), Integer.toString(master.port()));
            RedisTopologyNode.awaitTrue("the replica to sync", WAIT, () -> "up".equals(replica.info("replication", "master_link_status")));
            for (int i = 0; i < 3; i++) {
                sentinels.add(startSentinel(binary, i, master));
            }
            RedisSentinelTopology t = new RedisSentinelTopology(List.copyOf(data), List.copyOf(sentinels));
            t.awaitServing();
            return t;
        } catch (RuntimeException | java.lang.Error e) {
            sentinels.forEach(ServerProcess::close);
            data.forEach(RedisTopologyNode::close);
            throw e;
        }
    }

    private static ServerProcess startSentinel(Path binary, int index, RedisTopologyNode master) {
        return ServerProcess.builder("redis-sentinel" + index)
                .prepare(layout -> {
                    String conf = String.join("\n",
                            "port " + layout.port(),
                            "bind " + layout.host(),
                            "daemonize no",
                            "logfile \"\"",
                            "dir " + layout.directory(),
                            "sentinel monitor " + MASTER_NAME + " " + master.host() + " " + master.port() + " 2",
                            "sentinel down-after-milliseconds " + MASTER_NAME + " 1000",
                            "sentinel failover-timeout " + MASTER_NAME + " 2000",
                            "sentinel parallel-syncs " + MASTER_NAME + " 1",
                            "");
                    try {
                        Files.writeString(layout.path("sentinel.conf"), conf, StandardCharsets.UTF_8);
                    } catch (IOException e) {
                        throw new UncheckedIOException(e);
                    }
                })
                .command(layout -> List.of(binary.toString(), layout.path("sentinel.conf").toString(), "--sentinel"))
                .readiness(layout -> Probes.redisReady(layout.host(), layout.port()))
                .startTimeout(Duration.ofSeconds(30))
                .start();
    }

    @Override
    public String name() {
        return "redis-sentinel";
    }

    /** @return {@code redis-sentinel://127.0.0.1:s1,127.0.0.1:s2,127.0.0.1:s3#mymaster}, for {@code RedisURI.create} */
    @Override
    public String endpoints() {
        return "redis-sentinel://" + sentinels.stream().map(s -> s.host() + ":" + s.port()).collect(Collectors.joining(","))
                + "#" + MASTER_NAME;
    }

    /**
     * A URI that bypasses Sentinel and the proxy: a client connected with it stays on that node
     * whatever the Sentinels decide (a client on the node's side of a partition).
     *
     * @param node one of {@link #nodes()}' data nodes
     * @return {@code redis://host:port} of the node's own port
     */
    public String directUri(ServerHandle node) {
        return "redis://" + node.host() + ":" + node.port();
    }

    /** @return the primary and the replica (in start order), then the three Sentinels */
    @Override
    public List<ServerHandle> nodes() {
        List<ServerHandle> all = new ArrayList<>();
        data.forEach(n -> all.add(n.process));
        all.addAll(sentinels);
        return List.copyOf(all);
    }

    /** @return the data node the Sentinels name as master and that says it is master */
    @Override
    public ServerHandle leader() {
        return leaderNode().process;
    }

    private RedisTopologyNode leaderNode() {
        return RedisTopologyNode.await("a master that the Sentinels agree on", WAIT, () -> currentMaster()
                .filter(n -> n.role().filter("master"::equals).isPresent()));
    }

    /** The master named by a majority of the reachable Sentinels. */
    private Optional<RedisTopologyNode> currentMaster() {
        List<Integer> ports = new ArrayList<>();
        for (ServerProcess s : sentinels) {
            if (!s.isAlive()) {
                continue;
            }
            Object reply = Resp.tryCall(s.host(), s.port(), "SENTINEL", "get-master-addr-by-name", MASTER_NAME);
            if (reply instanceof List<?> l && l.size() == 2) {
                ports.add(Integer.parseInt(String.valueOf(l.get(1))));
            }
        }
        for (RedisTopologyNode n : data) {
            long votes = ports.stream().filter(p -> p == n.port()).count();
            if (votes >= 2) {
                return Optional.of(n);
            }
        }
        return Optional.empty();
    }

    @Override
    public void killLeader() {
        leaderNode().process.kill();
    }

    /** Asks a Sentinel for {@code SENTINEL FAILOVER} and returns once the Sentinels name the other node. */
    @Override
    public void failover() {
        RedisTopologyNode old = leaderNode();
        RedisTopologyNode.awaitTrue("a Sentinel to accept SENTINEL FAILOVER", WAIT, () -> {
            for (ServerProcess s : sentinels) {
                if (s.isAlive() && Resp.tryCall(s.host(), s.port(), "SENTINEL", "FAILOVER", MASTER_NAME) != null) {
                    return true;
                }
            }
            return false;
        });
        RedisTopologyNode.awaitTrue("the Sentinels to name a new master", WAIT,
                () -> currentMaster().filter(n -> n != old && n.role().filter("master"::equals).isPresent()).isPresent());
    }

    /** Cuts and holds every connection through the master's proxy (see the class documentation). */
    @Override
    public void partitionLeader() {
        RedisTopologyNode leader = leaderNode();
        leader.proxy.blackhole();
        leader.proxy.cutConnections();
    }

    /** Delays everything through the master's proxy. */
    @Override
    public void slowNode(Duration latency) {
        leaderNode().proxy.latency(latency, Duration.ZERO);
    }

    @Override
    public void heal() {
        for (RedisTopologyNode n : data) {
            n.healProxies();
        }
        Optional<RedisTopologyNode> master = Optional.empty();
        for (RedisTopologyNode n : data) {
            if (!n.process.isAlive()) {
                RedisTopologyNode m = master.orElseGet(() -> RedisTopologyNode.await("a master to rejoin", WAIT,
                        () -> currentMaster().filter(c -> c.process.isAlive())));
                master = Optional.of(m);
                n.replicaOf = m.port();
                n.process.restart();
            }
        }
        for (ServerProcess s : sentinels) {
            if (!s.isAlive()) {
                s.restart();
            }
        }
        awaitServing();
    }

    /** Waits until the Sentinels agree on a master that takes writes and the other node replicates it. */
    private void awaitServing() {
        RedisTopologyNode.awaitTrue("the master to serve writes with its replica in sync", WAIT, () -> {
            Optional<RedisTopologyNode> m = currentMaster();
            if (m.isEmpty() || m.get().role().filter("master"::equals).isEmpty()) {
                return false;
            }
            for (RedisTopologyNode n : data) {
                if (n != m.get() && !("slave".equals(n.role().orElse(""))
                        && "up".equals(n.info("replication", "master_link_status"))
                        && Integer.toString(m.get().port()).equals(n.info("replication", "master_port")))) {
                    return false;
                }
            }
            Object ok = m.get().tryCall("SET", "rl-topology-probe", "1", "PX", "1000");
            if (!"OK".equals(ok)) {
                return false;
            }
            // every Sentinel knows the replica (so a later failover has a candidate)
            for (ServerProcess s : sentinels) {
                Object replicas = Resp.tryCall(s.host(), s.port(), "SENTINEL", "REPLICAS", MASTER_NAME);
                if (!(replicas instanceof List<?> l) || l.stream().noneMatch(RedisSentinelTopology::healthyReplica)) {
                    return false;
                }
            }
            return true;
        });
    }

    /** A {@code SENTINEL REPLICAS} entry (a flat field/value list) whose flags are just "slave". */
    private static boolean healthyReplica(Object entry) {
        if (!(entry instanceof List<?> fields)) {
            return false;
        }
        for (int i = 0; i + 1 < fields.size(); i += 2) {
            if ("flags".equals(fields.get(i))) {
                return "slave".equals(fields.get(i + 1));
            }
        }
        return false;
    }

    @Override
    public void close() {
        sentinels.forEach(ServerProcess::close);
        data.forEach(RedisTopologyNode::close);
    }

    @Override
    public String toString() {
        return "RedisSentinelTopology[" + endpoints() + "]";
    }
}
