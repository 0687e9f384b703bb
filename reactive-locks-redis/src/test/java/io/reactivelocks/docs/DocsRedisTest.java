package io.reactivelocks.docs;

import static org.assertj.core.api.Assertions.assertThat;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.ClusterTopologyRefreshOptions;
import io.lettuce.core.cluster.RedisClusterClient;
import io.reactivelocks.Lease;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockStore;
import io.reactivelocks.LockOptions;
import io.reactivelocks.fencing.FencedValues;
import io.reactivelocks.fencing.StaleTokenException;
import io.reactivelocks.redis.RedisFencedWrites;
import io.reactivelocks.redis.RedisLockBackend;
import io.reactivelocks.redis.RedisLockOptions;
import io.reactivelocks.redis.RedisLocks;
import io.reactivelocks.redis.RedisQuorumBackend;
import io.reactivelocks.rwlock.ReadWriteLock;
import io.reactivelocks.rwlock.ReadWriteLockOptions;
import io.reactivelocks.semaphore.Semaphore;
import io.reactivelocks.task.TaskQueue;
import io.reactivelocks.test.server.RedisClusterTopology;
import io.reactivelocks.test.server.RedisServer;
import io.reactivelocks.window.WindowLock;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/** The samples of docs/stores/redis.md (and the README's quick start), run against real redis-server processes. */
class DocsRedisTest {

    static final Duration STEP = Duration.ofSeconds(10);

    private static RedisServer server;
    private static String redisUrl;

    @BeforeAll
    static void start() {
        server = RedisServer.start();
        redisUrl = server.url();
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    @Test
    void quickStart() {
        // tag::quick-start[]
        RedisClient redis = RedisClient.create(redisUrl);         // e.g. "redis://localhost:6379"
        LockStore store = RedisLocks.connect(redis);              // one session; nothing connects before first use
        LockClient locks = store.locks();                         // ... and every other concept: store.semaphores(...), ...

        Mono<String> receipt = locks.withLock("order:42", lease -> charge("order:42", lease.token()));
        // end::quick-start[]
        StepVerifier.create(receipt).expectNextMatches(r -> r.startsWith("charged order:42 with fence ")).expectComplete().verify(STEP);
        store.close().block(STEP);
        redis.shutdown();
    }

    @Test
    void fencedWritesOnYourKey() {
        RedisClient redis = RedisClient.create(redisUrl);
        LockStore store = RedisLocks.connect(redis);
        LockClient locks = store.locks();
        StatefulRedisConnection<String, String> connection = redis.connect();
        Lease paused = locks.acquire("cart:42").block(STEP);      // then paused past its lease: taken away
        store.admin().forceRelease("cart:42").block(STEP);
        // tag::fenced-writes[]
        RedisFencedWrites carts = RedisFencedWrites.of(connection);    // your connection, your keys
        Mono<Void> written = locks.withLock("cart:42", lease ->
                carts.write("cart:42", "items", "[\"book\"]", lease.token()));   // HSET cart:42 items … fence <token>
        Mono<Void> late = carts.write("cart:42", "items", "[]", paused.token());  // StaleTokenException, nothing changed
        // end::fenced-writes[]
        StepVerifier.create(written).expectComplete().verify(STEP);
        StepVerifier.create(late).expectErrorSatisfies(e -> assertThat(((StaleTokenException) e).fence().getAsLong())
                .isGreaterThan(paused.token())).verify(STEP);
        assertThat(connection.sync().hget("cart:42", "items")).isEqualTo("[\"book\"]");
        connection.close();
        store.close().block(STEP);
        redis.shutdown();
    }

    @Test
    void options() {
        RedisClient redis = RedisClient.create(redisUrl);
        // tag::options[]
        LockStore store = RedisLocks.connect(redis, RedisLockOptions.builder()
                .keyPrefix("myapp:locks:")                        // default "rl:"
                .uri(RedisURI.create(redisUrl))                   // connect with connectAsync (else the client's URI, once, off the event loop)
                .build());
        LockClient locks = store.locks(LockOptions.defaults());
        // end::options[]
        Lease lease = locks.acquire("order:42").block(STEP);
        try (var c = redis.connect()) {
            assertThat(c.sync().keys("myapp:locks:*")).isNotEmpty();
        }
        lease.release().block(STEP);
        store.close().block(STEP);
        redis.shutdown();
    }

    @Test
    void everyConceptOnOneBackend() {
        RedisClient redis = RedisClient.create(redisUrl);
        // tag::shared-backend[]
        LockStore store = RedisLocks.connect(redis, RedisLockOptions.defaults());   // one command + one pub/sub connection
        LockClient locks = store.locks(LockOptions.defaults());   // every concept over those two connections
        LockClient fair = store.fairLocks(LockOptions.defaults());
        WindowLock windows = store.windowLocks(LockOptions.defaults());
        Semaphore semaphore = store.semaphores(LockOptions.defaults());
        ReadWriteLock readWrite = store.readWriteLocks(ReadWriteLockOptions.defaults());
        TaskQueue tasks = store.taskQueue(LockOptions.defaults());
        FencedValues values = store.fencedValues();
        // end::shared-backend[]
        StepVerifier.create(Flux.concat(
                        locks.withLock("a", l -> Mono.just(1)),
                        fair.withLock("b", l -> Mono.just(2)),
                        windows.tryClaim("c", Duration.ofHours(1)).thenReturn(3),
                        semaphore.withPermit("d", 2, l -> Mono.just(4)),
                        readWrite.withReadLock("e", l -> Mono.just(5)),
                        tasks.register("f", "t", 0).thenReturn(6),
                        values.write("g", 1, "v").thenReturn(7)))
                .expectNext(1, 2, 3, 4, 5, 6, 7)
                .expectComplete()
                .verify(STEP);
        Flux.concat(tasks.remove("f", "t").then(), store.close()).blockLast(STEP);   // closes every concept, then the connections
        redis.shutdown();
    }

    @Test
    void quorum() {
        RedisServer b = RedisServer.start();
        RedisServer c = RedisServer.start();
        RedisClient clientA = RedisClient.create(redisUrl);
        RedisClient clientB = RedisClient.create(b.url());
        RedisClient clientC = RedisClient.create(c.url());
        RedisLockOptions opts = RedisLockOptions.defaults();
        try {
            // tag::quorum[]
            RedisQuorumBackend quorum = RedisQuorumBackend.create(List.of(   // independent masters, not replicas
                    RedisLocks.backend(clientA, opts), RedisLocks.backend(clientB, opts), RedisLocks.backend(clientC, opts)));
            LockClient locks = LockClient.create(quorum, LockOptions.defaults());   // granted by a majority, fenced
            // end::quorum[]
            assertThat(quorum.quorum()).isEqualTo(2);
            Lease first = locks.acquire("order:42").block(STEP);
            first.release().block(STEP);
            Lease second = locks.acquire("order:42").block(STEP);
            assertThat(second.token()).isGreaterThan(first.token());
            second.release().block(STEP);
            locks.close().block(STEP);
        } finally {
            clientA.shutdown();
            clientB.shutdown();
            clientC.shutdown();
            b.close();
            c.close();
        }
    }

    @Test
    void cluster() {
        try (RedisClusterTopology topology = RedisClusterTopology.start()) {
            List<RedisURI> seedUris = Arrays.stream(topology.endpoints().split(",")).map(RedisURI::create).toList();
            // tag::cluster[]
            RedisClusterClient cluster = RedisClusterClient.create(seedUris);
            cluster.setOptions(ClusterClientOptions.builder()     // follow failovers, or keep talking to a dead master
                    .topologyRefreshOptions(ClusterTopologyRefreshOptions.builder()
                            .enableAllAdaptiveRefreshTriggers().enablePeriodicRefresh(Duration.ofSeconds(30)).build())
                    .build());
            LockStore store = RedisLocks.connect(cluster, RedisLockOptions.defaults());
            LockClient locks = store.locks(LockOptions.defaults());
            // end::cluster[]
            StepVerifier.create(Flux.range(0, 8).concatMap(i -> locks.withLock("order:" + i, lease -> Mono.just(lease.token()))))
                    .expectNextCount(8)
                    .expectComplete()
                    .verify(STEP);
            store.close().block(STEP);
            cluster.shutdown();
        }
    }

    static Mono<String> charge(String order, long token) {
        return Mono.fromSupplier(() -> "charged " + order + " with fence " + token);
    }
}
