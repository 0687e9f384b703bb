package io.reactivelocks.testcontainers;

import io.reactivelocks.LockClient;
import io.reactivelocks.LockOptions;
import io.reactivelocks.LockStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * The clients one container handed out: the store's own client (made once, on first use) and every
 * {@link LockStore} session over it, one per {@link LockClient} handed out; {@link #close()} closes the
 * sessions (with the lock clients they handed out), then the store client.
 *
 * @param <C> the store client's type
 */
final class LockClients<C> {

    private static final Duration CLOSE_TIMEOUT = Duration.ofSeconds(10);

    private final List<LockStore> sessions = new ArrayList<>();
    private final Consumer<C> closeStoreClient;
    private C storeClient; // null until first use

    LockClients(Consumer<C> closeStoreClient) {
        this.closeStoreClient = closeStoreClient;
    }

    /** Returns the store client, made by {@code factory} on the first call. */
    synchronized C storeClient(boolean running, Supplier<C> factory) {
        requireRunning(running);
        if (storeClient == null) {
            storeClient = Objects.requireNonNull(factory.get(), "store client");
        }
        return storeClient;
    }

    /** Remembers a new session, to close with the container, and hands out its lock client. */
    synchronized LockClient add(LockStore session, LockOptions options) {
        sessions.add(session);
        return session.locks(options);
    }

    static void requireRunning(boolean running) {
        if (!running) {
            throw new IllegalStateException("the container is not running: start() it first");
        }
    }

    /** Closes every session (waiting at most 10 s each), then the store client. */
    void close() {
        List<LockStore> toClose;
        C store;
        synchronized (this) {
            toClose = new ArrayList<>(sessions);
            sessions.clear();
            store = storeClient;
            storeClient = null;
        }
        RuntimeException failure = null;
        for (LockStore c : toClose) {
            try {
                c.close().block(CLOSE_TIMEOUT);
            } catch (RuntimeException e) {
                failure = failure == null ? e : failure;
            }
        }
        if (store != null) {
            try {
                closeStoreClient.accept(store);
            } catch (RuntimeException e) {
                failure = failure == null ? e : failure;
            }
        }
        if (failure != null) {
            throw failure;
        }
    }
}
