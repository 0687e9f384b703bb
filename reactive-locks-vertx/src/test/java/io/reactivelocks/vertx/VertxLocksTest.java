package io.reactivelocks.vertx;

import static io.reactivelocks.vertx.VertxTestSupport.assertOn;
import static io.reactivelocks.vertx.VertxTestSupport.call;
import static io.reactivelocks.vertx.VertxTestSupport.join;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScanArgs;
import io.lettuce.core.ScanIterator;
import io.lettuce.core.api.StatefulRedisConnection;
import io.reactivelocks.Lease;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockLostException;
import io.reactivelocks.LockOptions;
import io.reactivelocks.LockState;
import io.reactivelocks.LockStore;
import io.reactivelocks.election.LeaderElection;
import io.reactivelocks.election.Leadership;
import io.reactivelocks.redis.RedisLockOptions;
import io.reactivelocks.redis.RedisLocks;
import io.reactivelocks.test.server.RedisServer;
import io.reactivelocks.semaphore.Semaphore;
import io.reactivelocks.window.WindowClaim;
import io.reactivelocks.window.WindowLock;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Queue;
import java.util.UUID;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import reactor.core.publisher.Mono;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@link VertxLocks}, {@link VertxSemaphore}, {@link VertxLeaderElection} and {@link VertxWindowLock}
 * on Redis locks against a real redis-server: every result arrives on the caller's event-loop
 * context; after each test no lock key is left, no Vert.x warning was logged (the blocked-thread
 * checker warns after 200 ms on an event loop) and nothing was thrown unhandled on an event loop.
 * BlockHound watches the event loops as well.
 */
class VertxLocksTest {

    private static final Duration LEASE = Duration.ofSeconds(2);

    private static RedisServer redis;
    private static RedisClient client;
    private static RedisURI uri;
    private static String prefix;
    private static Vertx vertx;
    private static final Queue<Throwable> UNHANDLED = new ConcurrentLinkedQueue<>();

    private static LockStore store;
    private static LockClient lockClient;
    private static Semaphore semaphoreClient;
    private static WindowLock windowClient;
    private VertxLocks locks;
    private Context a;
    private Context b;
    private String name;

    @BeforeAll
    static void start() throws Exception {
        redis = RedisServer.start();
        uri = RedisURI.create(redis.url());
        uri.setTimeout(Duration.ofSeconds(10));
        client = RedisClient.create(uri);
        prefix = "rlvertx:" + UUID.randomUUID().toString().substring(0, 8) + ":";
        warmUp();
        vertx = Vertx.vertx(VertxTestSupport.strictOptions());
        vertx.exceptionHandler(UNHANDLED::add);
    }

    /*
     * Off the event loops, as an application does at start-up (in executeBlocking): the clients are
     * made and used once on this test thread. Lettuce's connections generate the proxy of their
     * synchronous API on the connecting thread even when connecting asynchronously (the pub/sub
     * connection of the first wait or observation too), and the first calls of each kind load and
     * link classes: CPU work that took hundreds of ms on this loaded 2-core machine. Then one round
     * through a throwaway Vert.x with default limits, before the measured Vert.x (200 ms limit)
     * exists. BlockHound reports any blocking call whatever its duration, warm-up included.
     */
    private static void warmUp() throws Exception {
        try (StatefulRedisConnection<String, String> c = client.connect(uri)) {
            c.sync().ping();
        }
        Duration step = Duration.ofSeconds(10);
        store = RedisLocks.connect(client, redisOptions());
        lockClient = store.locks(options());
        semaphoreClient = store.semaphores(options());
        windowClient = store.windowLocks(options());
        String warm = "warm-up-" + UUID.randomUUID();
        // long leases: a renewal's first run loads classes too
        LockOptions slow = options().mutate().leaseTime(Duration.ofSeconds(20)).build();
        lockClient.withLock(warm, slow, lease -> Mono.just(lease.token())).block(step);
        lockClient.observe(warm).take(1).blockLast(step);
        lockClient.awaitRelease(warm).block(step);
        lockClient.hold(warm, slow).take(1).blockLast(step);
        semaphoreClient.withPermit(warm, 2, slow, permit -> Mono.just(permit.token())).block(step);
        semaphoreClient.observe(warm).take(1).blockLast(step);
        semaphoreClient.hold(warm, 1, slow).take(1).blockLast(step);
        LeaderElection.create(lockClient, slow).campaign(warm, "warm").take(1).blockLast(step);
        LeaderElection.create(lockClient).leader(warm).block(step);
        windowClient.tryClaim(warm, Duration.ofMillis(1)).block(step);

        Vertx throwaway = Vertx.vertx();
        try {
            VertxLocks l = VertxLocks.create(throwaway, lockClient);
            Context ctx = throwaway.getOrCreateContext();
            call(ctx, () -> l.withLock(warm, slow, lease -> Future.succeededFuture(lease.token())));
            call(ctx, () -> l.tryAcquire(warm, slow).compose(l::release));
            Promise<Lease> held = Promise.promise();
            LockStream<Lease> hold = call(ctx, () -> Future.succeededFuture(l.hold(warm, slow).handler(held::tryComplete)));
            join(held.future());
            call(ctx, hold::cancel);
            call(ctx, () -> l.awaitRelease(warm));
            VertxSemaphore sem = VertxSemaphore.create(throwaway, semaphoreClient);
            call(ctx, () -> sem.withPermit(warm, 2, slow, permit -> Future.succeededFuture(permit.token())));
            call(ctx, () -> VertxWindowLock.create(throwaway, windowClient).tryClaim(warm, Duration.ofMillis(1)));
        } finally {
            join(throwaway.close());
            CapturingLogDelegateFactory.drain();
        }
    }

    private static RedisLockOptions redisOptions() {
        return RedisLockOptions.builder().keyPrefix(prefix).uri(uri).build();
    }

    private static LockOptions options() {
        return LockOptions.builder().leaseTime(LEASE).waitTimeout(Duration.ofSeconds(8)).build();
    }

    @AfterAll
    static void stop() throws Exception {
        try {
            if (lockClient != null && vertx != null) {
                VertxLocks locks = VertxLocks.create(vertx, lockClient);
                call(vertx.getOrCreateContext(), locks::close);
                call(vertx.getOrCreateContext(), () -> VertxSemaphore.create(vertx, semaphoreClient).close());
                call(vertx.getOrCreateContext(), () -> VertxWindowLock.create(vertx, windowClient).close());
            }
            if (store != null) {
                store.close().block(Duration.ofSeconds(10)); // the session's connections, after the facades closed its concepts
            }
            if (vertx != null) {
                join(vertx.close());
            }
            if (client != null) {
                client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
            }
        } finally {
            if (redis != null) {
                redis.close();
            }
        }
    }

    @BeforeEach
    void setUp() {
        locks = VertxLocks.create(vertx, lockClient);
        a = vertx.getOrCreateContext();
        b = vertx.getOrCreateContext();
        name = "lock-" + UUID.randomUUID();
        CapturingLogDelegateFactory.drain();
    }

    @AfterEach
    void checkNothingLeft() throws Exception {
        await().atMost(Duration.ofSeconds(5)).untilAsserted(() -> assertThat(lockKeys()).as("lock keys left under %s", prefix).isEmpty());
        assertThat(CapturingLogDelegateFactory.drain()).as("Vert.x warnings and errors (blocked threads among them)").isEmpty();
        assertThat(UNHANDLED).as("exceptions unhandled on an event loop (BlockHound reports among them)").isEmpty();
    }

    private static List<String> lockKeys() {
        List<String> keys = new ArrayList<>();
        try (StatefulRedisConnection<String, String> c = client.connect(uri)) {
            ScanIterator.scan(c.sync(), ScanArgs.Builder.matches(prefix + "*").limit(500)).forEachRemaining(keys::add);
        }
        keys.removeIf(k -> !k.endsWith(":lock") && !k.endsWith(":semaphore"));
        return keys;
    }

    /** Deletes the lock's key behind its holder's back, as an operator or a failover would. */
    private static void deleteLockKey(String lockName) {
        try (StatefulRedisConnection<String, String> c = client.connect(uri)) {
            assertThat(c.sync().del(prefix + "{" + lockName + "}:lock")).isEqualTo(1L);
        }
    }

    @Test
    void acquireTryAcquireAndReleaseCompleteOnTheCallersContext() throws Exception {
        Lease lease = call(a, () -> locks.acquire(name));
        assertThat(lease.isValid()).isTrue();
        assertThat(call(b, () -> locks.tryAcquire(name))).as("tryAcquire while held").isNull();
        LockState state = call(b, () -> locks.inspect(name));
        assertThat(state).isInstanceOfSatisfying(LockState.Held.class, h -> assertThat(h.token()).isEqualTo(lease.token()));

        call(a, () -> locks.release(lease));
        assertThat(lease.isValid()).isFalse();
        Lease second = call(b, () -> locks.tryAcquire(name));
        assertThat(second).isNotNull();
        assertThat(second.token()).isGreaterThan(lease.token());
        call(b, () -> locks.release(second));
        assertThat(call(a, () -> locks.inspect(name))).isInstanceOf(LockState.Free.class);
    }

    @Test
    void aBoundViewCompletesOnItsContextWhicheverThreadCalls() throws Exception {
        Context bound = vertx.getOrCreateContext();
        Queue<String> problems = new ConcurrentLinkedQueue<>();
        // called from this test thread, not a Vert.x thread
        Lease lease = join(locks.on(bound).acquire(name).andThen(ar -> {
            if (Vertx.currentContext() != bound) {
                problems.add("acquire completed on " + Vertx.currentContext());
            }
        }));
        join(locks.on(bound).release(lease).andThen(ar -> {
            if (Vertx.currentContext() != bound) {
                problems.add("release completed on " + Vertx.currentContext());
            }
        }));
        assertThat(problems).isEmpty();
        Vertx other = Vertx.vertx();
        try {
            assertThatThrownBy(() -> locks.on(other.getOrCreateContext()))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("context");
        } finally {
            join(other.close());
        }
        assertThatThrownBy(() -> locks.acquire("")).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("name");
        assertThatThrownBy(() -> locks.withLock(name, null)).isInstanceOf(NullPointerException.class).hasMessageContaining("body");
    }

    @Test
    void withLockExcludesAcrossContextsAndRunsTheBodyOnTheCaller() throws Exception {
        int callers = 6;
        AtomicInteger inside = new AtomicInteger();
        AtomicInteger maxInside = new AtomicInteger();
        Queue<Long> tokens = new ConcurrentLinkedQueue<>();
        Queue<String> problems = new ConcurrentLinkedQueue<>();
        List<Future<Long>> results = new ArrayList<>();
        List<Context> contexts = new ArrayList<>();
        for (int i = 0; i < callers; i++) {
            Context ctx = vertx.getOrCreateContext();
            contexts.add(ctx);
            Promise<Long> done = Promise.promise();
            results.add(done.future());
            ctx.runOnContext(v -> locks.withLock(name, lease -> {
                if (((io.vertx.core.internal.ContextInternal) Vertx.currentContext()).unwrap() != ctx) {
                    problems.add("body ran on " + Vertx.currentContext() + ", not on (a duplicate of) " + ctx);
                }
                maxInside.accumulateAndGet(inside.incrementAndGet(), Math::max);
                tokens.add(lease.token());
                return vertx.timer(20).map(t -> {
                    inside.decrementAndGet();
                    return lease.token();
                });
            }).onComplete(ar -> {
                if (Vertx.currentContext() != ctx) {
                    problems.add("withLock completed on " + Vertx.currentContext());
                }
                done.handle(ar);
            }));
        }
        for (Future<Long> r : results) {
            assertThat(join(r)).isPositive();
        }
        assertThat(problems).isEmpty();
        assertThat(maxInside.get()).as("holders at once").isEqualTo(1);
        assertThat(new ArrayList<>(tokens)).hasSize(callers).isSorted().doesNotHaveDuplicates();
        assertThat(call(a, () -> locks.inspect(name))).isInstanceOf(LockState.Free.class);
    }

    @Test
    void aNestedWithLockOfTheSameNameReusesTheOuterLeaseInsteadOfDeadlocking() throws Exception {
        String other = name + "-other";
        // nested directly, after a timer (a callback of a future the body made) and around another name
        List<Long> tokens = call(a, () -> locks.withLock(name, outer -> locks.withLock(name, inner -> vertx.timer(5)
                .compose(t -> locks.withLock(other, o -> locks.withLock(name, innermost -> Future.succeededFuture(
                        List.of(outer.token(), inner.token(), innermost.token()))))))));
        assertThat(tokens).as("one lease for the name, reused at every depth").containsOnly(tokens.get(0));
        assertThat(call(a, () -> locks.inspect(name))).isInstanceOf(LockState.Free.class);
        assertThat(call(a, () -> locks.inspect(other))).isInstanceOf(LockState.Free.class);
    }

    @Test
    void twoWithLocksStartedOnOneEventLoopStillExcludeEachOther() throws Exception {
        // reentrancy follows the body, not the event loop: a second request on the same context waits
        Promise<Void> release = Promise.promise();
        Promise<Long> firstIn = Promise.promise();
        Promise<Long> secondIn = Promise.promise();
        a.runOnContext(v -> {
            locks.withLock(name, lease -> {
                firstIn.complete(lease.token());
                return release.future();
            });
            locks.withLock(name, lease -> {
                secondIn.complete(lease.token());
                return Future.succeededFuture();
            });
        });
        long first = join(firstIn.future());
        assertThat(call(a, () -> locks.tryAcquire(name))).as("held by the first").isNull();
        assertThat(secondIn.future().isComplete()).as("the second waits for the first").isFalse();
        a.runOnContext(v -> release.complete());
        assertThat(join(secondIn.future())).as("the second's own lease, after the first").isGreaterThan(first);
    }

    @Test
    void withLockReleasesOnSuccessFailureAndThrow() throws Exception {
        String done = call(a, () -> locks.withLock(name, lease -> Future.succeededFuture("done")));
        assertThat(done).isEqualTo("done");
        assertThat(call(a, () -> locks.inspect(name))).isInstanceOf(LockState.Free.class);

        IllegalStateException failure = new IllegalStateException("body failed");
        assertThatThrownBy(() -> call(a, () -> locks.withLock(name, lease -> Future.failedFuture(failure)))).isSameAs(failure);
        assertThat(call(a, () -> locks.inspect(name))).isInstanceOf(LockState.Free.class);

        assertThatThrownBy(() -> call(a, () -> locks.<String>withLock(name, lease -> {
            throw failure;
        }))).isSameAs(failure);
        assertThat(call(a, () -> locks.inspect(name))).isInstanceOf(LockState.Free.class);

        Void nothing = call(a, () -> locks.<Void>withLock(name, lease -> Future.succeededFuture()));
        assertThat(nothing).isNull();
        assertThat(call(a, () -> locks.inspect(name))).isInstanceOf(LockState.Free.class);
    }

    @Test
    void aLossWhileTheBodyRunsFailsWithLockWithLockLostException() throws Exception {
        Promise<Lease> granted = Promise.promise();
        Promise<String> neverDone = Promise.promise();
        Promise<String> outcome = Promise.promise();
        a.runOnContext(v -> locks.withLock(name, lease -> {
            granted.complete(lease);
            return neverDone.future();
        }).onComplete(ar -> {
            assertOn(a);
            outcome.handle(ar);
        }));
        join(granted.future());
        deleteLockKey(name);
        assertThatThrownBy(() -> join(outcome.future())).isInstanceOf(LockLostException.class);
    }

    @Test
    void holdEmitsRenewalsOnTheContextAndCancelReleases() throws Exception {
        Queue<Lease> leases = new ConcurrentLinkedQueue<>();
        Queue<String> problems = new ConcurrentLinkedQueue<>();
        LockStream<Lease> hold = call(a, () -> Future.succeededFuture(locks.hold(name)));
        hold.handler(lease -> {
            if (Vertx.currentContext() != a) {
                problems.add("lease delivered on " + Vertx.currentContext());
            }
            leases.add(lease);
        });
        await().atMost(Duration.ofSeconds(5)).until(() -> leases.size() >= 3); // the grant, then renewals every lease/3
        assertThat(leases.stream().map(Lease::token).distinct()).hasSize(1);
        assertThat(leases.stream().mapToLong(Lease::validUntilNanos).toArray()).isSorted();
        call(a, hold::cancel); // completes on the stream's context
        assertThat(hold.isDone()).isTrue();
        assertThat(leases.peek().isValid()).isFalse();
        assertThat(call(a, () -> locks.inspect(name))).isInstanceOf(LockState.Free.class);
        assertThat(problems).isEmpty();
    }

    @Test
    void holdEndsWhenTheLeaseIsLost() throws Exception {
        Promise<Lease> granted = Promise.promise();
        Promise<Void> ended = Promise.promise();
        a.runOnContext(v -> locks.hold(name)
                .endHandler(e -> {
                    assertOn(a);
                    ended.complete();
                })
                .handler(granted::tryComplete));
        Lease lease = join(granted.future());
        deleteLockKey(name);
        join(ended.future());
        assertThat(lease.isValid()).isFalse();
    }

    @Test
    void aCancelledWaiterNeverTakesTheLock() throws Exception {
        Lease holder = call(a, () -> locks.acquire(name));
        Queue<Lease> received = new ConcurrentLinkedQueue<>();
        LockStream<Lease> waiter = call(b, () -> Future.succeededFuture(locks.hold(name).handler(received::add)));
        // the waiter's stream is cancelled, then the holder releases: the lock stays free
        call(b, waiter::cancel);
        call(a, () -> locks.release(holder));
        assertThat(call(a, () -> locks.inspect(name))).isInstanceOf(LockState.Free.class);
        call(b, () -> locks.awaitRelease(name));
        assertThat(received).isEmpty();
    }

    @Test
    void observeStreamsStatesOnTheContext() throws Exception {
        Queue<LockState> states = new ConcurrentLinkedQueue<>();
        LockStream<LockState> observe = call(b, () -> Future.succeededFuture(locks.observe(name).handler(s -> {
            assertOn(b);
            states.add(s);
        })));
        await().atMost(Duration.ofSeconds(5)).until(() -> !states.isEmpty());
        Lease lease = call(a, () -> locks.acquire(name));
        await().atMost(Duration.ofSeconds(5)).until(() -> states.stream().anyMatch(s -> s instanceof LockState.Held h && h.token() == lease.token()));
        call(a, () -> locks.release(lease));
        await().atMost(Duration.ofSeconds(5)).until(() -> {
            LockState last = null;
            for (LockState s : states) {
                last = s;
            }
            return last instanceof LockState.Free;
        });
        call(b, observe::cancel);
    }

    @Test
    void semaphoreWithPermitAdmitsAtMostNOnTheCallersContext() throws Exception {
        VertxSemaphore semaphore = VertxSemaphore.create(vertx, semaphoreClient);
        AtomicInteger inside = new AtomicInteger();
        AtomicInteger maxInside = new AtomicInteger();
        List<Future<Long>> results = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            Context ctx = vertx.getOrCreateContext();
            Promise<Long> done = Promise.promise();
            results.add(done.future());
            ctx.runOnContext(v -> semaphore.withPermit(name, 2, permit -> {
                assertOn(ctx);
                maxInside.accumulateAndGet(inside.incrementAndGet(), Math::max);
                return vertx.timer(30).map(t -> {
                    inside.decrementAndGet();
                    return permit.token();
                });
            }).onComplete(ar -> {
                assertOn(ctx);
                done.handle(ar);
            }));
        }
        List<Long> tokens = new ArrayList<>();
        for (Future<Long> r : results) {
            tokens.add(join(r));
        }
        assertThat(tokens).doesNotHaveDuplicates();
        assertThat(maxInside.get()).isBetween(1, 2);

        Lease one = call(a, () -> semaphore.acquire(name, 1));
        assertThat(call(b, () -> semaphore.tryAcquire(name, 1))).isNull();
        call(a, () -> semaphore.release(one));
    }

    @Test
    void electionCampaignsAsStreamsAndCancelResigns() throws Exception {
        VertxLeaderElection elections = VertxLeaderElection.create(vertx, LeaderElection.create(lockClient));
        Queue<Leadership> first = new ConcurrentLinkedQueue<>();
        Queue<Leadership> second = new ConcurrentLinkedQueue<>();
        LockStream<Leadership> one = call(a, () -> Future.succeededFuture(elections.campaign(name, "one").handler(l -> {
            assertOn(a);
            first.add(l);
        })));
        await().atMost(Duration.ofSeconds(5)).until(() -> !first.isEmpty());
        LockStream<Leadership> two = call(b, () -> Future.succeededFuture(elections.campaign(name, "two").handler(l -> {
            assertOn(b);
            second.add(l);
        })));
        assertThat(call(b, () -> elections.leader(name)).value()).isEqualTo("one");
        call(a, () -> elections.proclaim(first.peek(), "one-bis"));
        assertThat(call(b, () -> elections.leader(name)).value()).isEqualTo("one-bis");
        call(a, one::cancel); // resigns
        await().atMost(Duration.ofSeconds(5)).until(() -> !second.isEmpty());
        assertThat(second.peek().token()).isGreaterThan(first.peek().token());
        Optional<io.reactivelocks.election.Leader> leader = Optional.ofNullable(call(a, () -> elections.leader(name)));
        assertThat(leader).hasValueSatisfying(l -> assertThat(l.value()).isEqualTo("two"));
        call(b, two::cancel);
        assertThat(call(a, () -> elections.leader(name))).isNull();
    }

    @Test
    void windowLockClaimsOncePerWindow() throws Exception {
        VertxWindowLock window = VertxWindowLock.create(vertx, windowClient);
        Duration period = Duration.ofHours(1);
        WindowClaim claim = call(a, () -> window.tryClaim(name, period));
        assertThat(claim).isNotNull();
        assertThat(call(b, () -> window.tryClaim(name, period))).as("second claim of the window").isNull();
    }
}
