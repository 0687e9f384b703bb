package io.reactivelocks.etcd;

import static org.assertj.core.api.Assertions.assertThat;

import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.options.GetOption;
import io.reactivelocks.Lease;
import io.reactivelocks.LockOptions;
import io.reactivelocks.semaphore.Semaphore;
import io.reactivelocks.spi.semaphore.SemaphoreStore;
import io.reactivelocks.test.SemaphoreContract;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

/**
 * The semaphore contract against a real etcd (leases of whole seconds: the suite's lease time is
 * 2 s), plus the etcd specifics: one key per permit on its own lease, the create revision as token.
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
    void eachPermitIsAKeyOnItsOwnLeaseAndTheTokenIsItsCreateRevision() {
        Client c = EtcdTestSupport.client(etcd.server.host(), etcd.server.port());
        Semaphore s = EtcdLocks.semaphore(c, etcd.options(), options());
        try {
            String name = name("keys");
            List<Lease> both = s.acquire(name, 3, 2, options()).block(STEP);
            EtcdSemaphoreStore store = new EtcdSemaphoreStore(c, false, etcd.prefix + "-semaphore");
            for (Lease l : both) {
                List<KeyValue> kvs = Mono.fromFuture(() -> c.getKVClient().get(store.key(name, l.owner()), GetOption.DEFAULT))
                        .block(STEP).getKvs();
                assertThat(kvs).hasSize(1);
                assertThat(kvs.get(0).getCreateRevision()).isEqualTo(l.token());
                assertThat(kvs.get(0).getLease()).as("on a lease").isNotZero();
            }
            assertThat(both.get(0).owner()).isNotEqualTo(both.get(1).owner());
            both.forEach(l -> l.release().block(STEP));
        } finally {
            s.close().block(STEP);
            c.close();
        }
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
