package io.reactivelocks.etcd;

import static org.assertj.core.api.Assertions.assertThat;

import io.etcd.jetcd.lease.LeaseTimeToLiveResponse;
import io.etcd.jetcd.options.LeaseOption;
import io.reactivelocks.spi.LockBackend;
import io.reactivelocks.test.UnconfirmedReleaseContract;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import reactor.core.publisher.Mono;

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
        EtcdCalls calls = etcd.callsOf((EtcdLockBackend) backend);
        assertThat(calls.granted()).as("session leases granted to the holder").hasSize(1);
        // a session that ends, lost or closed, revokes its lease: none was revoked, so none was lost
        assertThat(calls.revoked()).as("session leases the holder revoked").isEmpty();
        long lease = calls.liveLease().orElseThrow();
        LeaseTimeToLiveResponse alive = Mono.fromFuture(() -> etcd.checker().getLeaseClient().timeToLive(lease, LeaseOption.DEFAULT))
                .block(Duration.ofSeconds(10));
        assertThat(alive.getTTL()).as("what etcd says is left of the holder's session lease").isPositive();
    }
}
