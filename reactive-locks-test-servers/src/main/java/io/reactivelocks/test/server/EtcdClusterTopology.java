package io.reactivelocks.test.server;

import io.reactivelocks.test.fault.FaultProxy;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * A three-member etcd cluster from the Debian {@code etcd-server} binary, every member a child process
 * of this JVM on loopback ports, bootstrapped with a static {@code --initial-cluster}. Each member's
 * advertised peer URL is a {@link FaultProxy} in front of its real peer port, so the faults act on
 * raft traffic while clients keep reaching every member directly ({@link #endpoints()} lists the client
 * URLs, comma separated, for jetcd's {@code Client.builder().endpoints(..)}).
 *
 * <ul>
 *   <li>{@link #leader()} asks every running member's {@code /v3/maintenance/status} and takes the
 *       leader reported with the highest raft term;</li>
 *   <li>{@link #killLeader()} SIGKILLs it (the two others elect a new leader after the election
 *       timeout);</li>
 *   <li>{@link #failover()} is etcd's move-leader ({@code /v3/maintenance/transfer-leadership} on the
 *       leader, as {@code etcdctl move-leader} sends it) and returns once another member leads;</li>
 *   <li>{@link #partitionLeader()} blackholes the leader's peer proxy and cuts its connections: every
 *       peer connection <em>dialed to</em> the leader goes silent, which carries everything the leader's
 *       raft streams send, so the followers stop hearing it and elect a new leader. Connections the
 *       leader dials to the others pass through their proxies, which cannot tell who dialed, so they stay
 *       up: the partition is one-way (the old leader hears the others and steps down when it sees the
 *       higher term, but nothing it sends arrives). etcd derives member ids from the advertised peer URLs,
 *       so per-pair proxies (a full two-way cut on one machine) are not possible without network
 *       namespaces;</li>
 *   <li>{@link #slowNode(Duration)} adds the latency on the leader's peer proxy (its raft messages to the
 *       followers and their answers on those connections);</li>
 *   <li>{@link #heal()} removes proxy faults, restarts killed members (same data dir, they rejoin) and
 *       waits until every member reports healthy and a write through the leader succeeds.</li>
 * </ul>
 */
public final class EtcdClusterTopology implements Topology {

    private static final int MEMBERS = 3;
    private static final Duration HEARTBEAT = Duration.ofMillis(100);
    private static final Duration ELECTION_TIMEOUT = Duration.ofMillis(1000);
    private static final Duration AWAIT = Duration.ofSeconds(60);
    private static final Pattern LEADER = Pattern.compile("\"leader\"\\s*:\\s*\"?(\\d+)");
    private static final Pattern MEMBER_ID = Pattern.compile("\"member_id\"\\s*:\\s*\"?(\\d+)");
    private static final Pattern RAFT_TERM = Pattern.compile("\"raftTerm\"\\s*:\\s*\"?(\\d+)");

    private final List<ServerProcess> members;
    private final List<FaultProxy> peerProxies;
    private final List<String> memberIds = new ArrayList<>();

    private EtcdClusterTopology(List<ServerProcess> members, List<FaultProxy> peerProxies) {
        this.members = List.copyOf(members);
        this.peerProxies = List.copyOf(peerProxies);
    }

    /**
     * Starts three members, waits until they elect a leader and serve a write.
     *
     * @return the running cluster
     * @throws ServerUnavailableException when there is no local {@code etcd} binary
     * @throws ServerStartException when the cluster does not come up in time
     */
    public static EtcdClusterTopology start() {
        Path binary = Commands.findExecutable("etcd", "/usr/bin/etcd", "/usr/local/bin/etcd")
                .orElseThrow(() -> new ServerUnavailableException("etcd cluster: no etcd on the PATH or in /usr/bin. "
                        + EtcdServer.INSTALL_HINT));
        List<Integer> peerPorts = Loopback.freePorts(MEMBERS);
        List<FaultProxy> proxies = new ArrayList<>();
        List<ServerProcess> started = new ArrayList<>();
        try {
            for (int i = 0; i < MEMBERS; i++) {
                proxies.add(FaultProxy.start(Loopback.HOST, peerPorts.get(i)));
            }
            String initialCluster = java.util.stream.IntStream.range(0, MEMBERS)
                    .mapToObj(i -> name(i) + "=" + url(proxies.get(i).port()))
                    .collect(Collectors.joining(","));
            String token = "reactive-locks-" + UUID.randomUUID();
            // the members start at once: each one's start waits only for its client port
            List<CompletableFuture<ServerProcess>> starting = new ArrayList<>();
            for (int i = 0; i < MEMBERS; i++) {
                int index = i;
                starting.add(CompletableFuture.supplyAsync(() -> ServerProcess.builder("etcd-" + (index + 1))
                        .command(layout -> command(binary, layout, index, peerPorts.get(index),
                                proxies.get(index).port(), initialCluster, token))
                        .startTimeout(AWAIT)
                        .start()));
            }
            Starts.join(starting, started);
            EtcdClusterTopology cluster = new EtcdClusterTopology(started, proxies);
            cluster.awaitServing();
            for (ServerProcess m : started) {
                cluster.memberIds.add(cluster.status(m).flatMap(s -> find(MEMBER_ID, s))
                        .orElseThrow(() -> new ServerStartException("etcd member " + m + " reports no member id", null)));
            }
            return cluster;
        } catch (RuntimeException | Error e) {
            started.forEach(ServerProcess::close);
            proxies.forEach(FaultProxy::close);
            throw e;
        }
    }

    private static String name(int index) {
        return "m" + (index + 1);
    }

    private static String url(int port) {
        return "http://" + Loopback.HOST + ":" + port;
    }

    /** The command line of member {@code index}: real peer port to listen on, its proxy advertised. */
    static List<String> command(Path binary, ServerProcess.Layout layout, int index, int peerPort, int proxyPort,
            String initialCluster, String token) {
        String client = url(layout.port());
        return List.of(binary.toString(),
                "--name", name(index),
                "--data-dir", layout.path("data").toString(),
                "--listen-client-urls", client,
                "--advertise-client-urls", client,
                "--listen-peer-urls", url(peerPort),
                "--initial-advertise-peer-urls", url(proxyPort),
                "--initial-cluster", initialCluster,
                "--initial-cluster-state", "new",
                "--initial-cluster-token", token,
                "--heartbeat-interval", Long.toString(HEARTBEAT.toMillis()),
                "--election-timeout", Long.toString(ELECTION_TIMEOUT.toMillis()),
                "--logger", "zap",
                "--log-outputs", "stderr");
    }

    /** @return {@code "etcd-3"} */
    @Override
    public String name() {
        return "etcd-3";
    }

    /** @return the members' client URLs, comma separated, e.g. {@code http://127.0.0.1:p1,http://127.0.0.1:p2,...} */
    @Override
    public String endpoints() {
        return String.join(",", clientUrls());
    }

    /** @return the members' client URLs, in member order */
    public List<String> clientUrls() {
        return members.stream().map(m -> url(m.port())).toList();
    }

    /** @return the three members, in member order */
    @Override
    public List<ServerHandle> nodes() {
        return List.copyOf(members);
    }

    /**
     * The member the others follow: the leader named by the running members' status with the highest
     * raft term (a member cut off from the others may still name an old leader at a lower term).
     *
     * @return the leader
     * @throws IllegalStateException when no member is leader within 60 s
     */
    @Override
    public ServerHandle leader() {
        return members.get(awaitLeaderIndex(-1));
    }

    private int awaitLeaderIndex(int notIndex) {
        long deadline = System.nanoTime() + AWAIT.toNanos();
        while (true) {
            Optional<Integer> leader = currentLeaderIndex();
            if (leader.isPresent() && leader.get() != notIndex) {
                return leader.get();
            }
            if (System.nanoTime() - deadline > 0) {
                throw new IllegalStateException("etcd cluster: no leader" + (notIndex >= 0 ? " other than "
                        + members.get(notIndex) : "") + " within " + AWAIT + "; statuses: " + statuses());
            }
            LockSupport.parkNanos(Duration.ofMillis(100).toNanos());
        }
    }

    private Optional<Integer> currentLeaderIndex() {
        long bestTerm = -1;
        String bestLeader = null;
        for (ServerProcess m : members) {
            if (!m.isAlive()) {
                continue;
            }
            Optional<String> status = status(m);
            if (status.isEmpty()) {
                continue;
            }
            Optional<String> leader = find(LEADER, status.get());
            long term = find(RAFT_TERM, status.get()).map(Long::parseLong).orElse(-1L);
            if (leader.isPresent() && !leader.get().equals("0") && term > bestTerm) {
                bestTerm = term;
                bestLeader = leader.get();
            }
        }
        int index = bestLeader == null ? -1 : memberIds.indexOf(bestLeader);
        return index >= 0 && members.get(index).isAlive() ? Optional.of(index) : Optional.empty();
    }

    /** Kills the current leader with SIGKILL; the two others elect a new one after the election timeout. */
    @Override
    public void killLeader() {
        members.get(awaitLeaderIndex(-1)).kill();
    }

    /** Moves the leadership to another running member (etcd move-leader) and returns once it leads. */
    @Override
    public void failover() {
        int leader = awaitLeaderIndex(-1);
        int target = -1;
        for (int i = 0; i < MEMBERS && target < 0; i++) {
            if (i != leader && members.get(i).isAlive()) {
                target = i;
            }
        }
        if (target < 0) {
            throw new IllegalStateException("etcd cluster: no running member to move the leadership to");
        }
        ServerProcess l = members.get(leader);
        String answer = httpPost(l.host(), l.port(), "/v3/maintenance/transfer-leadership",
                "{\"targetID\":\"" + memberIds.get(target) + "\"}");
        if (!answer.startsWith("HTTP/1.1 200")) {
            throw new IllegalStateException("etcd move-leader to " + name(target) + " failed: " + answer);
        }
        awaitLeaderIndex(leader);
    }

    /** Silences every peer connection dialed to the leader (a one-way partition, see the class doc). */
    @Override
    public void partitionLeader() {
        FaultProxy proxy = peerProxies.get(awaitLeaderIndex(-1));
        proxy.blackhole();
        proxy.cutConnections();
    }

    /**
     * Delays the leader's peer traffic (the connections the followers keep to it).
     *
     * @param latency the delay added to every chunk
     */
    @Override
    public void slowNode(Duration latency) {
        Objects.requireNonNull(latency, "latency");
        peerProxies.get(awaitLeaderIndex(-1)).latency(latency, Duration.ZERO);
    }

    /** Heals the proxies, restarts killed members and waits until all three are healthy and a write succeeds. */
    @Override
    public void heal() {
        peerProxies.forEach(FaultProxy::heal);
        for (ServerProcess m : members) {
            if (!m.isAlive()) {
                m.restart();
            } else if (m.isPaused()) {
                m.resume();
            }
        }
        awaitServing();
    }

    private void awaitServing() {
        await("every member healthy", () -> members.stream().allMatch(m -> healthy(m)));
        await("a write through the leader", () -> {
            Optional<Integer> leader = currentLeaderIndex();
            if (leader.isEmpty() && memberIds.size() == MEMBERS) {
                return false;
            }
            ServerProcess target = leader.map(members::get).orElse(members.get(0));
            String key = Base64.getEncoder().encodeToString("reactive-locks-topology-probe".getBytes(StandardCharsets.UTF_8));
            try {
                return httpPost(target.host(), target.port(), "/v3/kv/put",
                        "{\"key\":\"" + key + "\",\"value\":\"" + key + "\"}").startsWith("HTTP/1.1 200");
            } catch (UncheckedIOException e) {
                return false;
            }
        });
    }

    private static boolean healthy(ServerProcess m) {
        try {
            return m.isAlive() && Probes.etcdHealthy(m.host(), m.port());
        } catch (RuntimeException e) {
            return false;
        }
    }

    private void await(String what, BooleanSupplier condition) {
        long deadline = System.nanoTime() + AWAIT.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                throw new ServerStartException("etcd cluster: not " + what + " within " + AWAIT + "; statuses: "
                        + statuses() + "\nlog of " + members.get(0) + ":\n" + members.get(0).logTail(20), null);
            }
            LockSupport.parkNanos(Duration.ofMillis(100).toNanos());
        }
    }

    private Map<String, String> statuses() {
        Map<String, String> out = new HashMap<>();
        for (int i = 0; i < MEMBERS; i++) {
            ServerProcess m = members.get(i);
            out.put(name(i), m.isAlive() ? status(m).orElse("(no answer)") : "(not running)");
        }
        return out;
    }

    /**
     * Asks one member for its status ({@code POST /v3/maintenance/status}).
     *
     * @param member a member
     * @return its JSON answer, empty when it does not answer
     */
    Optional<String> status(ServerProcess member) {
        try {
            String answer = httpPost(member.host(), member.port(), "/v3/maintenance/status", "{}");
            return answer.startsWith("HTTP/1.1 200") ? Optional.of(answer) : Optional.empty();
        } catch (UncheckedIOException e) {
            return Optional.empty();
        }
    }

    private static Optional<String> find(Pattern pattern, String text) {
        Matcher m = pattern.matcher(text);
        return m.find() ? Optional.of(m.group(1)) : Optional.empty();
    }

    /** Sends an HTTP/1.1 POST of a JSON body with {@code Connection: close}, bounded, and returns the whole answer. */
    static String httpPost(String host, int port, String path, String json) {
        byte[] body = json.getBytes(StandardCharsets.UTF_8);
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress(host, port), 500);
            s.setSoTimeout(3000);
            String head = "POST " + path + " HTTP/1.1\r\nHost: " + host + ":" + port
                    + "\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: " + body.length + "\r\n\r\n";
            s.getOutputStream().write(head.getBytes(StandardCharsets.US_ASCII));
            s.getOutputStream().write(body);
            s.getOutputStream().flush();
            return new String(s.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Stops every member, deletes their data and closes the peer proxies. */
    @Override
    public void close() {
        members.forEach(ServerProcess::close);
        peerProxies.forEach(FaultProxy::close);
    }

    @Override
    public String toString() {
        return "EtcdClusterTopology" + clientUrls();
    }
}
