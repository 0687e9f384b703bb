package io.reactivelocks.safety.badinput;

import io.etcd.jetcd.Client;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.r2dbc.postgresql.PostgresqlConnectionConfiguration;
import io.r2dbc.postgresql.PostgresqlConnectionFactory;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockOptions;
import io.reactivelocks.LockStore;
import io.reactivelocks.etcd.EtcdLockOptions;
import io.reactivelocks.etcd.EtcdLocks;
import io.reactivelocks.r2dbc.postgresql.PostgresLockBackend;
import io.reactivelocks.r2dbc.postgresql.PostgresLockOptions;
import io.reactivelocks.redis.RedisLockOptions;
import io.reactivelocks.redis.RedisLocks;
import io.reactivelocks.zookeeper.ZooKeeperLockOptions;
import io.reactivelocks.zookeeper.ZooKeeperLocks;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.ExponentialBackoffRetry;
import reactor.core.publisher.Mono;

/**
 * Lock clients of each backend for the catalogue, and what they need closed afterwards (driver
 * clients the lock client does not own). Blocking clean-up is for test threads only.
 */
final class Clients implements AutoCloseable {

    /** Short timeouts: a bad store must be reported quickly, and the tests say within what. */
    static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(1);

    static final LockOptions OPTIONS = LockOptions.builder().requestTimeout(REQUEST_TIMEOUT).build();

    private final List<LockClient> locks = new ArrayList<>();
    private final List<LockStore> stores = new ArrayList<>();
    private final List<Runnable> afterwards = new ArrayList<>();

    /** @return a unique, readable suffix for key prefixes, roots and schemas */
    static String unique() {
        return UUID.randomUUID().toString().substring(0, 8);
    }

    /**
     * Connects a client to a good server once, with a generous request timeout, so that the first
     * connect of a fresh JVM (class loading, TLS and driver set-up) does not count against the
     * short request timeout of the tests.
     */
    static LockClient warm(LockClient client) {
        LockOptions patient = OPTIONS.mutate().requestTimeout(BadInput.STEP).waitTimeout(BadInput.STEP).build();
        client.withLock("warm-up-" + unique(), patient, lease -> Mono.just(lease.token())).block(BadInput.STEP.multipliedBy(2));
        return client;
    }

    /** Registers a lock client to close. */
    LockClient track(LockClient client) {
        locks.add(client);
        return client;
    }

    /** Registers a store session to close (after the lock clients). */
    LockStore track(LockStore store) {
        stores.add(store);
        return store;
    }

    /** Registers a clean-up step to run after the lock clients and sessions closed. */
    void afterwards(Runnable step) {
        afterwards.add(step);
    }

    // ------------------------------------------------------------------ Redis

    LockClient redis(RedisURI uri, RedisLockOptions redisOptions, LockOptions options) {
        RedisClient driver = RedisClient.create();
        afterwards(() -> driver.shutdown(Duration.ZERO, Duration.ofSeconds(2)));
        return track(RedisLocks.connect(driver, redisOptions.mutate().uri(uri).build())).locks(options);
    }

    LockClient redis(String url, String keyPrefix, LockOptions options) {
        return redis(RedisURI.create(url), RedisLockOptions.builder().keyPrefix(keyPrefix).build(), options);
    }

    // ------------------------------------------------------------------ PostgreSQL

    static PostgresqlConnectionFactory pgFactory(String host, int port, String user, String password, String database) {
        return new PostgresqlConnectionFactory(PostgresqlConnectionConfiguration.builder()
                .host(host).port(port).username(user).password(password).database(database)
                .connectTimeout(Duration.ofSeconds(3))
                .applicationName("reactive-locks-badinput")
                .build());
    }

    LockClient postgres(PostgresqlConnectionFactory factory, PostgresLockOptions pgOptions, LockOptions options) {
        return track(LockClient.create(PostgresLockBackend.create(factory, pgOptions), options));
    }

    // ------------------------------------------------------------------ etcd

    static Client etcdDriver(String... endpoints) {
        return Client.builder().endpoints(endpoints).connectTimeout(Duration.ofSeconds(2)).build();
    }

    LockClient etcd(Client driver, EtcdLockOptions etcdOptions, LockOptions options) {
        afterwards(driver::close);
        return track(EtcdLocks.connect(driver, etcdOptions)).locks(options);
    }

    // ------------------------------------------------------------------ ZooKeeper

    static CuratorFramework curator(String connectString) {
        return CuratorFrameworkFactory.builder().connectString(connectString)
                .sessionTimeoutMs(10_000).connectionTimeoutMs(2_000)
                .retryPolicy(new ExponentialBackoffRetry(50, 2))
                .build();
    }

    LockClient zookeeper(CuratorFramework curator, ZooKeeperLockOptions zkOptions, LockOptions options) {
        afterwards(curator::close);
        return track(ZooKeeperLocks.connect(curator, zkOptions)).locks(options);
    }

    @Override
    public void close() {
        Mono.when(locks.stream().map(l -> l.close().onErrorResume(e -> Mono.empty())).toList())
                .block(BadInput.STEP);
        locks.clear();
        Mono.when(stores.stream().map(l -> l.close().onErrorResume(e -> Mono.empty())).toList())
                .block(BadInput.STEP);
        stores.clear();
        for (Runnable r : afterwards) {
            try {
                r.run();
            } catch (RuntimeException e) {
                // clean-up of a client pointed at a bad server: best effort
            }
        }
        afterwards.clear();
    }
}
