package io.reactivelocks.blocking;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.reactivelocks.LockClient;
import io.reactivelocks.LockLostException;
import io.reactivelocks.LockOptions;
import io.reactivelocks.LockStore;
import io.reactivelocks.LockTimeoutException;
import io.reactivelocks.semaphore.Semaphore;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import jdk.jfr.consumer.RecordedEvent;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.test.StepVerifier;
import reactor.util.retry.Retry;

/**
 * {@link BlockingLocks} and {@link BlockingSemaphore} on virtual threads against a real
 * redis-server: exclusion under thousands of waiters, no pinned carrier, interruption as
 * cancellation, try-with-resources, release from another thread, loss. Run with
 * {@code -Dblocking.waiters=N} for a heavier contention run (default 2000).
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class BlockingLocksTest {

    private static final Duration WAIT = Duration.ofSeconds(20);

    private static RedisFixture redis;
    private static PinnedEvents classPinned;

    private final List<LockStore> sessions = new ArrayList<>();
    private String prefix;

    @BeforeAll
    static void start() {
        redis = new RedisFixture();
        classPinned = new PinnedEvents();
    }

    @AfterAll
    static void stop() {
        try {
            if (classPinned != null) {
                List<RecordedEvent> pinned = classPinned.stop();
                classPinned.close();
                // first uses (class initialization, call-site linkage, the client's lazy connect) may pin for a moment on
                // any code; a wait for a lock must never: none may be parked inside the facade's Await
                System.out.printf("[blocking] whole class: %d jdk.VirtualThreadPinned events, %d while waiting in the facade; by reason: %s%n",
                        pinned.size(), pinned.stream().filter(PinnedEvents::whileWaitingInTheFacade).count(),
                        pinned.stream().collect(Collectors.groupingBy(PinnedEvents::reason, TreeMap::new, Collectors.counting())));
                assertThat(pinned).filteredOn(PinnedEvents::whileWaitingInTheFacade).extracting(PinnedEvents::describe).isEmpty();
            }
        } finally {
            if (redis != null) {
                redis.close();
            }
        }
    }

    @BeforeEach
    void newPrefix() {
        prefix = RedisFixture.newPrefix();
    }

    @AfterEach
    void closeClients() {
        sessions.forEach(c -> c.close().block(WAIT));
        sessions.clear();
    }

    private static LockOptions options() {
        return LockOptions.builder().leaseTime(Duration.ofSeconds(2)).requestTimeout(Duration.ofSeconds(5)).build();
    }

    /**
     * Contention runs release every lease themselves, so a long lease costs no time; it keeps a
     * starved machine (seconds between a grant's request and its answer) from expiring them. A
     * slow backoff leaves the hand-over to the release notifications (one waiter woken per release)
     * instead of thousands of waiters polling the store.
     */
    private static LockOptions contentionOptions() {
        return options().mutate().leaseTime(Duration.ofSeconds(30))
                .backoff(Retry.backoff(Long.MAX_VALUE, Duration.ofMillis(250)).maxBackoff(Duration.ofSeconds(10)).jitter(1.0))
                .build();
    }

    private LockClient client(LockOptions options) {
        LockStore session = redis.session(prefix);
        sessions.add(session);
        return session.locks(options);
    }

    private static <T> T onVirtualThread(Callable<T> work) throws Exception {
        FutureTask<T> task = new FutureTask<>(work);
        Thread.ofVirtual().start(task);
        return task.get(WAIT.toSeconds(), TimeUnit.SECONDS);
    }

    @Test
    @Order(1) // first: it warms the paths up itself, and the others then run on a warm JVM
    void thousandsOfVirtualThreadsTakeTurnsUnderTheLock() throws Exception {
        int waiters = Integer.getInteger("blocking.waiters", 2000);
        int names = Integer.getInteger("blocking.names", 8);
        LockClient client = client(contentionOptions());
        BlockingLocks locks = BlockingLocks.of(client);
        long warmUpStarted = System.nanoTime();
        warmUp(client, locks, names);
        long warmUpMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - warmUpStarted);
        AtomicInteger[] inside = new AtomicInteger[names];
        AtomicLong[] lastToken = new AtomicLong[names];
        for (int n = 0; n < names; n++) {
            inside[n] = new AtomicInteger();
            lastToken[n] = new AtomicLong();
        }
        AtomicInteger overlaps = new AtomicInteger();
        AtomicInteger tokensNotIncreasing = new AtomicInteger();
        AtomicInteger acquisitions = new AtomicInteger();
        ConcurrentLinkedQueue<Throwable> failures = new ConcurrentLinkedQueue<>();
        CountDownLatch go = new CountDownLatch(1);
        int peakPending = 0;
        long started;
        long elapsedNanos;
        List<RecordedEvent> pinned;
        try (PinnedEvents recording = new PinnedEvents()) {
            ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor();
            try {
                for (int i = 0; i < waiters; i++) {
                    int n = i % names;
                    threads.execute(() -> {
                        try {
                            go.await();
                            locks.withLock("contended-" + n, lease -> {
                                if (inside[n].incrementAndGet() != 1) {
                                    overlaps.incrementAndGet();
                                }
                                if (lastToken[n].getAndSet(lease.token()) >= lease.token()) {
                                    tokensNotIncreasing.incrementAndGet();
                                }
                                Thread.yield(); // let other virtual threads run while the lock is held
                                inside[n].decrementAndGet();
                                return acquisitions.incrementAndGet();
                            });
                        } catch (Throwable e) {
                            failures.add(e);
                        }
                    });
                }
                started = System.nanoTime();
                go.countDown();
                threads.shutdown();
                while (!threads.awaitTermination(20, TimeUnit.MILLISECONDS)) {
                    peakPending = Math.max(peakPending, client.metrics().pendingAcquireCount());
                    assertThat(System.nanoTime() - started).as("contention run time").isLessThan(Duration.ofSeconds(60).toNanos());
                }
                elapsedNanos = System.nanoTime() - started;
            } finally {
                threads.shutdownNow();
            }
            pinned = recording.stop();
        }
        long waiting = pinned.stream().filter(PinnedEvents::whileWaitingInTheFacade).count();
        System.out.printf("[blocking] %d virtual threads on %d names (%d carriers): %d acquisitions in %d ms"
                        + " (%.0f/s), peak %d waiting at once, %d jdk.VirtualThreadPinned events (%d while waiting in the facade); warm-up %d ms%n",
                waiters, names, Runtime.getRuntime().availableProcessors(), acquisitions.get(),
                TimeUnit.NANOSECONDS.toMillis(elapsedNanos), acquisitions.get() * 1e9 / elapsedNanos, peakPending,
                pinned.size(), waiting, warmUpMillis);
        assertThat(failures).isEmpty();
        assertThat(acquisitions).hasValue(waiters);
        assertThat(overlaps).as("two holders at once").hasValue(0);
        assertThat(tokensNotIncreasing).as("tokens not strictly increasing").hasValue(0);
        // after the warm-up, nothing pins at all: not the waits, not the engine, not the driver
        assertThat(pinned).extracting(PinnedEvents::describe).isEmpty();
        assertThat(client.metrics().heldLeaseCount()).isZero();
        assertThat(redis.lockKeys(prefix)).isEmpty();
    }

    /** Runs each path on virtual threads first, so the measured run loads no classes (the JDK pins a virtual thread that loads one). */
    private static void warmUp(LockClient client, BlockingLocks locks, int names) throws InterruptedException {
        // the client's first use (connections, class initialization) on this platform thread: virtual threads that
        // wait for a class another one initializes pin their carriers, and a cold start on two carriers crawls
        locks.withLock("contended-0", options(), lease -> lease.token());
        List<Thread> threads = IntStream.range(0, 4 * names).mapToObj(i -> Thread.ofVirtual().start(() -> {
            try {
                // the default backoff: the first waiters of a name may come before its notification channel is live
                locks.withLock("contended-" + (i % names), options(), lease -> lease.token());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        })).toList();
        for (Thread t : threads) {
            assertThat(t.join(WAIT)).isTrue();
        }
        // and the hand-over on a live subscription, deterministically (the threads above may all have been granted
        // before one subscribed): an observer keeps the name's subscription live, waiters queue behind a holder — each
        // attempt takes a release mark of the live subscription — and are handed the lock by notification. A class
        // first loaded there during the run below pinned a carrier (a loaded CI run: NotificationHub.releaseMark)
        Disposable observer = null;
        BlockingLease held = null;
        List<Thread> queued = List.of();
        try {
            CountDownLatch live = new CountDownLatch(1);
            observer = client.observe("contended-0").subscribe(state -> live.countDown());
            assertThat(live.await(WAIT.toMillis(), TimeUnit.MILLISECONDS)).as("the observer's first state").isTrue();
            held = locks.acquire("contended-0", options());
            queued = IntStream.range(0, 4).mapToObj(i -> Thread.ofVirtual().start(() -> {
                try {
                    locks.withLock("contended-0", options(), lease -> lease.token());
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            })).toList();
            await().atMost(WAIT).until(() -> client.metrics().pendingAcquireCount() == 4);
        } finally {
            if (held != null) {
                held.release();
            }
            for (Thread t : queued) {
                assertThat(t.join(WAIT)).isTrue();
            }
            if (observer != null) {
                observer.dispose();
            }
        }
    }

    @Test
    void interruptWhileWaitingCancelsAndLeavesNothingOnTheServer() throws Exception {
        LockClient client = client(options());
        BlockingLocks locks = BlockingLocks.of(client);
        BlockingLease holder = locks.acquire("busy");
        int waiters = 200;
        AtomicInteger interrupted = new AtomicInteger();
        AtomicInteger statusLeftSet = new AtomicInteger();
        ConcurrentLinkedQueue<Object> unexpected = new ConcurrentLinkedQueue<>();
        List<Thread> threads = IntStream.range(0, waiters).mapToObj(i -> Thread.ofVirtual().start(() -> {
            try {
                unexpected.add(locks.acquire("busy"));
            } catch (InterruptedException e) {
                interrupted.incrementAndGet();
                if (Thread.currentThread().isInterrupted()) {
                    statusLeftSet.incrementAndGet();
                }
            } catch (Throwable e) {
                unexpected.add(e);
            }
        })).toList();
        await().atMost(WAIT).until(() -> client.metrics().pendingAcquireCount() == waiters);
        threads.forEach(Thread::interrupt);
        for (Thread t : threads) {
            assertThat(t.join(WAIT)).isTrue();
        }
        assertThat(unexpected).isEmpty();
        assertThat(interrupted).hasValue(waiters);
        assertThat(statusLeftSet).as("interrupt status cleared when InterruptedException is thrown").hasValue(0);
        await().atMost(WAIT).until(() -> client.metrics().pendingAcquireCount() == 0);
        assertThat(redis.lockKeys(prefix)).hasSize(1);
        holder.close();
        assertThat(client.inspect("busy").block(WAIT).isHeld()).isFalse();
        assertThat(redis.lockKeys(prefix)).isEmpty();
        System.out.printf("[blocking] %d virtual threads interrupted while waiting: %d InterruptedException, nothing left on the server%n",
                waiters, interrupted.get());
    }

    @Test
    void interruptRacingTheGrantLeavesNothingHeld() throws Exception {
        LockClient client = client(options());
        BlockingLocks locks = BlockingLocks.of(client);
        int threads = 200;
        AtomicInteger granted = new AtomicInteger();
        AtomicInteger interrupted = new AtomicInteger();
        ConcurrentLinkedQueue<Throwable> unexpected = new ConcurrentLinkedQueue<>();
        List<Thread> started = new ArrayList<>();
        for (int i = 0; i < threads; i++) {
            String name = "race-" + (i % 20);
            Thread t = Thread.ofVirtual().start(() -> {
                try (BlockingLease lease = locks.acquire(name)) {
                    assertThat(lease.token()).isPositive(); // released by close(), even though this thread is interrupted by now
                    granted.incrementAndGet();
                } catch (InterruptedException e) {
                    interrupted.incrementAndGet();
                } catch (Throwable e) {
                    unexpected.add(e);
                }
            });
            started.add(t);
            // interrupt as soon as it parks: its request is in flight, or its answer is on its way
            while (t.isAlive() && t.getState() != Thread.State.WAITING) {
                Thread.onSpinWait();
            }
            t.interrupt();
        }
        for (Thread t : started) {
            assertThat(t.join(WAIT)).isTrue();
        }
        assertThat(unexpected).isEmpty();
        assertThat(granted.get() + interrupted.get()).isEqualTo(threads);
        // a grant that raced the interrupt is released in the background: wait for the store
        await().atMost(WAIT).until(() -> redis.lockKeys(prefix).isEmpty());
        assertThat(client.metrics().heldLeaseCount()).isZero();
        assertThat(client.metrics().pendingAcquireCount()).isZero();
        System.out.printf("[blocking] %d acquires interrupted in flight: %d granted first (and released), %d cancelled; nothing left%n",
                threads, granted.get(), interrupted.get());
    }

    @Test
    void tryWithResourcesReleasesAndAnyThreadMayRelease() throws Exception {
        BlockingLocks a = BlockingLocks.of(client(options()));
        BlockingLocks b = BlockingLocks.of(client(options()));
        long first;
        try (BlockingLease lease = onVirtualThread(() -> a.acquire("twr"))) {
            first = lease.token();
            assertThat(lease.isValid()).isTrue();
            assertThat(lease.name()).isEqualTo("twr");
            assertThat(onVirtualThread(() -> b.tryAcquire("twr"))).isEmpty();
            assertThat(redis.lockKeys(prefix)).hasSize(1);
        }
        assertThat(redis.lockKeys(prefix)).isEmpty();

        // acquired on one virtual thread, released on another, then again here (idempotent)
        BlockingLease lease = onVirtualThread(() -> a.acquire("twr"));
        assertThat(lease.token()).isGreaterThan(first);
        onVirtualThread(() -> {
            lease.release();
            lease.release();
            return null;
        });
        lease.close();
        assertThat(lease.isValid()).isFalse();
        assertThat(lease.isLost()).as("a release is not a loss").isFalse();
        Optional<BlockingLease> next = onVirtualThread(() -> b.tryAcquire("twr"));
        assertThat(next).isPresent();
        assertThat(next.get().token()).isGreaterThan(lease.token());
        next.get().close();
        assertThat(redis.lockKeys(prefix)).isEmpty();
    }

    @Test
    void aLossInterruptsTheBodyAndEndsInLockLostException() throws Exception {
        BlockingLocks locks = BlockingLocks.of(client(options().mutate().leaseTime(Duration.ofSeconds(1)).build()));
        CountDownLatch inBody = new CountDownLatch(1);
        AtomicLong token = new AtomicLong();
        AtomicReference<BlockingLease> held = new AtomicReference<>();
        FutureTask<Object[]> run = new FutureTask<>(() -> {
            try {
                return new Object[] {locks.withLock("lost", lease -> {
                    token.set(lease.token());
                    held.set(lease);
                    inBody.countDown();
                    new CountDownLatch(1).await(); // blocked until the loss interrupts it
                    return "finished";
                }), null};
            } catch (Throwable e) {
                return new Object[] {e, Thread.currentThread().isInterrupted()};
            }
        });
        Thread.ofVirtual().start(run);
        assertThat(inBody.await(WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
        assertThat(redis.del(prefix + "{lost}:lock")).as("the lock key, deleted behind the holder's back").isEqualTo(1);
        Object[] outcome = run.get(WAIT.toSeconds(), TimeUnit.SECONDS);
        assertThat(outcome[0]).isInstanceOfSatisfying(LockLostException.class, e -> {
            assertThat(e.lockName()).isEqualTo("lost");
            assertThat(e.token()).isEqualTo(token.get());
            assertThat(e.getSuppressed()).hasAtLeastOneElementOfType(InterruptedException.class);
        });
        assertThat(outcome[1]).as("interrupt status after the call").isEqualTo(false);
        assertThat(held.get().isLost()).isTrue();
        assertThat(held.get().whenLost().toCompletableFuture()).isDone();
        assertThat(held.get().isValid()).isFalse();
    }

    @Test
    void bodyErrorsPassUnchangedTimeoutsAreTheEnginesAndNestingReenters() throws Exception {
        BlockingLocks locks = BlockingLocks.of(client(options()));
        IOException boom = new IOException("boom");
        Object thrown = onVirtualThread(() -> {
            try {
                return locks.withLock("body", lease -> { // E is inferred: IOException
                    throw boom;
                });
            } catch (IOException e) {
                return e;
            }
        });
        assertThat(thrown).isSameAs(boom);
        assertThat(redis.lockKeys(prefix)).isEmpty();

        String nested = onVirtualThread(() -> locks.withLock("nested",
                outer -> locks.withLock("nested", inner -> inner == outer ? "reentered" : "second lease")));
        assertThat(nested).isEqualTo("reentered");

        try (BlockingLease held = locks.acquire("held")) {
            LockOptions shortWait = options().mutate().waitTimeout(Duration.ofMillis(300)).build();
            Object error = onVirtualThread(() -> {
                try {
                    return locks.acquire("held", shortWait);
                } catch (RuntimeException e) {
                    return e;
                }
            });
            assertThat(error).isInstanceOf(LockTimeoutException.class);
            assertThat(held.isValid()).isTrue();
        }
        assertThat(redis.lockKeys(prefix)).isEmpty();
    }

    @Test
    void refusesToBlockAReactorNonBlockingThread() throws Exception {
        BlockingLocks locks = BlockingLocks.of(client(options()));
        for (Callable<?> call : List.<Callable<?>>of(() -> locks.acquire("refused"), () -> locks.tryAcquire("refused"),
                () -> locks.withLock("refused", lease -> "ran"))) {
            StepVerifier.create(Mono.fromCallable(call).subscribeOn(Schedulers.parallel()))
                    .expectErrorSatisfies(e -> assertThat(e).isInstanceOf(IllegalStateException.class)
                            .hasMessageContaining("non-blocking thread"))
                    .verify(WAIT);
        }
        assertThat(redis.lockKeys(prefix)).isEmpty();

        // release is the exception: there it starts the release without waiting for it
        BlockingLease lease = onVirtualThread(() -> locks.acquire("released-on-an-event-loop"));
        StepVerifier.create(Mono.fromRunnable(lease::close).subscribeOn(Schedulers.parallel())).expectComplete().verify(WAIT);
        await().atMost(WAIT).until(() -> redis.lockKeys(prefix).isEmpty());
    }

    @Test
    @Order(2)
    void semaphorePermitsBoundTheVirtualThreadsInside() throws Exception {
        // the lock's long lease, the default backoff: a permit waiter's wake-up relies on it more than a lock waiter's
        LockStore session = redis.session(prefix);
        Semaphore semaphore = session.semaphores(options().mutate().leaseTime(Duration.ofSeconds(30)).build());
        try {
            BlockingSemaphore permits = BlockingSemaphore.of(semaphore);
            int threads = 15;
            int n = 3;
            AtomicInteger inside = new AtomicInteger();
            AtomicInteger peak = new AtomicInteger();
            Set<Long> tokens = ConcurrentHashMap.newKeySet();
            ConcurrentLinkedQueue<Throwable> failures = new ConcurrentLinkedQueue<>();
            long started = System.nanoTime();
            try (ExecutorService vt = Executors.newVirtualThreadPerTaskExecutor()) {
                for (int i = 0; i < threads; i++) {
                    vt.execute(() -> {
                        try {
                            permits.withPermit("pool", n, permit -> {
                                peak.accumulateAndGet(inside.incrementAndGet(), Math::max);
                                tokens.add(permit.token());
                                Thread.yield();
                                return inside.decrementAndGet();
                            });
                        } catch (Throwable e) {
                            failures.add(e);
                        }
                    });
                }
            }
            System.out.printf("[blocking] semaphore: %d virtual threads through %d permits in %d ms, peak %d inside%n",
                    threads, n, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started), peak.get());
            assertThat(failures).isEmpty();
            assertThat(peak.get()).isBetween(1, n);
            assertThat(tokens).hasSize(threads);
            assertThat(redis.semaphoreHolderKeys(prefix)).isEmpty();
        } finally {
            session.close().block(WAIT);
        }
    }
}
