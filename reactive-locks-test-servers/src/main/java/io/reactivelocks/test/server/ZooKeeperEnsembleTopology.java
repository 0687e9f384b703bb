package io.reactivelocks.test.server;

import io.reactivelocks.test.fault.FaultProxy;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/**
 * A ZooKeeper ensemble of three servers from the jars of the Debian package {@code zookeeper}, each a
 * child JVM ({@code QuorumPeerMain}) of this JVM on loopback ports, tick time 250 ms. Every server's
 * {@code zoo.cfg} names the two others through {@link FaultProxy} instances of its own (one per
 * direction, quorum port and election port), so the faults act on the traffic between two given
 * servers while clients reach every server directly ({@link #endpoints()} is the multi-host connect
 * string {@code host:p1,host:p2,host:p3}).
 *
 * <ul>
 *   <li>{@link #leader()} asks every running server's {@code srvr} for {@code Mode: leader};</li>
 *   <li>{@link #killLeader()} SIGKILLs it (the followers lose it after {@code syncLimit} ticks and elect
 *       a new leader);</li>
 *   <li>{@link #failover()} stops the leader cleanly (SIGTERM), waits until the two others elect a new
 *       leader, then starts the old one again, which rejoins as a follower (ZooKeeper has no
 *       leadership transfer of its own);</li>
 *   <li>{@link #partitionLeader()} blackholes and cuts every proxy between the leader and the others,
 *       both directions: followers reach a leader only through the quorum port, which always goes through
 *       these proxies, so the leader loses its quorum and the others elect a new one. ZooKeeper's
 *       election answers a connection from a lower server id by dialing back the address that server
 *       announces (its real port, past the proxies); those direct connections are destroyed with
 *       {@code ss -K} (root), after which nothing reaches across the blackholed proxies to be dialed back.
 *       Without root they stay, election notifications pass, and the followers may keep voting for the
 *       cut-off leader until the heal (no server can lead or follow across the cut either way);</li>
 *   <li>{@link #slowNode(Duration)} adds the latency on every proxy between the leader and the others;</li>
 *   <li>{@link #heal()} removes proxy faults, restarts stopped servers (same data dir) and waits until
 *       every server serves with exactly one leader.</li>
 * </ul>
 */
public final class ZooKeeperEnsembleTopology implements Topology {

    private static final int SERVERS = 3;
    /** ZooKeeper's tick: sessions may last from 2 ticks; followers drop a silent leader after {@link #SYNC_LIMIT} ticks. */
    public static final Duration TICK = Duration.ofMillis(250);
    private static final int INIT_LIMIT = 10;
    private static final int SYNC_LIMIT = 6;
    private static final Duration AWAIT = Duration.ofSeconds(60);

    private final List<ServerProcess> servers;
    /** {@code quorum[i][j]}: how server i reaches server j's quorum port (null on the diagonal). */
    private final FaultProxy[][] quorum;
    /** {@code election[i][j]}: how server i reaches server j's election port (null on the diagonal). */
    private final FaultProxy[][] election;

    /** The servers' real quorum and election ports ({@code 2i}, {@code 2i + 1}). */
    private final List<Integer> ports;

    private ZooKeeperEnsembleTopology(List<ServerProcess> servers, List<Integer> ports, FaultProxy[][] quorum,
            FaultProxy[][] election) {
        this.servers = List.copyOf(servers);
        this.ports = List.copyOf(ports);
        this.quorum = quorum;
        this.election = election;
    }

    /**
     * Starts three servers and waits until they serve with one leader.
     *
     * @return the running ensemble
     * @throws ServerUnavailableException when the ZooKeeper jar is not installed
     * @throws ServerStartException when the ensemble does not come up in time
     */
    public static ZooKeeperEnsembleTopology start() {
        if (!Files.isRegularFile(ZooKeeperServer.ZOOKEEPER_JAR)) {
            throw new ServerUnavailableException("zookeeper ensemble: no " + ZooKeeperServer.ZOOKEEPER_JAR + ". "
                    + ZooKeeperServer.INSTALL_HINT);
        }
        List<Integer> ports = Loopback.freePorts(2 * SERVERS);
        FaultProxy[][] quorum = new FaultProxy[SERVERS][SERVERS];
        FaultProxy[][] election = new FaultProxy[SERVERS][SERVERS];
        List<ServerProcess> started = new ArrayList<>();
        try {
            for (int i = 0; i < SERVERS; i++) {
                for (int j = 0; j < SERVERS; j++) {
                    if (i != j) {
                        quorum[i][j] = FaultProxy.start(Loopback.HOST, quorumPort(ports, j));
                        election[i][j] = FaultProxy.start(Loopback.HOST, electionPort(ports, j));
                    }
                }
            }
            // the three JVMs start at once: each one's start waits only for its client port
            List<CompletableFuture<ServerProcess>> starting = new ArrayList<>();
            for (int i = 0; i < SERVERS; i++) {
                int self = i;
                starting.add(CompletableFuture.supplyAsync(() -> ServerProcess.builder("zookeeper-" + (self + 1))
                        .prepare(layout -> {
                            try {
                                Files.createDirectories(layout.path("data"));
                                Files.writeString(layout.path("data/myid"), Integer.toString(self + 1), StandardCharsets.US_ASCII);
                                Files.writeString(layout.path("zoo.cfg"), config(layout, self, ports, quorum, election),
                                        StandardCharsets.UTF_8);
                            } catch (IOException e) {
                                throw new ServerStartException("cannot write zoo.cfg in " + layout.directory() + ": " + e, e);
                            }
                        })
                        .command(ZooKeeperEnsembleTopology::command)
                        .startTimeout(AWAIT)
                        .start()));
            }
            Starts.join(starting, started);
            ZooKeeperEnsembleTopology ensemble = new ZooKeeperEnsembleTopology(started, ports, quorum, election);
            ensemble.awaitServing();
            return ensemble;
        } catch (RuntimeException | Error e) {
            started.forEach(ServerProcess::close);
            closeAll(quorum);
            closeAll(election);
            throw e;
        }
    }

    private static int quorumPort(List<Integer> ports, int server) {
        return ports.get(2 * server);
    }

    private static int electionPort(List<Integer> ports, int server) {
        return ports.get(2 * server + 1);
    }

    /** The zoo.cfg of server {@code self}: its own real quorum/election ports, the others through its proxies. */
    static String config(ServerProcess.Layout layout, int self, List<Integer> ports, FaultProxy[][] quorum,
            FaultProxy[][] election) {
        long tick = TICK.toMillis();
        List<String> lines = new ArrayList<>(List.of(
                "tickTime=" + tick,
                "initLimit=" + INIT_LIMIT,
                "syncLimit=" + SYNC_LIMIT,
                "dataDir=" + layout.path("data"),
                "clientPort=" + layout.port(),
                "clientPortAddress=" + layout.host(),
                "maxClientCnxns=0",
                "minSessionTimeout=" + (2 * tick),
                "maxSessionTimeout=60000",
                "admin.enableServer=false",
                "4lw.commands.whitelist=*",
                "standaloneEnabled=false",
                "reconfigEnabled=false",
                "cnxTimeout=1000"));
        for (int j = 0; j < SERVERS; j++) {
            String q = j == self ? Loopback.HOST + ":" + quorumPort(ports, j) : quorum[self][j].host() + ":" + quorum[self][j].port();
            String e = j == self ? Integer.toString(electionPort(ports, j)) : Integer.toString(election[self][j].port());
            lines.add("server." + (j + 1) + "=" + q + ":" + e + ":participant");
        }
        return String.join("\n", lines) + "\n";
    }

    /** The command line of one server's child JVM. */
    static List<String> command(ServerProcess.Layout layout) {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        String classPath = ZooKeeperServer.ZOOKEEPER_JAR
                + (Files.isRegularFile(ZooKeeperServer.SLF4J_SIMPLE_JAR) ? ":" + ZooKeeperServer.SLF4J_SIMPLE_JAR : "");
        return List.of(java,
                "-Xms32m", "-Xmx192m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xss512k",
                "-Djava.awt.headless=true",
                "-Dzookeeper.4lw.commands.whitelist=*",
                "-Dzookeeper.admin.enableServer=false",
                "-Dzookeeper.jmx.log4j.disable=true",
                // empty container nodes are deleted within seconds instead of the default minute, also one
                // that never had a child (a lock's parent created by an acquire that failed without a
                // quorum before it could create its own node), which ZooKeeper by default never deletes
                "-Dznode.container.checkIntervalMs=1000",
                "-Dznode.container.maxNeverUsedIntervalMs=5000",
                "-cp", classPath,
                "org.apache.zookeeper.server.quorum.QuorumPeerMain",
                layout.path("zoo.cfg").toString());
    }

    /** @return {@code "zookeeper-3"} */
    @Override
    public String name() {
        return "zookeeper-3";
    }

    /** @return the multi-host connect string, {@code 127.0.0.1:p1,127.0.0.1:p2,127.0.0.1:p3} */
    @Override
    public String endpoints() {
        return String.join(",", servers.stream().map(s -> s.host() + ":" + s.port()).toList());
    }

    /** @return the three servers, in myid order */
    @Override
    public List<ServerHandle> nodes() {
        return List.copyOf(servers);
    }

    /**
     * The server whose {@code srvr} says {@code Mode: leader} (when two say so during a partition, the
     * one the others follow is not known from {@code srvr}: the method waits until only one says so).
     *
     * @return the leader
     * @throws IllegalStateException when no single server is leader within 60 s
     */
    @Override
    public ServerHandle leader() {
        return servers.get(awaitLeaderIndex(-1));
    }

    private int awaitLeaderIndex(int notIndex) {
        long deadline = System.nanoTime() + AWAIT.toNanos();
        while (true) {
            int leader = currentLeaderIndex();
            if (leader >= 0 && leader != notIndex) {
                return leader;
            }
            if (System.nanoTime() - deadline > 0) {
                throw new IllegalStateException("zookeeper ensemble: no single leader" + (notIndex >= 0 ? " other than "
                        + servers.get(notIndex) : "") + " within " + AWAIT + "; modes: " + modes());
            }
            LockSupport.parkNanos(Duration.ofMillis(100).toNanos());
        }
    }

    private int currentLeaderIndex() {
        int leader = -1;
        for (int i = 0; i < SERVERS; i++) {
            if ("leader".equals(mode(i))) {
                if (leader >= 0) {
                    return -1;
                }
                leader = i;
            }
        }
        return leader;
    }

    /** @return {@code leader}, {@code follower}, {@code down} or {@code not serving} */
    private String mode(int index) {
        ServerProcess s = servers.get(index);
        if (!s.isAlive()) {
            return "down";
        }
        try {
            String srvr = Probes.zooKeeperFourLetterWord(s.host(), s.port(), "srvr");
            for (String line : srvr.split("\n")) {
                if (line.startsWith("Mode:")) {
                    return line.substring("Mode:".length()).trim();
                }
            }
            return "not serving";
        } catch (RuntimeException e) {
            return "not serving";
        }
    }

    private Map<String, String> modes() {
        Map<String, String> out = new HashMap<>();
        for (int i = 0; i < SERVERS; i++) {
            out.put("server." + (i + 1), mode(i));
        }
        return out;
    }

    /** Kills the leader with SIGKILL; the followers elect a new one. */
    @Override
    public void killLeader() {
        servers.get(awaitLeaderIndex(-1)).kill();
    }

    /** Stops the leader cleanly, waits for a new leader, restarts the old one as a follower. */
    @Override
    public void failover() {
        int leader = awaitLeaderIndex(-1);
        ServerProcess old = servers.get(leader);
        long pid = old.pid();
        Commands.signal("TERM", List.of(pid));
        try {
            ProcessHandle.of(pid).ifPresent(h -> {
                try {
                    h.onExit().get(15, TimeUnit.SECONDS);
                } catch (Exception e) {
                    old.kill();
                }
            });
        } finally {
            awaitLeaderIndex(leader);
            old.restart();
        }
    }

    /** Cuts every quorum and election link between the leader and the others, both directions. */
    @Override
    public void partitionLeader() {
        int leader = awaitLeaderIndex(-1);
        for (FaultProxy p : linksOf(leader)) {
            p.blackhole();
            p.cutConnections();
        }
        dropDirectElectionConnections();
    }

    /**
     * ZooKeeper's election answers a connection from a lower server id by dialing back the address that
     * server announces, its real election port, past our proxies; such a direct connection would let
     * the cut-off leader's votes through (the followers could keep electing it). Destroy every
     * established connection on a real election port with {@code ss -K} (needs root; when it fails the
     * partition lets election notifications through, as the class doc says): the followers reconnect to
     * each other, and nothing can reach across the blackholed proxies to be dialed back.
     */
    private void dropDirectElectionConnections() {
        List<String> filter = new ArrayList<>();
        for (int i = 0; i < SERVERS; i++) {
            int e = electionPort(ports, i);
            filter.add((filter.isEmpty() ? "" : "or ") + "dport = :" + e + " or sport = :" + e);
        }
        List<String> command = new ArrayList<>(List.of("ss", "-K", "-t", "state", "established"));
        command.add("( " + String.join(" ", filter) + " )");
        Commands.run(command, null, null, Duration.ofSeconds(10));
    }

    /**
     * Delays every link between the leader and the others.
     *
     * @param latency the delay added to every chunk
     */
    @Override
    public void slowNode(Duration latency) {
        Objects.requireNonNull(latency, "latency");
        for (FaultProxy p : linksOf(awaitLeaderIndex(-1))) {
            p.latency(latency, Duration.ZERO);
        }
    }

    private List<FaultProxy> linksOf(int server) {
        List<FaultProxy> out = new ArrayList<>();
        for (int j = 0; j < SERVERS; j++) {
            if (j != server) {
                out.add(quorum[server][j]);
                out.add(quorum[j][server]);
                out.add(election[server][j]);
                out.add(election[j][server]);
            }
        }
        return out;
    }

    /** Heals every link, restarts stopped servers and waits until all three serve with one leader. */
    @Override
    public void heal() {
        for (FaultProxy[] row : quorum) {
            for (FaultProxy p : row) {
                if (p != null) {
                    p.heal();
                }
            }
        }
        for (FaultProxy[] row : election) {
            for (FaultProxy p : row) {
                if (p != null) {
                    p.heal();
                }
            }
        }
        for (ServerProcess s : servers) {
            if (!s.isAlive()) {
                s.restart();
            } else if (s.isPaused()) {
                s.resume();
            }
        }
        awaitServing();
    }

    private void awaitServing() {
        await("every server serving with one leader", () -> {
            int leaders = 0;
            for (int i = 0; i < SERVERS; i++) {
                String mode = mode(i);
                if (mode.equals("leader")) {
                    leaders++;
                } else if (!mode.equals("follower")) {
                    return false;
                }
            }
            return leaders == 1;
        });
    }

    private void await(String what, BooleanSupplier condition) {
        long deadline = System.nanoTime() + AWAIT.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                throw new ServerStartException("zookeeper ensemble: not " + what + " within " + AWAIT + "; modes: "
                        + modes() + "\nlog of " + servers.get(0) + ":\n" + servers.get(0).logTail(20), null);
            }
            LockSupport.parkNanos(Duration.ofMillis(100).toNanos());
        }
    }

    private static void closeAll(FaultProxy[][] proxies) {
        for (FaultProxy[] row : proxies) {
            for (FaultProxy p : row) {
                if (p != null) {
                    p.close();
                }
            }
        }
    }

    /** Stops every server, deletes their data and closes the proxies. */
    @Override
    public void close() {
        servers.forEach(ServerProcess::close);
        closeAll(quorum);
        closeAll(election);
    }

    @Override
    public String toString() {
        return "ZooKeeperEnsembleTopology[" + endpoints() + "]";
    }
}
