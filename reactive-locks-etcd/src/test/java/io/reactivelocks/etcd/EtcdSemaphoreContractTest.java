package io.reactivelocks.etcd;

import static org.assertj.core.api.Assertions.assertThat;

import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.options.GetOption;
import io.reactivelocks.Lease;
import io.reactivelocks.LockBackendException;
import io.reactivelocks.LockOptions;
import io.reactivelocks.LockStore;
import io.reactivelocks.semaphore.Semaphore;
import io.reactivelocks.spi.semaphore.SemaphoreStore;
import io.reactivelocks.test.SemaphoreContract;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/**
 * The semaphore contract against a real etcd (leases of whole seconds: the suite's lease time is
 * 2 s), plus the etcd specifics: one key per permit on its own lease, the k keys of a request put as
 * one unit (one create revision), the token {@code revision * 65536 + index}.
 */
class EtcdSemaphoreContractTest extends SemaphoreContract {

    private static EtcdTestSupport etcd;
    private static Client inspector;

    @BeforeAll
    static void startServer() {
        etcd = EtcdTestSupport.start();
        inspector = EtcdTestSupport.client(etcd.server.host(), etcd.server.port());
    }

    @AfterAll
    static void stopServer() {
        if (inspector != null) {
            inspector.close();
        }
        if (etcd != null) {
            etcd.close();
        }
    }

    @Override
    protected SemaphoreStore newStore() {
        return new EtcdSemaphoreStore(EtcdTestSupport.client(etcd.server.host(), etcd.server.port()), true,
                etcd.prefix + "-semaphore");
    }

    @Override
    protected LockOptions options() {
        return super.options().mutate().leaseTime(Duration.ofSeconds(2)).build();
    }

    @Test
    void theKPermitsOfARequestAreOneUnitOfKeysOnTheStoresSharedLease() {
        Client c = EtcdTestSupport.client(etcd.server.host(), etcd.server.port());
        LockStore session = EtcdLocks.connect(c, etcd.options());
        Semaphore s = session.semaphores(options());
        try {
            String name = name("keys");
            List<Lease> both = s.acquire(name, 3, 2, options()).block(STEP);
            EtcdSemaphoreStore store = new EtcdSemaphoreStore(c, false, etcd.prefix + "-semaphore");
            List<KeyValue> kvs = new ArrayList<>();
            for (Lease l : both) {
                KeyValue got = store.find(name, l.owner()).block(STEP); // the key whose value names the owner
                assertThat(got).isNotNull();
                kvs.add(got);
            }
            long revision = kvs.get(0).getCreateRevision();
            assertThat(kvs.get(1).getCreateRevision()).as("put in one transaction").isEqualTo(revision);
            for (int i = 0; i < 2; i++) {
                assertThat(both.get(i).token()).as("token of permit %d", i).isEqualTo(revision * 65536 + i);
                assertThat(kvs.get(i).getValue().toString(StandardCharsets.US_ASCII)).isEqualTo(both.get(i).owner() + "\n3:" + i);
                assertThat(kvs.get(i).getLease()).as("on a lease").isNotZero();
            }
            assertThat(kvs.get(0).getLease()).as("one lease for both").isEqualTo(kvs.get(1).getLease());
            assertThat(both.get(0).owner()).isNotEqualTo(both.get(1).owner());
            // one permit of the unit released alone frees its place at once: a single permit fits beside the other
            both.get(0).release().block(STEP);
            List<Lease> two = s.tryAcquire(name, 3, 2, options()).block(STEP);
            assertThat(two).as("2 of 3 while 1 is out").hasSize(2);
            assertThat(two.get(0).token()).isGreaterThan(both.get(1).token());
            assertThat(store.holders(name).block(STEP)).extracting(h -> h.owner())
                    .containsExactly(both.get(1).owner(), two.get(0).owner(), two.get(1).owner());
            two.forEach(l -> l.release().block(STEP));
            both.get(1).release().block(STEP);
        } finally {
            session.close().block(STEP);
            c.close();
        }
    }

    @Test
    void moreThan65535PermitsAtOnceAreRefused() {
        EtcdSemaphoreStore store = (EtcdSemaphoreStore) newStore();
        try {
            List<String> owners = java.util.Collections.nCopies(65536, "o");
            StepVerifier.create(store.tryGrant(name("big"), owners, 70_000, true, options().leaseTime()))
                    .expectErrorSatisfies(e -> assertThat(e).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("count"))
                    .verify(STEP);
            // and the semaphore refuses it at call time, naming the argument
            org.assertj.core.api.Assertions.assertThatThrownBy(() -> io.reactivelocks.semaphore.Semaphore.create(newStore())
                            .acquire(name("big"), 70_000, 65_536, options()))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("count must be at most 65535");
        } finally {
            store.close().block(STEP);
        }
    }

    /** etcd takes at most {@code --max-txn-ops} (128 by default) operations per transaction: a larger unit fails at once, clearly. */
    @Test
    void aUnitAboveEtcdsTransactionLimitFailsWithoutWaitingOrLeavingKeys() {
        Semaphore s = newSemaphore();
        StepVerifier.create(s.acquire(name("huge"), 200, 130, options()))
                .expectErrorSatisfies(e -> assertThat(e).isInstanceOf(LockBackendException.class)
                        .hasMessageContaining("too many operations"))
                .verify(STEP);
    }

    /** etcd's own count ({@code grpc_server_msg_received_total}, keep-alives included). */
    @Override
    protected long serverRequests() {
        return etcd.requestsReceived();
    }

    /** Per handoff: the release (a revoke), the next waiter's read and the close of its watch; spare: one. */
    @Override
    protected int requestsPerHandoff() {
        return 4;
    }

    /** The store's revision: every write on the server. */
    @Override
    protected long serverChanges(String name) {
        return revision(inspector);
    }

    private static long revision(Client c) {
        return Mono.fromFuture(() -> c.getKVClient().get(io.etcd.jetcd.ByteSequence.from(new byte[] {0}))).block(STEP)
                .getHeader().getRevision();
    }
}
