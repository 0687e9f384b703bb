package io.reactivelocks.internal;

import io.reactivelocks.LockLostException;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Operators;
import reactor.util.context.Context;

/**
 * A {@code withLock} body run under its lease, as one operator: what
 * {@code body.takeUntilOther(lease.lost()).flatMap(confirm).switchIfEmpty(defer(confirm))} did.
 * The body is cancelled when the lease is lost; a body that ends (with or without a value) after
 * the lease's deadline passed — before the deadline timer could act — fails with
 * {@link LockLostException} too. Not API.
 *
 * @param <T> the body's value
 */
final class UnderLease<T> extends Mono<T> {

    private final Mono<T> body;
    private final LeaseHandle lease;

    UnderLease(Mono<T> body, LeaseHandle lease) {
        this.body = body;
        this.lease = lease;
    }

    @Override
    public void subscribe(CoreSubscriber<? super T> actual) {
        Run<T> run = new Run<>(actual, lease);
        actual.onSubscribe(run);
        // the loss first, as takeUntilOther did: a lease lost already ends the body before it starts
        lease.lost().subscribe(run.loss);
        if (run.ended == 0) {
            body.subscribe(run);
        }
    }

    private static final class Run<T> implements CoreSubscriber<T>, Subscription {
        @SuppressWarnings("rawtypes")
        private static final AtomicIntegerFieldUpdater<Run> ENDED = AtomicIntegerFieldUpdater.newUpdater(Run.class, "ended");

        private final CoreSubscriber<? super T> actual;
        private final LeaseHandle lease;
        final Loss loss = new Loss();
        volatile int ended;
        private volatile Subscription upstream;
        private volatile boolean cancelledEarly;
        /** A value was passed on: a loss from now on only completes. */
        private volatile boolean delivered;

        Run(CoreSubscriber<? super T> actual, LeaseHandle lease) {
            this.actual = actual;
            this.lease = lease;
        }

        @Override
        public Context currentContext() {
            return actual.currentContext();
        }

        @Override
        public void onSubscribe(Subscription s) {
            if (Operators.validate(upstream, s)) {
                upstream = s;
                if (ended != 0 || cancelledEarly) {
                    s.cancel();
                    return;
                }
                s.request(Long.MAX_VALUE);
            }
        }

        @Override
        public void onNext(T value) {
            if (ended != 0 || delivered) {
                Operators.onDiscard(value, actual.currentContext());
                return;
            }
            if (lease.confirmValid()) {
                delivered = true;
                actual.onNext(value);
                return;
            }
            if (ENDED.compareAndSet(this, 0, 1)) {
                cancelUpstream();
                loss.dispose();
                actual.onError(lostError());
            }
        }

        @Override
        public void onError(Throwable e) {
            if (ENDED.compareAndSet(this, 0, 1)) {
                loss.dispose();
                actual.onError(e);
            } else {
                Operators.onErrorDropped(e, actual.currentContext());
            }
        }

        @Override
        public void onComplete() {
            if (!ENDED.compareAndSet(this, 0, 1)) {
                return;
            }
            loss.dispose();
            if (delivered || lease.confirmValid()) {
                actual.onComplete();
            } else {
                actual.onError(lostError());
            }
        }

        /** The lease was lost while the body ran: cancel it. */
        void onLost() {
            if (!ENDED.compareAndSet(this, 0, 1)) {
                return;
            }
            cancelUpstream();
            if (delivered) {
                actual.onComplete();
            } else {
                actual.onError(lostError());
            }
        }

        @Override
        public void request(long n) {
            // the body is asked for everything at once: a Mono has at most one value
        }

        @Override
        public void cancel() {
            if (ENDED.compareAndSet(this, 0, 1)) {
                cancelledEarly = true;
                cancelUpstream();
                loss.dispose();
            }
        }

        private void cancelUpstream() {
            Subscription s = upstream;
            if (s != null) {
                s.cancel();
            } else {
                cancelledEarly = true;
            }
        }

        private LockLostException lostError() {
            return new LockLostException(lease.name(), lease.lock.token(), String.valueOf(lease.lossReason()));
        }

        /** Watches the lease's loss signal. */
        final class Loss implements CoreSubscriber<Void> {
            private volatile Subscription s;
            private volatile boolean disposed;

            @Override
            public Context currentContext() {
                return actual.currentContext();
            }

            @Override
            public void onSubscribe(Subscription sub) {
                s = sub;
                if (disposed) {
                    sub.cancel();
                    return;
                }
                sub.request(Long.MAX_VALUE);
            }

            @Override
            public void onNext(Void v) {
            }

            @Override
            public void onError(Throwable e) {
                onLost();
            }

            @Override
            public void onComplete() {
                if (!disposed) {
                    onLost();
                }
            }

            void dispose() {
                disposed = true;
                Subscription sub = s;
                if (sub != null) {
                    sub.cancel();
                }
            }
        }
    }
}
