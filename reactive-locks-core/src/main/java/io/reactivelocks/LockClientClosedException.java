package io.reactivelocks;

import org.jspecify.annotations.Nullable;

/** The {@link LockClient} was closed; operations subscribed after (or during) the close fail with this. */
public final class LockClientClosedException extends LockException {

    private static final long serialVersionUID = 1L;

    /** @param lockName the lock the refused operation concerned, or {@code null} */
    public LockClientClosedException(@Nullable String lockName) {
        super(lockName, "lock client is closed" + (lockName == null ? "" : " (lock '" + lockName + "')"), null);
    }
}
