package io.reactivelocks.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.options.LeaseOption;
import io.reactivelocks.rwlock.LockMode;
import io.reactivelocks.spi.HeldLock;
import io.reactivelocks.spi.RenewOutcome;
import io.reactivelocks.spi.RenewRequest;
import io.reactivelocks.spi.semaphore.PermitGrant;
import io.reactivelocks.test.fault.FaultProxy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The semaphore's permits and the read-write lock's grants of one lease time sit on one shared
 * lease of their stores ({@link SharedLeases}): a grant asks for no lease, a renewal of many is one
 * keep-alive and one read, a release deletes one key and never touches the others on the lease, a
 * lease gone behind the stores' back ends every key on it, and a release the server did not answer
 * is followed to its end.
 */
class EtcdSharedLeaseTest {

    private static final Duration STEP = Duration.ofSeconds(15);
    private static final Duration LEASE = Duration.ofSeconds(10);
    private static final long TTL = 10;

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

    private static long token(PermitGrant g) {
        assertThat(g).isInstanceOf(PermitGrant.Granted.class);
        return ((PermitGrant.Granted) g).tokens().get(0);
    }

    private static KeyValue get(ByteSequence key) throws Exception {
        List<KeyValue> kvs = etcd.checker().getKVClient().get(key).get(10, TimeUnit.SECONDS).getKvs();
        return kvs.isEmpty() ? null : kvs.get(0);
    }

    private static long ttlLeft(long lease) throws Exception {
        return etcd.checker().getLeaseClient().timeToLive(lease, LeaseOption.DEFAULT).get(10, TimeUnit.SECONDS).getTTL();
    }

    private static RenewRequest renewal(String name, String owner, long token) {
        return new RenewRequest(new HeldLock(name, owner, token), LEASE);
    }

    @Test
    void permitsAndGrantsOfOneLeaseTimeShareOneLeaseAndADeleteBehindTheirBackEndsOnlyThatOne() throws Exception {
        Client client = EtcdTestSupport.client(etcd.server.host(), etcd.server.port());
        SharedLeases leases = new SharedLeases(client.getLeaseClient());
        EtcdSemaphoreStore semaphores = new EtcdSemaphoreStore(client, false, etcd.prefix + "-semaphore", leases);
        EtcdReadWriteStore readWrite = new EtcdReadWriteStore(client, false, etcd.prefix + "-rw", leases);
        EtcdSemaphoreStore other = new EtcdSemaphoreStore(client, false, etcd.prefix + "-semaphore");
        try {
            List<RenewRequest> permits = new ArrayList<>();
            for (int i = 0; i < 5; i++) {
                String n = name("shared-" + i);
                permits.add(renewal(n, "owner-" + i, token(semaphores.tryGrant(n, List.of("owner-" + i), 2, false, LEASE).block(STEP))));
            }
            String rw = name("shared-rw");
            long write = token(readWrite.tryGrant(rw, "writer", LockMode.WRITE, true, false, LEASE).block(STEP));

            long lease = leases.current(TTL).id;
            for (RenewRequest r : permits) {
                assertThat(get(semaphores.key(r.lock().name(), r.lock().owner())).getLease()).as("permit of %s", r.lock().name())
                        .isEqualTo(lease);
            }
            assertThat(get(readWrite.key(rw, "writer")).getLease()).as("the write grant").isEqualTo(lease);

            List<RenewOutcome> renewed = semaphores.renew(permits).block(STEP);
            assertThat(renewed).hasSize(5).allMatch(RenewOutcome::renewed);
            assertThat(readWrite.renew(List.of(renewal(rw, "writer", write))).block(STEP)).allMatch(RenewOutcome::renewed);

            // an operator's release through another store deletes that permit's key alone: the lease lives on
            RenewRequest gone = permits.get(2);
            assertThat(other.release(gone.lock().name(), gone.lock().owner()).block(STEP)).isTrue();
            assertThat(ttlLeft(lease)).as("the shared lease").isPositive();
            renewed = semaphores.renew(permits).block(STEP);
            for (int i = 0; i < 5; i++) {
                assertThat(renewed.get(i).renewed()).as("permit %d renewed", i).isEqualTo(i != 2);
            }
            // a renewal with a token that is not the key's is not held either
            assertThat(semaphores.renew(List.of(renewal(permits.get(0).lock().name(), "owner-0", permits.get(0).lock().token() + 1)))
                    .block(STEP)).noneMatch(RenewOutcome::renewed);

            for (int i = 0; i < 5; i++) {
                assertThat(semaphores.release(permits.get(i).lock().name(), "owner-" + i).block(STEP)).as("release %d", i).isEqualTo(i != 2);
            }
            assertThat(readWrite.release(rw, "writer").block(STEP)).isTrue();
            assertThat(etcd.keys(etcd.prefix + "-")).as("keys left").isEmpty();
            assertThat(semaphores.keys().slotsInUse() + readWrite.keys().slotsInUse()).as("slots in use").isZero();
        } finally {
            semaphores.close().block(STEP);
            readWrite.close().block(STEP);
            other.close().block(STEP);
            client.close();
        }
    }

    @Test
    void aLeaseGoneBehindTheStoresBackEndsEveryKeyOnItAndTheNextGrantTakesANewOne() throws Exception {
        EtcdSemaphoreStore store = new EtcdSemaphoreStore(EtcdTestSupport.client(etcd.server.host(), etcd.server.port()), true,
                etcd.prefix + "-semaphore");
        try {
            String a = name("lost-a");
            String b = name("lost-b");
            List<RenewRequest> held = List.of(
                    renewal(a, "a", token(store.tryGrant(a, List.of("a"), 1, false, LEASE).block(STEP))),
                    renewal(b, "b", token(store.tryGrant(b, List.of("b"), 1, false, LEASE).block(STEP))));
            long lease = store.keys().leases().current(TTL).id;
            etcd.checker().getLeaseClient().revoke(lease).get(10, TimeUnit.SECONDS); // as if it ran out

            assertThat(store.renew(held).block(STEP)).as("every permit on the lease").noneMatch(RenewOutcome::renewed);
            assertThat(store.keys().leases().current(TTL)).as("the gone lease is retired").isNull();

            String c = name("lost-c");
            token(store.tryGrant(c, List.of("c"), 1, false, LEASE).block(STEP));
            long next = get(store.key(c, "c")).getLease();
            assertThat(next).as("a new lease").isNotEqualTo(lease);
            assertThat(store.release(c, "c").block(STEP)).isTrue();
            assertThat(store.release(a, "a").block(STEP)).as("gone with its lease").isFalse();
        } finally {
            store.close().block(STEP);
        }
    }

    /**
     * The release's delete is held up (the connection blackholed), its caller gives up at its
     * timeout; the delete still goes through — sent again when the connection broke — once etcd is
     * reachable, and the slot is freed then; the other permit on the same lease is not touched.
     */
    @Test
    void aReleaseItsCallerGaveUpOnIsFollowedToItsEnd() throws Exception {
        FaultProxy proxy = FaultProxy.start(etcd.server.host(), etcd.server.port());
        EtcdSemaphoreStore store = new EtcdSemaphoreStore(EtcdTestSupport.client(proxy.host(), proxy.port()), true,
                etcd.prefix + "-semaphore");
        try {
            String name = name("followed");
            long first = token(store.tryGrant(name, List.of("first"), 2, false, LEASE).block(STEP));
            long second = token(store.tryGrant(name, List.of("second"), 2, false, LEASE).block(STEP));
            ByteSequence key = store.key(name, "first");
            assertThat(get(key)).isNotNull();

            proxy.blackhole();
            assertThatThrownBy(() -> store.release(name, "first").block(Duration.ofMillis(500)))
                    .as("the caller gives up").hasMessageContaining("Timeout");
            assertThat(get(key)).as("held up").isNotNull();
            proxy.cutConnections();
            proxy.heal();

            await().atMost(STEP).until(() -> get(key) == null);
            await().atMost(STEP).until(() -> store.keys().slotsInUse() == 1);
            assertThat(store.renew(List.of(renewal(name, "second", second), renewal(name, "first", first))).block(STEP))
                    .extracting(RenewOutcome::renewed).containsExactly(true, false);
            assertThat(store.release(name, "second").block(STEP)).isTrue();
            // the release's first delete was a plain one whose answer was lost (a copy could run late): its slot is
            // retired, so the next permit of the name goes to another key
            token(store.tryGrant(name, List.of("third"), 2, false, LEASE).block(STEP));
            assertThat(store.key(name, "third")).as("the next permit's key").isNotEqualTo(key);
            assertThat(store.release(name, "third").block(STEP)).isTrue();
            assertThat(etcd.keys(etcd.prefix + "-semaphore/")).as("keys left").isEmpty();
        } finally {
            proxy.heal();
            store.close().block(STEP);
            proxy.close();
        }
    }
}
