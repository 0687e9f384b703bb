package io.reactivelocks.etcd;

import static org.assertj.core.api.Assertions.assertThat;

import io.reactivelocks.LockClient;
import io.reactivelocks.LockClock;
import io.reactivelocks.spi.Attempt;
import io.reactivelocks.spi.GrantRequest;
import io.reactivelocks.test.FairLockContract;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;

/**
 * The fair lock contract against a real etcd, whose lock queues natively: one key per owner
 * under the name, the lowest create revision holds, each waiter watches its predecessor only.
 * The session's {@code locks} are its fair lock on etcd ({@link EtcdLocks#connect(io.etcd.jetcd.Client)}).
 */
class EtcdFairLockContractTest extends FairLockContract {

    private static EtcdTestSupport etcd;
    private final List<EtcdLockBackend> abandoned = new ArrayList<>();

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

    @BeforeEach
    void closeProxiesOfThePreviousTest() {
        etcd.closeProxies();
    }

    @AfterEach
    void closeAbandoned() {
        // healed first: its session is gone on the server by now, and a close through a blackhole waits
        abandoned.forEach(b -> etcd.proxyOf(b).heal());
        abandoned.forEach(b -> b.close().onErrorResume(e -> reactor.core.publisher.Mono.empty()).block(STEP));
        abandoned.clear();
    }

    @Override
    protected LockClient newClient() {
        return LockClient.create(etcd.backend(), options()); // as a session's locks, with a jetcd client the backend owns
    }

    @Override
    protected int waiting(String name) {
        int keys = etcd.keys(etcd.prefix + "/" + EtcdKeys.encode(name) + "/").size();
        return Math.max(0, keys - 1);
    }

    /** A queued key of a client whose connection is then blackholed: its lease runs out by its TTL on the server. */
    @Override
    protected void enqueueAbandonedWaiter(String name) {
        EtcdLockBackend b = etcd.proxiedBackend();
        abandoned.add(b);
        Attempt a = b.tryGrant(new GrantRequest(name, GrantRequest.newOwner(), options().leaseTime(), true,
                LockClock.system())).block(STEP);
        assertThat(a).isInstanceOf(Attempt.Queued.class);
        etcd.proxyOf(b).blackhole();
    }

    @Override
    protected void assertNothingLeft(String name) {
        assertThat(etcd.keys(etcd.prefix + "/" + EtcdKeys.encode(name) + "/")).as("keys of '%s' left", name).isEmpty();
    }
}
