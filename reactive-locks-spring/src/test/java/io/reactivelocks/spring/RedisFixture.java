package io.reactivelocks.spring;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScanArgs;
import io.lettuce.core.ScanIterator;
import io.lettuce.core.api.StatefulRedisConnection;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockOptions;
import io.reactivelocks.LockStore;
import io.reactivelocks.redis.RedisLockOptions;
import io.reactivelocks.redis.RedisLocks;
import io.reactivelocks.test.server.RedisServer;
import io.reactivelocks.window.WindowLock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A real redis-server child process ({@link RedisServer}) and a Lettuce client for it; hands out lock
 * clients and window locks under a key prefix unique to the fixture, and closes them all. Blocking
 * methods are for test threads only.
 */
final class RedisFixture implements AutoCloseable {

    static final Duration STEP = Duration.ofSeconds(10);
    /**
     * Leases short enough that a lost lease is noticed within a renewal interval (lease/3), long enough
     * that a loaded build machine does not lose them by starving the renewals.
     */
    static final Duration LEASE = Duration.ofSeconds(4);

    final RedisServer server;
    final RedisURI uri;
    final RedisClient redis;
    final String prefix = "rlspring:" + UUID.randomUUID().toString().substring(0, 8) + ":";
    private final List<LockStore> sessions = new CopyOnWriteArrayList<>();

    RedisFixture() {
        server = RedisServer.start();
        uri = RedisURI.create(server.url());
        uri.setTimeout(STEP);
        redis = RedisClient.create(uri);
    }

    private RedisLockOptions redisOptions() {
        return RedisLockOptions.builder().keyPrefix(prefix).uri(uri).build();
    }

    /** @return a new lock client (one per simulated instance) with short leases */
    LockClient newClient() {
        return newClient(STEP);
    }

    /** @return a new lock client with short leases whose store requests fail after {@code requestTimeout} */
    LockClient newClient(Duration requestTimeout) {
        LockStore session = RedisLocks.connect(redis, redisOptions()); // one per simulated instance
        sessions.add(session);
        LockClient c = session.locks(LockOptions.builder().leaseTime(LEASE).requestTimeout(requestTimeout).build());
        // connect now, before any scheduler starts ticking: the first connect of a loaded JVM can be slow
        c.tryAcquire("warm-up").flatMap(lease -> lease.release()).retry(20).block(STEP.multipliedBy(3));
        return c;
    }

    /** @return a new window lock on the same Redis */
    WindowLock newWindowLock() {
        LockStore session = RedisLocks.connect(redis, redisOptions());
        sessions.add(session);
        WindowLock w = session.windowLocks(LockOptions.builder().requestTimeout(STEP).build());
        w.tryClaim("warm-up", Duration.ofMillis(1)).retry(2).block(STEP.multipliedBy(3));
        return w;
    }

    /** Deletes the key of lock {@code name} behind its holder's back (the holder's next renewal finds it gone). */
    long deleteLock(String name) {
        try (StatefulRedisConnection<String, String> c = redis.connect(uri)) {
            return c.sync().del(prefix + "{" + name + "}:lock"); // plain ASCII names: the tag is the name
        }
    }

    /** @return the lock keys under this fixture's prefix (held locks), found with SCAN */
    List<String> lockKeys() {
        List<String> keys = new ArrayList<>();
        try (StatefulRedisConnection<String, String> c = redis.connect(uri)) {
            ScanIterator.scan(c.sync(), ScanArgs.Builder.matches(prefix + "*").limit(500)).forEachRemaining(k -> {
                if (k.endsWith("}:lock")) {
                    keys.add(k);
                }
            });
        }
        return keys;
    }

    @Override
    public void close() {
        try {
            for (LockStore session : sessions) {
                session.close().block(STEP); // the lock client or window lock it handed out, then its connections
            }
            redis.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        } finally {
            server.close();
        }
    }
}
