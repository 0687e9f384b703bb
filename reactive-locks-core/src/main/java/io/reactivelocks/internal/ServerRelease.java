package io.reactivelocks.internal;

import io.reactivelocks.LockOptions;
import io.reactivelocks.spi.BackendErrors;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Operators;
import reactor.util.context.Context;

/**
 * An owner-checked release on the server as one operator: the request timeout, the error
 * mapping, ignoring the answer and the clean-up registration ({@link DefaultLockClient#tracked}),
 * each subscription one {@link ReleaseCall} — instead of defer, timeout, onErrorMap, then and
 * doFinally. Made by {@link DefaultLockClient#trackedReleaseOnServer}. Not API.
 */
final class ServerRelease extends Mono<Void> {
    private final DefaultLockClient client;
    private final String name;
    private final String owner;
    private final LockOptions options;

    ServerRelease(DefaultLockClient client, String name, String owner, LockOptions options) {
        this.client = client;
        this.name = name;
        this.owner = owner;
        this.options = options;
    }

    @Override
    public void subscribe(CoreSubscriber<? super Void> actual) {
        ReleaseCall call = new ReleaseCall(name, client, actual);
        client.cleanUps().add(call);
        actual.onSubscribe(call);
        Mono<Boolean> request;
        try {
            request = client.backend().release(name, owner);
        } catch (RuntimeException e) {
            call.onError(e);
            return;
        }
        client.deadlines(client.schedulerFor(options), options.clock()).subscribe(request, options.requestTimeout(), call);
    }

    /** One release request: passes on its end (errors mapped), never its value; forgotten by close() when it ends. */
    private static final class ReleaseCall extends CleanUp implements CoreSubscriber<Boolean>, Subscription {
        private static final AtomicIntegerFieldUpdater<ReleaseCall> ENDED =
                AtomicIntegerFieldUpdater.newUpdater(ReleaseCall.class, "ended");
        private final DefaultLockClient client;
        private final CoreSubscriber<? super Void> actual;
        private volatile int ended;
        private volatile Subscription upstream;

        ReleaseCall(String name, DefaultLockClient client, CoreSubscriber<? super Void> actual) {
            super(name, client.cleanUps());
            this.client = client;
            this.actual = actual;
        }

        @Override
        public Context currentContext() {
            return actual.currentContext();
        }

        @Override
        public void onSubscribe(Subscription s) {
            upstream = s;
            if (ended != 0) {
                s.cancel();
                return;
            }
            s.request(Long.MAX_VALUE);
        }

        @Override
        public void onNext(Boolean released) {
            // the answer is not passed on: a key already gone is released too
        }

        @Override
        public void onError(Throwable e) {
            if (!ENDED.compareAndSet(this, 0, 1)) {
                Operators.onErrorDropped(e, actual.currentContext());
                return;
            }
            end();
            actual.onError(BackendErrors.map(client.backend().name(), name, "release", e));
        }

        @Override
        public void onComplete() {
            if (ENDED.compareAndSet(this, 0, 1)) {
                end();
                actual.onComplete();
            }
        }

        @Override
        public void request(long n) {
            // the request is sent on subscribe whatever the demand: a Mono<Void> emits no value
        }

        @Override
        public void cancel() {
            if (ENDED.compareAndSet(this, 0, 1)) {
                Subscription s = upstream;
                if (s != null) {
                    s.cancel();
                }
                end();
            }
        }

        private void end() {
            finish();
        }
    }
}
