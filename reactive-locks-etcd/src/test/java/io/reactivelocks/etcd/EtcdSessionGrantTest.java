package io.reactivelocks.etcd;

import static org.assertj.core.api.Assertions.assertThat;

import io.etcd.jetcd.Lease;
import io.etcd.jetcd.lease.LeaseGrantResponse;
import io.etcd.jetcd.lease.LeaseKeepAliveResponse;
import io.etcd.jetcd.lease.LeaseRevokeResponse;
import io.etcd.jetcd.lease.LeaseTimeToLiveResponse;
import io.etcd.jetcd.options.LeaseOption;
import io.etcd.jetcd.support.CloseableClient;
import io.grpc.stub.StreamObserver;
import io.reactivelocks.LockBackendException;
import io.reactivelocks.LockClientClosedException;
import io.reactivelocks.LockClock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.test.scheduler.VirtualTimeScheduler;

/**
 * A session lease whose grant is answered only after a whole TTL (a partition that healed while
 * the grant was in flight) is over as soon as it arrives. That is a transient failure of the
 * acquire that asked for it — the next attempt grants a new lease — not "the client is closed",
 * which the engine treats as final (the demo on etcd failed with it after its frozen instance's
 * partition healed).
 */
class EtcdSessionGrantTest {

    private static final Duration TTL = Duration.ofSeconds(2);
    private final VirtualTimeScheduler vts = VirtualTimeScheduler.create();
    private final ScriptedGrants lease = new ScriptedGrants();
    /** The backend's session leases (what {@link EtcdLockBackend} grants its sessions through) on the scripted lease client. */
    private final SessionLeases sessions = new SessionLeases(lease, EtcdLockOptions.builder()
            .sessionTtl(TTL).requestTimeout(Duration.ofSeconds(10)).scheduler(vts).clock(LockClock.of(vts)).build());

    @AfterEach
    void dispose() {
        vts.dispose();
    }

    @Test
    void aGrantAnsweredAfterItsTtlIsATransientFailureAndTheNextAttemptGrantsANewLease() {
        List<Throwable> errors = new ArrayList<>();
        sessions.session().subscribe(s -> { }, errors::add);
        vts.advanceTimeBy(Duration.ofMillis(2500)); // the answer comes a whole TTL after the request was sent
        lease.answer(1, TTL);
        assertThat(errors).singleElement().isInstanceOfSatisfying(LockBackendException.class, e -> {
            assertThat(e.isTransient()).isTrue();
            assertThat(e.getMessage()).contains("over at once");
        });
        EtcdSession none = sessions.current();
        assertThat(none == null || none.isOver()).as("no live session after a grant over at once").isTrue();

        List<EtcdSession> granted = new ArrayList<>();
        sessions.session().subscribe(granted::add);
        lease.answer(2, TTL);
        assertThat(granted).singleElement().satisfies(s -> {
            assertThat(s.leaseId).isEqualTo(2);
            assertThat(s.isOver()).isFalse();
        });
    }

    @Test
    void aGrantAnsweredAfterTheBackendClosedIsStillClientClosed() {
        List<Throwable> errors = new ArrayList<>();
        sessions.session().subscribe(s -> { }, errors::add);
        assertThat(sessions.close()).as("no session was live yet").isNull(); // what the backend's close does first
        lease.answer(1, TTL);
        assertThat(errors).singleElement().isInstanceOf(LockClientClosedException.class);
        assertThat(lease.revokes).containsExactly(1L);
    }

    /** A jetcd Lease whose grants the test answers by hand; keep-alives are never answered. */
    private static final class ScriptedGrants implements Lease {
        private final List<CompletableFuture<LeaseGrantResponse>> grants = new ArrayList<>();
        final List<Long> revokes = new ArrayList<>();

        void answer(long id, Duration ttl) {
            grants.remove(0).complete(new LeaseGrantResponse(io.etcd.jetcd.api.LeaseGrantResponse.newBuilder()
                    .setID(id).setTTL(ttl.toSeconds()).build()));
        }

        @Override
        public CompletableFuture<LeaseGrantResponse> grant(long ttl) {
            CompletableFuture<LeaseGrantResponse> f = new CompletableFuture<>();
            grants.add(f);
            return f;
        }

        @Override
        public CompletableFuture<LeaseGrantResponse> grant(long ttl, long timeout, TimeUnit unit) {
            return grant(ttl);
        }

        @Override
        public CompletableFuture<LeaseRevokeResponse> revoke(long leaseId) {
            revokes.add(leaseId);
            return new CompletableFuture<>();
        }

        @Override
        public CompletableFuture<LeaseKeepAliveResponse> keepAliveOnce(long leaseId) {
            return new CompletableFuture<>();
        }

        @Override
        public CompletableFuture<LeaseTimeToLiveResponse> timeToLive(long leaseId, LeaseOption leaseOption) {
            throw new UnsupportedOperationException();
        }

        @Override
        public CloseableClient keepAlive(long leaseId, StreamObserver<LeaseKeepAliveResponse> observer) {
            throw new UnsupportedOperationException();
        }

        @Override
        public void close() {
        }
    }
}
