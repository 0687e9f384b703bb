package io.reactivelocks.examples.demo;

import io.etcd.jetcd.Client;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.r2dbc.spi.ConnectionFactories;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockOptions;
import io.reactivelocks.LockStore;
import io.reactivelocks.etcd.EtcdLocks;
import io.reactivelocks.local.LocalLockBackend;
import io.reactivelocks.local.LocalLockStore;
import io.reactivelocks.r2dbc.mariadb.MariaDbLockOptions;
import io.reactivelocks.r2dbc.mariadb.MariaDbLocks;
import io.reactivelocks.r2dbc.postgresql.PostgresLocks;
import io.reactivelocks.redis.RedisLockOptions;
import io.reactivelocks.redis.RedisLocks;
import io.reactivelocks.test.fault.FaultProxy;
import io.reactivelocks.zookeeper.ZooKeeperLocks;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryNTimes;

/**
 * The stores the demo can run on: {@code embedded} (the default: a throwaway PostgreSQL from
 * Maven Central, see {@link EmbeddedPostgres}), {@code memory} (one JVM, no server),
 * {@code redis://host:port}, {@code postgresql://user:password@host:port/database},
 * {@code mariadb://user:password@host:port/database}, {@code etcd://host:port} and {@code zookeeper://host:port}. On a server (the embedded one too),
 * the instance that freezes talks to it through a TCP proxy that goes silent while it is frozen
 * — as a process paused by a long GC would be — so the server lets its lease expire.
 */
final class DemoBackends implements AutoCloseable {

    /** What {@code --backend} means when it is not given. */
    static final String DEFAULT = "embedded";

    static final String USAGE = "--backend must be embedded (default), memory, redis://host:port, "
            + "postgresql://user:password@host:port/database, mariadb://user:password@host:port/database, "
            + "etcd://host:port or zookeeper://host:port";

    private final String kind;
    private final URI uri;
    private final String label;
    private final LocalLockStore store = new LocalLockStore();
    private final List<AutoCloseable> resources = new ArrayList<>();
    private FaultProxy proxy;

    private DemoBackends(String backend) {
        if (backend == null || backend.equals(DEFAULT)) {
            EmbeddedPostgres pg = EmbeddedPostgres.start(); // fails saying why and what to use instead
            resources.add(pg); // closed last
            this.kind = "postgresql";
            this.uri = URI.create(pg.url());
            this.label = pg.description();
            return;
        }
        if (backend.equals("memory")) {
            this.kind = "memory";
            this.uri = null;
            this.label = "in-memory";
            return;
        }
        try {
            this.uri = URI.create(backend);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(USAGE + "; was " + backend, e);
        }
        this.kind = String.valueOf(uri.getScheme());
        if (!List.of("redis", "postgresql", "mariadb", "etcd", "zookeeper").contains(kind) || uri.getHost() == null || uri.getPort() < 0) {
            throw new IllegalArgumentException(USAGE + "; was " + backend);
        }
        this.label = kind + " at " + uri.getHost() + ":" + uri.getPort();
    }

    static DemoBackends open(String backend) {
        return new DemoBackends(backend);
    }

    String kind() {
        return kind;
    }

    /** @return what the demo prints as its backend */
    String label() {
        return label;
    }

    /** @return the lease time the demo uses on this store (session stores have a 2 s minimum) */
    Duration lease(Duration wanted) {
        Duration min = Duration.ofSeconds(2);
        return (kind.equals("etcd") || kind.equals("zookeeper")) && wanted.compareTo(min) < 0 ? min : wanted;
    }

    /**
     * @param worker  the instance number; instance 0 is the one that freezes
     * @param options the lock options
     * @return that instance's own client (its own connections)
     */
    LockClient client(int worker, LockOptions options) {
        if (kind.equals("memory")) {
            return LocalLockBackend.client(store, options);
        }
        String host = uri.getHost();
        int port = uri.getPort();
        if (worker == 0) {
            proxy = FaultProxy.start(host, port);
            resources.add(proxy);
            host = proxy.host();
            port = proxy.port();
        }
        switch (kind) {
            case "redis": {
                RedisURI redisUri = RedisURI.create("redis://" + (uri.getRawUserInfo() == null ? "" : uri.getRawUserInfo() + "@")
                        + host + ":" + port);
                RedisClient redis = RedisClient.create(redisUri);
                resources.add(redis::shutdown);
                return session(RedisLocks.connect(redis, RedisLockOptions.builder().keyPrefix("demo:").uri(redisUri).build()), options);
            }
            case "postgresql": {
                String url = "r2dbc:postgresql://" + (uri.getRawUserInfo() == null ? "" : uri.getRawUserInfo() + "@")
                        + host + ":" + port + uri.getRawPath();
                return session(PostgresLocks.connect(ConnectionFactories.get(url)), options);
            }
            case "mariadb": {
                String url = "r2dbc:mariadb://" + (uri.getRawUserInfo() == null ? "" : uri.getRawUserInfo() + "@")
                        + host + ":" + port + uri.getRawPath();
                // no notifications on MariaDB: a waiter learns of a release from its session's poller
                return session(MariaDbLocks.connect(ConnectionFactories.get(url),
                        MariaDbLockOptions.builder().pollInterval(Duration.ofMillis(50)).build()), options);
            }
            case "etcd": {
                Client etcd = Client.builder().endpoints("http://" + host + ":" + port).build();
                resources.add(etcd);
                return session(EtcdLocks.connect(etcd), options);
            }
            default: {
                CuratorFramework zk = CuratorFrameworkFactory.builder().connectString(host + ":" + port)
                        .sessionTimeoutMs((int) options.leaseTime().toMillis()).connectionTimeoutMs(2000)
                        .retryPolicy(new RetryNTimes(3, 100)).build();
                zk.start();
                resources.add(zk);
                return session(ZooKeeperLocks.connect(zk), options);
            }
        }
    }

    /**
     * @param store   an instance's session with the store (closed with the demo's other resources)
     * @param options the lock options
     * @return the instance's lock client from the session
     */
    private LockClient session(LockStore store, LockOptions options) {
        resources.add(() -> store.close().block(Duration.ofSeconds(10)));
        return store.locks(options);
    }

    /** The frozen instance goes silent on the network (nothing to do in memory: its timers stop). */
    void freeze() {
        if (proxy != null) {
            proxy.blackhole();
        }
    }

    /** The frozen instance comes back: its old connections are gone, new ones work. */
    void thaw() {
        if (proxy != null) {
            proxy.cutConnections();
            proxy.heal();
        }
    }

    @Override
    public void close() {
        for (int i = resources.size() - 1; i >= 0; i--) {
            try {
                resources.get(i).close();
            } catch (Exception e) {
                // best effort at the end of the demo
            }
        }
    }
}
