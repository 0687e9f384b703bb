package io.reactivelocks.blocking;

import java.util.ArrayList;
import org.jspecify.annotations.Nullable;

/**
 * The leases that {@link BlockingLocks#withLock} holds on the current thread, for reentrancy: a
 * nested {@code withLock} on the same name and client on the same thread reuses the outer lease,
 * as the reactive {@code withLock} does within one chain. The owner is the core object whose
 * locks are held (a {@code LockClient}, a {@code ReadWriteLock}).
 */
final class HeldOnThread {

    private static final ThreadLocal<ArrayList<Entry>> HELD = new ThreadLocal<>();

    private HeldOnThread() {
    }

    static @Nullable BlockingLease find(Object client, String name) {
        ArrayList<Entry> held = HELD.get();
        if (held != null) {
            for (Entry e : held) {
                if (e.client == client && e.name.equals(name)) {
                    return e.lease;
                }
            }
        }
        return null;
    }

    static void push(Object client, String name, BlockingLease lease) {
        ArrayList<Entry> held = HELD.get();
        if (held == null) {
            held = new ArrayList<>(2);
            HELD.set(held);
        }
        held.add(new Entry(client, name, lease));
    }

    static void pop() {
        ArrayList<Entry> held = HELD.get();
        held.remove(held.size() - 1);
        if (held.isEmpty()) {
            HELD.remove();
        }
    }

    private record Entry(Object client, String name, BlockingLease lease) {
    }
}
