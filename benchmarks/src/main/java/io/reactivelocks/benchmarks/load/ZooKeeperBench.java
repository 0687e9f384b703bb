package io.reactivelocks.benchmarks.load;

import io.reactivelocks.LockOptions;
import io.reactivelocks.LockStore;
import io.reactivelocks.spi.GrantRequest;
import io.reactivelocks.test.server.ZooKeeperServer;
import io.reactivelocks.zookeeper.ZooKeeperLockOptions;
import io.reactivelocks.zookeeper.ZooKeeperLocks;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.HdrHistogram.Histogram;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.api.transaction.CuratorTransactionResult;
import org.apache.curator.framework.imps.ProtectedUtils;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.recipes.locks.InterProcessReadWriteLock;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreV2;
import org.apache.curator.framework.recipes.locks.Lease;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.curator.x.async.AsyncCuratorFramework;
import org.apache.curator.x.async.api.CreateOption;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZooDefs;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * ZooKeeper: the raw Curator-async floor (our uncontended requests: one transaction bumping the
 * lock node's version and creating a protected ephemeral-sequential node, then its delete),
 * reactive-locks, and Curator's {@code InterProcessMutex} (blocking: one platform thread per
 * worker). Each contender has its own Curator client and session.
 */
final class ZooKeeperBench extends BackendBench {

    private ZooKeeperServer server;
    private CuratorFramework probe;

    ZooKeeperBench() {
        super("zookeeper", "ZooKeeper");
    }

    @Override
    void start() {
        server = ZooKeeperServer.start();
        probe = curator(server.connectString());
    }

    String connectString() {
        return server.connectString();
    }

    static CuratorFramework curator(String connect) {
        CuratorFramework c = CuratorFrameworkFactory.builder().connectString(connect)
                .retryPolicy(new ExponentialBackoffRetry(100, 3)).build();
        c.start();
        try {
            if (!c.blockUntilConnected(30, TimeUnit.SECONDS)) {
                throw new IllegalStateException("no ZooKeeper connection to " + connect);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
        return c;
    }

    @Override
    List<Contender> contenders() {
        String cs = server.connectString();
        return List.of(new Raw(cs), ours(cs), new Mutex(cs), new SimpleLocks.ZooKeeper(cs), new RawHandoffs.ZooKeeper(cs));
    }

    /** B8: ours against Curator's InterProcessSemaphoreV2 and InterProcessReadWriteLock. */
    @Override
    List<Primitives.Group> primitives() {
        String cs = server.connectString();
        return List.of(
                new Primitives.Group("sem", "semaphore (c workers on one name, N = max(1, c/2))", true, true, true, List.of(
                        oursClient(cs, c -> {
                            LockStore store = ZooKeeperLocks.connect(c);
                            return OursPrimitive.semaphore("zookeeper", store.semaphores(LockOptions.defaults()), OursPrimitive.closing(store, c::close));
                        }),
                        new CuratorSemaphore(cs))),
                new Primitives.Group("read", "read-write lock, read side (c readers on one name)", true, false, false, List.of(
                        oursClient(cs, c -> {
                            LockStore store = ZooKeeperLocks.connect(c);
                            return OursPrimitive.read("zookeeper", store.readWriteLocks(LockOptions.defaults()), OursPrimitive.closing(store, c::close));
                        }),
                        new Mutex(cs, "curator-read", "Curator InterProcessReadWriteLock read",
                                (c, name) -> new InterProcessReadWriteLock(c, "/bench-rw/" + name).readLock()))),
                new Primitives.Group("write", "read-write lock, write side (a name per worker)", false, false, true, List.of(
                        oursClient(cs, c -> {
                            LockStore store = ZooKeeperLocks.connect(c);
                            return OursPrimitive.write("zookeeper", store.readWriteLocks(LockOptions.defaults()), OursPrimitive.closing(store, c::close));
                        }),
                        new Mutex(cs, "curator-write", "Curator InterProcessReadWriteLock write",
                                (c, name) -> new InterProcessReadWriteLock(c, "/bench-rw/" + name).writeLock()))));
    }

    /** One of ours on its own Curator client. */
    static Contender oursClient(String connect, java.util.function.Function<CuratorFramework, Contender> make) {
        return make.apply(curator(connect));
    }

    @Override
    Counts counts() {
        return new Counts(Long.parseLong(fourLetter("mntr", "zk_packets_received")), -1);
    }

    /** Sends a four-letter word; with a key, returns that key's value from a tab-separated answer. */
    String fourLetter(String word, String key) {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress(server.host(), server.port()), 5000);
            s.setSoTimeout(10_000);
            OutputStream out = s.getOutputStream();
            out.write(word.getBytes(StandardCharsets.US_ASCII));
            out.flush();
            InputStream in = s.getInputStream();
            ByteArrayOutputStream buf = new ByteArrayOutputStream();
            in.transferTo(buf);
            String text = buf.toString(StandardCharsets.UTF_8);
            if (key == null) {
                return text;
            }
            for (String line : text.split("\n")) {
                String[] kv = line.split("\t");
                if (kv.length == 2 && kv[0].trim().equals(key)) {
                    return kv[1].trim();
                }
            }
            throw new IllegalStateException("no " + key + " in '" + word + "': " + text);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    String counterDescription() {
        return "ZooKeeper four-letter word `mntr`, delta of `zk_packets_received`: every request packet the server "
                + "read (creates, deletes, reads, watch removals, session pings)";
    }

    @Override
    Histogram roundTrip(int samples) {
        Histogram h = new Histogram(3);
        AsyncCuratorFramework async = AsyncCuratorFramework.wrap(probe);
        Flux.range(0, samples).concatMap(i -> {
            long t0 = System.nanoTime();
            return Mono.fromCompletionStage(() -> async.checkExists().forPath("/zookeeper"))
                    .doOnNext(x -> h.recordValue(System.nanoTime() - t0));
        }).blockLast(Duration.ofMinutes(1));
        return h;
    }

    @Override
    String roundTripDescription() {
        return "`exists /zookeeper` through Curator's async API";
    }

    @Override
    Map<String, String> serverInfo() {
        Map<String, String> m = info();
        String srvr = fourLetter("srvr", null);
        m.put("version", srvr.lines().filter(l -> l.startsWith("Zookeeper version")).findFirst().orElse("?"));
        String conf = fourLetter("conf", null);
        StringBuilder c = new StringBuilder();
        for (String line : conf.split("\n")) {
            if (line.startsWith("tickTime") || line.startsWith("maxSessionTimeout") || line.startsWith("minSessionTimeout")) {
                c.append(line.trim()).append(", ");
            }
        }
        m.put("settings", c + "forceSync=yes (default: the transaction log is fsynced before each write is acknowledged)");
        m.put("command line", commandLine(server.pid()));
        return m;
    }

    @Override
    long serverPid() {
        return server.pid();
    }

    @Override
    public void close() {
        if (probe != null) {
            probe.close();
        }
        if (server != null) {
            server.close();
        }
    }

    // ------------------------------------------------------------------ contenders

    /**
     * The floor: the two requests of our uncontended acquire + release — one transaction that bumps the
     * lock node's data version and creates the owner's protected ephemeral-sequential node (whose
     * answer proves it first: the node is checked to be the only child only once per name here, as ours
     * knows the lock free from its last grant), then the delete of the node.
     */
    static final class Raw extends Contender {
        private static final byte[] NO_DATA = new byte[0];
        private final CuratorFramework client;
        private final AsyncCuratorFramework async;
        private final Map<String, Boolean> made = new ConcurrentHashMap<>();

        Raw(String connect) {
            super("zookeeper", "raw", "raw Curator async multi(setData, create) + delete (floor)", Role.FLOOR);
            client = curator(connect);
            async = AsyncCuratorFramework.wrap(client);
        }

        @Override
        Mono<Void> cycle(String name, int worker) {
            return Mono.defer(() -> {
                String owner = GrantRequest.newOwner();
                String parent = "/bench-raw/n-" + Base64.getUrlEncoder().withoutPadding()
                        .encodeToString(name.getBytes(StandardCharsets.UTF_8));
                // the container, created when first used and again when the server pruned it (as ours does)
                Mono<Void> container = Mono.fromCompletionStage(() -> async.create()
                                .withOptions(EnumSet.of(CreateOption.createParentsAsContainers), CreateMode.CONTAINER,
                                        ZooDefs.Ids.OPEN_ACL_UNSAFE)
                                .forPath(parent, NO_DATA))
                        .onErrorResume(e -> e instanceof KeeperException.NodeExistsException, e -> Mono.empty())
                        .doOnSuccess(x -> made.put(parent, true)).then();
                String path = ProtectedUtils.toProtectedZNodePath(parent + "/lock-" + owner + "-",
                        UUID.randomUUID().toString());
                Mono<List<CuratorTransactionResult>> multi = Mono.fromCompletionStage(
                        () -> async.transaction().forOperations(List.of(
                                async.transactionOp().setData().withVersion(-1).forPath(parent, NO_DATA),
                                async.transactionOp().create().withOptions(CreateMode.EPHEMERAL_SEQUENTIAL, ZooDefs.Ids.OPEN_ACL_UNSAFE, false)
                                        .forPath(path, owner.getBytes(StandardCharsets.UTF_8)))));
                return (made.containsKey(parent) ? Mono.<Void>empty() : container).then(multi)
                        .onErrorResume(e -> e instanceof KeeperException.NoNodeException, e -> container.then(multi))
                        .flatMap(results -> {
                            String created = results.get(1).getResultPath();
                            return Mono.fromCompletionStage(() -> async.delete().forPath(created));
                        })
                        .then();
            });
        }

        @Override
        public void close() {
            client.close();
        }
    }

    /** reactive-locks on ZooKeeper, defaults, its own Curator client. */
    static Contender ours(String connect) {
        CuratorFramework client = curator(connect);
        LockStore store = ZooKeeperLocks.connect(client, ZooKeeperLockOptions.defaults());
        return new Ours("zookeeper", store.locks(LockOptions.defaults()), OursPrimitive.closing(store, client::close));
    }

    /**
     * Curator's InterProcessMutex, or a side of its InterProcessReadWriteLock (blocking; one
     * instance per name and thread, reused).
     */
    static final class Mutex extends Contender {
        private final CuratorFramework client;
        private final Map<String, InterProcessMutex> mutexes = new ConcurrentHashMap<>();
        private final java.util.function.BiFunction<CuratorFramework, String, InterProcessMutex> make;

        Mutex(String connect) {
            this(connect, "mutex", "Curator InterProcessMutex", (c, name) -> new InterProcessMutex(c, "/bench-mutex/" + name));
        }

        Mutex(String connect, String id, String label, java.util.function.BiFunction<CuratorFramework, String, InterProcessMutex> make) {
            super("zookeeper", id, label, Role.COMPETITOR);
            this.make = make;
            client = curator(connect);
        }

        @Override
        boolean blocking() {
            return true;
        }

        private InterProcessMutex mutex(String name, int worker) {
            return mutexes.computeIfAbsent(name + "#" + worker, k -> make.apply(client, name));
        }

        @Override
        void cycleBlocking(String name, int worker) throws Exception {
            InterProcessMutex m = mutex(name, worker);
            m.acquire();
            m.release();
        }

        @Override
        boolean supportsWaiting() {
            return true;
        }

        @Override
        Held acquireWaitingBlocking(String name, int worker) throws Exception {
            InterProcessMutex m = mutex(name, worker);
            m.acquire();
            return new Held() {
                @Override
                public Mono<Void> release() {
                    return Mono.fromRunnable(() -> {
                        throw new UnsupportedOperationException("release on the acquiring thread");
                    });
                }

                @Override
                public void releaseBlocking() throws Exception {
                    m.release();
                }
            };
        }

        @Override
        public void close() {
            client.close();
        }
    }

    /**
     * Curator's InterProcessSemaphoreV2 (blocking; one instance per name and thread, reused, with
     * the N set by {@link #permits(int)} when the name is first used).
     */
    static final class CuratorSemaphore extends Contender {
        private final CuratorFramework client;
        private final Map<String, InterProcessSemaphoreV2> semaphores = new ConcurrentHashMap<>();
        private volatile int permits = 1;

        CuratorSemaphore(String connect) {
            super("zookeeper", "curator-sem", "Curator InterProcessSemaphoreV2", Role.COMPETITOR);
            client = curator(connect);
        }

        @Override
        void permits(int permits) {
            this.permits = permits;
        }

        @Override
        boolean blocking() {
            return true;
        }

        private InterProcessSemaphoreV2 semaphore(String name, int worker) {
            int n = permits;
            return semaphores.computeIfAbsent(name + "#" + worker, k -> new InterProcessSemaphoreV2(client, "/bench-sem/" + name, n));
        }

        @Override
        void cycleBlocking(String name, int worker) throws Exception {
            InterProcessSemaphoreV2 s = semaphore(name, worker);
            s.returnLease(s.acquire());
        }

        @Override
        boolean supportsWaiting() {
            return true;
        }

        @Override
        Held acquireWaitingBlocking(String name, int worker) throws Exception {
            InterProcessSemaphoreV2 s = semaphore(name, worker);
            Lease lease = s.acquire();
            return new Held() {
                @Override
                public Mono<Void> release() {
                    return Mono.fromRunnable(() -> {
                        throw new UnsupportedOperationException("release on the acquiring thread");
                    });
                }

                @Override
                public void releaseBlocking() {
                    s.returnLease(lease);
                }
            };
        }

        @Override
        public void close() {
            client.close();
        }
    }
}
