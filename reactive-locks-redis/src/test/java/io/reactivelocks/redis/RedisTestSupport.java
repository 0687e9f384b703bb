package io.reactivelocks.redis;

import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScanArgs;
import io.lettuce.core.ScanIterator;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.Delay;
import io.reactivelocks.test.server.RedisServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

/**
 * A real redis-server child process (from {@link RedisServer}) plus a Lettuce client for it,
 * with a fast constant reconnect delay so restart tests do not wait on Lettuce's exponential
 * backoff. Blocking methods are for test threads only.
 */
final class RedisTestSupport implements AutoCloseable {

    final RedisServer server;
    final ClientResources resources;
    final RedisClient client;
    final RedisURI uri;
    /** A prefix unique to this fixture, so runs and test classes never see each other's keys. */
    final String prefix;
    private RedisLockBackend checker;

    private RedisTestSupport(RedisServer server) {
        this.server = server;
        this.resources = ClientResources.builder()
                .reconnectDelay(Delay.constant(Duration.ofMillis(100)))
                .build();
        this.uri = RedisURI.create(server.url());
        this.uri.setTimeout(Duration.ofSeconds(10));
        this.client = RedisClient.create(resources, uri);
        this.client.setOptions(ClientOptions.builder().autoReconnect(true).build());
        this.prefix = "rltest:" + UUID.randomUUID().toString().substring(0, 8) + ":";
    }

    static RedisTestSupport start() {
        return new RedisTestSupport(RedisServer.start());
    }

    /** @return options with this fixture's prefix and an explicit URI (fully asynchronous connects) */
    RedisLockOptions options() {
        return RedisLockOptions.builder().keyPrefix(prefix).uri(uri).build();
    }

    /** @return a new backend with its own connections */
    RedisLockBackend backend() {
        return RedisLockBackend.create(client, options());
    }

    /** @return every key under this fixture's prefix, found with SCAN (never KEYS) */
    List<String> scanKeys() {
        List<String> keys = new ArrayList<>();
        try (StatefulRedisConnection<String, String> c = client.connect(uri)) {
            ScanIterator.scan(c.sync(), ScanArgs.Builder.matches(prefix + "*").limit(500)).forEachRemaining(keys::add);
        }
        return keys;
    }

    /**
     * @param name a lock name
     * @return its holder now, read through one checking backend shared by the fixture
     */
    synchronized java.util.Optional<io.reactivelocks.spi.Holder> inspect(String name) {
        if (checker == null) {
            checker = backend();
        }
        return checker.inspect(name).blockOptional(Duration.ofSeconds(10));
    }

    /** @return a plain synchronous connection for checks; close it */
    StatefulRedisConnection<String, String> connect() {
        return client.connect(uri);
    }

    @Override
    public void close() {
        try {
            synchronized (this) {
                if (checker != null) {
                    checker.close().block(Duration.ofSeconds(10));
                }
            }
            client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
            resources.shutdown(0, 2, TimeUnit.SECONDS);
        } finally {
            server.close();
        }
    }
}
