package io.reactivelocks;

import java.time.Duration;
import org.jspecify.annotations.Nullable;

/**
 * An {@link LockClient#acquire acquire} did not get the lock within its wait timeout (or its
 * attempt budget). The client has cleaned up: nothing of this waiter is left on the server.
 */
public final class LockTimeoutException extends LockException {

    private static final long serialVersionUID = 1L;

    private final @Nullable Duration waitTimeout;

    /**
     * @param lockName    the lock that could not be acquired
     * @param waitTimeout how long the caller was prepared to wait
     */
    public LockTimeoutException(String lockName, Duration waitTimeout) {
        super(lockName, "lock '" + lockName + "' was not acquired within " + waitTimeout, null);
        this.waitTimeout = waitTimeout;
    }

    /**
     * The attempt budget ({@code backoff.maxAttempts}) ran out before the wait timeout.
     *
     * @param lockName    the lock that could not be acquired
     * @param waitTimeout how long the caller was prepared to wait, or {@code null} (until cancelled)
     * @param attempts    how many attempts were made
     */
    public LockTimeoutException(String lockName, @Nullable Duration waitTimeout, long attempts) {
        super(lockName, "lock '" + lockName + "' was not acquired in " + attempts + " attempts (backoff.maxAttempts)"
                + (waitTimeout == null ? "" : ", before its wait timeout " + waitTimeout), null);
        this.waitTimeout = waitTimeout;
    }

    /** @return how long the caller was prepared to wait; {@code null} when it was to wait until cancelled */
    public @Nullable Duration waitTimeout() {
        return waitTimeout;
    }
}
