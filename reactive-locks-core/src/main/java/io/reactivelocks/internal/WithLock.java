package io.reactivelocks.internal;

import io.reactivelocks.Lease;
import io.reactivelocks.LockLostException;
import io.reactivelocks.LockOptions;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.Exceptions;
import reactor.core.Fuseable;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Operators;
import reactor.util.Logger;
import reactor.util.Loggers;
import reactor.util.context.Context;

/**
 * {@code LockClient.withLock} as one operator: what {@code deferContextual} (reentrancy through
 * the Context) + {@code usingWhen(acquire, body, release, release, release)} + {@code contextWrite}
 * (the lease in the body's Context) + {@code onErrorMap} + {@code UnderLease} (the body cancelled
 * when the lease is lost, its end confirmed against the deadline) did, with one subscriber per
 * subscription instead of about fifteen objects. Not API.
 *
 * <p>Per subscription: the lease is acquired (a nested {@code withLock} on the same client and
 * name in the same chain reuses the enclosing lease and neither acquires nor releases), the body
 * runs under it with the lease in its Context, and when the body completes, fails or is cancelled
 * the lease is released; the body's value (or its error) is passed on once the release is
 * answered, a cancel does not wait for it. A cancel while acquiring cancels the acquire, which
 * gives back what its request in flight may take. A lease lost while the body runs cancels the
 * body: the result is a {@link LockLostException}, or the value if the body had produced it. A
 * release the store does not confirm (an error, no answer within the request timeout) does not
 * change the result: the body's value or error is passed on, the release error suppressed in the
 * latter; it is reported once (a WARN line, {@code LockListener.onReleaseUnconfirmed}, the client's
 * {@code unconfirmedReleaseCount}) and the lease, no longer renewed, expires by itself.
 *
 * <p>Objects per {@code withLock} beyond the acquire and the release themselves: this
 * {@code Mono}, its {@link Call} (which is also the Context's entry for the lease and its loss
 * watcher), the body's {@code Context} and the release's subscriber.
 *
 * @param <T> the body's value
 */
final class WithLock<T> extends Mono<T> {

    private static final Logger LOG = Loggers.getLogger(WithLock.class);

    private final DefaultLockClient client;
    private final String name;
    private final LockOptions options;
    private final Function<? super Lease, ? extends Mono<T>> body;

    private WithLock(DefaultLockClient client, String name, LockOptions options, Function<? super Lease, ? extends Mono<T>> body) {
        this.client = client;
        this.name = name;
        this.options = options;
        this.body = body;
    }

    /** @return the {@code withLock} of {@code client} (arguments already checked), through Reactor's assembly hooks */
    static <T> Mono<T> create(DefaultLockClient client, String name, LockOptions options,
                              Function<? super Lease, ? extends Mono<T>> body) {
        return onAssembly(new WithLock<>(client, name, options, body));
    }

    @Override
    public void subscribe(CoreSubscriber<? super T> actual) {
        Context ctx = actual.currentContext();
        HeldLocks held = HeldLocks.of(ctx);
        LeaseHandle reentered = held.get(client, name);
        Call<T> call = new Call<>(actual, body, client, held, reentered == null);
        actual.onSubscribe(call);
        if (reentered != null) {
            call.reenter(reentered, ctx); // the enclosing withLock owns the lease and releases it
        } else if (call.state == Call.ACQUIRING) {
            AcquireOperation.run(client, name, options, true, call, false);
        }
    }

    /**
     * One {@code withLock}: the downstream's subscription, the subscriber of the acquire and then
     * of the body, the lease's loss watcher and the Context's entry for the lease. The acquire
     * ends (value, then completion) before the body is subscribed, so the two never overlap.
     */
    private static final class Call<T> extends HeldLocks implements CoreSubscriber<Object>, Subscription {

        static final int ACQUIRING = 0;
        /** The body runs under the lease. */
        static final int RUNNING = 1;
        /** The body ended (or was ended by a loss); the release is under way or its answer awaits demand. */
        static final int ENDING = 2;
        static final int DONE = 3;
        static final int CANCELLED = 4;

        @SuppressWarnings("rawtypes")
        private static final AtomicIntegerFieldUpdater<Call> STATE = AtomicIntegerFieldUpdater.newUpdater(Call.class, "state");
        @SuppressWarnings("rawtypes")
        private static final AtomicIntegerFieldUpdater<Call> EMIT = AtomicIntegerFieldUpdater.newUpdater(Call.class, "emit");
        private static final int REQUESTED = 1;
        private static final int READY = 2;

        private final CoreSubscriber<? super T> actual;
        private final Function<? super Lease, ? extends Mono<T>> body;
        /** Whether this call acquired the lease (and so releases it), rather than reentering an enclosing one. */
        private final boolean owns;

        volatile int state;
        /** {@link #REQUESTED}: the downstream asked for the value; {@link #READY}: the value may be passed on. */
        private volatile int emit;
        /**
         * Whether the signals now come from the body, not the acquire; set before the body is
         * subscribed (its signals follow its subscription), by the thread that saw the acquire end.
         */
        private boolean bodyPhase;
        /** The body's Context: the caller's with this entry in it; set before {@link #RUNNING}. */
        private @Nullable Context bodyContext;
        private volatile @Nullable Subscription acquire;
        private volatile @Nullable Subscription upstream;
        /** The body's value, once confirmed under the lease. */
        private volatile @Nullable T value;
        /** The body's error, passed on once the release is answered; set before the release is subscribed. */
        private @Nullable Throwable pendingError;

        Call(CoreSubscriber<? super T> actual, Function<? super Lease, ? extends Mono<T>> body, DefaultLockClient client,
             HeldLocks outer, boolean owns) {
            super(client, outer);
            this.actual = actual;
            this.body = body;
            this.owns = owns;
        }

        @Override
        public Context currentContext() {
            Context c = bodyContext;
            return c != null ? c : actual.currentContext();
        }

        // ---- the acquire (its subscriber until it ends)

        /** The acquire ended with lease {@code h} (null: none), which this call now holds: run the body. */
        private void acquired(@Nullable LeaseHandle h) {
            if (h == null) {
                if (STATE.compareAndSet(this, ACQUIRING, DONE)) {
                    actual.onComplete();
                }
                return;
            }
            // the lease is in the body's Context as this entry: a nested withLock on its name reenters it
            if (!run(h, actual.currentContext().put(HeldLocks.KEY, this))) {
                releaseDetached(h); // the cancel came first: ours to give back
            }
        }

        void reenter(LeaseHandle h, Context context) {
            run(h, context);
        }

        // ---- the body

        /** @return false, and {@code h} not taken, when the call was cancelled before */
        private boolean run(LeaseHandle h, Context context) {
            lease = h;
            bodyContext = context;
            bodyPhase = true;
            if (!STATE.compareAndSet(this, ACQUIRING, RUNNING)) {
                return false;
            }
            // the loss first, as takeUntilOther did: a lease lost already ends the body before it starts
            if (!h.watchLoss(this)) {
                if (STATE.compareAndSet(this, RUNNING, ENDING)) {
                    end(lostError());
                }
                return true;
            }
            Mono<? extends T> m;
            try {
                m = Objects.requireNonNull(body.apply(h.snapshot()), "the withLock body returned null");
            } catch (Throwable e) {
                Exceptions.throwIfJvmFatal(e);
                if (STATE.compareAndSet(this, RUNNING, ENDING)) {
                    h.unwatchLoss(this);
                    end(e);
                }
                return true;
            }
            if (m instanceof Fuseable.ScalarCallable) {
                runScalar(m); // Mono.just, Mono.empty: no subscription to make, as Reactor's own operators do
                return true;
            }
            m.subscribe(this);
            return true;
        }

        @SuppressWarnings("unchecked")
        private void runScalar(Mono<? extends T> m) {
            T v;
            try {
                v = ((Fuseable.ScalarCallable<T>) m).call();
            } catch (Throwable e) {
                Exceptions.throwIfJvmFatal(e);
                onError(e);
                return;
            }
            if (v != null) {
                onNext(v);
            }
            onComplete();
        }

        @Override
        public void onSubscribe(Subscription s) {
            if (!bodyPhase) {
                acquire = s;
                if (state == CANCELLED) {
                    s.cancel();
                    return;
                }
                s.request(1);
                return;
            }
            if (Operators.validate(upstream, s)) {
                upstream = s;
                if (state != RUNNING) {
                    s.cancel(); // lost or cancelled before the body subscribed
                    return;
                }
                s.request(Long.MAX_VALUE);
            }
        }

        @Override
        @SuppressWarnings("unchecked")
        public void onNext(Object o) {
            if (!bodyPhase) {
                lease = (LeaseHandle) o; // the grant; the body starts when the acquire completes
                return;
            }
            T v = (T) o;
            if (state != RUNNING || value != null) {
                Operators.onDiscard(v, currentContext());
                return;
            }
            if (lease.confirmValid()) {
                value = v;
                return;
            }
            Operators.onDiscard(v, currentContext());
            if (STATE.compareAndSet(this, RUNNING, ENDING)) {
                cancelUpstream();
                lease.unwatchLoss(this);
                end(lostError());
            }
        }

        @Override
        public void onError(Throwable e) {
            if (!bodyPhase) {
                if (STATE.compareAndSet(this, ACQUIRING, DONE)) {
                    actual.onError(e); // the acquire's error, as it mapped it
                } else {
                    Operators.onErrorDropped(e, actual.currentContext());
                }
                return;
            }
            if (STATE.compareAndSet(this, RUNNING, ENDING)) {
                lease.unwatchLoss(this);
                end(e);
            } else {
                Operators.onErrorDropped(e, currentContext());
            }
        }

        @Override
        public void onComplete() {
            if (!bodyPhase) {
                acquired(lease);
                return;
            }
            if (STATE.compareAndSet(this, RUNNING, ENDING)) {
                lease.unwatchLoss(this);
                end(value != null || lease.confirmValid() ? null : lostError());
            }
        }

        /** The lease was lost while the body ran: cancel it. */
        @Override
        void onLost() {
            if (STATE.compareAndSet(this, RUNNING, ENDING)) {
                cancelUpstream();
                end(value != null ? null : lostError());
            }
        }

        private void cancelUpstream() {
            Subscription s = upstream;
            if (s != null) {
                s.cancel();
            } // else onSubscribe sees the state and cancels
        }

        private LockLostException lostError() {
            return new LockLostException(lease.name(), lease.lock.token(), String.valueOf(lease.lossReason()));
        }

        // ---- the end

        /** The body ended (state {@link #ENDING}): release the lease, then pass on the body's end. */
        private void end(@Nullable Throwable error) {
            if (!owns) {
                finish(error);
                return;
            }
            Mono<Void> release;
            try {
                release = lease.releaseNow();
            } catch (RuntimeException e) {
                if (error != null) {
                    e.addSuppressed(error);
                }
                finish(e);
                return;
            }
            if (release == null) {
                finish(error);
                return;
            }
            pendingError = error;
            release.subscribe(new Releasing(this));
        }

        void released(@Nullable Throwable releaseError) {
            Throwable error = pendingError;
            pendingError = null;
            if (releaseError != null) {
                // the work is done (or failed on its own): the release is clean-up. Renewal stopped at the
                // release, the lease expires by itself and its token is fenced, so the body's end is passed
                // on — failing work that was done would make a retrying caller apply it twice
                lease.releaseUnconfirmed(releaseError);
                if (error != null && error != releaseError) {
                    error.addSuppressed(releaseError);
                }
            }
            finish(error);
        }

        private void finish(@Nullable Throwable error) {
            if (error != null) {
                if (STATE.compareAndSet(this, ENDING, DONE)) {
                    actual.onError(error);
                } else {
                    LOG.debug("withLock on lock '{}' was cancelled before it ended with {}", lease.name(), error.toString());
                }
                return;
            }
            if (value == null) {
                if (STATE.compareAndSet(this, ENDING, DONE)) {
                    actual.onComplete();
                }
                return;
            }
            for (;;) {
                int e = emit;
                if (EMIT.compareAndSet(this, e, e | READY)) {
                    if ((e & REQUESTED) != 0) {
                        deliver();
                    }
                    return;
                }
            }
        }

        private void deliver() {
            T v = value;
            if (STATE.compareAndSet(this, ENDING, DONE)) {
                value = null;
                actual.onNext(v);
                actual.onComplete();
            }
        }

        // ---- Subscription (downstream)

        @Override
        public void request(long n) {
            if (!Operators.validate(n)) {
                return;
            }
            for (;;) {
                int e = emit;
                if ((e & REQUESTED) != 0) {
                    return;
                }
                if (EMIT.compareAndSet(this, e, e | REQUESTED)) {
                    if ((e & READY) != 0) {
                        deliver();
                    }
                    return;
                }
            }
        }

        @Override
        public void cancel() {
            for (;;) {
                int s = state;
                if (s == DONE || s == CANCELLED) {
                    return;
                }
                if (!STATE.compareAndSet(this, s, CANCELLED)) {
                    continue;
                }
                if (s == ACQUIRING) {
                    Subscription a = acquire;
                    if (a != null) {
                        a.cancel(); // the acquire gives back what its request in flight may take
                    } // else its onSubscribe sees the state and cancels
                } else if (s == RUNNING) {
                    cancelUpstream();
                    lease.unwatchLoss(this);
                    discardValue();
                    if (owns) {
                        releaseDetached(lease);
                    }
                } else {
                    discardValue(); // ENDING: the release under way goes on, close() waits for it
                }
                return;
            }
        }

        private void discardValue() {
            T v = value;
            if (v != null) {
                value = null;
                Operators.onDiscard(v, currentContext());
            }
        }

        /** Gives {@code h} back, nobody waiting for the answer (a cancel, or a grant that came after it). */
        private static void releaseDetached(LeaseHandle h) {
            Mono<Void> release = h.releaseNow();
            if (release != null) {
                release.subscribe(null, e -> LOG.warn("release of lock '{}' after a cancelled withLock failed: {}",
                        h.name(), e.toString()));
            }
        }

        /** Waits for the release's answer. */
        private static final class Releasing implements CoreSubscriber<Void> {
            private final Call<?> call;

            Releasing(Call<?> call) {
                this.call = call;
            }

            @Override
            public Context currentContext() {
                return call.actual.currentContext();
            }

            @Override
            public void onSubscribe(Subscription s) {
                s.request(Long.MAX_VALUE);
            }

            @Override
            public void onNext(Void v) {
            }

            @Override
            public void onError(Throwable e) {
                call.released(e);
            }

            @Override
            public void onComplete() {
                call.released(null);
            }
        }
    }
}
