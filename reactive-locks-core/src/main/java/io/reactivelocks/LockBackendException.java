package io.reactivelocks;

import org.jspecify.annotations.Nullable;

/**
 * The store behind the client failed or did not answer in time. {@link #isTransient()} tells
 * whether repeating the same operation may succeed (timeouts, lost connections) or not
 * (authentication, bad configuration, a server answering nonsense).
 */
public class LockBackendException extends LockException {

    private static final long serialVersionUID = 1L;

    private final boolean transientFailure;

    /**
     * @param lockName         the lock concerned, or {@code null}
     * @param message          what failed
     * @param cause            the driver's exception, may be {@code null}
     * @param transientFailure whether a retry of the same operation may succeed
     */
    public LockBackendException(@Nullable String lockName, String message, @Nullable Throwable cause,
                                boolean transientFailure) {
        super(lockName, message, cause);
        this.transientFailure = transientFailure;
    }

    /** @return {@code true} when repeating the operation may succeed (timeout, connection loss) */
    public boolean isTransient() {
        return transientFailure;
    }
}
