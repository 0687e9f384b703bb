package io.reactivelocks.benchmarks.load;

import io.lettuce.core.RedisClient;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.reactive.RedisReactiveCommands;
import io.lettuce.core.api.sync.RedisCommands;
import io.reactivelocks.LockOptions;
import io.reactivelocks.LockStore;
import io.reactivelocks.redis.RedisLockOptions;
import io.reactivelocks.redis.RedisLocks;
import io.reactivelocks.spi.GrantRequest;
import io.reactivelocks.test.server.RedisServer;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.HdrHistogram.Histogram;
import org.redisson.Redisson;
import org.redisson.api.RLockReactive;
import org.redisson.api.RedissonClient;
import org.redisson.api.RedissonReactiveClient;
import org.redisson.config.Config;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Redis: the raw Lettuce floor (EVALSHA of our own acquire and release scripts, same keys and
 * arguments), reactive-locks, Redisson's RLock and RFencedLock through its reactive API.
 */
final class RedisBench extends BackendBench {

    /**
     * Commands a client sends itself and a script cannot run: what {@link #counts()} adds up as
     * requests. Data commands (GET, SET, PEXPIRE, PUBLISH, HSET, ...) are left out because both
     * clients only send them from inside their Lua scripts, where Redis counts them too.
     */
    static final Set<String> REQUESTS = Set.of("eval", "evalsha", "eval_ro", "evalsha_ro", "fcall", "fcall_ro",
            "subscribe", "unsubscribe", "psubscribe", "punsubscribe", "ssubscribe", "sunsubscribe",
            "ping", "hello", "client", "select", "auth", "script", "info", "config", "readonly", "quit", "echo");

    private RedisServer server;
    private RedisClient adminClient;
    private StatefulRedisConnection<String, String> admin;

    RedisBench() {
        super("redis", "Redis");
    }

    @Override
    void start() {
        server = RedisServer.start();
        adminClient = RedisClient.create(server.url());
        admin = adminClient.connect();
    }

    String url() {
        return server.url();
    }

    RedisCommands<String, String> admin() {
        return admin.sync();
    }

    @Override
    List<Contender> contenders() {
        return List.of(new Raw(url()), ours(url()), new RedissonLock(url(), false), new RedissonLock(url(), true),
                new SimpleLocks.Redis(url()), new RawHandoffs.Redis(url()));
    }

    /** B8: ours against Redisson's RSemaphore / RPermitExpirableSemaphore, RReadWriteLock and RFairLock. */
    @Override
    List<Primitives.Group> primitives() {
        String url = url();
        return List.of(
                new Primitives.Group("sem", "semaphore (c workers on one name, N = max(1, c/2))", true, true, true, List.of(
                        oursClient(url, c -> {
                            LockStore store = RedisLocks.connect(c);
                            return OursPrimitive.semaphore("redis", store.semaphores(LockOptions.defaults()), OursPrimitive.closing(store, c::shutdown));
                        }),
                        new RedissonSemaphore(url, false), new RedissonSemaphore(url, true))),
                new Primitives.Group("read", "read-write lock, read side (c readers on one name)", true, false, false, List.of(
                        oursClient(url, c -> {
                            LockStore store = RedisLocks.connect(c);
                            return OursPrimitive.read("redis", store.readWriteLocks(LockOptions.defaults()), OursPrimitive.closing(store, c::shutdown));
                        }),
                        new RedissonLock(url, "redisson-read", "Redisson RReadWriteLock read",
                                (r, n) -> r.getReadWriteLock(n).readLock()))),
                new Primitives.Group("write", "read-write lock, write side (a name per worker)", false, false, true, List.of(
                        oursClient(url, c -> {
                            LockStore store = RedisLocks.connect(c);
                            return OursPrimitive.write("redis", store.readWriteLocks(LockOptions.defaults()), OursPrimitive.closing(store, c::shutdown));
                        }),
                        new RedissonLock(url, "redisson-write", "Redisson RReadWriteLock write",
                                (r, n) -> r.getReadWriteLock(n).writeLock()))),
                new Primitives.Group("fair", "fair lock (a name per worker)", false, false, true, List.of(
                        oursClient(url, c -> {
                            LockStore store = RedisLocks.connect(c);
                            return OursPrimitive.fair("redis", store.fairLocks(LockOptions.defaults()), OursPrimitive.closing(store, c::shutdown));
                        }),
                        new RedissonLock(url, "redisson-fair", "Redisson RFairLock", RedissonReactiveClient::getFairLock))));
    }

    /** One of ours on its own Lettuce client. */
    static Contender oursClient(String url, java.util.function.Function<RedisClient, Contender> make) {
        return make.apply(RedisClient.create(url));
    }

    @Override
    Counts counts() {
        String info = admin.sync().info("commandstats");
        long requests = 0;
        for (String line : info.split("\r?\n")) {
            if (!line.startsWith("cmdstat_")) {
                continue;
            }
            String cmd = line.substring("cmdstat_".length(), line.indexOf(':'));
            if (REQUESTS.contains(cmd) || cmd.startsWith("client|") || cmd.startsWith("script|") || cmd.startsWith("config|")) {
                requests += stat(line, "calls");
            }
        }
        long executed = field(admin.sync().info("stats"), "total_commands_processed");
        return new Counts(requests, executed);
    }

    /** @return calls and total µs of one command from INFO commandstats ({@code 0, 0} when never called) */
    long[] commandStat(String cmd) {
        for (String line : admin.sync().info("commandstats").split("\r?\n")) {
            if (line.startsWith("cmdstat_" + cmd + ":")) {
                return new long[] {stat(line, "calls"), stat(line, "usec")};
            }
        }
        return new long[] {0, 0};
    }

    static long stat(String line, String name) {
        int i = line.indexOf(name + "=");
        int end = line.indexOf(',', i);
        return Long.parseLong(line.substring(i + name.length() + 1, end < 0 ? line.length() : end).trim());
    }

    static long field(String info, String name) {
        for (String line : info.split("\r?\n")) {
            if (line.startsWith(name + ":")) {
                return Long.parseLong(line.substring(name.length() + 1).trim());
            }
        }
        throw new IllegalStateException("no " + name + " in INFO");
    }

    static String text(String info, String name) {
        for (String line : info.split("\r?\n")) {
            if (line.startsWith(name + ":")) {
                return line.substring(name.length() + 1).trim();
            }
        }
        return "?";
    }

    @Override
    String counterDescription() {
        return "Redis `INFO commandstats` delta: calls of the commands a client sends itself (EVAL/EVALSHA, "
                + "(UN)SUBSCRIBE, PING, ...) — the round trips; the commands run inside Lua scripts are counted "
                + "separately (`INFO stats` total_commands_processed minus those)";
    }

    @Override
    Histogram roundTrip(int samples) {
        Histogram h = new Histogram(3);
        RedisReactiveCommands<String, String> r = admin.reactive();
        Flux.range(0, samples).concatMap(i -> {
            long t0 = System.nanoTime();
            return r.ping().doOnNext(x -> h.recordValue(System.nanoTime() - t0));
        }).blockLast(Duration.ofMinutes(1));
        return h;
    }

    @Override
    String roundTripDescription() {
        return "PING through Lettuce's reactive API on one connection";
    }

    @Override
    Map<String, String> serverInfo() {
        Map<String, String> m = info();
        m.put("version", "Redis " + text(admin.sync().info("server"), "redis_version"));
        m.put("persistence", "save=\"" + admin.sync().configGet("save").get("save") + "\", appendonly="
                + admin.sync().configGet("appendonly").get("appendonly") + ", appendfsync="
                + admin.sync().configGet("appendfsync").get("appendfsync"));
        m.put("started as", "`redis-server --port <random> --bind 127.0.0.1 --save \"\" --appendonly no --dir <tmp>` "
                + "(the fixture's defaults; the server rewrites its process title, so this is the fixture's documented command)");
        return m;
    }

    @Override
    long serverPid() {
        return server.pid();
    }

    @Override
    public void close() {
        if (admin != null) {
            admin.close();
            adminClient.shutdown();
        }
        if (server != null) {
            server.close();
        }
    }

    // ------------------------------------------------------------------ contenders

    static String resource(String path) {
        try (InputStream in = RedisBench.class.getClassLoader().getResourceAsStream(path)) {
            if (in == null) {
                throw new IllegalStateException("no resource " + path);
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The floor: our acquire and release scripts, sent with EVALSHA on one Lettuce connection. */
    static final class Raw extends Contender {
        private static final String LEASE_MS = "30000";
        private static final String FENCE_TTL_MS = Long.toString(Duration.ofDays(30).toMillis());
        private final RedisClient client;
        private final StatefulRedisConnection<String, String> connection;
        private final RedisReactiveCommands<String, String> cmd;
        private final String acquireSha;
        private final String releaseSha;

        Raw(String url) {
            super("redis", "raw", "raw Lettuce EVALSHA (floor)", Role.FLOOR);
            client = RedisClient.create(url);
            connection = client.connect();
            cmd = connection.reactive();
            acquireSha = connection.sync().scriptLoad(resource("io/reactivelocks/redis/acquire.lua"));
            releaseSha = connection.sync().scriptLoad(resource("io/reactivelocks/redis/release.lua"));
        }

        @Override
        Mono<Void> cycle(String name, int worker) {
            return Mono.defer(() -> {
                String owner = GrantRequest.newOwner();
                String base = "bench:{" + name + "}:";
                String lock = base + "lock";
                String channel = base + "events";
                return cmd.<List<Object>>evalsha(acquireSha, ScriptOutputType.MULTI, new String[] {lock, base + "fence"},
                                owner, LEASE_MS, FENCE_TTL_MS, channel).next()
                        .flatMap(reply -> {
                            if (!Long.valueOf(1L).equals(reply.get(0))) {
                                return Mono.error(new IllegalStateException("busy: " + reply));
                            }
                            long token = Long.parseLong(String.valueOf(reply.get(1)));
                            return cmd.<Long>evalsha(releaseSha, ScriptOutputType.INTEGER, new String[] {lock}, owner, channel)
                                    .next()
                                    .filter(r -> token > 0 && r == 1L)
                                    .switchIfEmpty(Mono.error(() -> new IllegalStateException("not released")));
                        })
                        .then();
            });
        }

        @Override
        public void close() {
            connection.close();
            client.shutdown();
        }
    }

    /** reactive-locks on Redis, defaults, its own client. */
    static Contender ours(String url) {
        RedisClient client = RedisClient.create(url);
        LockStore store = RedisLocks.connect(client, RedisLockOptions.defaults());
        return new Ours("redis", store.locks(LockOptions.defaults()), OursPrimitive.closing(store, client::shutdown));
    }

    /**
     * A Redisson lock through its reactive API — RLock, RFencedLock, a side of RReadWriteLock or
     * RFairLock — with lock(threadId)/unlock(threadId), watchdog on.
     */
    static final class RedissonLock extends Contender {
        private final RedissonClient redisson;
        private final RedissonReactiveClient reactive;
        private final java.util.function.BiFunction<RedissonReactiveClient, String, RLockReactive> lockOf;

        RedissonLock(String url, boolean fenced) {
            this(url, fenced ? "redisson-fenced" : "redisson", fenced ? "Redisson RFencedLock" : "Redisson RLock",
                    fenced ? RedissonReactiveClient::getFencedLock : RedissonReactiveClient::getLock);
        }

        RedissonLock(String url, String id, String label,
                     java.util.function.BiFunction<RedissonReactiveClient, String, RLockReactive> lockOf) {
            super("redis", id, label, Role.COMPETITOR);
            this.lockOf = lockOf;
            this.redisson = Redisson.create(config(url, Duration.ofSeconds(30)));
            this.reactive = redisson.reactive();
        }

        static Config config(String url, Duration watchdog) {
            Config c = new Config();
            c.useSingleServer().setAddress(url);
            c.setLockWatchdogTimeout(watchdog.toMillis());
            return c;
        }

        private RLockReactive lock(String name) {
            return lockOf.apply(reactive, name);
        }

        @Override
        Mono<Void> cycle(String name, int worker) {
            long threadId = worker + 1L;
            return Mono.defer(() -> {
                RLockReactive l = lock(name);
                return l.lock(threadId).then(Mono.defer(() -> l.unlock(threadId)));
            });
        }

        @Override
        boolean supportsWaiting() {
            return true;
        }

        @Override
        Mono<Held> acquireWaiting(String name, int worker) {
            long threadId = 10_000L + worker;
            return Mono.defer(() -> {
                RLockReactive l = lock(name);
                return l.lock(threadId).thenReturn((Held) () -> l.unlock(threadId));
            });
        }

        @Override
        public void close() {
            redisson.shutdown();
        }
    }

    /**
     * Redisson's RSemaphore (permits without expiry) or RPermitExpirableSemaphore (a permit id with a
     * 30 s lease, not renewed) through its reactive API. A name's N is set with trySetPermits on its
     * first use (once per name, not timed in the steady state).
     */
    static final class RedissonSemaphore extends Contender {
        private final RedissonClient redisson;
        private final RedissonReactiveClient reactive;
        private final boolean expirable;
        private final java.util.concurrent.ConcurrentHashMap<String, Mono<Boolean>> initialised = new java.util.concurrent.ConcurrentHashMap<>();
        private volatile int permits = 1;

        RedissonSemaphore(String url, boolean expirable) {
            super("redis", expirable ? "redisson-pesem" : "redisson-sem",
                    expirable ? "Redisson RPermitExpirableSemaphore" : "Redisson RSemaphore", Role.COMPETITOR);
            this.expirable = expirable;
            this.redisson = Redisson.create(RedissonLock.config(url, Duration.ofSeconds(30)));
            this.reactive = redisson.reactive();
        }

        @Override
        void permits(int permits) {
            this.permits = permits;
        }

        private Mono<Boolean> init(String name) {
            int n = permits;
            return initialised.computeIfAbsent(name, k -> (expirable ? reactive.getPermitExpirableSemaphore(k).trySetPermits(n)
                    : reactive.getSemaphore(k).trySetPermits(n)).cache());
        }

        @Override
        Mono<Void> cycle(String name, int worker) {
            return acquireWaiting(name, worker).flatMap(Held::release);
        }

        @Override
        boolean supportsWaiting() {
            return true;
        }

        @Override
        Mono<Held> acquireWaiting(String name, int worker) {
            return init(name).then(Mono.defer(() -> {
                if (expirable) {
                    var s = reactive.getPermitExpirableSemaphore(name);
                    return s.acquire(30, java.util.concurrent.TimeUnit.SECONDS).map(id -> (Held) () -> s.release(id));
                }
                var s = reactive.getSemaphore(name);
                return s.acquire().thenReturn((Held) s::release);
            }));
        }

        @Override
        public void close() {
            redisson.shutdown();
        }
    }
}
