package io.reactivelocks.zookeeper;

import io.reactivelocks.test.fault.FaultProxy;
import io.reactivelocks.test.server.ZooKeeperServer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.zookeeper.KeeperException;

/**
 * A real ZooKeeper child process (from {@link ZooKeeperServer}, tick 500 ms) plus Curator
 * clients for it, directly or each through its own {@link FaultProxy}. Every backend gets its
 * own Curator client (its own session), as separate processes would. Blocking methods are for
 * test threads only.
 */
final class ZooKeeperTestSupport implements AutoCloseable {

    /**
     * Session timeout of the clients whose session a test cuts off (through a {@link FaultProxy}) and
     * waits to expire: the lease time of every test lock.
     */
    static final Duration SESSION = Duration.ofSeconds(2);

    /**
     * Session timeout of the clients straight to the server, whose session no test expires. A ZooKeeper
     * client drops its connection when it hears nothing for two thirds of the session (1.33 s of a 2 s
     * one): a loaded CI machine stalls that long now and then, and a request in flight then outlasts a
     * test's 2 s request timeout (a release did). The lease time stays {@link #SESSION}: a grant's local
     * deadline is the shorter of the two.
     */
    static final Duration STEADY_SESSION = Duration.ofSeconds(10);

    final ZooKeeperServer server;
    /** A root unique to this fixture, so runs and test classes never see each other's nodes. */
    final String root;
    private final CuratorFramework checker;
    private final List<FaultProxy> proxies = new ArrayList<>();
    private final Map<ZooKeeperLockBackend, FaultProxy> proxyOf = new ConcurrentHashMap<>();

    /** The calls of each Curator client made by {@link #curator}, and of each backend made by {@link #owning}. */
    private static final Map<Object, CuratorCalls> CALLS = new ConcurrentHashMap<>();

    /** The server shared by the classes that do not hurt it or count its totals; it dies with the JVM (the fixture's shutdown hook). */
    private static ZooKeeperServer shared;

    private final boolean ownsServer;

    private ZooKeeperTestSupport(ZooKeeperServer server, boolean ownsServer) {
        this.server = server;
        this.ownsServer = ownsServer;
        this.root = "/rltest-" + UUID.randomUUID().toString().substring(0, 8);
        this.checker = curator(server.connectString(), STEADY_SESSION);
    }

    /**
     * @return a fixture on the JVM's shared server (started on first use), under a root of its own: for
     *         classes that neither pause, kill or restart the server nor read its server-wide counters
     *         ({@code cons}, {@code mntr}, {@code wchs}) — one ZooKeeper JVM fewer to start per class
     */
    static ZooKeeperTestSupport start() {
        synchronized (ZooKeeperTestSupport.class) {
            if (shared == null) {
                shared = ZooKeeperServer.start();
            }
            return new ZooKeeperTestSupport(shared, false);
        }
    }

    /** @return a fixture on a server of its own, closed with it: for classes that hurt it or count its totals */
    static ZooKeeperTestSupport startOwn() {
        return new ZooKeeperTestSupport(ZooKeeperServer.start(), true);
    }

    /** @return options with this fixture's root */
    ZooKeeperLockOptions options() {
        return ZooKeeperLockOptions.builder().root(root).build();
    }

    /**
     * @param connectString where to connect
     * @param session       the session timeout to ask for
     * @return a started Curator client
     */
    static CuratorFramework curator(String connectString, Duration session) {
        return curator(CuratorFrameworkFactory.builder().connectString(connectString), session);
    }

    static CuratorFramework curator(CuratorFrameworkFactory.Builder builder, Duration session) {
        CuratorFramework c = builder
                .sessionTimeoutMs((int) session.toMillis())
                .connectionTimeoutMs(5_000)
                .retryPolicy(new ExponentialBackoffRetry(50, 3))
                .build();
        CuratorCalls calls = CuratorCalls.attach(c);
        CALLS.put(c, calls);
        c.start();
        return c;
    }

    /**
     * @param client  a client from {@link #curator}, which the backend takes over
     * @param options the backend's options
     * @return a backend owning {@code client}, whose calls {@link #callsOf} knows
     */
    static ZooKeeperLockBackend owning(CuratorFramework client, ZooKeeperLockOptions options) {
        ZooKeeperLockBackend b = ZooKeeperLockBackend.owning(client, options);
        CALLS.put(b, callsOf(client));
        return b;
    }

    /**
     * @param clientOrBackend a client from {@link #curator}, or a backend from {@link #owning} (or this fixture)
     * @return what that client saw and sent
     */
    static CuratorCalls callsOf(Object clientOrBackend) {
        CuratorCalls c = CALLS.get(clientOrBackend);
        if (c == null) {
            throw new IllegalArgumentException("not a client or backend of the test support: " + clientOrBackend);
        }
        return c;
    }

    /** @return a new backend with its own Curator client straight to the server */
    ZooKeeperLockBackend backend() {
        return backend(options());
    }

    /**
     * @param options the backend's options
     * @return a new backend with its own Curator client straight to the server
     */
    ZooKeeperLockBackend backend(ZooKeeperLockOptions options) {
        return owning(curator(server.connectString(), STEADY_SESSION), options);
    }

    /**
     * @return a new backend with its own Curator client straight to the server on a {@link #SESSION}
     *         session: for a test that freezes, kills or cuts the server and waits for the session to end
     */
    ZooKeeperLockBackend expiringBackend() {
        return owning(curator(server.connectString(), SESSION), options());
    }

    /** @return a new backend whose own Curator client talks to the server through a new fault proxy ({@link #proxyOf}) */
    ZooKeeperLockBackend proxiedBackend() {
        return proxiedBackend(options());
    }

    /**
     * @param options the backend's options
     * @return a new backend whose own Curator client talks to the server through a new fault proxy
     */
    ZooKeeperLockBackend proxiedBackend(ZooKeeperLockOptions options) {
        FaultProxy proxy = FaultProxy.start(server.host(), server.port());
        synchronized (proxies) {
            proxies.add(proxy);
        }
        ZooKeeperLockBackend b = owning(curator(proxy.host() + ":" + proxy.port(), SESSION), options);
        proxyOf.put(b, proxy);
        return b;
    }

    FaultProxy proxyOf(ZooKeeperLockBackend backend) {
        FaultProxy p = proxyOf.get(backend);
        if (p == null) {
            throw new IllegalArgumentException("not a proxied backend: " + backend);
        }
        return p;
    }

    /**
     * Partitions {@code backend} from ZooKeeper (its proxy blackholes both directions) until the
     * server has ended its session (the session's connection is gone from the server's
     * {@code cons} list: it expired there), then cuts its connections and heals, on a helper
     * thread, so that the rest of the test can use the backend again: Curator learns of the
     * expiry when it reconnects (LOST) and moves to a new session. Returns at once. The backend's
     * client is watched through its {@link CuratorCalls}.
     *
     * @param backend a backend from {@link #proxiedBackend()}
     */
    void partitionUntilSessionLost(ZooKeeperLockBackend backend) {
        FaultProxy proxy = proxyOf(backend);
        CuratorCalls calls = callsOf(backend);
        long lost = calls.losses();
        long sessionId = calls.sessionId();
        proxy.blackhole();
        Thread healer = new Thread(() -> {
            try {
                org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(30))
                        .pollInterval(java.time.Duration.ofMillis(20))
                        .until(() -> calls.losses() != lost || (sessionId != 0 && !serverKnowsSession(sessionId)));
            } catch (org.awaitility.core.ConditionTimeoutException e) {
                // heal anyway: the test's own assertions report what did not happen
            }
            proxy.cutConnections();
            proxy.heal();
        }, "zookeeper-test-healer");
        healer.setDaemon(true);
        healer.start();
    }

    /**
     * @param sessionId a session id
     * @return whether the server still has a connection of that session (four-letter word {@code cons})
     */
    boolean serverKnowsSession(long sessionId) {
        return fourLetterWord("cons").contains("sid=0x" + Long.toHexString(sessionId) + ",");
    }

    /** @return the server's answer to a four-letter word */
    String fourLetterWord(String word) {
        try (java.net.Socket s = new java.net.Socket()) {
            s.connect(new java.net.InetSocketAddress(server.host(), server.port()), 2_000);
            s.setSoTimeout(2_000);
            s.getOutputStream().write(word.getBytes(StandardCharsets.US_ASCII));
            s.getOutputStream().flush();
            return new String(s.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException("four-letter word " + word + " failed", e);
        }
    }

    /**
     * @param key a key of the four-letter word {@code mntr}
     * @return its value, 0 when the server does not list it (yet)
     */
    long mntr(String key) {
        for (String line : fourLetterWord("mntr").split("\n")) {
            String[] kv = line.split("\t");
            if (kv.length == 2 && kv[0].equals(key)) {
                return (long) Double.parseDouble(kv[1].trim());
            }
        }
        return 0;
    }

    /**
     * @return the reads (exists, getChildren, getData) the server answered under this fixture's root
     *         so far: {@code mntr}'s count of reads of the root's namespace (the first path segment)
     */
    long readsUnderRoot() {
        return mntr("zk_cnt_" + root.substring(1) + "_read_per_namespace");
    }

    /** @return how many watches node deletions fired on the server so far ({@code mntr}, server-wide) */
    long deletionWatchesFired() {
        return mntr("zk_sum_node_deleted_watch_count");
    }

    /**
     * @param name a lock name
     * @return the watches the server holds on the nodes of the lock's queue (four-letter word
     *         {@code wchp}): the watched node's name, with the id of each session watching it
     */
    Map<String, List<Long>> watchesOnQueueOf(String name) {
        String lock = new ZNodeNames(root).lockPath(name) + "/";
        Map<String, List<Long>> out = new java.util.TreeMap<>();
        List<Long> current = null;
        for (String line : fourLetterWord("wchp").split("\n")) {
            if (line.startsWith("/")) {
                current = line.startsWith(lock) ? out.computeIfAbsent(line.substring(lock.length()), k -> new ArrayList<>()) : null;
            } else if (current != null && line.trim().startsWith("0x")) {
                current.add(Long.parseUnsignedLong(line.trim().substring(2), 16));
            }
        }
        return out;
    }

    /**
     * @param name a lock name
     * @return how many watches the server holds on the nodes of the lock's queue
     */
    long watchCountOnQueueOf(String name) {
        return watchesOnQueueOf(name).values().stream().mapToLong(List::size).sum();
    }

    /** Closes the fault proxies made so far (after their backends were closed). */
    void closeProxies() {
        List<FaultProxy> done;
        synchronized (proxies) {
            done = new ArrayList<>(proxies);
            proxies.clear();
        }
        proxyOf.values().removeAll(done);
        done.forEach(FaultProxy::close);
    }

    /** @return every node under this fixture's root (paths relative to it), depth first */
    List<String> nodes() {
        List<String> out = new ArrayList<>();
        collect(root, out);
        return out;
    }

    /**
     * @param name a lock name
     * @return the children of the lock's node (empty when there is none)
     */
    List<String> children(String name) {
        try {
            return checker.getChildren().forPath(new ZNodeNames(root).lockPath(name));
        } catch (KeeperException.NoNodeException e) {
            return List.of();
        } catch (Exception e) {
            throw new IllegalStateException("could not list the nodes of lock " + name, e);
        }
    }

    private void collect(String path, List<String> out) {
        List<String> children;
        try {
            children = checker.getChildren().forPath(path);
        } catch (KeeperException.NoNodeException e) {
            return;
        } catch (Exception e) {
            throw new IllegalStateException("could not list " + path, e);
        }
        for (String c : children) {
            String p = path + "/" + c;
            out.add(p.substring(root.length()));
            collect(p, out);
        }
    }

    /** @return the checker's data of a node, as text */
    String data(String path) {
        try {
            return new String(checker.getData().forPath(path), StandardCharsets.UTF_8);
        } catch (Exception e) {
            throw new IllegalStateException("could not read " + path, e);
        }
    }

    CuratorFramework checker() {
        return checker;
    }

    @Override
    public void close() {
        try {
            closeProxies();
            checker.close();
        } finally {
            if (ownsServer) {
                server.close();
            }
        }
    }
}
