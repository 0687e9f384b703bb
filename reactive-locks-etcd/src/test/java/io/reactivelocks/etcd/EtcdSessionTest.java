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

    @Test
    void grantConfirmationsShareOneKeepAliveInFlightAndOneAskedWhileItIsInFlightWaitsForTheNext() {
        EtcdSession s = session();
        List<Renewal> first = new ArrayList<>();
        List<Renewal> second = new ArrayList<>();
        List<Renewal> third = new ArrayList<>();
        s.confirm(clock).subscribe(first::add);
        assertThat(lease.requests.get()).isEqualTo(1);
        long firstSent = clock.nanoTime();
        vts.advanceTimeBy(Duration.ofMillis(10));
        // asked after the keep-alive in flight was sent: that answer says nothing of these grants
        s.confirm(clock).subscribe(second::add);
        s.confirm(clock).subscribe(third::add);
        assertThat(lease.requests.get()).as("one in flight at a time").isEqualTo(1);
        lease.answer(3);
        assertThat(first).containsExactly(new Renewal(firstSent, TTL));
        assertThat(second).isEmpty();
        // the answer sent the next one at once, for both waiting grants
        assertThat(lease.requests.get()).isEqualTo(2);
        long nextSent = clock.nanoTime();
        vts.advanceTimeBy(Duration.ofMillis(10));
        lease.answer(3);
        assertThat(second).containsExactly(new Renewal(nextSent, TTL));
        assertThat(third).containsExactly(new Renewal(nextSent, TTL));
        assertThat(lease.requests.get()).isEqualTo(2);
    }

    @Test
    void aRecentConfirmationTimesAGrantWithoutARequestOnlyOnAClockReadAtItsSend() {
        EtcdSession s = session();
        LockClock other = () -> clock.nanoTime() + 5_000_000_000L;
        // a clock the session has not read at a send yet: no recent confirmation on it
        assertThat(s.recentConfirmation(other)).isNull();
        vts.advanceTimeBy(Duration.ofSeconds(1)); // the cycle's keep-alive goes out, read on `other` too
        long sent = other.nanoTime();
        lease.answer(3);
        assertThat(s.recentConfirmation(other)).isEqualTo(new Renewal(sent, TTL));
        assertThat(lease.requests.get()).isEqualTo(1);
        vts.advanceTimeBy(Duration.ofMillis(999));
        assertThat(s.recentConfirmation(other)).isEqualTo(new Renewal(sent, TTL));
        // older than the interval (TTL/3): a grant must be confirmed by a new keep-alive
        vts.advanceTimeBy(Duration.ofMillis(2)); // the next cycle is in flight, unanswered
        assertThat(s.recentConfirmation(other)).isNull();
        lease.fail(EtcdExceptionFactory.newEtcdException(ErrorCode.NOT_FOUND, "etcdserver: requested lease not found"));
        assertThat(s.recentConfirmation(other)).as("over").isNull();
    }

    @Test
    void aGrantConfirmationWaitingWhenTheSessionEndsFailsTransiently() {
        EtcdSession s = session();
        List<Throwable> errors = new ArrayList<>();
        s.confirm(clock).subscribe(null, errors::add);
        s.confirm(clock).subscribe(null, errors::add); // waits for the next keep-alive
        s.close().subscribe();
        assertThat(errors).hasSize(2).allSatisfy(e ->
                assertThat(((io.reactivelocks.LockBackendException) e).isTransient()).isTrue());
        List<Throwable> late = new ArrayList<>();
        s.confirm(clock).subscribe(null, late::add);
        assertThat(late).hasSize(1);
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
