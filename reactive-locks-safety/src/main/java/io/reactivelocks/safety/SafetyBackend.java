package io.reactivelocks.safety;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.options.GetOption;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.r2dbc.spi.ConnectionFactories;
import io.r2dbc.spi.ConnectionFactory;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockListener;
import io.reactivelocks.LockOptions;
import io.reactivelocks.etcd.EtcdLockOptions;
import io.reactivelocks.etcd.EtcdLocks;
import io.reactivelocks.r2dbc.PostgresLockOptions;
import io.reactivelocks.r2dbc.PostgresLocks;
import io.reactivelocks.redis.RedisLockOptions;
import io.reactivelocks.redis.RedisLocks;
import io.reactivelocks.test.server.EtcdServer;
import io.reactivelocks.test.server.PostgresServer;
import io.reactivelocks.test.server.RedisServer;
import io.reactivelocks.test.server.ServerFixture;
import io.reactivelocks.test.server.ZooKeeperServer;
import io.reactivelocks.zookeeper.ZooKeeperLockOptions;
import io.reactivelocks.zookeeper.ZooKeeperLocks;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryNTimes;
import org.apache.zookeeper.data.Stat;
import reactor.core.publisher.Mono;

/**
 * The four stores as the harness sees them: how the harness starts one (the test fixtures), how a
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
            LockClient client = LockClient.create(RedisLocks.backend(redis, RedisLockOptions.builder().keyPrefix(namespace + ":").uri(uri).build()),
                    options, listener);
            return new Connection(client, redis::shutdown);
        }

        @Override
        long held(ServerFixture server, String namespace) {
            RedisClient redis = RedisClient.create(RedisURI.create("redis://" + server.host() + ":" + server.port()));
            try (StatefulRedisConnection<String, String> c = redis.connect()) {
                return c.sync().keys(namespace + ":*:lock").size();
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
            LockClient client = LockClient.create(PostgresLocks.backend(factory, pgOptions(namespace)), options, listener);
            return new Connection(client, () -> { });
        }

        @Override
        void prepare(ServerFixture server, String namespace) {
            PostgresServer pg = (PostgresServer) server;
            ConnectionFactory factory = ConnectionFactories.get(pg.r2dbcUrl());
            PostgresLocks.backend(factory, pgOptions(namespace)).migrate().block(Duration.ofSeconds(30));
        }

        @Override
        long held(ServerFixture server, String namespace) {
            PostgresServer pg = (PostgresServer) server;
            ConnectionFactory factory = ConnectionFactories.get(pg.r2dbcUrl());
            Long n = Mono.usingWhen(Mono.from(factory.create()),
                    c -> Mono.from(c.createStatement("SELECT count(*) FROM " + namespace + " WHERE expires_at > now()").execute())
                            .flatMap(r -> Mono.from(r.map((row, m) -> row.get(0, Long.class)))),
                    c -> Mono.from(c.close())).block(Duration.ofSeconds(30));
            return n == null ? 0 : n;
        }

        private PostgresLockOptions pgOptions(String namespace) {
            return PostgresLockOptions.builder().table(namespace).sequence(namespace + "_seq")
                    .channel(namespace).createSchemaOnFirstUse(true).build();
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
            Client etcd = Client.builder().endpoints("http://" + host + ":" + port).build();
            LockClient client = LockClient.create(EtcdLocks.backend(etcd, EtcdLockOptions.builder().prefix(namespace)
                    .sessionTtl(options.leaseTime()).build()), options, listener);
            return new Connection(client, etcd::close);
        }

        @Override
        long held(ServerFixture server, String namespace) {
            try (Client etcd = Client.builder().endpoints("http://" + server.host() + ":" + server.port()).build()) {
                ByteSequence prefix = ByteSequence.from(namespace + "/", StandardCharsets.UTF_8);
                return etcd.getKVClient().get(prefix, GetOption.builder().isPrefix(true).withCountOnly(true).build())
                        .get(10, TimeUnit.SECONDS).getCount();
            } catch (Exception e) {
                throw new IllegalStateException("cannot count etcd keys under " + namespace, e);
            }
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
        LockClient client = LockClient.create(ZooKeeperLocks.backend(zk, ZooKeeperLockOptions.builder().root("/" + namespace).build()),
                options, listener);
        return new Connection(client, zk::close);
    }

    /** The ephemeral lock nodes under {@code /namespace} on ZooKeeper at {@code connectString}. */
    static long zooKeeperHeld(String connectString, String namespace) {
        try (CuratorFramework zk = CuratorFrameworkFactory.newClient(connectString, new RetryNTimes(10, 200))) {
            zk.start();
            if (!zk.blockUntilConnected(30, TimeUnit.SECONDS)) {
                throw new IllegalStateException("ZooKeeper did not answer at " + connectString);
            }
            String root = "/" + namespace;
            if (zk.checkExists().forPath(root) == null) {
                return 0;
            }
            long n = 0;
            for (String name : zk.getChildren().forPath(root)) {
                for (String child : zk.getChildren().forPath(root + "/" + name)) {
                    Stat stat = zk.checkExists().forPath(root + "/" + name + "/" + child);
                    if (stat != null && stat.getEphemeralOwner() != 0) {
                        n++;
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

    /**
     * A worker's client and what to close after it.
     *
     * @param client the lock client
     * @param closer closes the driver
     */
    record Connection(LockClient client, AutoCloseable closer) implements AutoCloseable {
        @Override
        public void close() {
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
}
