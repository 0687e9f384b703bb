package io.reactivelocks.safety;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.options.GetOption;
import io.lettuce.core.Range;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.r2dbc.spi.ConnectionFactories;
import io.r2dbc.spi.ConnectionFactory;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockListener;
import io.reactivelocks.LockOptions;
import io.reactivelocks.LockStore;
import io.reactivelocks.admin.LockAdmin;
import io.reactivelocks.etcd.EtcdLockOptions;
import io.reactivelocks.etcd.EtcdLocks;
import io.reactivelocks.r2dbc.mariadb.MariaDbLockBackend;
import io.reactivelocks.r2dbc.mariadb.MariaDbLockOptions;
import io.reactivelocks.r2dbc.mariadb.MariaDbLocks;
import io.reactivelocks.r2dbc.postgresql.PostgresLockOptions;
import io.reactivelocks.r2dbc.postgresql.PostgresLocks;
import io.reactivelocks.redis.RedisLockOptions;
import io.reactivelocks.redis.RedisLocks;
import io.reactivelocks.r2dbc.postgresql.PostgresLockBackend;
import io.reactivelocks.rwlock.ReadWriteLock;
import io.reactivelocks.rwlock.ReadWriteLockOptions;
import io.reactivelocks.semaphore.Semaphore;
import io.reactivelocks.spi.LockBackend;
import io.reactivelocks.test.server.EtcdServer;
import io.reactivelocks.test.server.MariaDbServer;
import io.reactivelocks.test.server.PostgresServer;
import io.reactivelocks.test.server.RedisServer;
import io.reactivelocks.test.server.ServerFixture;
import io.reactivelocks.test.server.ZooKeeperServer;
import io.reactivelocks.zookeeper.ZooKeeperLockOptions;
import io.reactivelocks.zookeeper.ZooKeeperLocks;
import java.net.URLDecoder;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryNTimes;
import org.apache.zookeeper.data.Stat;
import org.mariadb.r2dbc.MariadbConnectionConfiguration;
import org.mariadb.r2dbc.MariadbConnectionFactory;
import reactor.core.publisher.Mono;

/**
 * The stores as the harness sees them: how the harness starts one (the test fixtures), how a
 * worker connects to it (through its own fault proxy), and how the harness counts what a run left
 * held on it. Every run gets its own namespace (key prefix, table, root) so runs never see each
 * other's locks.
 */
public enum SafetyBackend implements SafetyStore {

    /** Redis, one redis-server without persistence. */
    REDIS {
        @Override
        ServerFixture start() {
            return RedisServer.start();
        }

        @Override
        String extra(ServerFixture server) {
            return "-";
        }

        @Override
        public Connection connect(String host, int port, String extra, String namespace, LockOptions options, LockListener listener) {
            RedisURI uri = RedisURI.create("redis://" + host + ":" + port);
            uri.setTimeout(options.requestTimeout());
            RedisClient redis = RedisClient.create(uri);
            LockStore store = RedisLocks.connect(redis, RedisLockOptions.builder().keyPrefix(namespace + ":").uri(uri).build());
            LockClient client = store.locks(options, listener);
            return new Connection(client, ObservedFairBackend.watching(store.fairLocks(options), options, listener),
                    store.semaphores(options),
                    store.readWriteLocks(ReadWriteLockOptions.of(options)), store.admin(), () -> {
                        store.close().block(Duration.ofSeconds(10));
                        redis.shutdown();
                    });
        }

        @Override
        long held(ServerFixture server, String namespace) {
            RedisClient redis = RedisClient.create(RedisURI.create("redis://" + server.host() + ":" + server.port()));
            try (StatefulRedisConnection<String, String> c = redis.connect()) {
                long n = c.sync().keys(namespace + ":*:lock").size();
                List<String> time = c.sync().time();
                long nowMs = Long.parseLong(time.get(0)) * 1000 + Long.parseLong(time.get(1)) / 1000;
                // semaphore permits, read-write grants and writers' intents, fair-lock waiters: sorted sets of owner -> expiry (server ms)
                for (String pattern : List.of(":*:semaphore", ":*:rw", ":*:rw:intents", ":*:fair:deadlines")) {
                    for (String key : c.sync().keys(namespace + pattern)) {
                        n += c.sync().zcount(key, Range.from(Range.Boundary.excluding(nowMs), Range.Boundary.unbounded()));
                    }
                }
                return n;
            } finally {
                redis.shutdown();
            }
        }
    },

    /** PostgreSQL, a fresh cluster from the Debian binaries. */
    POSTGRESQL {
        @Override
        ServerFixture start() {
            return PostgresServer.start();
        }

        @Override
        String extra(ServerFixture server) {
            PostgresServer pg = (PostgresServer) server;
            return enc(pg.username()) + ":" + enc(pg.password()) + ":" + enc(pg.database());
        }

        @Override
        public Connection connect(String host, int port, String extra, String namespace, LockOptions options, LockListener listener) {
            String[] e = extra.split(":");
            ConnectionFactory factory = ConnectionFactories.get("r2dbc:postgresql://" + e[0] + ":" + e[1] + "@" + host + ":" + port
                    + "/" + e[2] + "?connectTimeout=PT2S");
            LockStore store = PostgresLocks.connect(factory, pgOptions(namespace));
            LockClient client = store.locks(options, listener);
            return new Connection(client, ObservedFairBackend.watching(store.fairLocks(options), options, listener),
                    store.semaphores(options),
                    store.readWriteLocks(ReadWriteLockOptions.of(options)), store.admin(), () -> store.close().block(Duration.ofSeconds(10)));
        }

        @Override
        void prepare(ServerFixture server, String namespace) {
            PostgresServer pg = (PostgresServer) server;
            ConnectionFactory factory = ConnectionFactories.get(pg.r2dbcUrl());
            PostgresLockBackend backend = PostgresLocks.backend(factory, pgOptions(namespace));
            backend.migrate().block(Duration.ofSeconds(30));
            // the concept tables are created on first use: once here, not by three workers at the same moment
            LockOptions options = LockOptions.defaults();
            String name = namespace + "-prepare";
            LockStore store = PostgresLocks.connect(backend);
            try {
                store.semaphores(options).tryAcquire(name, 1).flatMap(l -> l.release()).block(Duration.ofSeconds(30));
                store.readWriteLocks(ReadWriteLockOptions.of(options)).write().tryAcquire(name)
                        .flatMap(l -> l.release()).block(Duration.ofSeconds(30));
                store.fairLocks(options).tryAcquire(name).flatMap(l -> l.release()).block(Duration.ofSeconds(30));
            } finally {
                store.close().block(Duration.ofSeconds(30));
            }
        }

        @Override
        long held(ServerFixture server, String namespace) {
            PostgresServer pg = (PostgresServer) server;
            ConnectionFactory factory = ConnectionFactories.get(pg.r2dbcUrl());
            Long n = Mono.usingWhen(Mono.from(factory.create()),
                    c -> Mono.from(c.createStatement("SELECT (SELECT count(*) FROM " + namespace + " WHERE expires_at > now())"
                                                    + " + " + count(namespace + "_permits") + " + " + count(namespace + "_rw") + " + " + count(namespace + "_waiters"))
                                    .execute())
                            .flatMap(r -> Mono.from(r.map((row, m) -> row.get(0, Long.class)))),
                    c -> Mono.from(c.close())).block(Duration.ofSeconds(30));
            return n == null ? 0 : n;
        }

        /** Unexpired rows of a concept table (every run creates them all in {@link #prepare}). */
        private String count(String table) {
            return "(SELECT count(*) FROM " + table + " WHERE expires_at > now())";
        }

        private PostgresLockOptions pgOptions(String namespace) {
            return PostgresLockOptions.builder().table(namespace).sequence(namespace + "_seq")
                    .channel(namespace).createSchemaOnFirstUse(true).build();
        }
    },

    /**
     * MariaDB, a fresh data dir from the Debian binaries (InnoDB log written to the OS at each
     * commit, so a SIGKILL of the server keeps what was committed). Every run has its own tables
     * and sequence in the fixture's database; waiters are woken by the store's poller every 50 ms.
     */
    MARIADB {
        @Override
        ServerFixture start() {
            return MariaDbServer.start();
        }

        @Override
        String extra(ServerFixture server) {
            MariaDbServer db = (MariaDbServer) server;
            return enc(db.username()) + ":" + enc(db.password()) + ":" + enc(db.database());
        }

        @Override
        public Connection connect(String host, int port, String extra, String namespace, LockOptions options, LockListener listener) {
            String[] e = extra.split(":");
            LockStore store = MariaDbLocks.connect(mariaDbFactory(host, port, dec(e[0]), dec(e[1]), dec(e[2])), mariaDbOptions(namespace));
            LockClient client = store.locks(options, listener);
            return new Connection(client, ObservedFairBackend.watching(store.fairLocks(options), options, listener),
                    store.semaphores(options),
                    store.readWriteLocks(ReadWriteLockOptions.of(options)), store.admin(), () -> store.close().block(Duration.ofSeconds(10)));
        }

        @Override
        void prepare(ServerFixture server, String namespace) {
            MariaDbServer db = (MariaDbServer) server;
            MariaDbLockBackend backend = MariaDbLocks.backend(
                    mariaDbFactory(db.host(), db.port(), db.username(), db.password(), db.database()), mariaDbOptions(namespace));
            backend.migrate().block(Duration.ofSeconds(30));
            // the concept tables are created on first use: once here, not by the workers at the same moment
            LockOptions options = LockOptions.defaults();
            String name = namespace + "-prepare";
            LockStore store = MariaDbLocks.connect(backend);
            try {
                store.semaphores(options).tryAcquire(name, 1).flatMap(l -> l.release()).block(Duration.ofSeconds(30));
                store.readWriteLocks(ReadWriteLockOptions.of(options)).write().tryAcquire(name)
                        .flatMap(l -> l.release()).block(Duration.ofSeconds(30));
                store.fairLocks(options).tryAcquire(name).flatMap(l -> l.release()).block(Duration.ofSeconds(30));
            } finally {
                store.close().block(Duration.ofSeconds(30));
            }
        }

        @Override
        long held(ServerFixture server, String namespace) {
            MariaDbServer db = (MariaDbServer) server;
            ConnectionFactory factory = mariaDbFactory(db.host(), db.port(), db.username(), db.password(), db.database());
            // rows whose lease is still live by the server's clock (guard rows are written already expired)
            String sql = "SELECT " + String.join(" + ", List.of(namespace, namespace + "_permits", namespace + "_rw", namespace + "_waiters")
                    .stream().map(t -> "(SELECT count(*) FROM `" + t + "` WHERE expires_at > UTC_TIMESTAMP(6))").toList());
            Long n = Mono.usingWhen(Mono.from(factory.create()),
                    c -> Mono.from(c.createStatement(sql).execute())
                            .flatMap(r -> Mono.from(r.map((row, m) -> row.get(0, Long.class)))),
                    c -> Mono.from(c.close())).block(Duration.ofSeconds(30));
            return n == null ? 0 : n;
        }

        private MariaDbLockOptions mariaDbOptions(String namespace) {
            return MariaDbLockOptions.builder().table(namespace).sequence(namespace + "_seq")
                    .pollInterval(Duration.ofMillis(50)).connectTimeout(Duration.ofSeconds(2)).build();
        }
    },

    /** etcd, one member. */
    ETCD {
        @Override
        ServerFixture start() {
            return EtcdServer.start();
        }

        @Override
        String extra(ServerFixture server) {
            return "-";
        }

        @Override
        public Connection connect(String host, int port, String extra, String namespace, LockOptions options, LockListener listener) {
            return etcdConnection(Client.builder().endpoints("http://" + host + ":" + port).build(), namespace, options, listener);
        }

        @Override
        long held(ServerFixture server, String namespace) {
            return etcdHeld(Client.builder().endpoints("http://" + server.host() + ":" + server.port()).build(), namespace);
        }
    },

    /** ZooKeeper, one standalone server. */
    ZOOKEEPER {
        @Override
        ServerFixture start() {
            return ZooKeeperServer.start();
        }

        @Override
        String extra(ServerFixture server) {
            return "-";
        }

        @Override
        public Connection connect(String host, int port, String extra, String namespace, LockOptions options, LockListener listener) {
            return zooKeeperConnection(host + ":" + port, namespace, options, listener);
        }

        @Override
        long held(ServerFixture server, String namespace) {
            return zooKeeperHeld(server.host() + ":" + server.port(), namespace);
        }
    };

    /** A worker's client on ZooKeeper at {@code connectString} (one server or a multi-host ensemble string). */
    static Connection zooKeeperConnection(String connectString, String namespace, LockOptions options, LockListener listener) {
        CuratorFramework zk = CuratorFrameworkFactory.builder().connectString(connectString)
                .sessionTimeoutMs((int) options.leaseTime().toMillis()).connectionTimeoutMs(2000)
                .retryPolicy(new RetryNTimes(Integer.MAX_VALUE, 200)).build();
        zk.start();
        ZooKeeperLockOptions zkOptions = ZooKeeperLockOptions.builder().root("/" + namespace).build();
        LockBackend mutex = ZooKeeperLocks.backend(zk, zkOptions);
        LockClient client = LockClient.create(mutex, options, listener);
        LockStore store = ZooKeeperLocks.connect(zk, zkOptions);
        // the ZooKeeper mutex queues natively (sequential nodes): it is the fair lock here, watched by the FIFO check
        return new Connection(client, ObservedFairBackend.over(mutex, options, listener), store.semaphores(options),
                store.readWriteLocks(ReadWriteLockOptions.of(options)), store.admin(), () -> {
                    store.close().block(Duration.ofSeconds(10));
                    zk.close();
                });
    }

    /** The ephemeral lock nodes under {@code /namespace} on ZooKeeper at {@code connectString}. */
    static long zooKeeperHeld(String connectString, String namespace) {
        try (CuratorFramework zk = CuratorFrameworkFactory.newClient(connectString, new RetryNTimes(10, 200))) {
            zk.start();
            if (!zk.blockUntilConnected(30, TimeUnit.SECONDS)) {
                throw new IllegalStateException("ZooKeeper did not answer at " + connectString);
            }
            long n = 0;
            for (String root : List.of("/" + namespace, "/" + namespace + "-semaphore", "/" + namespace + "-rw")) {
                if (zk.checkExists().forPath(root) == null) {
                    continue;
                }
                for (String name : zk.getChildren().forPath(root)) {
                    for (String child : zk.getChildren().forPath(root + "/" + name)) {
                        Stat stat = zk.checkExists().forPath(root + "/" + name + "/" + child);
                        if (stat != null && stat.getEphemeralOwner() != 0) {
                            n++;
                        }
                    }
                }
            }
            return n;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        } catch (Exception e) {
            throw new IllegalStateException("cannot count ZooKeeper nodes under /" + namespace, e);
        }
    }

    /** A worker's clients on etcd at {@code client} (one member or a cluster's endpoints). */
    static Connection etcdConnection(Client etcd, String namespace, LockOptions options, LockListener listener) {
        EtcdLockOptions etcdOptions = EtcdLockOptions.builder().prefix(namespace).sessionTtl(options.leaseTime()).build();
        LockBackend mutex = EtcdLocks.backend(etcd, etcdOptions);
        LockClient client = LockClient.create(mutex, options, listener);
        LockStore store = EtcdLocks.connect(etcd, etcdOptions);
        // the etcd mutex queues natively (create-revision order): it is the fair lock here, watched by the FIFO check
        return new Connection(client, ObservedFairBackend.over(mutex, options, listener), store.semaphores(options),
                store.readWriteLocks(ReadWriteLockOptions.of(options)), store.admin(), () -> {
                    store.close().block(Duration.ofSeconds(10));
                    etcd.close();
                });
    }

    /** The keys of every primitive under {@code namespace} on etcd. */
    static long etcdHeld(Client etcd, String namespace) {
        try (etcd) {
            long n = 0;
            for (String p : List.of(namespace + "/", namespace + "-semaphore/", namespace + "-rw/")) {
                ByteSequence prefix = ByteSequence.from(p, StandardCharsets.UTF_8);
                n += etcd.getKVClient().get(prefix, GetOption.builder().isPrefix(true).withCountOnly(true).build())
                        .get(10, TimeUnit.SECONDS).getCount();
            }
            return n;
        } catch (Exception e) {
            throw new IllegalStateException("cannot count etcd keys under " + namespace, e);
        }
    }

    /**
     * A worker's clients of each primitive and what to close after them.
     *
     * @param client    the mutex client
     * @param fair      the fair (FIFO) lock client (the mutex client on the stores whose mutex queues natively)
     * @param semaphore the semaphore
     * @param rw        the read-write lock
     * @param admin     the store session's admin (the harness force-releases through it)
     * @param closer    closes the driver
     */
    record Connection(LockClient client, LockClient fair, Semaphore semaphore, ReadWriteLock rw, LockAdmin admin, AutoCloseable closer)
            implements AutoCloseable {
        @Override
        public void close() {
            try {
                semaphore.close().block(Duration.ofSeconds(10));
                rw.close().block(Duration.ofSeconds(10));
                if (fair != client) {
                    fair.close().block(Duration.ofSeconds(10));
                }
                client.close().block(Duration.ofSeconds(10));
            } catch (RuntimeException e) {
                // the worker is ending anyway
            }
            try {
                closer.close();
            } catch (Exception e) {
                // the worker is ending anyway
            }
        }
    }

    /** Starts a server for the runs (the same resolution chain as the tests). */
    abstract ServerFixture start();

    /** @return what a worker needs besides host and port (credentials), without spaces */
    abstract String extra(ServerFixture server);

    /** Connects one worker to the store at {@code host:port} (its proxy). */
    @Override
    public abstract Connection connect(String host, int port, String extra, String namespace, LockOptions options, LockListener listener);

    /** Readies the namespace before the workers start (tables for PostgreSQL). */
    void prepare(ServerFixture server, String namespace) {
    }

    /** @return how many locks (held keys, rows, nodes) of the namespace are on the server now */
    abstract long held(ServerFixture server, String namespace);

    @Override
    public Duration minimumLease() {
        return this == ETCD || this == ZOOKEEPER ? Duration.ofSeconds(2) : Duration.ofMillis(500);
    }

    static String enc(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8);
    }

    static String dec(String s) {
        return URLDecoder.decode(s, StandardCharsets.UTF_8);
    }

    /** An unpooled r2dbc-mariadb factory (the store session pools it). */
    static ConnectionFactory mariaDbFactory(String host, int port, String user, String password, String database) {
        return MariadbConnectionFactory.from(MariadbConnectionConfiguration.builder().host(host).port(port)
                .username(user).password(password).database(database).connectTimeout(Duration.ofSeconds(2)).build());
    }
}
