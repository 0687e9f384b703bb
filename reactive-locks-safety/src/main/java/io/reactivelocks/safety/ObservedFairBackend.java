package io.reactivelocks.safety;

import io.reactivelocks.LockClient;
import io.reactivelocks.LockListener;
import io.reactivelocks.LockOptions;
import io.reactivelocks.spi.Attempt;
import io.reactivelocks.spi.DelegatingLockBackend;
import io.reactivelocks.spi.GrantRequest;
import io.reactivelocks.spi.LockBackend;
import java.lang.reflect.Method;
import java.util.Objects;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

/**
 * A fair lock's store adapter as the harness watches it: every call goes to the store's own backend
 * unchanged; a grant request is reported to the worker's {@link LineListener} before it is sent, and
 * a "queued" answer ({@link Attempt.Queued}) when it arrives. Those two moments are what the FIFO
 * promise is about: a waiter whose place in the line was acknowledged before another waiter's
 * request was even sent is ahead of it on the store.
 */
final class ObservedFairBackend extends DelegatingLockBackend {

    /** Hears nothing (a listener that is not a worker's). */
    private static final LineListener NOBODY = new LineListener() {
        @Override
        public void onAsked(String name) {
        }

        @Override
        public void onInLine(String name) {
        }
    };

    private final LineListener line;
    private final @Nullable LockClient owner;

    private ObservedFairBackend(LockBackend store, LineListener line, @Nullable LockClient owner) {
        super(store);
        this.line = Objects.requireNonNull(line, "line");
        this.owner = owner;
    }

    /**
     * A fair lock client over a backend that queues natively (etcd, ZooKeeper: the mutex), watched.
     * Closing the client leaves {@code shared} open (its owner closes it).
     *
     * @param shared   the store's mutex backend
     * @param options  the client's options
     * @param listener the worker's listener; a {@link LineListener} hears the requests
     * @return the fair lock client
     */
    static LockClient over(LockBackend shared, LockOptions options, LockListener listener) {
        LineListener line = listener instanceof LineListener l ? l : NOBODY;
        return LockClient.create(new ObservedFairBackend(shared, line, null), options, listener);
    }

    /**
     * The same fair lock as {@code fair} (a client of a Redis or PostgreSQL session's {@code
     * fairLocks}, whose backends are not public), watched: the backend behind it is
     * taken by reflection; closing the returned client closes {@code fair}.
     *
     * @param fair     the store's fair lock client
     * @param options  the client's options
     * @param listener the worker's listener; a {@link LineListener} hears the requests
     * @return the watched client, or {@code fair} itself when the listener does not listen for requests
     */
    static LockClient watching(LockClient fair, LockOptions options, LockListener listener) {
        if (!(listener instanceof LineListener l)) {
            return fair;
        }
        try {
            Method backend = fair.getClass().getDeclaredMethod("backend");
            backend.setAccessible(true);
            LockBackend store = (LockBackend) backend.invoke(fair);
            return LockClient.create(new ObservedFairBackend(store, l, fair), options, listener);
        } catch (ReflectiveOperationException | RuntimeException e) {
            throw new IllegalStateException("cannot reach the backend of " + fair.getClass().getName(), e);
        }
    }

    @Override
    public Mono<Attempt> tryGrant(GrantRequest request) {
        return Mono.defer(() -> {
            line.onAsked(request.name());
            return delegate().tryGrant(request).doOnNext(a -> {
                if (a instanceof Attempt.Queued) {
                    line.onInLine(request.name());
                }
            });
        });
    }

    /** Closes the store's fair client this one watches (and so its backend); a shared mutex backend stays open. */
    @Override
    public Mono<Void> close() {
        return owner == null ? Mono.empty() : owner.close();
    }
}
