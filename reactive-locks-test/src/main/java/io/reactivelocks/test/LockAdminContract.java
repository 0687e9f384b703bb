package io.reactivelocks.test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.reactivelocks.Concept;
import io.reactivelocks.Lease;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockOptions;
import io.reactivelocks.LockStore;
import io.reactivelocks.admin.HeldGrant;
import io.reactivelocks.admin.HeldGrant.Role;
import io.reactivelocks.admin.LockAdmin;
import io.reactivelocks.rwlock.ReadWriteLock;
import io.reactivelocks.semaphore.Semaphore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

/**
 * The contract of {@link LockAdmin} on every store: it lists what other sessions hold under a
 * prefix (lock holders with payload, permits, readers, the writer), matches the prefix literally,
 * and a force-release takes a name away from every holder — the evicted holder loses its lease,
 * a waiter is woken at once, and the next grant's token is above the evicted ones. A store's test
 * extends it and supplies {@link #connect()}: each call a new session (its own connections) to the
 * same server, as separate processes would be.
 */
public abstract class LockAdminContract {

    /** Generous bound for one step against a real store on a busy machine. */
    protected static final Duration STEP = Duration.ofSeconds(20);

    private final List<LockStore> opened = new ArrayList<>();

    /** @return a new session (its own connections) to the server under test */
    protected abstract LockStore connect();

    /**
     * @return the options of the holders: a lease short enough that an evicted holder learns of its
     *         loss within a few seconds (its next renewal), a bounded wait
     */
    protected LockOptions options() {
        return LockOptions.builder()
                .leaseTime(Duration.ofSeconds(3))
                .waitTimeout(Duration.ofSeconds(15))
                .requestTimeout(Duration.ofSeconds(5))
                .build();
    }

    /** @return a new session, closed after the test */
    protected LockStore store() {
        LockStore s = connect();
        opened.add(s);
        return s;
    }

    /**
     * @param label a readable label
     * @return a prefix unique to this run, so that other tests' names never show up
     */
    protected static String prefix(String label) {
        return "admin-" + label + "-" + UUID.randomUUID() + "/";
    }

    @AfterEach
    void closeStores() {
        for (LockStore s : opened) {
            s.close().block(STEP);
        }
        opened.clear();
    }

    @Test
    void listShowsWhatOtherSessionsHoldUnderThePrefix() {
        LockStore holders = store();
        LockAdmin admin = store().admin();
        String p = prefix("list");
        LockClient locks = holders.locks(options());
        Lease lock = locks.acquire(p + "lock", options().withPayload("who: job 7")).block(STEP);
        Semaphore semaphores = holders.semaphores(options());
        Lease permit1 = semaphores.acquire(p + "pool", 3).block(STEP);
        Lease permit2 = semaphores.acquire(p + "pool", 3).block(STEP);
        ReadWriteLock rw = holders.readWriteLocks(options());
        Lease reader = rw.read().acquire(p + "doc").block(STEP);
        Lease writer = rw.write().acquire(p + "other-doc").block(STEP);
        Lease outside = locks.acquire("not-" + p + "lock").block(STEP);

        List<HeldGrant> listed = admin.list(p).collectList().block(STEP);

        assertThat(listed).as("sorted by name, then token").extracting(HeldGrant::name)
                .containsExactly(p + "doc", p + "lock", p + "other-doc", p + "pool", p + "pool");
        HeldGrant l = find(listed, p + "lock");
        assertThat(l.concept()).isEqualTo(Concept.LOCK);
        assertThat(l.role()).isEqualTo(Role.HOLDER);
        assertThat(l.token()).isEqualTo(lock.token());
        assertThat(l.owner()).isEqualTo(lock.owner());
        assertThat(l.payload()).isEqualTo("who: job 7");
        if (l.remaining() != null) {
            assertThat(l.remaining()).isPositive().isLessThanOrEqualTo(options().leaseTime());
        }
        assertThat(listed).filteredOn(g -> g.name().equals(p + "pool"))
                .allSatisfy(g -> assertThat(g.concept()).isEqualTo(Concept.SEMAPHORE))
                .allSatisfy(g -> assertThat(g.role()).isEqualTo(Role.PERMIT))
                .extracting(HeldGrant::token).containsExactly(permit1.token(), permit2.token());
        HeldGrant r = find(listed, p + "doc");
        assertThat(r.concept()).isEqualTo(Concept.READ_WRITE_LOCK);
        assertThat(r.role()).isEqualTo(Role.READER);
        assertThat(r.token()).isEqualTo(reader.token());
        HeldGrant w = find(listed, p + "other-doc");
        assertThat(w.role()).isEqualTo(Role.WRITER);
        assertThat(w.token()).isEqualTo(writer.token());

        for (Lease lease : List.of(lock, permit1, permit2, reader, writer, outside)) {
            lease.release().block(STEP);
        }
        assertThat(admin.list(p).collectList().block(STEP)).as("nothing held after the releases").isEmpty();
    }

    private static HeldGrant find(List<HeldGrant> grants, String name) {
        return grants.stream().filter(g -> g.name().equals(name)).findFirst()
                .orElseThrow(() -> new AssertionError(name + " not listed in " + grants));
    }

    @Test
    void thePrefixIsMatchedLiterallyNotAsAPattern() {
        LockClient locks = store().locks(options());
        LockAdmin admin = store().admin();
        String base = "admin-literal-" + UUID.randomUUID();
        String prefix = base + "%_*?[a]{b}\\";
        Lease inside = locks.acquire(prefix + "x").block(STEP);
        List<Lease> lookalikes = new ArrayList<>();
        for (String n : List.of(base + "ZZ*?[a]{b}\\x", base + "%_Q?[a]{b}\\x", base + "%_*Xa{b}\\x", base + "%_*?a{b}\\x")) {
            lookalikes.add(locks.acquire(n).block(STEP));
        }
        assertThat(admin.list(prefix).collectList().block(STEP)).extracting(HeldGrant::name).containsExactly(prefix + "x");
        assertThat(admin.list(base).collectList().block(STEP)).hasSize(5);
        inside.release().block(STEP);
        lookalikes.forEach(l -> l.release().block(STEP));
    }

    @Test
    void forceReleaseEvictsTheHolderWhoLosesItsLeaseAndTheNextTokenIsHigher() {
        LockClient holder = store().locks(options());
        LockAdmin admin = store().admin();
        LockClient next = store().locks(options());
        String name = prefix("evict") + "lock";
        Lease evicted = holder.acquire(name).block(STEP);

        List<HeldGrant> removed = admin.forceRelease(name).block(STEP);

        assertThat(removed).singleElement().satisfies(g -> {
            assertThat(g.token()).isEqualTo(evicted.token());
            assertThat(g.owner()).isEqualTo(evicted.owner());
            assertThat(g.role()).isEqualTo(Role.HOLDER);
        });
        assertThat(admin.list(name).collectList().block(STEP)).isEmpty();
        evicted.lost().block(STEP); // the holder learns it (renewal refused, or its held key gone)
        assertThat(evicted.isValid()).isFalse();
        Lease after = next.tryAcquire(name).block(STEP);
        assertThat(after).as("free after the force-release").isNotNull();
        assertThat(after.token()).as("fenced above the evicted holder").isGreaterThan(evicted.token());
        after.release().block(STEP);
    }

    @Test
    void forceReleaseWakesAWaiterLongBeforeTheHoldersLeaseWouldEnd() {
        LockOptions longLease = options().mutate().leaseTime(Duration.ofSeconds(60)).waitTimeout(Duration.ofSeconds(15)).build();
        LockClient holder = store().locks(longLease);
        LockClient waiter = store().locks(longLease);
        LockAdmin admin = store().admin();
        String name = prefix("wake") + "lock";
        Lease held = holder.acquire(name).block(STEP);
        Mono<Lease> waiting = waiter.acquire(name).cache();
        waiting.subscribe(l -> { }, e -> { });
        assertThat(admin.list(name).collectList().block(STEP)).singleElement()
                .satisfies(g -> assertThat(g.token()).isEqualTo(held.token()));

        assertThat(admin.forceRelease(name).block(STEP)).hasSize(1);

        // a 15 s wait timeout against a 60 s lease: granted only because the release woke it
        Lease granted = waiting.block(STEP);
        assertThat(granted.token()).isGreaterThan(held.token());
        granted.release().block(STEP);
    }

    @Test
    void forceReleaseTakesEveryPermitReaderAndWriter() {
        LockStore holders = store();
        LockAdmin admin = store().admin();
        LockStore others = store();
        String p = prefix("evict-all");
        Semaphore semaphores = holders.semaphores(options());
        Lease permit1 = semaphores.acquire(p + "pool", 2).block(STEP);
        Lease permit2 = semaphores.acquire(p + "pool", 2).block(STEP);
        ReadWriteLock rw = holders.readWriteLocks(options());
        Lease reader1 = rw.read().acquire(p + "doc").block(STEP);
        Lease reader2 = rw.read().acquire(p + "doc").block(STEP);

        assertThat(admin.forceRelease(p + "pool").block(STEP)).extracting(HeldGrant::token)
                .containsExactlyInAnyOrder(permit1.token(), permit2.token());
        assertThat(admin.forceRelease(p + "doc").block(STEP)).extracting(HeldGrant::token)
                .containsExactlyInAnyOrder(reader1.token(), reader2.token());
        assertThat(admin.list(p).collectList().block(STEP)).isEmpty();

        Lease both = others.semaphores(options()).tryAcquire(p + "pool", 2).block(STEP);
        assertThat(both).as("both permits free again").isNotNull();
        Lease again = others.semaphores(options()).tryAcquire(p + "pool", 2).block(STEP);
        assertThat(again).isNotNull();
        assertThat(Math.min(both.token(), again.token())).isGreaterThan(Math.max(permit1.token(), permit2.token()));
        Lease write = others.readWriteLocks(options()).write().tryAcquire(p + "doc").block(STEP);
        assertThat(write).as("no reader left in the writer's way").isNotNull();
        assertThat(write.token()).isGreaterThan(Math.max(reader1.token(), reader2.token()));
        for (Lease l : List.of(both, again, write)) {
            l.release().block(STEP);
        }
        for (Lease l : List.of(permit1, permit2, reader1, reader2)) {
            l.lost().block(STEP);
        }
    }

    /**
     * A revocation request reaches the holder's {@link Lease#revoked()} (sent again until it does: a
     * request is not stored, and the holder's subscription to the store's channel goes live
     * asynchronously); the holder keeps the lock until it decides to release.
     */
    @Test
    void revokeAsksTheHolderWhoKeepsTheLockUntilItLetsGo() {
        LockClient holder = store().locks(options());
        LockAdmin admin = store().admin();
        String name = prefix("revoke") + "lock";
        Lease held = holder.acquire(name).block(STEP);
        java.util.concurrent.atomic.AtomicReference<String> asked = new java.util.concurrent.atomic.AtomicReference<>();
        held.revoked().subscribe(asked::set);

        org.awaitility.Awaitility.await().atMost(STEP).pollInterval(Duration.ofMillis(200)).until(() -> {
            assertThat(admin.revoke(name, "maintenance at 02:00").block(STEP)).as("held: the holder was asked").isTrue();
            return asked.get() != null;
        });

        assertThat(asked.get()).isEqualTo("maintenance at 02:00");
        assertThat(held.isValid()).as("cooperative: the holder still holds").isTrue();
        assertThat(admin.list(name).collectList().block(STEP)).singleElement()
                .satisfies(g -> assertThat(g.token()).isEqualTo(held.token()));
        held.release().block(STEP);
        assertThat(admin.revoke(name, "again").block(STEP)).as("free: nobody to ask").isFalse();
    }

    /** Every permit, reader and writer of a name is asked, each under its own owner id. */
    @Test
    void revokeAsksEveryPermitReaderAndWriter() {
        LockStore holders = store();
        LockAdmin admin = store().admin();
        String p = prefix("revoke-grants");
        Semaphore semaphores = holders.semaphores(options());
        ReadWriteLock rw = holders.readWriteLocks(options());
        List<Lease> leases = List.of(semaphores.acquire(p + "pool", 2).block(STEP), semaphores.acquire(p + "pool", 2).block(STEP),
                rw.read().acquire(p + "doc").block(STEP), rw.write().acquire(p + "other-doc").block(STEP));
        List<java.util.concurrent.atomic.AtomicReference<String>> asked = new ArrayList<>();
        for (Lease l : leases) {
            java.util.concurrent.atomic.AtomicReference<String> a = new java.util.concurrent.atomic.AtomicReference<>();
            l.revoked().subscribe(a::set);
            asked.add(a);
        }
        org.awaitility.Awaitility.await().atMost(STEP).pollInterval(Duration.ofMillis(200)).until(() -> {
            for (String name : List.of(p + "pool", p + "doc", p + "other-doc")) {
                assertThat(admin.revoke(name, "drain " + name).block(STEP)).as("%s is held", name).isTrue();
            }
            return asked.stream().allMatch(a -> a.get() != null);
        });
        assertThat(asked.get(0).get()).isEqualTo("drain " + p + "pool");
        assertThat(asked.get(1).get()).isEqualTo("drain " + p + "pool");
        assertThat(asked.get(2).get()).isEqualTo("drain " + p + "doc");
        assertThat(asked.get(3).get()).isEqualTo("drain " + p + "other-doc");
        assertThat(leases).allSatisfy(l -> assertThat(l.isValid()).as("cooperative: still held").isTrue());
        leases.forEach(l -> l.release().block(STEP));
    }

    @Test
    void revokedEndsEmptyWhenTheLeaseEndsAndTheNextHolderIsAskedItself() {
        LockClient locks = store().locks(options());
        LockAdmin admin = store().admin();
        String name = prefix("revoke-end") + "lock";
        Lease first = locks.acquire(name).block(STEP);
        Mono<String> firstAsked = first.revoked().cache();
        firstAsked.subscribe(r -> { }, e -> { });
        first.release().block(STEP);
        assertThat(firstAsked.blockOptional(STEP)).as("released without a request").isEmpty();
        assertThat(first.revoked().blockOptional(STEP)).as("asked after the end").isEmpty();

        Lease second = locks.acquire(name).block(STEP);
        java.util.concurrent.atomic.AtomicReference<String> asked = new java.util.concurrent.atomic.AtomicReference<>();
        second.revoked().subscribe(asked::set);
        org.awaitility.Awaitility.await().atMost(STEP).pollInterval(Duration.ofMillis(200)).until(() -> {
            assertThat(admin.revoke(name, "for the second").block(STEP)).isTrue();
            return asked.get() != null;
        });
        assertThat(asked.get()).isEqualTo("for the second");
        second.release().block(STEP);
    }

    /**
     * Task claims are listed on their queue's name (role CLAIM, the task's id) and a force-release of
     * the queue makes their tasks capturable again, the next claim fenced above; a store without a
     * task queue says so when asked for one.
     */
    @Test
    void taskClaimsAreListedOnTheQueueAndForceReleasedToBeCapturedAgain() {
        LockStore holders = store();
        if (!holders.offers(Concept.TASK_QUEUE)) {
            assertThatThrownBy(() -> holders.taskQueue(options())).isInstanceOf(io.reactivelocks.ConceptNotOfferedException.class);
            return;
        }
        LockAdmin admin = store().admin();
        String queue = prefix("claims") + "q";
        io.reactivelocks.task.TaskQueue tasks = holders.taskQueue(options());
        assertThat(tasks.registerAll(queue, List.of("t1", "t2"), 0).block(STEP)).isEqualTo(2);
        List<io.reactivelocks.task.TaskClaim> claims = tasks.tryCapture(queue, 2).collectList().block(STEP);
        assertThat(claims).hasSize(2);

        List<HeldGrant> listed = admin.list(queue).collectList().block(STEP);
        assertThat(listed).hasSize(2).allSatisfy(g -> {
            assertThat(g.concept()).isEqualTo(Concept.TASK_QUEUE);
            assertThat(g.role()).isEqualTo(Role.CLAIM);
            assertThat(g.name()).isEqualTo(queue);
        });
        assertThat(listed).extracting(HeldGrant::task).containsExactlyInAnyOrder("t1", "t2");
        assertThat(listed).extracting(HeldGrant::token).containsExactlyInAnyOrderElementsOf(
                claims.stream().map(io.reactivelocks.task.TaskClaim::token).toList());

        assertThat(admin.forceRelease(queue).block(STEP)).extracting(HeldGrant::task).containsExactlyInAnyOrder("t1", "t2");
        assertThat(admin.list(queue).collectList().block(STEP)).isEmpty();
        List<io.reactivelocks.task.TaskClaim> again = store().taskQueue(options()).tryCapture(queue, 2).collectList().block(STEP);
        assertThat(again).as("capturable again").hasSize(2);
        long highest = claims.stream().mapToLong(io.reactivelocks.task.TaskClaim::token).max().orElseThrow();
        assertThat(again).allSatisfy(c -> assertThat(c.token()).isGreaterThan(highest));
        assertThat(tasks.complete(claims.get(0)).block(STEP)).as("the evicted claim cannot end its task").isFalse();
    }

    @Test
    void forceReleaseOfAFreeNameRemovesNothing() {
        assertThat(store().admin().forceRelease(prefix("free") + "x").block(STEP)).isEmpty();
    }

    @Test
    void badArgumentsFailNamingThem() {
        LockAdmin admin = store().admin();
        assertThatThrownBy(() -> admin.list(null)).isInstanceOf(NullPointerException.class).hasMessageContaining("prefix");
        assertThatThrownBy(() -> admin.forceRelease(null)).isInstanceOf(NullPointerException.class).hasMessageContaining("name");
        assertThatThrownBy(() -> admin.forceRelease("")).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("name");
        assertThatThrownBy(() -> admin.revoke("x", null)).isInstanceOf(NullPointerException.class).hasMessageContaining("reason");
        assertThatThrownBy(() -> admin.revoke("x", "r".repeat(LockAdmin.MAX_REASON_LENGTH + 1)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("reason");
    }

    @Test
    void oneAdminPerSessionRefusedAfterClose() {
        LockStore s = connect();
        LockAdmin admin = s.admin();
        assertThat(s.admin()).isSameAs(admin);
        s.close().block(STEP);
        assertThatThrownBy(s::admin).isInstanceOf(IllegalStateException.class).hasMessageContaining(s.name());
    }
}
