package io.reactivelocks.benchmarks.load;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KV;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.PutOption;
import io.lettuce.core.RedisClient;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.SetArgs;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.reactive.RedisReactiveCommands;
import io.r2dbc.pool.ConnectionPool;
import io.r2dbc.spi.Connection;
import io.reactivelocks.spi.GrantRequest;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.EnumSet;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.x.async.AsyncCuratorFramework;
import org.apache.curator.x.async.api.CreateOption;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.ZooDefs;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The simplest two-request lock a user would write against each store by hand (issue 14): take the
 * name if it is free, then delete it if it is still ours. No fencing token, no renewal, no waiting,
 * no events — what our lock adds on top is what the ratio to these prices. B1 only.
 *
 * <ul>
 *   <li>Redis: {@code SET key owner NX PX 30000}, then a compare-and-delete script (EVALSHA).</li>
 *   <li>PostgreSQL: {@code INSERT ... ON CONFLICT DO NOTHING}, then {@code DELETE ... WHERE owner = $2}.</li>
 *   <li>MariaDB: {@code INSERT ... ON DUPLICATE KEY UPDATE} that takes the row only when its lease has
 *       expired, {@code RETURNING} the row's owner, then {@code DELETE ... WHERE owner = ?}.</li>
 *   <li>etcd: a transaction putting the key on a lease if its create revision is 0, then a delete.</li>
 *   <li>ZooKeeper: an ephemeral node created (parents as containers), then deleted.</li>
 * </ul>
 */
final class SimpleLocks {

    private SimpleLocks() {
    }

    /** Redis {@code SET NX PX} + compare-and-delete. */
    static final class Redis extends Contender {
        private static final String COMPARE_AND_DELETE =
                "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end";
        private static final SetArgs NX_PX = SetArgs.Builder.nx().px(30_000);
        private final RedisClient client;
        private final StatefulRedisConnection<String, String> connection;
        private final RedisReactiveCommands<String, String> cmd;
        private final String deleteSha;

        Redis(String url) {
            super("redis", "simple", "simple SET NX PX + compare-and-delete", Role.SIMPLE);
            client = RedisClient.create(url);
            connection = client.connect();
            cmd = connection.reactive();
            deleteSha = connection.sync().scriptLoad(COMPARE_AND_DELETE);
        }

        @Override
        Mono<Void> cycle(String name, int worker) {
            return Mono.defer(() -> {
                String owner = GrantRequest.newOwner();
                String key = "bench-simple:" + name;
                return cmd.set(key, owner, NX_PX)
                        .switchIfEmpty(Mono.error(() -> new IllegalStateException("busy")))
                        .flatMap(ok -> cmd.<Long>evalsha(deleteSha, ScriptOutputType.INTEGER, new String[] {key}, owner).next())
                        .filter(n -> n == 1L)
                        .switchIfEmpty(Mono.error(() -> new IllegalStateException("not released")))
                        .then();
            });
        }

        @Override
        public void close() {
            connection.close();
            client.shutdown();
        }
    }

    /** PostgreSQL {@code INSERT ... ON CONFLICT DO NOTHING} + {@code DELETE}, on the same kind of pool as ours. */
    static final class Postgres extends Contender {
        private static final String INSERT = "INSERT INTO bench_simple_locks(name, owner, locked_until) "
                + "VALUES ($1, $2, now() + interval '30 seconds') ON CONFLICT DO NOTHING";
        private static final String DELETE = "DELETE FROM bench_simple_locks WHERE name = $1 AND owner = $2";
        private final ConnectionPool pool;

        Postgres(ConnectionPool pool) {
            super("postgres", "simple", "simple INSERT ON CONFLICT DO NOTHING + DELETE", Role.SIMPLE);
            this.pool = pool;
            Flux.usingWhen(pool.create(), c -> Flux.from(c.createStatement("CREATE TABLE IF NOT EXISTS bench_simple_locks("
                                    + "name text PRIMARY KEY, owner text NOT NULL, locked_until timestamptz NOT NULL)").execute())
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
        Mono<Void> cycle(String name, int worker) {
            return Mono.defer(() -> {
                String owner = GrantRequest.newOwner();
                return update(INSERT, name, owner)
                        .flatMap(n -> n == 1L ? update(DELETE, name, owner) : Mono.error(new IllegalStateException("busy")))
                        .flatMap(n -> n == 1L ? Mono.<Void>empty() : Mono.error(new IllegalStateException("not released")));
            });
        }

        @Override
        public void close() {
            pool.close().block(Duration.ofSeconds(10));
        }
    }

    /**
     * MariaDB: one upsert that inserts the name, or takes its row over when its lease has expired by
     * the server's clock, and returns the row's owner (it is ours when the lock was taken: the driver
     * reports found rows, not changed rows, so the row count cannot tell); then an owner-checked
     * {@code DELETE}. On the same kind of pool as ours.
     */
    static final class MariaDb extends Contender {
        private static final String TAKE = "INSERT INTO bench_simple_locks(name, owner, locked_until) "
                + "VALUES (?, ?, UTC_TIMESTAMP(6) + INTERVAL 30 SECOND) ON DUPLICATE KEY UPDATE "
                + "owner = IF(locked_until < UTC_TIMESTAMP(6), VALUES(owner), owner), "
                + "locked_until = IF(owner = VALUES(owner), VALUES(locked_until), locked_until) RETURNING owner";
        private static final String DELETE = "DELETE FROM bench_simple_locks WHERE name = ? AND owner = ?";
        private final ConnectionPool pool;

        MariaDb(ConnectionPool pool) {
            super("mariadb", "simple", "simple upsert-if-expired + DELETE", Role.SIMPLE);
            this.pool = pool;
            Flux.usingWhen(pool.create(), c -> Flux.from(c.createStatement("CREATE TABLE IF NOT EXISTS bench_simple_locks("
                                    + "name VARCHAR(255) PRIMARY KEY, owner VARCHAR(64) NOT NULL, locked_until DATETIME(6) NOT NULL)")
                            .execute()).concatMap(r -> r.getRowsUpdated()), Connection::close)
                    .blockLast(Duration.ofSeconds(30));
        }

        /** @return whether {@code owner} holds {@code name} now (taken, or taken over from an expired holder) */
        Mono<Boolean> take(String name, String owner) {
            return Flux.usingWhen(pool.create(),
                            c -> Flux.from(c.createStatement(TAKE).bind(0, name).bind(1, owner).execute())
                                    .concatMap(r -> r.map((row, md) -> owner.equals(row.get("owner", String.class)))),
                            Connection::close)
                    .reduce(false, (a, b) -> a || b);
        }

        private Mono<Long> delete(String name, String owner) {
            return Flux.usingWhen(pool.create(),
                            c -> Flux.from(c.createStatement(DELETE).bind(0, name).bind(1, owner).execute())
                                    .concatMap(r -> r.getRowsUpdated()),
                            Connection::close)
                    .reduce(0L, Long::sum);
        }

        @Override
        Mono<Void> cycle(String name, int worker) {
            return Mono.defer(() -> {
                String owner = GrantRequest.newOwner();
                return take(name, owner)
                        .flatMap(taken -> taken ? delete(name, owner) : Mono.error(new IllegalStateException("busy")))
                        .flatMap(n -> n == 1L ? Mono.<Void>empty() : Mono.error(new IllegalStateException("not released")));
            });
        }

        @Override
        public void close() {
            pool.close().block(Duration.ofSeconds(10));
        }
    }

    /** etcd: put-if-absent on a lease in one transaction, then a delete. */
    static final class Etcd extends Contender {
        private final Client client;
        private final KV kv;
        private volatile long lease;

        Etcd(String url) {
            super("etcd", "simple", "simple txn put-if-absent + delete", Role.SIMPLE);
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
        Mono<Void> cycle(String name, int worker) {
            return Mono.defer(() -> {
                String owner = GrantRequest.newOwner();
                ByteSequence key = EtcdBench.bytes("bench-simple/" + Base64.getUrlEncoder().withoutPadding()
                        .encodeToString(name.getBytes(StandardCharsets.UTF_8)));
                return Mono.fromFuture(() -> kv.txn()
                                .If(new Cmp(key, Cmp.Op.EQUAL, CmpTarget.createRevision(0)))
                                .Then(Op.put(key, EtcdBench.bytes(owner), PutOption.builder().withLeaseId(lease).build()))
                                .commit())
                        .flatMap(r -> r.isSucceeded() ? Mono.fromFuture(() -> kv.delete(key))
                                : Mono.error(new IllegalStateException("busy")))
                        .then();
            });
        }

        @Override
        public void close() {
            client.close();
        }
    }

    /** ZooKeeper: an ephemeral node per name, created then deleted. */
    static final class ZooKeeper extends Contender {
        private final CuratorFramework client;
        private final AsyncCuratorFramework async;

        ZooKeeper(String connect) {
            super("zookeeper", "simple", "simple ephemeral create + delete", Role.SIMPLE);
            client = ZooKeeperBench.curator(connect);
            async = AsyncCuratorFramework.wrap(client);
        }

        @Override
        Mono<Void> cycle(String name, int worker) {
            return Mono.defer(() -> {
                String owner = GrantRequest.newOwner();
                String path = "/bench-simple/n-" + Base64.getUrlEncoder().withoutPadding()
                        .encodeToString(name.getBytes(StandardCharsets.UTF_8));
                return Mono.fromCompletionStage(() -> async.create()
                                .withOptions(EnumSet.of(CreateOption.createParentsAsContainers), CreateMode.EPHEMERAL,
                                        ZooDefs.Ids.OPEN_ACL_UNSAFE)
                                .forPath(path, owner.getBytes(StandardCharsets.UTF_8)))
                        .flatMap(created -> Mono.fromCompletionStage(() -> async.delete().forPath(path)))
                        .then();
            });
        }

        @Override
        public void close() {
            client.close();
        }
    }
}
