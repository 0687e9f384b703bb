package io.reactivelocks.blocking;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScanArgs;
import io.lettuce.core.ScanIterator;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.resource.ClientResources;
import io.reactivelocks.LockStore;
import io.reactivelocks.redis.RedisLockOptions;
import io.reactivelocks.redis.RedisLocks;
import io.reactivelocks.test.server.RedisServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

/** One real redis-server child process and a Lettuce client for it; each test takes its own key prefix. */
final class RedisFixture implements AutoCloseable {

    final RedisServer server = RedisServer.start();
    final ClientResources resources = ClientResources.create();
    final RedisURI uri = RedisURI.create(server.url());
    final RedisClient client;

    RedisFixture() {
        uri.setTimeout(Duration.ofSeconds(10));
        client = RedisClient.create(resources, uri);
    }

    /** @return a key prefix no other test uses */
    static String newPrefix() {
        return "rlblocking:" + UUID.randomUUID().toString().substring(0, 8) + ":";
    }

    /** @return a new session under {@code prefix} (its own connections); the caller closes it */
    LockStore session(String prefix) {
        return RedisLocks.connect(client, RedisLockOptions.builder().keyPrefix(prefix).uri(uri).build());
    }

    /** @return the keys under {@code prefix}, found with SCAN */
    List<String> keys(String prefix) {
        List<String> keys = new ArrayList<>();
        try (StatefulRedisConnection<String, String> c = client.connect(uri)) {
            ScanIterator.scan(c.sync(), ScanArgs.Builder.matches(prefix + "*").limit(1000)).forEachRemaining(keys::add);
        }
        return keys;
    }

    /** @return the lock keys (held locks) under {@code prefix} */
    List<String> lockKeys(String prefix) {
        return keys(prefix).stream().filter(k -> k.endsWith(":lock")).toList();
    }

    /** @return the semaphore holder keys (sorted sets with at least one holder) under {@code prefix} */
    List<String> semaphoreHolderKeys(String prefix) {
        return keys(prefix).stream().filter(k -> k.endsWith(":semaphore")).toList();
    }

    long del(String key) {
        try (StatefulRedisConnection<String, String> c = client.connect(uri)) {
            return c.sync().del(key);
        }
    }

    @Override
    public void close() {
        try {
            client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
            resources.shutdown(0, 2, TimeUnit.SECONDS);
        } finally {
            server.close();
        }
    }
}
