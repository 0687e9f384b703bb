package io.reactivelocks.test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.reactivelocks.Concept;
import io.reactivelocks.ConceptNotOfferedException;
import io.reactivelocks.Lease;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockOptions;
import io.reactivelocks.LockStore;
import io.reactivelocks.election.Leadership;
import io.reactivelocks.fencing.FencedValues;
import io.reactivelocks.multi.MultiLease;
import io.reactivelocks.rwlock.ReadWriteLock;
import io.reactivelocks.semaphore.Semaphore;
import io.reactivelocks.task.TaskClaim;
import io.reactivelocks.task.TaskQueue;
import io.reactivelocks.window.WindowClaim;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The contract of every store's {@link LockStore} session: it hands out each concept it offers and
 * each works; it refuses the others naming store and concept; the concepts of one session share the
 * store (two lock clients of a session exclude each other); closing the session releases what its
 * concepts hold — another session is granted at once, not after the leases expire — and refuses
 * later hand-outs; closing a concept leaves the session open. A store's test extends it and
 * supplies {@link #connect()} and {@link #expectedConcepts()}.
 */
public abstract class LockStoreContract {

    /** Generous bound for one step against a real store on a busy machine. */
    protected static final Duration STEP = Duration.ofSeconds(20);

    /** Long leases: a grant after close proves the release, not an expiry. */
    protected static final LockOptions OPTIONS = LockOptions.builder()
            .leaseTime(Duration.ofSeconds(60))
            .waitTimeout(Duration.ofSeconds(10))
            .requestTimeout(Duration.ofSeconds(5))
            .build();

    private final List<LockStore> opened = new ArrayList<>();

    /** @return a new session (its own connections) to the server under test */
    protected abstract LockStore connect();

    /**
     * @param first a session of this contract
     * @return another session to the same server (by default {@link #connect()})
     */
    protected LockStore connectAgain(LockStore first) {
        return connect();
    }

    /** @return the concepts this store must offer */
    protected abstract Set<Concept> expectedConcepts();

    /** @return a new session, closed after the test */
    protected LockStore store() {
        LockStore s = connect();
        opened.add(s);
        return s;
    }

    /**
     * @param prefix a readable prefix
     * @return a name unique to this run
     */
    protected static String name(String prefix) {
        return prefix + "-" + UUID.randomUUID();
    }

    @AfterEach
    void closeStores() {
        for (LockStore s : opened) {
            s.close().block(STEP);
        }
        opened.clear();
    }

    @Test
    void offersWhatItSaysAndRefusesTheRestNamingStoreAndConcept() {
        LockStore store = store();
        assertThat(store.concepts()).isEqualTo(expectedConcepts());
        for (Concept c : EnumSet.complementOf(EnumSet.copyOf(expectedConcepts()))) {
            assertThat(store.offers(c)).isFalse();
            assertThatThrownBy(() -> handOut(store, c))
                    .isInstanceOf(ConceptNotOfferedException.class)
                    .hasMessageContaining(store.name())
                    .hasMessageContaining(c.toString());
        }
    }

    @Test
    void everyOfferedConceptWorks() {
        LockStore store = store();
        for (Concept c : expectedConcepts()) {
            exercise(store, c, OPTIONS);
        }
    }

    /**
     * Every concept with leases reports to the listener of the options it was handed out with, as
     * that concept ({@link io.reactivelocks.LockListener#forConcept}): grants, contention and
     * releases alike; semaphores and read-write locks count what they hold in their metrics.
     * A task claim is a lease on the queue's name (delivered, then completed). Fenced values have no
     * leases: no events.
     */
    @Test
    void everyConceptReportsToTheListenerOfItsOptions() {
        LockStore store = store();
        RecordingListener events = new RecordingListener();
        LockOptions options = OPTIONS.mutate().listener(events).build();
        for (Concept c : expectedConcepts()) {
            exercise(store, c, options);
        }
        for (Concept c : expectedConcepts()) {
            switch (c) {
                case LOCK, FAIR_LOCK -> assertEvents(events, c, 1, 0, 1);
                case SEMAPHORE, READ_WRITE_LOCK -> assertEvents(events, c, 2, 1, 2);
                case MULTI_LOCK -> assertEvents(events, c, 2, 0, 2);
                case WINDOW_LOCK -> assertEvents(events, c, 1, 1, 0);
                case LEADER_ELECTION, TASK_QUEUE -> assertEvents(events, c, 1, 0, 1);
                case FENCED_VALUES -> assertThat(events.events())
                        .as("events of %s", c).noneMatch(e -> e.startsWith(c.name() + " "));
            }
        }
    }

    private static void assertEvents(RecordingListener events, Concept c, int acquired, int contended, int released) {
        org.awaitility.Awaitility.await().atMost(STEP).untilAsserted(() -> {
            assertThat(events.count(c, "acquired")).as("%s acquired in %s", c, events.events()).isEqualTo(acquired);
            assertThat(events.count(c, "contended")).as("%s contended in %s", c, events.events()).isEqualTo(contended);
            assertThat(events.count(c, "released")).as("%s released in %s", c, events.events()).isEqualTo(released);
        });
    }

    @Test
    void twoLockClientsOfOneSessionExcludeEachOther() {
        LockStore store = store();
        LockClient a = store.locks(OPTIONS);
        LockClient b = store.locks(OPTIONS);
        String name = name("shared");
        Lease held = a.acquire(name).block(STEP);
        assertThat(held).isNotNull();
        assertThat(b.tryAcquire(name).blockOptional(STEP)).isEmpty();
        held.release().block(STEP);
        Lease next = b.tryAcquire(name).block(STEP);
        assertThat(next).isNotNull();
        assertThat(next.token()).isGreaterThan(held.token());
        next.release().block(STEP);
    }

    @Test
    void closingAConceptLeavesTheSessionOpen() {
        LockStore store = store();
        store.locks(OPTIONS).close().block(STEP);
        if (store.offers(Concept.SEMAPHORE)) {
            store.semaphores(OPTIONS).close().block(STEP);
        }
        if (store.offers(Concept.FENCED_VALUES)) {
            store.fencedValues().close().block(STEP);
        }
        LockClient again = store.locks(OPTIONS);
        Lease lease = again.acquire(name("open")).block(STEP);
        assertThat(lease).isNotNull();
        lease.release().block(STEP);
    }

    @Test
    void closeReleasesWhatItsConceptsHoldThenRefusesHandOuts() {
        LockStore first = connect();
        String lock = name("closed-lock");
        String permits = name("closed-permits");
        String rw = name("closed-rw");
        assertThat(first.locks(OPTIONS).acquire(lock).block(STEP)).isNotNull();
        if (first.offers(Concept.SEMAPHORE)) {
            assertThat(first.semaphores(OPTIONS).acquire(permits, 1).block(STEP)).isNotNull();
        }
        if (first.offers(Concept.READ_WRITE_LOCK)) {
            assertThat(first.readWriteLocks(OPTIONS).write().acquire(rw).block(STEP)).isNotNull();
        }
        first.close().block(STEP);
        first.close().block(STEP); // idempotent

        LockStore second = connectAgain(first);
        opened.add(second);
        Lease l = second.locks(OPTIONS).tryAcquire(lock).block(STEP);
        assertThat(l).as("the lock held by the closed session is free at once").isNotNull();
        if (second.offers(Concept.SEMAPHORE)) {
            assertThat(second.semaphores(OPTIONS).tryAcquire(permits, 1).block(STEP))
                    .as("the permit held by the closed session is free at once").isNotNull();
        }
        if (second.offers(Concept.READ_WRITE_LOCK)) {
            assertThat(second.readWriteLocks(OPTIONS).write().tryAcquire(rw).block(STEP))
                    .as("the write lock held by the closed session is free at once").isNotNull();
        }
        assertThatThrownBy(() -> first.locks(OPTIONS))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining(first.name());
    }

    /** What {@link #everyConceptInUse} holds and runs; {@link #release()} gives all of it back. */
    protected static final class InUse {
        private final List<Lease> leases = new ArrayList<>();
        private final List<MultiLease> multis = new ArrayList<>();
        private final List<reactor.core.Disposable> running = new ArrayList<>();
        private final List<Runnable> cleanUps = new ArrayList<>();

        /** Stops the observers and the waiter, releases every lease and removes what was written. */
        public void release() {
            running.forEach(reactor.core.Disposable::dispose);
            multis.forEach(m -> m.release().block(STEP));
            leases.forEach(l -> l.release().block(STEP));
            cleanUps.forEach(Runnable::run);
        }
    }

    /**
     * Puts every concept the store offers to use at once, as an application would: a lock, a fair
     * lock, two permits, a read lock and a multi-lock held; a window claimed; a campaign won (and
     * resigned); a fenced value written; a task captured; the lock and the semaphore observed; a
     * waiter on the held lock (it listens for the release).
     *
     * @param store the session
     * @param n     a name prefix unique to the test
     * @return what is held, to release at the end
     */
    protected static InUse everyConceptInUse(LockStore store, String n) {
        InUse in = new InUse();
        in.leases.add(store.locks(OPTIONS).acquire(n + "-lock").block(STEP));
        if (store.offers(Concept.FAIR_LOCK)) {
            in.leases.add(store.fairLocks(OPTIONS).acquire(n + "-fair").block(STEP));
        }
        if (store.offers(Concept.SEMAPHORE)) {
            Semaphore s = store.semaphores(OPTIONS);
            in.leases.add(s.acquire(n + "-sem", 2).block(STEP));
            in.running.add(s.observe(n + "-sem").subscribe());
        }
        if (store.offers(Concept.READ_WRITE_LOCK)) {
            in.leases.add(store.readWriteLocks(OPTIONS).read().acquire(n + "-rw").block(STEP));
        }
        if (store.offers(Concept.MULTI_LOCK)) {
            in.multis.add(store.multiLocks(OPTIONS).acquire(List.of(n + "-m1", n + "-m2")).block(STEP));
        }
        if (store.offers(Concept.WINDOW_LOCK)) {
            assertThat(store.windowLocks(OPTIONS).tryClaim(n + "-win", Duration.ofMinutes(1)).block(STEP)).isNotNull();
        }
        if (store.offers(Concept.LEADER_ELECTION)) {
            assertThat(store.elections(OPTIONS).campaign(n + "-elect", "me").next().block(STEP)).isNotNull();
        }
        if (store.offers(Concept.FENCED_VALUES)) {
            assertThat(store.fencedValues().write(n + "-fenced", 1, "v").block(STEP)).isTrue();
        }
        if (store.offers(Concept.TASK_QUEUE)) {
            TaskQueue q = store.taskQueue(OPTIONS);
            assertThat(q.register(n + "-q", "t", 0).block(STEP)).isTrue();
            assertThat(q.tryCapture(n + "-q", 1).blockFirst(STEP)).isNotNull();
            in.cleanUps.add(() -> q.remove(n + "-q", "t").block(STEP));
        }
        LockClient locks = store.locks(OPTIONS);
        in.running.add(locks.observe(n + "-lock").subscribe());
        in.running.add(locks.acquire(n + "-lock").subscribe());   // a waiter: it listens for the release
        return in;
    }

    private static Object handOut(LockStore store, Concept c) {
        return switch (c) {
            case LOCK -> store.locks(OPTIONS);
            case FAIR_LOCK -> store.fairLocks(OPTIONS);
            case SEMAPHORE -> store.semaphores(OPTIONS);
            case READ_WRITE_LOCK -> store.readWriteLocks(OPTIONS);
            case MULTI_LOCK -> store.multiLocks(OPTIONS);
            case WINDOW_LOCK -> store.windowLocks(OPTIONS);
            case LEADER_ELECTION -> store.elections(OPTIONS);
            case FENCED_VALUES -> store.fencedValues();
            case TASK_QUEUE -> store.taskQueue(OPTIONS);
        };
    }

    /**
     * Uses one concept once, asserting its basic promise.
     *
     * @param store   the session
     * @param c       an offered concept
     * @param options the options to hand it out with
     */
    protected void exercise(LockStore store, Concept c, LockOptions options) {
        String n = name(c.name().toLowerCase(java.util.Locale.ROOT));
        switch (c) {
            case LOCK, FAIR_LOCK -> {
                LockClient client = c == Concept.LOCK ? store.locks(options) : store.fairLocks(options);
                String r = client.withLock(n, lease -> reactor.core.publisher.Mono.just("t" + lease.token())).block(STEP);
                assertThat(r).startsWith("t");
            }
            case SEMAPHORE -> {
                Semaphore s = store.semaphores(options);
                Lease one = s.acquire(n, 2).block(STEP);
                Lease two = s.acquire(n, 2).block(STEP);
                assertThat(one).isNotNull();
                assertThat(two).isNotNull();
                assertThat(s.metrics().heldLeases()).extracting(Lease::token).containsExactlyInAnyOrder(one.token(), two.token());
                assertThat(s.inspect(n).block(STEP).holders()).hasSize(2);
                assertThat(s.tryAcquire(n, 2).blockOptional(STEP)).as("at most 2 permits").isEmpty();
                one.release().block(STEP);
                two.release().block(STEP);
                assertThat(s.metrics().heldLeaseCount()).isZero();
            }
            case READ_WRITE_LOCK -> {
                ReadWriteLock rw = store.readWriteLocks(options);
                Lease r1 = rw.read().acquire(n).block(STEP);
                Lease r2 = rw.read().acquire(n).block(STEP);
                assertThat(rw.metrics().heldLeaseCount()).isEqualTo(2);
                assertThat(rw.inspect(n).block(STEP).readers()).hasSize(2);
                assertThat(rw.write().tryAcquire(n).blockOptional(STEP)).as("no writer beside readers").isEmpty();
                r1.release().block(STEP);
                r2.release().block(STEP);
                assertThat(rw.metrics().heldLeaseCount()).isZero();
            }
            case MULTI_LOCK -> {
                MultiLease m = store.multiLocks(options).acquire(List.of(n + "-b", n + "-a")).block(STEP);
                assertThat(m.names()).containsExactly(n + "-a", n + "-b");
                m.release().block(STEP);
            }
            case WINDOW_LOCK -> {
                WindowClaim w = store.windowLocks(options).tryClaim(n, Duration.ofMinutes(1)).block(STEP);
                assertThat(w).isNotNull();
                // a second claim right after is refused — unless a minute boundary fell between the two, when it
                // claims the next window (the only claim of that one)
                java.util.Optional<WindowClaim> again = store.windowLocks(options).tryClaim(n, Duration.ofMinutes(1))
                        .blockOptional(STEP);
                again.ifPresent(next -> assertThat(next.window()).as("one claim per window").isGreaterThan(w.window()));
            }
            case LEADER_ELECTION -> {
                Leadership term = store.elections(options).campaign(n, "me").next().block(STEP);
                assertThat(term).isNotNull();
                assertThat(term.lease().token()).isPositive();
            }
            case FENCED_VALUES -> {
                FencedValues v = store.fencedValues();
                assertThat(v.write(n, 5, "five").block(STEP)).isTrue();
                assertThat(v.write(n, 4, "four").block(STEP)).isFalse();
                assertThat(v.read(n).block(STEP).value()).isEqualTo("five");
            }
            case TASK_QUEUE -> {
                TaskQueue q = store.taskQueue(options);
                assertThat(q.register(n, "t1", 0).block(STEP)).isTrue();
                TaskClaim claim = q.tryCapture(n, 1).blockFirst(STEP);
                assertThat(claim).isNotNull();
                assertThat(q.complete(claim).block(STEP)).isTrue();
            }
        }
    }
}
