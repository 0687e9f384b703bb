package io.reactivelocks.etcd;

import static org.assertj.core.api.Assertions.assertThat;

import io.etcd.jetcd.Lease;
import io.etcd.jetcd.common.exception.ErrorCode;
import io.etcd.jetcd.common.exception.EtcdExceptionFactory;
import io.etcd.jetcd.lease.LeaseGrantResponse;
import io.etcd.jetcd.lease.LeaseKeepAliveResponse;
import io.etcd.jetcd.lease.LeaseRevokeResponse;
import io.etcd.jetcd.lease.LeaseTimeToLiveResponse;
import io.etcd.jetcd.options.LeaseOption;
import io.etcd.jetcd.support.CloseableClient;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import io.reactivelocks.LockClock;
import io.reactivelocks.spi.Renewal;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.test.scheduler.VirtualTimeScheduler;

/**
 * The session's keep-alive cycle on virtual time, against a scripted jetcd {@link Lease}: each
 * renewal carries its request's send time; a lease etcd says is gone, a permanent failure or a
 * whole TTL without a confirmed keep-alive ends every listener at once; transient failures are
 * retried within the TTL.
 */
class EtcdSessionTest {

    private static final Duration TTL = Duration.ofSeconds(3);
    private final VirtualTimeScheduler vts = VirtualTimeScheduler.create();
    private final LockClock clock = LockClock.of(vts);
    private final ScriptedLease lease = new ScriptedLease();
    private final List<EtcdSession> ended = new ArrayList<>();

    @AfterEach
    void dispose() {
        vts.dispose();
    }

    private EtcdSession session() {
        EtcdLockOptions options = EtcdLockOptions.builder().sessionTtl(TTL).requestTimeout(Duration.ofSeconds(5))
                .scheduler(vts).clock(clock).build();
        EtcdSession s = new EtcdSession(7, TTL, clock.nanoTime(), lease, options, ended::add);
        s.start();
        return s;
    }

    private static final class Listener {
        final List<Renewal> renewals = new ArrayList<>();
        boolean completed;
        final Disposable subscription;

        Listener(EtcdSession s, LockClock clock) {
            subscription = s.renewals(clock).subscribe(renewals::add, e -> { }, () -> completed = true);
        }
    }

    @Test
    void eachRenewalCarriesTheSendTimeOfItsKeepAliveAndComesEveryInterval() {
        EtcdSession s = session();
        Listener l = new Listener(s, clock);
        vts.advanceTimeBy(Duration.ofSeconds(1)); // TTL/3: the first keep-alive goes out now
        assertThat(lease.pending()).isEqualTo(1);
        long sentAt = clock.nanoTime();
        vts.advanceTimeBy(Duration.ofMillis(300));
        lease.answer(3);
        assertThat(l.renewals).containsExactly(new Renewal(sentAt, TTL));
        // the next one goes out an interval after the previous send, not after the answer
        vts.advanceTimeBy(Duration.ofMillis(699));
        assertThat(lease.pending()).isZero();
        vts.advanceTimeBy(Duration.ofMillis(1));
        assertThat(lease.pending()).isEqualTo(1);
        lease.answer(3);
        assertThat(l.renewals).hasSize(2);
        assertThat(l.renewals.get(1).sentAtNanos()).isEqualTo(sentAt + TimeUnit.SECONDS.toNanos(1));
        assertThat(s.isOver()).isFalse();
    }

    @Test
    void aListenerThatJoinsWhileAKeepAliveIsInFlightDoesNotGetItsAnswer() {
        EtcdSession s = session();
        Listener early = new Listener(s, clock);
        vts.advanceTimeBy(Duration.ofSeconds(1));
        Listener late = new Listener(s, clock); // joined after the request was sent: the answer says nothing of it
        lease.answer(3);
        assertThat(early.renewals).hasSize(1);
        assertThat(late.renewals).isEmpty();
        vts.advanceTimeBy(Duration.ofSeconds(1));
        lease.answer(3);
        assertThat(late.renewals).hasSize(1);
    }

    @Test
    void etcdSayingTheLeaseIsGoneEndsEveryListenerAtOnce() {
        EtcdSession s = session();
        Listener a = new Listener(s, clock);
        Listener b = new Listener(s, clock);
        vts.advanceTimeBy(Duration.ofSeconds(1));
        lease.fail(EtcdExceptionFactory.newEtcdException(ErrorCode.NOT_FOUND, "etcdserver: requested lease not found"));
        assertThat(a.completed).isTrue();
        assertThat(b.completed).isTrue();
        assertThat(s.isOver()).isTrue();
        assertThat(ended).containsExactly(s);
        assertThat(lease.revokes.get()).isEqualTo(1);
        // a listener arriving after the end completes at once
        assertThat(new Listener(s, clock).completed).isTrue();
    }

    @Test
    void transientFailuresAreRetriedWithinTheTtlAndThenTheSessionIsLost() {
        EtcdSession s = session();
        Listener l = new Listener(s, clock);
        vts.advanceTimeBy(Duration.ofSeconds(1));
        lease.fail(Status.UNAVAILABLE.asRuntimeException());
        vts.advanceTimeBy(Duration.ofMillis(250)); // retried after interval/4
        assertThat(lease.requests.get()).isEqualTo(2);
        lease.fail(Status.UNAVAILABLE.asRuntimeException());
        assertThat(s.isOver()).isFalse();
        // nothing gets through: a whole TTL after the grant (the last confirmed send), the session is lost
        while (!s.isOver()) {
            vts.advanceTimeBy(Duration.ofMillis(250));
            while (lease.pending() > 0) {
                lease.fail(Status.UNAVAILABLE.asRuntimeException());
            }
        }
        assertThat(clock.nanoTime()).isEqualTo(TTL.toNanos());
        assertThat(l.completed).isTrue();
        assertThat(l.renewals).isEmpty();
    }

    @Test
    void anAnswerArrivingAfterTheLossIsIgnored() {
        EtcdSession s = session();
        Listener l = new Listener(s, clock);
        vts.advanceTimeBy(Duration.ofSeconds(1)); // a keep-alive goes out and hangs
        vts.advanceTimeBy(Duration.ofSeconds(2)); // TTL since the grant: lost
        assertThat(s.isOver()).isTrue();
        lease.answerAll(3);
        assertThat(l.renewals).isEmpty();
        assertThat(l.completed).isTrue();
    }

    @Test
    void aPermanentFailureEndsTheSession() {
        EtcdSession s = session();
        Listener l = new Listener(s, clock);
        vts.advanceTimeBy(Duration.ofSeconds(1));
        lease.fail(Status.PERMISSION_DENIED.asRuntimeException());
        assertThat(s.isOver()).isTrue();
        assertThat(s.endReason()).contains("PERMISSION_DENIED");
        assertThat(l.completed).isTrue();
    }

    @Test
    void confirmTimesTheConfirmationOnTheCallersClockAndAGoneLeaseIsATransientError() {
        EtcdSession s = session();
        vts.advanceTimeBy(Duration.ofMillis(100));
        List<Renewal> got = new ArrayList<>();
        LockClock other = () -> clock.nanoTime() + 1_000_000_000L; // another origin
        s.confirm(other).subscribe(got::add);
        lease.answer(3);
        assertThat(got).containsExactly(new Renewal(TimeUnit.MILLISECONDS.toNanos(100) + 1_000_000_000L, TTL));

        List<Throwable> errors = new ArrayList<>();
        s.confirm(clock).subscribe(null, errors::add);
        lease.fail(EtcdExceptionFactory.newEtcdException(ErrorCode.NOT_FOUND, "etcdserver: requested lease not found"));
        assertThat(errors).singleElement().satisfies(e ->
                assertThat(((io.reactivelocks.LockBackendException) e).isTransient()).isTrue());
        assertThat(s.isOver()).isTrue();
    }

    /** A jetcd Lease whose keep-alives the test answers by hand. */
    private static final class ScriptedLease implements Lease {
        private final List<CompletableFuture<LeaseKeepAliveResponse>> inFlight = new ArrayList<>();
        final AtomicInteger requests = new AtomicInteger();
        final AtomicInteger revokes = new AtomicInteger();

        int pending() {
            inFlight.removeIf(CompletableFuture::isDone);
            return inFlight.size();
        }

        void answer(long ttlSeconds) {
            pending();
            inFlight.remove(0).complete(new LeaseKeepAliveResponse(
                    io.etcd.jetcd.api.LeaseKeepAliveResponse.newBuilder().setID(7).setTTL(ttlSeconds).build()));
        }

        void answerAll(long ttlSeconds) {
            while (!inFlight.isEmpty()) {
                inFlight.remove(0).complete(new LeaseKeepAliveResponse(
                        io.etcd.jetcd.api.LeaseKeepAliveResponse.newBuilder().setID(7).setTTL(ttlSeconds).build()));
            }
        }

        void fail(Throwable t) {
            pending();
            inFlight.remove(0).completeExceptionally(t);
        }

        @Override
        public CompletableFuture<LeaseKeepAliveResponse> keepAliveOnce(long leaseId) {
            requests.incrementAndGet();
            CompletableFuture<LeaseKeepAliveResponse> f = new CompletableFuture<>();
            inFlight.add(f);
            return f;
        }

        @Override
        public CompletableFuture<LeaseRevokeResponse> revoke(long leaseId) {
            revokes.incrementAndGet();
            return new CompletableFuture<>();
        }

        @Override
        public CompletableFuture<LeaseGrantResponse> grant(long ttl) {
            throw new UnsupportedOperationException();
        }

        @Override
        public CompletableFuture<LeaseGrantResponse> grant(long ttl, long timeout, TimeUnit unit) {
            throw new UnsupportedOperationException();
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
