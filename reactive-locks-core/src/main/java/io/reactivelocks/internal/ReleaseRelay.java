package io.reactivelocks.internal;

import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.util.context.Context;

/**
 * Passes the store's release on to the caller — but a caller that cancels only stops listening:
 * the release goes on (the lease is released here already, and a release cancelled before it was
 * sent would leave the lock held on the store until its TTL), still registered with the clean-up
 * that {@code close()} waits for, and bounded by the request timeout.
 */
final class ReleaseRelay implements CoreSubscriber<Void>, Subscription {
    private final CoreSubscriber<? super Void> actual;
    private volatile boolean cancelled;

    ReleaseRelay(CoreSubscriber<? super Void> actual) {
        this.actual = actual;
    }

    @Override
    public Context currentContext() {
        return actual.currentContext();
    }

    @Override
    public void onSubscribe(Subscription s) {
        actual.onSubscribe(this);
        s.request(Long.MAX_VALUE);
    }

    @Override
    public void onNext(Void v) {
        // a Mono<Void> emits no value
    }

    @Override
    public void onError(Throwable e) {
        if (!cancelled) {
            actual.onError(e);
        }
    }

    @Override
    public void onComplete() {
        if (!cancelled) {
            actual.onComplete();
        }
    }

    @Override
    public void request(long n) {
        // the release is sent whatever the demand
    }

    @Override
    public void cancel() {
        cancelled = true;
    }
}
