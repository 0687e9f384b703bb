package io.reactivelocks.cli;

import io.reactivelocks.LockStore;
import java.time.Duration;
import java.util.List;

/** A store session and the driver clients under it, closed together (the session first). */
final class OpenStore implements AutoCloseable {

    private final LockStore store;
    private final String label;
    private final List<AutoCloseable> resources;
    private boolean closed;

    OpenStore(LockStore store, String label, List<AutoCloseable> resources) {
        this.store = store;
        this.label = label;
        this.resources = resources;
    }

    LockStore store() {
        return store;
    }

    /** @return how messages name the store, e.g. {@code redis at localhost:6379} */
    String label() {
        return label;
    }

    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            store.close().block(Duration.ofSeconds(10));
        } catch (RuntimeException e) {
            // best effort on the way out: the leases expire on the server anyway
        }
        closeAll(resources);
    }

    static void closeAll(List<AutoCloseable> resources) {
        for (int i = resources.size() - 1; i >= 0; i--) {
            try {
                resources.get(i).close();
            } catch (Exception e) {
                // best effort on the way out
            }
        }
    }
}
