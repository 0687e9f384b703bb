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

    private final Map<String, LeaseHandle> leases;

    private HeldLocks(Map<String, LeaseHandle> leases) {
        this.leases = leases;
    }

    static HeldLocks of(ContextView ctx) {
        return ctx.getOrDefault(KEY, EMPTY);
    }

    LeaseHandle get(DefaultLockClient client, String name) {
        LeaseHandle h = leases.get(key(client, name));
        return h != null && h.isActive() ? h : null;
    }

    HeldLocks with(DefaultLockClient client, LeaseHandle lease) {
        Map<String, LeaseHandle> m = new HashMap<>(leases);
        m.put(key(client, lease.name()), lease);
        return new HeldLocks(Map.copyOf(m));
    }

    private static String key(DefaultLockClient client, String name) {
        return client.id() + '\u0000' + name;
    }
}
