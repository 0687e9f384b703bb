package io.reactivelocks.internal;

import org.jspecify.annotations.Nullable;
import reactor.util.context.ContextView;

/**
 * The leases a reactive chain holds through {@code withLock}, stored in the Reactor
 * {@code Context} (never in a thread local): a nested {@code withLock} on the same client and
 * name reuses the lease. An immutable list, innermost first, whose entries are the enclosing
 * {@code withLock} operators themselves ({@code WithLock}'s subscriber is one): entering a
 * {@code withLock} puts nothing in the Context but that subscriber. Each entry also watches its
 * lease's loss (the lease tells it), which is why this is a {@link LeaseHandle.LossWatcher}.
 */
abstract class HeldLocks extends LeaseHandle.LossWatcher {

    static final Object KEY = HeldLocks.class;
    private static final HeldLocks NONE = new Entry(null, null, null);

    /** Null only in {@link #NONE}. */
    final @Nullable DefaultLockClient client;
    /** The entries of the enclosing {@code withLock}s, {@link #NONE} at the end. */
    final @Nullable HeldLocks outer;
    /** Set once, before this entry is put in a Context. */
    LeaseHandle lease;

    HeldLocks(DefaultLockClient client, HeldLocks outer) {
        this.client = client;
        this.outer = outer;
    }

    /** @return the entries of the chain whose Context is {@code ctx} (none: an empty list) */
    static HeldLocks of(ContextView ctx) {
        return ctx.getOrDefault(KEY, NONE);
    }

    /** @return the active lease this chain holds on {@code name} of {@code client} (clients compare by identity), or null */
    final @Nullable LeaseHandle get(DefaultLockClient client, String name) {
        for (HeldLocks e = this; e.client != null; e = e.outer) {
            if (e.client == client && e.lease.name().equals(name)) {
                // the innermost entry of the name decides: a lost lease is not looked past
                return e.lease.isActive() ? e.lease : null;
            }
        }
        return null;
    }

    /**
     * @return these entries and {@code lease} of {@code client} in front, as an entry of its own
     *     (for {@code withLockMany}, which watches the loss through {@code takeUntilOther})
     */
    final HeldLocks with(DefaultLockClient client, LeaseHandle lease) {
        return new Entry(client, this, lease);
    }

    /** An entry that is not a {@code withLock}'s operator; it watches nothing. */
    private static final class Entry extends HeldLocks {
        Entry(DefaultLockClient client, HeldLocks outer, LeaseHandle lease) {
            super(client, outer);
            this.lease = lease;
        }

        @Override
        void onLost() {
        }
    }
}
