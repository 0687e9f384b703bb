package io.reactivelocks.internal;

import java.util.HashMap;
import java.util.Map;
import reactor.util.context.ContextView;

/**
 * The leases a reactive chain holds through {@code withLock}, stored in the Reactor
 * {@code Context} (never in a thread local): a nested {@code withLock} on the same client and
 * name reuses the lease.
 */
final class HeldLocks {

    static final Object KEY = HeldLocks.class;
    private static final HeldLocks EMPTY = new HeldLocks(Map.of());

    private final Map<Key, LeaseHandle> leases;

    private HeldLocks(Map<Key, LeaseHandle> leases) {
        this.leases = leases;
    }

    static HeldLocks of(ContextView ctx) {
        return ctx.getOrDefault(KEY, EMPTY);
    }

    LeaseHandle get(DefaultLockClient client, String name) {
        if (leases.isEmpty()) {
            return null; // the usual case: no key built
        }
        LeaseHandle h = leases.get(new Key(client, name));
        return h != null && h.isActive() ? h : null;
    }

    HeldLocks with(DefaultLockClient client, LeaseHandle lease) {
        Key key = new Key(client, lease.name());
        if (leases.isEmpty()) {
            return new HeldLocks(Map.of(key, lease));
        }
        Map<Key, LeaseHandle> m = new HashMap<>(leases);
        m.put(key, lease);
        return new HeldLocks(Map.copyOf(m));
    }

    /** A lock of one client (clients compare by identity). */
    private record Key(DefaultLockClient client, String name) {
    }
}
