package io.reactivelocks.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.reactivelocks.Lease;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockOptions;
import io.reactivelocks.LockState;
import io.reactivelocks.LockStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;
import reactor.util.retry.Retry;

/** {@link LockClient}s over {@link RedisLockBackend}s, against a real redis-server. */
class RedisLockClientTest {

    private static final Duration STEP = Duration.ofSeconds(10);

    private static RedisTestSupport redis;
    private final List<LockStore> sessions = new ArrayList<>();
    private LockClient a;
    private LockClient b;

    @BeforeAll
    static void startServer() {
        redis = RedisTestSupport.start();
    }

    @AfterAll
    static void stopServer() {
        if (redis != null) {
            redis.close();
        }
    }

    @AfterEach
    void closeClients() {
        for (LockClient c : new LockClient[] {a, b}) {
            if (c != null) {
                c.close().block(STEP);
            }
        }
        sessions.forEach(s -> s.close().block(STEP));
        sessions.clear();
        assertThat(redis.scanKeys()).noneMatch(k -> k.endsWith(":lock"));
    }

    private static LockOptions options() {
        return LockOptions.builder().leaseTime(Duration.ofMillis(1500)).requestTimeout(Duration.ofSeconds(2)).build();
    }

    /** A lock client on a session of its own (its own connections), closed after the test. */
    private LockClient client(LockOptions options) {
        LockStore session = RedisLocks.connect(redis.client, redis.options());
        sessions.add(session);
        return session.locks(options);
    }

    private static String name(String prefix) {
        return prefix + "-" + UUID.randomUUID();
    }

    @Test
    void acquireTryAcquireAndRelease() {
        a = client(options());
        b = client(options());
        String name = name("acquire");
        Lease lease = a.acquire(name).block(STEP);
        assertThat(lease.isValid()).isTrue();
        assertThat(lease.owner()).hasSizeGreaterThanOrEqualTo(22);
        StepVerifier.create(b.tryAcquire(name)).expectComplete().verify(STEP);
        lease.release().block(STEP);
        lease.release().block(STEP); // idempotent
        Lease next = b.tryAcquire(name).block(STEP);
        assertThat(next.token()).isGreaterThan(lease.token());
        next.release().block(STEP);
    }

    @Test
    void holdRenewsWithTheSameTokenAndCancelReleases() {
        a = client(options());
        b = client(options());
        String name = name("hold");
        ConcurrentLinkedQueue<Lease> updates = new ConcurrentLinkedQueue<>();
        Disposable hold = a.hold(name).subscribe(updates::add);
        try {
            // four renewals at lease/3 outlive the 1.5 s lease
            await().atMost(STEP).until(() -> updates.size() >= 5);
            assertThat(updates).extracting(Lease::token).containsOnly(updates.peek().token());
            assertThat(updates).extracting(Lease::validUntilNanos).isSorted();
            StepVerifier.create(b.tryAcquire(name)).expectComplete().verify(STEP);
        } finally {
            hold.dispose();
        }
        await().atMost(STEP).until(() -> redis.inspect(name).isEmpty());
    }

    @Test
    void withLockRunsTheBodyUnderTheLockAndReleases() {
        a = client(options());
        b = client(options());
        String name = name("with");
        StepVerifier.create(a.withLock(name, lease -> b.tryAcquire(name).map(l -> "shared").defaultIfEmpty("exclusive")
                        .map(s -> s + ":" + lease.token())))
                .assertNext(s -> assertThat(s).startsWith("exclusive:"))
                .expectComplete()
                .verify(STEP);
        StepVerifier.create(b.tryAcquire(name).flatMap(l -> l.release().thenReturn(l.token())))
                .expectNextCount(1).expectComplete().verify(STEP);
    }

    @Test
    void aWaiterIsWokenByTheReleaseNotificationNotByBackoffOrTtl() {
        // a 10-minute backoff and a 60 s lease: only the pub/sub notification can wake the waiter in time
        LockOptions slow = options().mutate()
                .leaseTime(Duration.ofSeconds(60))
                .backoff(Retry.backoff(Long.MAX_VALUE, Duration.ofMinutes(10)).maxBackoff(Duration.ofMinutes(10)).jitter(0))
                .build();
        a = client(slow);
        b = client(slow);
        String name = name("wake");
        Lease held = a.acquire(name).block(STEP);
        AtomicReference<Lease> got = new AtomicReference<>();
        Disposable waiter = b.acquire(name).subscribe(got::set);
        try {
            // the waiter is subscribed to the lock's channel once the server counts a subscriber there
            String channel = new RedisKeys(redis.prefix).channel(name);
            try (var c = redis.connect()) {
                await().atMost(STEP).until(() -> c.sync().pubsubNumsub(channel).get(channel) == 1L);
            }
            assertThat(got.get()).isNull();
            long released = System.nanoTime();
            held.release().block(STEP);
            await().atMost(Duration.ofSeconds(3)).until(() -> got.get() != null);
            assertThat(Duration.ofNanos(System.nanoTime() - released)).isLessThan(Duration.ofSeconds(3));
            assertThat(got.get().token()).isGreaterThan(held.token());
        } finally {
            waiter.dispose();
            if (got.get() != null) {
                got.get().release().block(STEP);
            }
        }
    }

    @Test
    void observeSeesHolderChangesWithOwnersAndTokens() {
        a = client(options());
        b = client(options());
        String name = name("observe");
        ConcurrentLinkedQueue<LockState> states = new ConcurrentLinkedQueue<>();
        Disposable watch = b.observe(name).subscribe(states::add);
        try {
            await().atMost(STEP).until(() -> states.size() == 1);
            Lease first = a.acquire(name).block(STEP);
            await().atMost(STEP).until(() -> states.size() == 2);
            first.release().block(STEP);
            await().atMost(STEP).until(() -> states.size() == 3);
            List<LockState> seen = List.copyOf(states);
            assertThat(seen.get(0).isHeld()).isFalse();
            assertThat(seen.get(1)).isEqualTo(new LockState.Held(name, first.owner(), first.token(),
                    ((LockState.Held) seen.get(1)).validUntilNanos()));
            assertThat(seen.get(2).isHeld()).isFalse();
        } finally {
            watch.dispose();
        }
    }

    @Test
    void manyClientsContendingNeverOverlapAndTokensIncrease() {
        a = client(options());
        b = client(options());
        String name = name("contend");
        ConcurrentLinkedQueue<long[]> spans = new ConcurrentLinkedQueue<>();
        java.util.concurrent.atomic.AtomicInteger inside = new java.util.concurrent.atomic.AtomicInteger();
        java.util.concurrent.atomic.AtomicInteger overlaps = new java.util.concurrent.atomic.AtomicInteger();
        List<Mono<Long>> all = new java.util.ArrayList<>();
        for (int i = 0; i < 20; i++) {
            LockClient c = i % 2 == 0 ? a : b;
            all.add(c.withLock(name, lease -> Mono.fromSupplier(() -> {
                        if (inside.incrementAndGet() != 1) {
                            overlaps.incrementAndGet();
                        }
                        return lease.token();
                    })
                    .delayElement(Duration.ofMillis(5))
                    // leave before the value reaches withLock, which releases on it: a doFinally
                    // would run after the release was sent, when the next holder may be inside already
                    .doOnNext(t -> inside.decrementAndGet())));
        }
        List<Long> tokens = reactor.core.publisher.Flux.merge(all).collectList().block(Duration.ofSeconds(60));
        assertThat(overlaps).hasValue(0);
        assertThat(tokens).hasSize(20).doesNotHaveDuplicates();
    }
}
