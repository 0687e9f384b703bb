package io.reactivelocks;

import org.jspecify.annotations.Nullable;

/**
 * Base class of every error this library signals. All are unchecked and delivered as
 * {@code onError} signals of the returned publishers, never thrown from a subscriber's thread.
 */
public class LockException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    private final @Nullable String lockName;

    /**
     * @param lockName the lock the failure concerns, or {@code null} when it concerns the client as a whole
     * @param message  what happened
     * @param cause    the underlying failure, may be {@code null}
     */
    public LockException(@Nullable String lockName, String message, @Nullable Throwable cause) {
        super(message, cause);
        this.lockName = lockName;
    }

    /** @return the lock name this failure concerns, or {@code null} when it concerns the whole client */
    public @Nullable String lockName() {
        return lockName;
    }
}
