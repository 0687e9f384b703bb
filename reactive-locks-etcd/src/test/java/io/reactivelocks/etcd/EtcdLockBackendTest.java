package io.reactivelocks.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.KeyValue;
import io.reactivelocks.Lease;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockClock;
import io.reactivelocks.LockOptions;
import io.reactivelocks.LockState;
import io.reactivelocks.spi.Attempt;
import io.reactivelocks.spi.GrantRequest;
import io.reactivelocks.spi.LockEvent;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/** The etcd recipe seen from etcd: keys, values, leases, revisions, who is woken. */
class EtcdLockBackendTest {

    private static final Duration STEP = Duration.ofSeconds(10);
    private static final LockOptions OPTIONS = LockOptions.builder()
            .leaseTime(Duration.ofSeconds(2)).requestTimeout(Duration.ofSeconds(2)).build();

    private static EtcdTestSupport etcd;
    private final List<LockClient> clients = new ArrayList<>();

    @BeforeAll
    static void startServer() {
        etcd = EtcdTestSupport.start();
    }

    @AfterAll
    static void stopServer() {
        if (etcd != null) {
            etcd.close();
        }
    }

    @AfterEach
    void closeClients() {
        for (LockClient c : clients) {
            c.close().block(STEP);
        }
        clients.clear();
        assertThat(etcd.keys()).as("keys left after close").isEmpty();
    }

    private LockClient client(EtcdLockBackend backend) {
        LockClient c = LockClient.create(backend, OPTIONS);
        clients.add(c);
        return c;
    }

    private static String name(String p) {
        return p + "-" + UUID.randomUUID();
    }

    private static KeyValue get(String key) throws Exception {
        List<KeyValue> kvs = etcd.checker().getKVClient().get(ByteSequence.from(key, StandardCharsets.UTF_8))
                .get(10, TimeUnit.SECONDS).getKvs();
        return kvs.isEmpty() ? null : kvs.get(0);
    }

    /** @return the key under the name whose value names {@code owner} (keys are slots: the owner is in the value) */
    private static String keyOf(String name, String owner) throws Exception {
        for (String k : etcd.keys(etcd.prefix + "/" + EtcdKeys.encode(name) + "/")) {
            KeyValue kv = get(k);
            if (kv != null && EtcdKeys.ownerOf(kv.getValue()).equals(owner)) {
                return k;
            }
        }
        return null;
    }

    @Test
    void theOwnersKeyHoldsTheOwnerOnTheSessionLeaseAndItsCreateRevisionIsTheToken() throws Exception {
        EtcdLockBackend backend = etcd.backend();
        LockClient locks = client(backend);
        String name = name("layout");
        Lease lease = locks.acquire(name).block(STEP);
        String key = keyOf(name, lease.owner());
        assertThat(etcd.keys()).containsExactly(key);
        KeyValue kv = get(key);
        assertThat(kv.getValue().toString(StandardCharsets.UTF_8)).isEqualTo(lease.owner());
        assertThat(kv.getLease()).as("the session lease granted to the backend").isEqualTo(etcd.callsOf(backend).liveLease().orElseThrow());
        assertThat(kv.getCreateRevision()).isEqualTo(lease.token());
        lease.release().block(STEP);
        assertThat(etcd.keys()).isEmpty();
    }

    @Test
    void everyLockOfABackendSharesOneSessionLease() throws Exception {
        EtcdLockBackend backend = etcd.backend();
        LockClient locks = client(backend);
        List<Lease> leases = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            leases.add(locks.acquire(name("shared")).block(STEP));
        }
        List<Long> granted = etcd.callsOf(backend).granted();
        assertThat(granted).as("session leases granted to the backend").hasSize(1);
        for (String k : etcd.keys()) {
            assertThat(get(k).getLease()).as("lease of %s", k).isEqualTo(granted.get(0));
        }
        for (Lease l : leases) {
            l.release().block(STEP);
        }
    }

    @Test
    void grantIsIdempotentForAnOwnerAndTryAcquireLeavesNoKeyBehind() {
        EtcdLockBackend backend = etcd.backend();
        client(backend); // closes the backend after the test
        String name = name("idempotent");
        GrantRequest mine = new GrantRequest(name, "owner-1", Duration.ofSeconds(2), false, LockClock.system());
        Attempt first = backend.tryGrant(mine).block(STEP);
        Attempt again = backend.tryGrant(mine).block(STEP);
        assertThat(first).isInstanceOf(Attempt.Granted.class);
        assertThat(again).isInstanceOf(Attempt.Granted.class);
        assertThat(((Attempt.Granted) again).token()).isEqualTo(((Attempt.Granted) first).token());

        Attempt other = backend.tryGrant(new GrantRequest(name, "owner-2", Duration.ofSeconds(2), false, LockClock.system()))
                .block(STEP);
        assertThat(other).isInstanceOf(Attempt.Busy.class);
        assertThat(((Attempt.Busy) other).holder().owner()).isEqualTo("owner-1");
        assertThat(((Attempt.Busy) other).holder().token()).isEqualTo(((Attempt.Granted) first).token());
        assertThat(etcd.keys()).hasSize(1);

        assertThat(backend.release(name, "owner-2").block(STEP)).isFalse();
        assertThat(backend.release(name, "owner-1").block(STEP)).isTrue();
        assertThat(backend.release(name, "owner-1").block(STEP)).isFalse();
        assertThat(etcd.keys()).isEmpty();
    }

    @Test
    void namesThatArePrefixesOrPathsOfOneAnotherAreIndependentLocks() {
        LockClient locks = client(etcd.backend());
        String u = UUID.randomUUID().toString();
        List<String> names = List.of("x" + u, "x" + u + "/", "x" + u + "/y", "x" + u + "y", "x" + u + "/../x" + u);
        List<Lease> leases = new ArrayList<>();
        for (String n : names) {
            Lease l = locks.tryAcquire(n).block(STEP);
            assertThat(l).as("grant of %s", n).isNotNull();
            leases.add(l);
        }
        leases.get(0).release().block(STEP);
        for (int i = 1; i < names.size(); i++) {
            assertThat(locks.tryAcquire(names.get(i)).blockOptional(STEP)).as("%s still held", names.get(i)).isEmpty();
        }
        for (String k : etcd.keys()) {
            String segment = k.substring(etcd.prefix.length() + 1, k.lastIndexOf('/'));
            assertThat(segment).matches("[A-Za-z0-9_-]+");
        }
        leases.subList(1, leases.size()).forEach(l -> l.release().block(STEP));
    }

    @Test
    void aWaiterThatGivesUpWakesOnlyItsSuccessorWhichThenWaitsOnTheHolder() {
        EtcdLockBackend backend = etcd.backend();
        LockClient locks = client(backend);
        String name = name("middle");
        String range = etcd.prefix + "/" + EtcdKeys.encode(name) + "/";
        Lease holder = locks.acquire(name).block(STEP);
        Disposable middle = locks.acquire(name).subscribe();
        await().atMost(STEP).until(() -> etcd.keys(range).size() == 2);
        AtomicReference<Lease> last = new AtomicReference<>();
        Disposable successor = locks.acquire(name).subscribe(last::set);
        await().atMost(STEP).until(() -> etcd.keys(range).size() == 3);
        try {
            EtcdCalls calls = etcd.callsOf(backend);
            // each waiter read its place once when it queued
            await().atMost(STEP).until(() -> calls.readTransactions() == 2);
            middle.dispose(); // its key goes: the last waiter, which waits on it, looks at its place again
            await().atMost(STEP).until(() -> calls.readTransactions() == 3);
            await().atMost(STEP).until(() -> etcd.keys(range).size() == 2);
            assertThat(last.get()).as("still waiting for the holder").isNull();
            // the shared deletion watch caught up (etcd serves a watch from a past revision every 100 ms)
            await().atMost(STEP).until(() -> backend.heldKeys().live());
            holder.release().block(STEP);
            await().atMost(STEP).until(() -> last.get() != null);
            assertThat(last.get().token()).isGreaterThan(holder.token());
            // the holder was the lowest key when it read: granted on its deletion, with no read
            assertThat(calls.readTransactions()).isEqualTo(3);
            last.get().release().block(STEP);
        } finally {
            successor.dispose();
        }
    }

    @Test
    void eventsSaySubscribedFirstThenAcquiredAndReleased() {
        EtcdLockBackend backend = etcd.backend();
        LockClient locks = client(backend);
        String name = name("events");
        List<LockEvent> events = new java.util.concurrent.CopyOnWriteArrayList<>();
        Disposable d = backend.events(name).subscribe(events::add);
        try {
            await().atMost(STEP).until(() -> events.size() == 1);
            assertThat(events.get(0)).isEqualTo(new LockEvent.Subscribed(name));
            Lease held = locks.acquire(name).block(STEP);
            held.release().block(STEP);
            await().atMost(STEP).until(() -> events.size() == 3);
            assertThat(events.subList(1, 3)).containsExactly(
                    new LockEvent.Acquired(name, held.owner(), held.token()),
                    new LockEvent.Released(name, held.owner(), false));
        } finally {
            d.dispose();
        }
    }

    @Test
    void observeSeesTheHolderChangeAndExpiry() {
        EtcdLockBackend backend = etcd.backend();
        LockClient watcher = client(backend);
        EtcdLockBackend other = etcd.proxiedBackend();
        LockClient holder = client(other);
        String name = name("observe");
        List<LockState> states = new java.util.concurrent.CopyOnWriteArrayList<>();
        Disposable d = watcher.observe(name).subscribe(states::add);
        try {
            await().atMost(STEP).until(() -> states.size() == 1);
            Lease l = holder.acquire(name).block(STEP);
            await().atMost(STEP).until(() -> states.size() == 2);
            assertThat(states.get(1)).isEqualTo(new LockState.Held(name, l.owner(), l.token(), Long.MAX_VALUE));
            etcd.partitionUntilSessionLost(other); // its lease expires on etcd: the key goes, the watch sees it
            await().atMost(STEP).until(() -> states.size() == 3);
            assertThat(states.get(2).isHeld()).isFalse();
        } finally {
            d.dispose();
        }
    }

    /**
     * Locks held for less than {@link EtcdLockBackend#HELD_KEY_WATCH_DELAY} never open the deletion
     * watch (etcd would send this client an event for every release under the prefix while it is open);
     * a lock held longer opens it.
     */
    @Test
    void locksHeldBrieflyOpenNoDeletionWatchAndALockHeldLongerDoes() {
        EtcdLockBackend backend = etcd.backend();
        LockClient locks = client(backend);
        String name = name("brief");
        // "brief" made independent of the machine's speed: no hold here lasts an hour
        backend.heldKeyWatchDelay(Duration.ofHours(1));
        locks.acquire(name).flatMap(Lease::release).block(STEP);
        long events = etcd.callsOf(backend).watchEvents();
        for (int i = 0; i < 20; i++) {
            locks.acquire(name).flatMap(Lease::release).block(STEP);
        }
        assertThat(backend.heldKeys().isOpen()).as("deletion watch after 20 brief holds").isFalse();
        assertThat(etcd.callsOf(backend).watchEvents() - events).as("watch events received for 20 brief holds").isZero();
        backend.heldKeyWatchDelay(Duration.ofMillis(100));
        Lease held = locks.acquire(name).block(STEP);
        try {
            await().atMost(STEP).until(() -> backend.heldKeys().isOpen());
        } finally {
            held.release().block(STEP);
        }
    }

    @Test
    void aHeldKeyDeletedBehindTheClientsBackEndsItsHoldWhileTheSessionLivesOn() throws Exception {
        EtcdLockBackend backend = etcd.backend();
        LockClient locks = client(backend);
        String deleted = name("deleted");
        String kept = name("kept");
        List<Lease> updates = new java.util.concurrent.CopyOnWriteArrayList<>();
        java.util.concurrent.atomic.AtomicLong ended = new java.util.concurrent.atomic.AtomicLong();
        Disposable hold = locks.hold(deleted).subscribe(updates::add, e -> ended.set(-1), () -> ended.set(System.nanoTime()));
        Lease other = locks.acquire(kept).block(STEP);
        try {
            await().atMost(STEP).until(() -> !updates.isEmpty());
            String key = keyOf(deleted, updates.get(0).owner());
            etcd.checker().getKVClient().delete(ByteSequence.from(key, StandardCharsets.UTF_8)).get(10, TimeUnit.SECONDS);
            // the session is fine (it would renew this hold forever): the key's own watch ends it (the key is
            // registered HELD_KEY_WATCH_DELAY after the grant; the bound is the suite's, not a timing claim)
            await().atMost(STEP).until(() -> ended.get() != 0);
            assertThat(ended.get()).as("completed, not errored").isPositive();
            assertThat(updates.get(0).isValid()).isFalse();
            assertThat(etcd.callsOf(backend).revoked()).as("session leases revoked (a lost session revokes its lease)").isEmpty();
            assertThat(etcd.callsOf(backend).granted()).as("session leases granted").hasSize(1);
            assertThat(other.isValid()).as("the other lock of the session").isTrue();
        } finally {
            hold.dispose();
            other.release().block(STEP);
        }
    }

    /**
     * A waiter whose own key is deleted behind its back while it waits must not be granted on its predecessor's
     * deletion (EtcdLockQueue reads its key again first; granting on the deletion alone failed this in a loaded run).
     */
    @Test
    void aQueuedKeyDeletedBehindTheClientsBackIsNotGrantedOnItsPredecessorsDeletion() throws Exception {
        EtcdLockBackend backend = etcd.backend();
        LockClient locks = client(backend);
        String name = name("queued-deleted");
        String range = etcd.prefix + "/" + EtcdKeys.encode(name) + "/";
        Lease holder = locks.acquire(name).block(STEP);
        AtomicReference<Lease> got = new AtomicReference<>();
        Disposable waiting = locks.acquire(name).subscribe(got::set);
        try {
            await().atMost(STEP).until(() -> etcd.keys(range).size() == 2);
            String held = keyOf(name, holder.owner());
            String queued = etcd.keys(range).stream().filter(k -> !k.equals(held)).findFirst().orElseThrow();
            ByteSequence key = ByteSequence.from(queued, StandardCharsets.UTF_8);
            long queuedRevision = etcd.checker().getKVClient().get(key).get(10, TimeUnit.SECONDS).getKvs().get(0).getCreateRevision();
            etcd.checker().getKVClient().delete(key).get(10, TimeUnit.SECONDS);
            holder.release().block(STEP);
            await().atMost(STEP).until(() -> got.get() != null);
            // queued again with a new key: not granted on the deleted one
            assertThat(got.get().token()).isGreaterThan(queuedRevision);
            assertThat(etcd.keys(range)).containsExactly(keyOf(name, got.get().owner()));
            got.get().release().block(STEP);
        } finally {
            waiting.dispose();
        }
    }

    /**
     * etcd keeps a deleted key in its index until a compaction, and every read of the name's range
     * visits it: a backend acquiring one name over and over reuses its key (a slot on the session
     * lease) instead of creating a new one per acquire. Every key ever put under the name is replayed
     * by a watch from the revision before the first acquire.
     */
    @Test
    void acquiringANameOverAndOverReusesOneKeyWithAGrowingToken() throws Exception {
        LockClient locks = client(etcd.backend());
        String name = name("reuse");
        String range = etcd.prefix + "/" + EtcdKeys.encode(name) + "/";
        ByteSequence rangeKey = ByteSequence.from(range, StandardCharsets.UTF_8);
        long from = etcd.checker().getKVClient().get(rangeKey).get(10, TimeUnit.SECONDS).getHeader().getRevision();
        long lastToken = 0;
        for (int i = 0; i < 200; i++) {
            Lease l = locks.acquire(name).block(STEP);
            assertThat(l.token()).as("token of acquire %d", i).isGreaterThan(lastToken);
            lastToken = l.token();
            l.release().block(STEP);
        }
        // a marker put after the last release: once the watch replayed it, it replayed everything before
        ByteSequence marker = ByteSequence.from(range + "marker", StandardCharsets.UTF_8);
        etcd.checker().getKVClient().put(marker, ByteSequence.EMPTY).get(10, TimeUnit.SECONDS);
        etcd.checker().getKVClient().delete(marker).get(10, TimeUnit.SECONDS);
        java.util.Set<ByteSequence> put = java.util.concurrent.ConcurrentHashMap.newKeySet();
        java.util.concurrent.atomic.AtomicInteger puts = new java.util.concurrent.atomic.AtomicInteger();
        io.etcd.jetcd.Watch.Watcher w = etcd.checker().getWatchClient().watch(rangeKey,
                io.etcd.jetcd.options.WatchOption.builder().isPrefix(true).withRevision(from + 1).withNoDelete(true).build(),
                r -> r.getEvents().forEach(e -> {
                    put.add(e.getKeyValue().getKey());
                    puts.incrementAndGet();
                }));
        try {
            await().atMost(STEP).until(() -> put.contains(marker));
        } finally {
            w.close();
        }
        put.remove(marker);
        assertThat(puts.get() - 1).as("keys put (one per acquire)").isEqualTo(200);
        assertThat(put).as("distinct keys ever put under the name").hasSize(1);
    }

    /**
     * Keys are reused: a delete of an owner that left, sent late (a retried release, the clean-up of
     * an abandoned transaction), is guarded by its key's create revision and leaves the key of the
     * next owner in the same slot alone.
     */
    @Test
    void aLateDeleteOfAnOwnerThatLeftCannotDeleteTheNextOwnersKeyInTheSameSlot() throws Exception {
        EtcdLockBackend backend = etcd.backend();
        client(backend); // closes the backend after the test
        String name = name("late-delete");
        Attempt.Granted first = (Attempt.Granted) backend.tryGrant(
                new GrantRequest(name, "owner-1", Duration.ofSeconds(2), false, LockClock.system())).block(STEP);
        String key = keyOf(name, "owner-1");
        assertThat(backend.release(name, "owner-1").block(STEP)).isTrue();
        Attempt.Granted next = (Attempt.Granted) backend.tryGrant(
                new GrantRequest(name, "owner-2", Duration.ofSeconds(2), false, LockClock.system())).block(STEP);
        assertThat(keyOf(name, "owner-2")).as("the next owner's key: the same slot").isEqualTo(key);
        assertThat(next.token()).isGreaterThan(first.token());

        LockKeys deletes = new LockKeys(etcd.checker().getKVClient());
        assertThat(deletes.deleteOwned(ByteSequence.from(key, StandardCharsets.UTF_8), "owner-1", first.token()).block(STEP))
                .as("the first owner's delete, late").isFalse();
        assertThat(backend.release(name, "owner-1").block(STEP)).as("the first owner's release, again").isFalse();
        assertThat(get(key).getCreateRevision()).isEqualTo(next.token());
        assertThat(backend.inspect(name).block(STEP).owner()).isEqualTo("owner-2");
        assertThat(backend.release(name, "owner-2").block(STEP)).isTrue();
        assertThat(etcd.keys()).isEmpty();
    }

    @Test
    void closeRevokesTheSessionSoEveryKeyGoesAtOnce() {
        EtcdLockBackend backend = etcd.backend();
        LockClient locks = LockClient.create(backend, OPTIONS);
        for (int i = 0; i < 5; i++) {
            locks.acquire(name("close")).block(STEP);
        }
        assertThat(etcd.keys()).hasSize(5);
        StepVerifier.create(locks.close()).expectComplete().verify(STEP);
        assertThat(etcd.keys()).isEmpty();
        StepVerifier.create(backend.tryGrant(new GrantRequest("x", "o", Duration.ofSeconds(2), true, LockClock.system())))
                .expectError(io.reactivelocks.LockClientClosedException.class).verify(STEP);
        StepVerifier.create(Mono.defer(backend::close)).expectComplete().verify(STEP);
    }

    @Test
    void etcdAnswersArriveOnThreadsBlockHoundWatches() throws Exception {
        // so the whole suite proves that nothing blocks where etcd's answers (here: a watch event) are handled
        AtomicReference<Throwable> caught = new AtomicReference<>();
        ByteSequence key = ByteSequence.from(etcd.prefix + "-blockhound", StandardCharsets.UTF_8);
        // the watch starts from the revision after now: it is set up asynchronously, and on a loaded machine the put
        // below could land before it (the loaded run s26 saw no event so); from a revision, etcd replays the put
        long now = etcd.checker().getKVClient().get(key).get(10, TimeUnit.SECONDS).getHeader().getRevision();
        io.etcd.jetcd.Watch.Watcher w = etcd.checker().getWatchClient().watch(key,
                io.etcd.jetcd.options.WatchOption.builder().withRevision(now + 1).build(), io.etcd.jetcd.Watch.listener(r -> {
            try {
                Thread.sleep(1);
                caught.compareAndSet(null, new AssertionError("slept on " + Thread.currentThread().getName()));
            } catch (Throwable t) {
                caught.compareAndSet(null, t);
            }
        }));
        try {
            etcd.checker().getKVClient().put(key, key).get(10, TimeUnit.SECONDS);
            await().atMost(STEP).until(() -> caught.get() != null);
            assertThat(caught.get().getClass().getName()).isEqualTo("reactor.blockhound.BlockingOperationError");
        } finally {
            w.close();
            etcd.checker().getKVClient().delete(key).get(10, TimeUnit.SECONDS);
        }
    }

    @Test
    void aRevocationRequestReachesEveryWatchingEventsStreamOnceAndLeavesNoKeyNorTouchesTheQueue() {
        EtcdLockBackend asker = etcd.backend();
        try {
            String name = name("revoke");
            Lease held = client(etcd.backend()).acquire(name).block(STEP);
            List<LockEvent> seen = java.util.Collections.synchronizedList(new ArrayList<>());
            Disposable watching = asker.events(name).subscribe(seen::add);
            await().atMost(STEP).until(() -> seen.contains(new LockEvent.Subscribed(name)));

            String reason = "drain: 3:x\n\u00fc"; // the separator and a newline in the reason
            asker.revoke(name, held.owner(), reason).block(STEP); // once: a subscribed stream sees it
            LockEvent.Revoked asked = new LockEvent.Revoked(name, held.owner(), reason);
            await().atMost(STEP).until(() -> seen.contains(asked));

            assertThat(etcd.keys()).as("only the holder's key: the request's key went with its lease").hasSize(1);
            assertThat(asker.inspect(name).block(STEP).token()).isEqualTo(held.token());
            assertThat(asker.waiting(name).block(STEP)).isZero();
            assertThat(held.isValid()).isTrue();
            List<LockEvent> later = java.util.Collections.synchronizedList(new ArrayList<>());
            Disposable late = asker.events(name).subscribe(later::add);
            await().atMost(STEP).until(() -> later.contains(new LockEvent.Subscribed(name)));
            held.release().block(STEP);
            await().atMost(STEP).until(() -> seen.stream().anyMatch(e -> e instanceof LockEvent.Released));
            assertThat(seen.stream().filter(e -> e instanceof LockEvent.Revoked)).containsExactly(asked);
            assertThat(later).noneMatch(e -> e instanceof LockEvent.Revoked);
            watching.dispose();
            late.dispose();

            asker.revoke(name("nobody-listens"), "someone", "gone").block(STEP);
            assertThat(etcd.keys()).isEmpty();
        } finally {
            asker.close().block(STEP);
        }
    }
}
