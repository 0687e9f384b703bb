package io.reactivelocks.benchmarks.load;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KV;
import io.etcd.jetcd.Watch;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.PutOption;
import io.etcd.jetcd.options.WatchOption;
import io.etcd.jetcd.watch.WatchEvent;
import io.lettuce.core.RedisClient;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.reactive.RedisReactiveCommands;
import io.lettuce.core.pubsub.RedisPubSubAdapter;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import io.r2dbc.pool.ConnectionPool;
import io.r2dbc.postgresql.api.PostgresqlConnection;
import io.r2dbc.spi.Connection;
import io.r2dbc.spi.ConnectionFactory;
import io.reactivelocks.spi.GrantRequest;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.EnumSet;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.x.async.AsyncCuratorFramework;
import org.apache.curator.x.async.AsyncStage;
import org.apache.curator.x.async.WatchMode;
import org.apache.curator.x.async.api.CreateOption;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.data.Stat;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

/**
 * The raw driver doing B3's handoff by hand (issue 30): the yardstick ours is divided by. The
 * holder's release is one owner-checked delete that also notifies; each client listens once per
 * name (one subscription, watch or LISTEN, like ours) and keeps its waiters in a local FIFO; on a
 * notification the head of the FIFO sends one conditional write, and the successful write is the
 * grant. No fencing token, no renewal, no lock events, no fairness across clients: the minimal
 * correct handoff, two requests per handoff.
 *
 * <ul>
 *   <li>Redis: release {@code EVALSHA} (GET = owner → DEL + PUBLISH on the name's channel); take
 *       {@code EVALSHA} of {@code SET key owner NX PX 30000} (a one-line script so that the server's
 *       request counter sees it, as it sees ours); one pub/sub connection, SUBSCRIBE per name.</li>
 *   <li>PostgreSQL: release {@code WITH d AS (DELETE ... WHERE name = $1 AND owner = $2 RETURNING name)
 *       SELECT pg_notify(channel, name) FROM d}; take {@code INSERT ... ON CONFLICT DO NOTHING RETURNING};
 *       on a pool, one {@code LISTEN} connection.</li>
 *   <li>etcd and ZooKeeper, whose locks queue natively ({@link QueueRecipe}): each waiter appends its entry
 *       and watches the one before it; the release is one delete and the successor's watch event is
 *       its grant — one request per handoff, like ours.</li>
 *   <li>MariaDB (no notification): release {@code DELETE ... WHERE name = ? AND owner = ?}, announced
 *       inside the client; take {@code INSERT IGNORE}; on a pool.</li>
 * </ul>
 *
 * <p>B3 only: {@code cycles()} of its contenders is false, so B1 leaves it out.
 */
final class RawHandoffs {

    private RawHandoffs() {
    }

    /**
     * The store-independent part: per name a FIFO of waiters and a drain loop that lets one take be
     * in flight at a time and repeats it when a notification (or a new waiter) came during it, so a
     * release is never missed.
     */
    abstract static class Base extends Contender {
        private final Map<String, Line> lines = new ConcurrentHashMap<>();

        Base(String backend, String label) {
            super(backend, "raw-handoff", label, Role.RAW_HANDOFF);
        }

        /**
         * Starts listening for the releases of {@code name}; called once per name before its first take.
         * By default nothing to do: the store listens once for every name (or announces releases itself).
         *
         * @param name the lock name
         * @return completes when a release after this point will be notified
         */
        Mono<Void> listen(String name) {
            return Mono.empty();
        }

        /** Stops listening for {@code name} (after its chain); by default nothing to do. */
        void unlisten(String name) {
        }

        /**
         * The conditional write.
         *
         * @param name  the lock name
         * @param owner the waiter's owner id
         * @return true when the write succeeded, i.e. {@code owner} holds the lock now
         */
        abstract Mono<Boolean> take(String name, String owner);

        /**
         * The owner-checked delete that also notifies the listeners.
         *
         * @param name  the lock name
         * @param owner the holder's owner id
         * @return completes when deleted; errors when the owner did not hold the lock
         */
        abstract Mono<Void> release(String name, String owner);

        /**
         * Called by the store's listener on a release of {@code name}.
         *
         * @param name the lock name
         */
        final void released(String name) {
            Line line = lines.get(name);
            if (line != null) {
                poke(name, line);
            }
        }

        @Override
        final boolean cycles() {
            return false;
        }

        @Override
        final boolean supportsWaiting() {
            return true;
        }

        @Override
        final Mono<Held> acquireWaiting(String name, int worker) {
            return Mono.defer(() -> {
                Line line = lines.computeIfAbsent(name, k -> new Line(listen(k).cache()));
                Waiter w = new Waiter(GrantRequest.newOwner());
                return line.listening.then(Mono.defer(() -> {
                    line.waiters.add(w);
                    poke(name, line);
                    return w.grant.asMono();
                })).doOnCancel(() -> line.waiters.remove(w));
            });
        }

        @Override
        void finish() {
            for (String name : lines.keySet()) {
                lines.remove(name);
                try {
                    unlisten(name);
                } catch (RuntimeException e) {
                    Log.info("%s: stop listening on %s: %s", this, name, e);
                }
            }
        }

        private void poke(String name, Line line) {
            if (line.wip.getAndIncrement() == 0) {
                attempt(name, line);
            }
        }

        private void attempt(String name, Line line) {
            int seen = line.wip.get();
            Waiter w = line.waiters.peek();
            if (w == null) {
                settle(name, line, seen);
                return;
            }
            take(name, w.owner).defaultIfEmpty(false).subscribe(ok -> {
                if (ok && line.waiters.remove(w)) {
                    w.grant.tryEmitValue(() -> release(name, w.owner));
                }
                settle(name, line, seen);
            }, e -> {
                line.waiters.remove(w);
                w.grant.tryEmitError(e);
                settle(name, line, seen);
            });
        }

        private void settle(String name, Line line, int seen) {
            if (line.wip.addAndGet(-seen) != 0) {
                attempt(name, line);
            }
        }

        /** A name's listener, waiters and drain counter. */
        private static final class Line {
            final Mono<Void> listening;
            final Queue<Waiter> waiters = new ConcurrentLinkedQueue<>();
            final AtomicInteger wip = new AtomicInteger();

            Line(Mono<Void> listening) {
                this.listening = listening;
            }
        }

        /** One waiter: its owner id and its grant. */
        private static final class Waiter {
            final String owner;
            final Sinks.One<Held> grant = Sinks.one();

            Waiter(String owner) {
                this.owner = owner;
            }
        }
    }

    static String encoded(String name) {
        return Base64.getUrlEncoder().withoutPadding().encodeToString(name.getBytes(StandardCharsets.UTF_8));
    }

    /** Redis: EVALSHA compare-and-delete + PUBLISH; EVALSHA {@code SET NX PX}; SUBSCRIBE per name. */
    static final class Redis extends Base {
        private static final String TAKE =
                "if redis.call('set', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return 1 else return 0 end";
        private static final String RELEASE = "if redis.call('get', KEYS[1]) == ARGV[1] then redis.call('del', KEYS[1]); "
                + "redis.call('publish', ARGV[2], '1'); return 1 else return 0 end";
        private static final String PREFIX = "bench-raw-handoff:";
        private static final String CHANNEL_SUFFIX = ":released";
        private final RedisClient client;
        private final StatefulRedisConnection<String, String> connection;
        private final RedisReactiveCommands<String, String> cmd;
        private final StatefulRedisPubSubConnection<String, String> pubSub;
        private final String takeSha;
        private final String releaseSha;

        Redis(String url) {
            super("redis", "raw Lettuce handoff (DEL+PUBLISH, SET NX)");
            client = RedisClient.create(url);
            connection = client.connect();
            cmd = connection.reactive();
            takeSha = connection.sync().scriptLoad(TAKE);
            releaseSha = connection.sync().scriptLoad(RELEASE);
            pubSub = client.connectPubSub();
            pubSub.addListener(new RedisPubSubAdapter<>() {
                @Override
                public void message(String channel, String message) {
                    if (channel.startsWith(PREFIX) && channel.endsWith(CHANNEL_SUFFIX)) {
                        released(channel.substring(PREFIX.length(), channel.length() - CHANNEL_SUFFIX.length()));
                    }
                }
            });
        }

        private static String key(String name) {
            return PREFIX + name;
        }

        private static String channel(String name) {
            return PREFIX + name + CHANNEL_SUFFIX;
        }

        @Override
        Mono<Void> listen(String name) {
            return pubSub.reactive().subscribe(channel(name));
        }

        @Override
        void unlisten(String name) {
            pubSub.reactive().unsubscribe(channel(name)).subscribe(null, e -> Log.info("unsubscribe %s: %s", name, e));
        }

        @Override
        Mono<Boolean> take(String name, String owner) {
            return cmd.<Long>evalsha(takeSha, ScriptOutputType.INTEGER, new String[] {key(name)}, owner, "30000")
                    .next().map(n -> n == 1L);
        }

        @Override
        Mono<Void> release(String name, String owner) {
            return cmd.<Long>evalsha(releaseSha, ScriptOutputType.INTEGER, new String[] {key(name)}, owner, channel(name))
                    .next()
                    .filter(n -> n == 1L)
                    .switchIfEmpty(Mono.error(() -> new IllegalStateException("not released: " + name)))
                    .then();
        }

        @Override
        public void close() {
            pubSub.close();
            connection.close();
            client.shutdown();
        }
    }

    /**
     * PostgreSQL: DELETE + pg_notify in one statement, INSERT ON CONFLICT DO NOTHING RETURNING, on a
     * pool; one unpooled connection LISTENs on one channel whose payload is the name.
     */
    static final class Postgres extends Base {
        private static final String CHANNEL = "bench_raw_handoff";
        private static final String TAKE = "INSERT INTO bench_raw_handoff(name, owner) VALUES ($1, $2) "
                + "ON CONFLICT DO NOTHING RETURNING owner";
        private static final String RELEASE = "WITH d AS (DELETE FROM bench_raw_handoff WHERE name = $1 AND owner = $2 "
                + "RETURNING name) SELECT pg_notify('" + CHANNEL + "', name) FROM d";
        private final ConnectionPool pool;
        private final PostgresqlConnection listener;
        private final Disposable notifications;

        /**
         * @param pool     the pool the takes and releases run on (closed with this contender)
         * @param unpooled where the listening connection comes from
         */
        Postgres(ConnectionPool pool, ConnectionFactory unpooled) {
            super("postgres", "raw R2DBC handoff (DELETE+pg_notify, INSERT ON CONFLICT)");
            this.pool = pool;
            Flux.usingWhen(pool.create(), c -> Flux.from(c.createStatement("CREATE TABLE IF NOT EXISTS bench_raw_handoff("
                                    + "name text PRIMARY KEY, owner text NOT NULL)").execute())
                            .concatMap(r -> r.getRowsUpdated()), Connection::close)
                    .blockLast(Duration.ofSeconds(30));
            listener = Mono.from(unpooled.create()).cast(PostgresqlConnection.class).block(Duration.ofSeconds(30));
            Flux.from(listener.createStatement("LISTEN " + CHANNEL).execute()).concatMap(r -> r.getRowsUpdated())
                    .blockLast(Duration.ofSeconds(30));
            notifications = listener.getNotifications().subscribe(n -> released(n.getParameter()),
                    e -> Log.info("raw handoff LISTEN connection failed: %s", e));
        }

        @Override
        Mono<Boolean> take(String name, String owner) {
            return Flux.usingWhen(pool.create(),
                            c -> Flux.from(c.createStatement(TAKE).bind(0, name).bind(1, owner).execute())
                                    .concatMap(r -> r.map((row, md) -> owner.equals(row.get("owner", String.class)))),
                            Connection::close)
                    .reduce(false, (a, b) -> a || b);
        }

        @Override
        Mono<Void> release(String name, String owner) {
            return Flux.usingWhen(pool.create(),
                            c -> Flux.from(c.createStatement(RELEASE).bind(0, name).bind(1, owner).execute())
                                    .concatMap(r -> r.map((row, md) -> 1)),
                            Connection::close)
                    .count()
                    .filter(n -> n == 1)
                    .switchIfEmpty(Mono.error(() -> new IllegalStateException("not released: " + name)))
                    .then();
        }

        @Override
        public void close() {
            notifications.dispose();
            Mono.from(listener.close()).block(Duration.ofSeconds(10));
            pool.close().block(Duration.ofSeconds(10));
        }
    }

    /**
     * MariaDB, which has no notification: {@code DELETE ... WHERE name = ? AND owner = ?}, announced
     * inside this client (as ours announces a release through the same backend; other clients would
     * have to poll), then {@code INSERT IGNORE}; on a pool.
     */
    static final class MariaDb extends Base {
        private static final String TAKE = "INSERT IGNORE INTO bench_raw_handoff(name, owner) VALUES (?, ?)";
        private static final String RELEASE = "DELETE FROM bench_raw_handoff WHERE name = ? AND owner = ?";
        private final ConnectionPool pool;

        /** @param pool the pool the takes and releases run on (closed with this contender) */
        MariaDb(ConnectionPool pool) {
            super("mariadb", "raw r2dbc-mariadb handoff (DELETE, in-client wake, INSERT IGNORE)");
            this.pool = pool;
            Flux.usingWhen(pool.create(), c -> Flux.from(c.createStatement("CREATE TABLE IF NOT EXISTS bench_raw_handoff("
                                    + "name VARCHAR(255) PRIMARY KEY, owner VARCHAR(64) NOT NULL)").execute())
                            .concatMap(r -> r.getRowsUpdated()), Connection::close)
                    .blockLast(Duration.ofSeconds(30));
        }

        private Mono<Long> update(String sql, String name, String owner) {
            return Flux.usingWhen(pool.create(),
                            c -> Flux.from(c.createStatement(sql).bind(0, name).bind(1, owner).execute())
                                    .concatMap(r -> r.getRowsUpdated()),
                            Connection::close)
                    .reduce(0L, Long::sum);
        }

        @Override
        Mono<Boolean> take(String name, String owner) {
            return update(TAKE, name, owner).map(n -> n == 1L);
        }

        @Override
        Mono<Void> release(String name, String owner) {
            return update(RELEASE, name, owner)
                    .flatMap(n -> n == 1L ? Mono.<Void>empty() : Mono.error(new IllegalStateException("not released: " + name)))
                    .doOnSuccess(v -> released(name));
        }

        @Override
        public void close() {
            pool.close().block(Duration.ofSeconds(10));
        }
    }

    /**
     * A queue recipe's handoff, for the stores whose locks queue natively (etcd, ZooKeeper): each
     * waiter appends its entry (a key with a larger create revision, a sequential node), finds its
     * predecessor and watches it; the holder's release is one delete, and the successor's watch
     * event is its grant — one request per handoff, as etcd's own lock recipe and ours. No fencing
     * beyond the entry's revision, no renewal, no recovery of a waiter that leaves the line (B3's
     * waiters never do): the minimal correct handoff of a queue.
     */
    abstract static class QueueRecipe extends Contender {

        QueueRecipe(String backend, String label) {
            super(backend, "raw-handoff", label, Role.RAW_HANDOFF);
        }

        @Override
        final boolean cycles() {
            return false;
        }

        @Override
        final boolean supportsWaiting() {
            return true;
        }
    }

    /** etcd: put the waiter's key, read the key before it, watch its deletion; release deletes the key. */
    static final class Etcd extends QueueRecipe {
        private final Client client;
        private final KV kv;
        private volatile long lease;

        Etcd(String url) {
            super("etcd", "raw jetcd queue handoff (delete, the successor's watch)");
            client = EtcdBench.client(url);
            kv = client.getKVClient();
        }

        @Override
        void prepare(int concurrency) {
            lease = client.getLeaseClient().grant(600).join().getID();
        }

        @Override
        void finish() {
            client.getLeaseClient().revoke(lease).join();
        }

        @Override
        Mono<Held> acquireWaiting(String name, int worker) {
            return Mono.defer(() -> {
                String prefix = "bench-raw-handoff/" + encoded(name) + "/";
                ByteSequence key = EtcdBench.bytes(prefix + GrantRequest.newOwner());
                Held held = () -> Mono.fromFuture(() -> kv.delete(key)).then();
                return Mono.fromFuture(() -> kv.put(key, EtcdBench.bytes("w"), PutOption.builder().withLeaseId(lease).build()))
                        .flatMap(put -> {
                            long mine = put.getHeader().getRevision();
                            GetOption before = GetOption.builder().isPrefix(true).withMaxCreateRevision(mine - 1)
                                    .withSortField(GetOption.SortTarget.CREATE).withSortOrder(GetOption.SortOrder.DESCEND)
                                    .withLimit(1).build();
                            return Mono.fromFuture(() -> kv.get(EtcdBench.bytes(prefix), before));
                        })
                        .flatMap(r -> r.getKvs().isEmpty() ? Mono.just(held)
                                : deleted(r.getKvs().get(0).getKey(), r.getHeader().getRevision()).thenReturn(held));
            });
        }

        /** Completes on the deletion of {@code key} after {@code revision}. */
        private Mono<Void> deleted(ByteSequence key, long revision) {
            return Mono.create(sink -> {
                WatchOption option = WatchOption.builder().withRevision(revision + 1).withNoPut(true).build();
                Watch.Watcher w = client.getWatchClient().watch(key, option, Watch.listener(response -> {
                    for (WatchEvent e : response.getEvents()) {
                        if (e.getEventType() == WatchEvent.EventType.DELETE) {
                            sink.success();
                        }
                    }
                }, sink::error));
                sink.onDispose(w::close);
            });
        }

        @Override
        public void close() {
            client.close();
        }
    }

    /**
     * ZooKeeper: create the waiter's ephemeral-sequential node, list the children, put an exists
     * watch on the node before it; release deletes the node.
     */
    static final class ZooKeeper extends QueueRecipe {
        private final CuratorFramework client;
        private final AsyncCuratorFramework async;

        ZooKeeper(String connect) {
            super("zookeeper", "raw Curator queue handoff (delete, the successor's watch)");
            client = ZooKeeperBench.curator(connect);
            async = AsyncCuratorFramework.wrap(client);
        }

        @Override
        Mono<Held> acquireWaiting(String name, int worker) {
            return Mono.defer(() -> {
                String parent = "/bench-raw-handoff/n-" + encoded(name);
                return Mono.fromCompletionStage(() -> async.create()
                                .withOptions(EnumSet.of(CreateOption.createParentsAsContainers), CreateMode.EPHEMERAL_SEQUENTIAL,
                                        ZooDefs.Ids.OPEN_ACL_UNSAFE)
                                .forPath(parent + "/w-", new byte[0]))
                        .flatMap(path -> turn(parent, path).thenReturn((Held) () ->
                                Mono.fromCompletionStage(() -> async.delete().forPath(path)).then()));
            });
        }

        /** Completes when no node before {@code path} is left: lists, then waits on the predecessor's deletion. */
        private Mono<Void> turn(String parent, String path) {
            String mine = path.substring(parent.length() + 1);
            return Mono.fromCompletionStage(() -> async.getChildren().forPath(parent)).flatMap(children -> {
                String predecessor = null;
                for (String c : children) {
                    if (c.compareTo(mine) < 0 && (predecessor == null || c.compareTo(predecessor) > 0)) {
                        predecessor = c;
                    }
                }
                if (predecessor == null) {
                    return Mono.<Void>empty();
                }
                String before = parent + "/" + predecessor;
                AsyncStage<Stat> exists = async.with(WatchMode.successOnly).watched().checkExists().forPath(before);
                // exists: wait for its event (B3's entries are only ever deleted); gone already: look again
                return Mono.fromCompletionStage(exists)
                        .flatMap(stat -> Mono.fromCompletionStage(exists.event()).thenReturn(true))
                        .defaultIfEmpty(false)
                        .flatMap(waited -> waited ? Mono.<Void>empty() : turn(parent, path));
            });
        }

        @Override
        public void close() {
            client.close();
        }
    }
}
