package io.reactivelocks.etcd;

import static org.assertj.core.api.Assertions.assertThat;

import io.reactivelocks.spi.LockBackend;
import io.reactivelocks.test.UnconfirmedReleaseContract;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * The unconfirmed-release contract against a real etcd of its own, frozen with SIGSTOP. The keys
 * live on the backend's session lease, which a running client keeps alive for ever; the session
 * here (8 s) outlives the pause, and {@link #assertSessionKept} checks that it did — so the key
 * must be gone by the client's own delete (followed to its end in the driver, sent again on a
 * transient failure), not by the lease's end.
 */
class EtcdUnconfirmedReleaseContractTest extends UnconfirmedReleaseContract {

    private static final Duration SESSION_TTL = Duration.ofSeconds(8);

    private static EtcdTestSupport etcd;

    @BeforeAll
    static void startServer() {
        etcd = EtcdTestSupport.start(); // its own: this class pauses it
    }

    @AfterAll
    static void stopServer() {
        if (etcd != null) {
            etcd.close();
        }
    }

    @Override
    protected LockBackend newBackend() {
        return etcd.backend(etcd.options().mutate().sessionTtl(SESSION_TTL).build());
    }

    @Override
    protected void pauseServer() {
        etcd.server.pause();
    }

    @Override
    protected void resumeServer() {
        etcd.server.resume();
    }

    @Override
    protected List<String> storedFor(String name) {
        return etcd.keys(etcd.prefix + "/" + EtcdKeys.encode(name) + "/");
    }

    @Override
    protected void assertSessionKept(LockBackend backend) {
        EtcdLockStats stats = ((EtcdLockBackend) backend).stats();
        assertThat(stats.sessionsGranted()).as("session leases granted to the holder").isEqualTo(1);
        assertThat(stats.sessionsLost()).as("session leases the holder lost").isZero();
        assertThat(((EtcdLockBackend) backend).sessionLeaseId()).as("the holder's session lease").isPresent();
    }
}
