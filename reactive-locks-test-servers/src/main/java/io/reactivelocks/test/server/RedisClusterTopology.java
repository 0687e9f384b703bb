package io.reactivelocks.test.server;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * A Redis Cluster of three masters with one replica each, from the local {@code redis-server}
 * ({@code --cluster-enabled yes}, {@code cluster-node-timeout} 1500 ms), on loopback. Masters 0, 1,
 * 2 own the slot ranges 0–5460, 5461–10922, 10923–16383; node 3 + i replicates master i.
 *
 * <p><b>Proxies.</b> Each node sits behind two {@link io.reactivelocks.test.fault.FaultProxy}s, one
 * for its client port and one for its cluster bus, and announces both
 * ({@code cluster-announce-port}, {@code cluster-announce-bus-port}): the nodes gossip through the
 * bus proxies, replicas replicate through their master's client proxy, and clients (which learn the
 * addresses from {@code CLUSTER SLOTS}) go through the client proxies. {@link #partitionLeader()}
 * cuts and holds the leader's cluster bus only, so the other nodes fail it over while clients (and,
 * until it is promoted, its replica's replication stream) still reach it — the partitioned master
 * stops taking writes by itself once it misses a majority for the node timeout.
 * {@link #slowNode(Duration)} delays the leader's bus and client proxies.
 */
public final class RedisClusterTopology implements Topology {

    private static final int NODE_TIMEOUT_MILLIS = 1500;
    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final int[][] RANGES = {{0, 5460}, {5461, 10922}, {10923, 16383}};

    private final List<RedisTopologyNode> nodes;

    private RedisClusterTopology(List<RedisTopologyNode> nodes) {
        this.nodes = nodes;
    }

    /**
     * Starts six nodes, joins them into one cluster (slots, meet, replicate) and waits until every
     * node reports {@code cluster_state:ok} and every replica is in sync.
     *
     * @return the running cluster
     * @throws ServerUnavailableException when there is no {@code redis-server}
     */
    public static RedisClusterTopology start() {
        Path binary = Commands.findExecutable("redis-server", "/usr/bin/redis-server", "/usr/local/bin/redis-server")
                .orElseThrow(() -> new ServerUnavailableException("redis cluster topology: no redis-server found. "
                        + RedisServer.INSTALL_HINT));
        List<RedisTopologyNode> nodes = new ArrayList<>();
        try {
            for (int i = 0; i < 6; i++) {
                nodes.add(RedisTopologyNode.start("redis-cluster" + i, binary, true, (node, layout) -> {
                    List<String> args = new ArrayList<>(List.of("--cluster-enabled", "yes",
                            "--cluster-config-file", layout.path("nodes.conf").toString(),
                            "--cluster-node-timeout", Integer.toString(NODE_TIMEOUT_MILLIS),
                            "--cluster-port", Integer.toString(layout.extraPort(0)),
                            "--cluster-announce-ip", layout.host()));
                    if (node != null) {
                        args.addAll(List.of("--cluster-announce-port", Integer.toString(node.port()),
                                "--cluster-announce-bus-port", Integer.toString(node.busProxy.port())));
                    }
                    return args;
                }));
            }
            for (RedisTopologyNode n : nodes) {
                n.call("CONFIG", "SET", "cluster-announce-port", Integer.toString(n.port()));
                n.call("CONFIG", "SET", "cluster-announce-bus-port", Integer.toString(n.busProxy.port()));
            }
            for (int i = 0; i < 3; i++) {
                nodes.get(i).call("CLUSTER", "ADDSLOTSRANGE", Integer.toString(RANGES[i][0]), Integer.toString(RANGES[i][1]));
            }
            RedisTopologyNode first = nodes.get(0);
            for (RedisTopologyNode n : nodes.subList(1, 6)) {
                first.call("CLUSTER", "MEET", n.host(), Integer.toString(n.port()), Integer.toString(n.busProxy.port()));
            }
            // a MEET whose handshake does not finish within the node timeout (a loaded machine) is dropped
            // and never retried by Redis: while a node misses another, it is told to meet it again
            RedisTopologyNode.awaitTrue("every node to know the five others", WAIT, () -> {
                boolean all = true;
                for (RedisTopologyNode n : nodes) {
                    Object text = n.tryCall("CLUSTER", "NODES");
                    if (text instanceof String s && s.lines().count() == 6 && !s.contains("handshake") && !s.contains("noaddr")) {
                        continue;
                    }
                    all = false;
                    String known = text instanceof String s ? s : "";
                    for (RedisTopologyNode m : nodes) {
                        if (m != n && !known.contains(" " + m.host() + ":" + m.port() + "@")) {
                            n.tryCall("CLUSTER", "MEET", m.host(), Integer.toString(m.port()), Integer.toString(m.busProxy.port()));
                        }
                    }
                }
                return all;
            });
            for (int i = 0; i < 3; i++) {
                String masterId = String.valueOf(nodes.get(i).call("CLUSTER", "MYID"));
                RedisTopologyNode replica = nodes.get(3 + i);
                RedisTopologyNode.awaitTrue("node " + (3 + i) + " to replicate master " + i, WAIT,
                        () -> "OK".equals(replica.tryCall("CLUSTER", "REPLICATE", masterId)));
            }
            RedisClusterTopology t = new RedisClusterTopology(List.copyOf(nodes));
            t.awaitServing();
            return t;
        } catch (RuntimeException | java.lang.Error e) {
            nodes.forEach(RedisTopologyNode::close);
            throw e;
        }
    }

    @Override
    public String name() {
        return "redis-cluster";
    }

    /**
     * @return the seed URIs {@code redis://127.0.0.1:p} of every node (their client proxies), comma-separated;
     *         split at the commas for {@code RedisClusterClient.create(Iterable<RedisURI>)}
     */
    @Override
    public String endpoints() {
        return nodes.stream().map(n -> "redis://" + n.host() + ":" + n.port()).collect(Collectors.joining(","));
    }

    /** @return the six nodes in start order (masters 0–2, then their replicas 3–5; roles change with failovers) */
    @Override
    public List<ServerHandle> nodes() {
        return nodes.stream().map(n -> (ServerHandle) n.process).toList();
    }

    /** @return the master of slot 0, as the live nodes report it in {@code CLUSTER SLOTS} */
    @Override
    public ServerHandle leader() {
        return leaderNode().process;
    }

    /**
     * @param slot a hash slot
     * @return the node that masters the slot now, as a live node reports it
     */
    public ServerHandle masterOf(int slot) {
        return masterNode(slot).process;
    }

    private RedisTopologyNode leaderNode() {
        return masterNode(0);
    }

    private RedisTopologyNode masterNode(int slot) {
        return RedisTopologyNode.await("a live master of slot " + slot, WAIT,
                () -> slotMaster(slot).filter(n -> n.process.isAlive() && n.role().filter("master"::equals).isPresent()));
    }

    /** The master of the slot according to the first live node that answers CLUSTER SLOTS. */
    private Optional<RedisTopologyNode> slotMaster(int slot) {
        for (RedisTopologyNode n : nodes) {
            Object slots = n.tryCall("CLUSTER", "SLOTS");
            if (!(slots instanceof List<?> ranges)) {
                continue;
            }
            for (Object r : ranges) {
                List<?> range = (List<?>) r;
                long from = (Long) range.get(0);
                long to = (Long) range.get(1);
                if (slot >= from && slot <= to) {
                    int port = ((Long) ((List<?>) range.get(2)).get(1)).intValue();
                    return nodes.stream().filter(x -> x.port() == port).findFirst();
                }
            }
        }
        return Optional.empty();
    }

    @Override
    public void killLeader() {
        leaderNode().process.kill();
    }

    /** Sends {@code CLUSTER FAILOVER} to the leader's replica and returns once slot 0 has the new master. */
    @Override
    public void failover() {
        RedisTopologyNode old = leaderNode();
        String oldId = String.valueOf(old.call("CLUSTER", "MYID"));
        RedisTopologyNode replica = RedisTopologyNode.await("a replica of the leader", WAIT, () -> nodes.stream()
                .filter(n -> n != old && n.process.isAlive())
                .filter(n -> String.valueOf(n.tryCall("CLUSTER", "NODES")).lines()
                        .anyMatch(l -> l.contains("myself") && l.contains(oldId)))
                .findFirst());
        // Redis aborts a manual failover that has not completed within 5 s (CLUSTER_MF_TIMEOUT), as under a loaded
        // machine it may: asked again after each such window, as an operator would, until slot 0 has moved
        long deadline = System.nanoTime() + WAIT.toNanos();
        java.util.function.BooleanSupplier moved = () -> slotMaster(0).filter(n -> n == replica).isPresent()
                && replica.role().filter("master"::equals).isPresent();
        replica.call("CLUSTER", "FAILOVER");
        while (true) {
            try {
                RedisTopologyNode.awaitTrue("slot 0 to move to the replica", MANUAL_FAILOVER_WINDOW, moved);
                return;
            } catch (IllegalStateException e) {
                if (System.nanoTime() - deadline > 0) {
                    throw new IllegalStateException("slot 0 did not move to the replica within " + WAIT
                            + " (CLUSTER FAILOVER asked again every " + MANUAL_FAILOVER_WINDOW + ")", e);
                }
            }
            if (!moved.getAsBoolean()) {
                replica.tryCall("CLUSTER", "FAILOVER"); // an error (it became master meanwhile) is checked by the next wait
            }
        }
    }

    /** Longer than the 5 s after which Redis aborts a manual failover that has not completed. */
    private static final Duration MANUAL_FAILOVER_WINDOW = Duration.ofSeconds(6);

    /** Cuts and holds the leader's cluster bus (see the class documentation). */
    @Override
    public void partitionLeader() {
        RedisTopologyNode leader = leaderNode();
        leader.busProxy.blackhole();
        leader.busProxy.cutConnections();
    }

    /** Delays the leader's cluster bus and client traffic. */
    @Override
    public void slowNode(Duration latency) {
        RedisTopologyNode leader = leaderNode();
        leader.busProxy.latency(latency, Duration.ZERO);
        leader.proxy.latency(latency, Duration.ZERO);
    }

    @Override
    public void heal() {
        for (RedisTopologyNode n : nodes) {
            n.healProxies();
        }
        for (RedisTopologyNode n : nodes) {
            if (!n.process.isAlive()) {
                n.process.restart();
            }
        }
        awaitServing();
    }

    /** Waits until every node is up with {@code cluster_state:ok}, three masters and three replicas in sync, no failure flags. */
    private void awaitServing() {
        RedisTopologyNode.awaitTrue("the cluster to be ok with three masters and three synced replicas", WAIT, () -> {
            int masters = 0;
            for (RedisTopologyNode n : nodes) {
                Object info = n.tryCall("CLUSTER", "INFO");
                if (!"ok".equals(Resp.infoField(info, "cluster_state"))) {
                    return false;
                }
                Object text = n.tryCall("CLUSTER", "NODES");
                if (!(text instanceof String s) || s.contains("fail") || s.contains("disconnected")) {
                    return false;
                }
                String role = n.role().orElse("");
                if ("master".equals(role)) {
                    masters++;
                } else if (!"up".equals(n.info("replication", "master_link_status"))) {
                    return false;
                }
            }
            if (masters != 3) {
                return false;
            }
            for (int[] range : RANGES) {
                Optional<RedisTopologyNode> m = slotMaster(range[0]);
                if (m.isEmpty() || m.get().role().filter("master"::equals).isEmpty()) {
                    return false;
                }
            }
            return true;
        });
    }

    @Override
    public void close() {
        nodes.forEach(RedisTopologyNode::close);
    }

    @Override
    public String toString() {
        return "RedisClusterTopology[" + endpoints() + "]";
    }
}
