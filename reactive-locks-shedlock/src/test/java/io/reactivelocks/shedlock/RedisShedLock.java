package io.reactivelocks.shedlock;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockOptions;
import io.reactivelocks.LockState;
import io.reactivelocks.LockStore;
import io.reactivelocks.redis.RedisLockOptions;
import io.reactivelocks.redis.RedisLocks;
import io.reactivelocks.test.server.RedisServer;
import java.time.Duration;
import java.util.UUID;

/**
 * One real redis-server and a lock client on it, shared by the test classes of this module (they
 * use distinct lock names); it dies with the JVM (the fixture's shutdown hook). Blocking helpers
 * are for test threads only.
 */
final class RedisShedLock {

    static final Duration TIMEOUT = Duration.ofSeconds(10);
    /** Short, so that the tests see leases renewed past it. */
    static final Duration LEASE_TIME = Duration.ofSeconds(1);

    final RedisServer server;
    final RedisClient redis;
    final LockStore store;
    final LockClient client;

    private RedisShedLock() {
        server = RedisServer.start();
        RedisURI uri = RedisURI.create(server.url());
        redis = RedisClient.create(uri);
        store = RedisLocks.connect(redis, RedisLockOptions.builder().keyPrefix("rlshedlock:" + UUID.randomUUID() + ":")
                .uri(uri).build());
        client = store.locks(LockOptions.builder().leaseTime(LEASE_TIME).build());
        // the first request loads scripts and classes; on a loaded machine it may pass the request timeout
        client.tryAcquire("warm-up").flatMap(lease -> lease.release()).retry(2).block(Duration.ofSeconds(60));
    }

    private static RedisShedLock shared;

    /** @return the shared server and client, started on first use */
    static synchronized RedisShedLock shared() {
        if (shared == null) {
            shared = new RedisShedLock();
        }
        return shared;
    }

    LockState state(String name) {
        return client.inspect(name).block(TIMEOUT);
    }
}
