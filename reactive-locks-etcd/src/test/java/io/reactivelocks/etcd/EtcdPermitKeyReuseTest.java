package io.reactivelocks.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.Watch;
import io.etcd.jetcd.options.WatchOption;
import io.reactivelocks.rwlock.LockMode;
import io.reactivelocks.spi.LockEvent;
import io.reactivelocks.spi.semaphore.PermitGrant;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;

/**
 * The semaphore's permits and the read-write lock's grants reuse their keys: etcd keeps every
 * deleted key in its index until a compaction and every read of a name's range visits them, so a
 * store acquiring one name over and over must not leave a new deleted key behind each time. Keys
 * are slots of a store ({@code <id>-<slot>}), tokens still grow, and a late release of an owner that
 * left cannot delete the key of the next owner in the same slot.
 */
class EtcdPermitKeyReuseTest {

    private static final Duration STEP = Duration.ofSeconds(10);
    private static final Duration LEASE = Duration.ofSeconds(10);

    private static EtcdTestSupport etcd;

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

    private static String name(String p) {
        return p + "-" + UUID.randomUUID();
    }

    private static EtcdSemaphoreStore semaphores() {
        return new EtcdSemaphoreStore(EtcdTestSupport.client(etcd.server.host(), etcd.server.port()), true, etcd.prefix + "-semaphore");
    }

    private static EtcdReadWriteStore readWrite() {
        return new EtcdReadWriteStore(EtcdTestSupport.client(etcd.server.host(), etcd.server.port()), true, etcd.prefix + "-rw");
    }

    private static long revision() throws Exception {
        return etcd.checker().getKVClient().get(ByteSequence.from(etcd.prefix, StandardCharsets.UTF_8))
                .get(10, TimeUnit.SECONDS).getHeader().getRevision();
    }

    private static KeyValue get(ByteSequence key) throws Exception {
        List<KeyValue> kvs = etcd.checker().getKVClient().get(key).get(10, TimeUnit.SECONDS).getKvs();
        return kvs.isEmpty() ? null : kvs.get(0);
    }

    /**
     * @return every distinct key put under {@code range} since revision {@code from}, replayed by a
     *         watch; {@code puts} gets how many puts there were
     */
    private static Set<ByteSequence> keysPut(String range, long from, AtomicInteger puts) throws Exception {
        ByteSequence rangeKey = ByteSequence.from(range, StandardCharsets.UTF_8);
        // a marker put after the last release: once the watch replayed it, it replayed everything before
        ByteSequence marker = ByteSequence.from(range + "marker", StandardCharsets.UTF_8);
        etcd.checker().getKVClient().put(marker, ByteSequence.EMPTY).get(10, TimeUnit.SECONDS);
        etcd.checker().getKVClient().delete(marker).get(10, TimeUnit.SECONDS);
        Set<ByteSequence> put = ConcurrentHashMap.newKeySet();
        Watch.Watcher w = etcd.checker().getWatchClient().watch(rangeKey,
                WatchOption.builder().isPrefix(true).withRevision(from + 1).withNoDelete(true).build(),
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
        puts.decrementAndGet();
        return put;
    }

    private static List<Long> granted(PermitGrant g) {
        assertThat(g).isInstanceOf(PermitGrant.Granted.class);
        return ((PermitGrant.Granted) g).tokens();
    }

    /** 200 acquires of 2 of 3 permits, each released: 2 keys ever put (one per permit of the unit), tokens growing. */
    @Test
    void acquiringPermitsOfANameOverAndOverReusesTheirKeysWithGrowingTokens() throws Exception {
        EtcdSemaphoreStore store = semaphores();
        try {
            String name = name("sem-reuse");
            long from = revision();
            long last = 0;
            for (int i = 0; i < 200; i++) {
                List<String> owners = List.of("a-" + i, "b-" + i);
                List<Long> tokens = granted(store.tryGrant(name, owners, 3, false, LEASE).block(STEP));
                assertThat(tokens).hasSize(2);
                assertThat(tokens.get(0)).as("token of acquire %d", i).isGreaterThan(last);
                assertThat(tokens.get(1)).isGreaterThan(tokens.get(0));
                last = tokens.get(1);
                assertThat(store.release(name, owners.get(0)).block(STEP)).isTrue();
                assertThat(store.release(name, owners.get(1)).block(STEP)).isTrue();
            }
            AtomicInteger puts = new AtomicInteger();
            Set<ByteSequence> put = keysPut(etcd.prefix + "-semaphore/" + EtcdKeys.encode(name) + "/", from, puts);
            assertThat(puts.get()).as("keys put (two per acquire)").isEqualTo(400);
            assertThat(put).as("distinct keys ever put under the name").hasSize(2);
            assertThat(store.keys().slotsInUse()).as("slots left reserved").isZero();
            assertThat(etcd.keys(etcd.prefix + "-semaphore/")).as("keys left").isEmpty();
        } finally {
            store.close().block(STEP);
        }
    }

    /** 200 read grants and 200 write grants of a name, each released: one key each, tokens growing. */
    @Test
    void readAndWriteGrantsOfANameOverAndOverReuseOneKeyWithGrowingTokens() throws Exception {
        EtcdReadWriteStore store = readWrite();
        try {
            for (LockMode mode : LockMode.values()) {
                String name = name("rw-reuse-" + mode);
                long from = revision();
                long last = 0;
                for (int i = 0; i < 200; i++) {
                    String owner = mode + "-" + i;
                    List<Long> tokens = granted(store.tryGrant(name, owner, mode, true, true, LEASE).block(STEP));
                    assertThat(tokens.get(0)).as("%s token of acquire %d", mode, i).isGreaterThan(last);
                    last = tokens.get(0);
                    assertThat(store.release(name, owner).block(STEP)).isTrue();
                }
                AtomicInteger puts = new AtomicInteger();
                Set<ByteSequence> put = keysPut(etcd.prefix + "-rw/" + EtcdKeys.encode(name) + "/", from, puts);
                assertThat(puts.get()).as("%s keys put (one per acquire)", mode).isEqualTo(200);
                assertThat(put).as("distinct %s keys ever put under the name", mode).hasSize(1);
            }
            assertThat(store.keys().slotsInUse()).as("slots left reserved").isZero();
            assertThat(etcd.keys(etcd.prefix + "-rw/")).as("keys left").isEmpty();
        } finally {
            store.close().block(STEP);
        }
    }

    /**
     * A permit's key is reused by the next owner: a late release of the owner that left — by the
     * same store, or by another store (found by a read) — leaves the next owner's key alone: both keys
     * are on the store's one shared lease, and every delete is guarded by the key's create revision.
     */
    @Test
    void aLateReleaseOfAPermitThatLeftCannotDeleteTheNextOwnersKeyInTheSameSlot() throws Exception {
        EtcdSemaphoreStore store = semaphores();
        EtcdSemaphoreStore other = semaphores();
        try {
            String name = name("sem-late");
            long first = granted(store.tryGrant(name, List.of("owner-1"), 1, false, LEASE).block(STEP)).get(0);
            ByteSequence key = store.key(name, "owner-1");
            long firstLease = get(key).getLease();
            assertThat(firstLease).as("on a lease").isNotZero();
            assertThat(store.release(name, "owner-1").block(STEP)).isTrue();
            long next = granted(store.tryGrant(name, List.of("owner-2"), 1, false, LEASE).block(STEP)).get(0);
            assertThat(store.key(name, "owner-2")).as("the next owner's key: the same slot").isEqualTo(key);
            assertThat(next).isGreaterThan(first);

            assertThat(get(key).getLease()).as("the next owner's key: on the same shared lease").isEqualTo(firstLease);
            lateReleases(key, () -> store.release(name, "owner-1").block(STEP),
                    () -> other.release(name, "owner-1").block(STEP));
            assertThat(EtcdPermitKeys.token(get(key))).isEqualTo(next);
            assertThat(store.holders(name).block(STEP)).extracting(h -> h.owner()).containsExactly("owner-2");
            assertThat(store.release(name, "owner-2").block(STEP)).isTrue();
            assertThat(get(key)).isNull();
        } finally {
            store.close().block(STEP);
            other.close().block(STEP);
        }
    }

    /** The same for the read-write lock's grants. */
    @Test
    void aLateReleaseOfAGrantThatLeftCannotDeleteTheNextOwnersKeyInTheSameSlot() throws Exception {
        EtcdReadWriteStore store = readWrite();
        EtcdReadWriteStore other = readWrite();
        try {
            String name = name("rw-late");
            long first = granted(store.tryGrant(name, "owner-1", LockMode.WRITE, true, false, LEASE).block(STEP)).get(0);
            ByteSequence key = store.key(name, "owner-1");
            long firstLease = get(key).getLease();
            assertThat(firstLease).as("on a lease").isNotZero();
            assertThat(store.release(name, "owner-1").block(STEP)).isTrue();
            long next = granted(store.tryGrant(name, "owner-2", LockMode.WRITE, true, false, LEASE).block(STEP)).get(0);
            assertThat(store.key(name, "owner-2")).as("the next owner's key: the same slot").isEqualTo(key);
            assertThat(next).isGreaterThan(first);

            assertThat(get(key).getLease()).as("the next owner's key: on the same shared lease").isEqualTo(firstLease);
            lateReleases(key, () -> store.release(name, "owner-1").block(STEP),
                    () -> other.release(name, "owner-1").block(STEP));
            assertThat(get(key).getCreateRevision()).isEqualTo(next);
            assertThat(store.holders(name).block(STEP).writer().owner()).isEqualTo("owner-2");
            assertThat(store.release(name, "owner-2").block(STEP)).isTrue();
            assertThat(get(key)).isNull();
        } finally {
            store.close().block(STEP);
            other.close().block(STEP);
        }
    }

    /**
     * The owner is in the value, not the key: a change stream names it on a put from the key's value
     * and on a delete from the previous value (the watch asks for it).
     */
    @Test
    void changeStreamsNameTheOwnerFromTheValueOnAPutAndADelete() {
        EtcdSemaphoreStore semaphores = semaphores();
        EtcdReadWriteStore readWrite = readWrite();
        List<LockEvent> seen = Collections.synchronizedList(new ArrayList<>());
        String name = name("events");
        Disposable watching = semaphores.events(name).mergeWith(readWrite.events(name)).subscribe(seen::add);
        try {
            await().atMost(STEP).until(() -> seen.stream().filter(e -> e instanceof LockEvent.Subscribed).count() >= 2);
            long permit = granted(semaphores.tryGrant(name, List.of("permit-owner"), 1, false, LEASE).block(STEP)).get(0);
            long write = granted(readWrite.tryGrant(name, "write-owner", LockMode.WRITE, true, false, LEASE).block(STEP)).get(0);
            assertThat(semaphores.release(name, "permit-owner").block(STEP)).isTrue();
            assertThat(readWrite.release(name, "write-owner").block(STEP)).isTrue();
            await().atMost(STEP).until(() -> seen.containsAll(List.of(
                    new LockEvent.Acquired(name, "permit-owner", permit), new LockEvent.Released(name, "permit-owner", false),
                    new LockEvent.Acquired(name, "write-owner", write), new LockEvent.Released(name, "write-owner", false))));
        } finally {
            watching.dispose();
            semaphores.close().block(STEP);
            readWrite.close().block(STEP);
        }
    }

    private static void lateReleases(ByteSequence key, Supplier<Boolean> again, Supplier<Boolean> byAnother) throws Exception {
        assertThat(again.get()).as("the first owner's release, again").isFalse();
        assertThat(byAnother.get()).as("the first owner's release, by another store").isFalse();
        assertThat(get(key)).as("the next owner's key").isNotNull();
    }
}
