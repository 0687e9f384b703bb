package io.reactivelocks;

/**
 * The lease was lost (expired before a renewal was confirmed, or the server said the lock
 * belongs to someone else) while work that needed it was still running. Signalled by
 * {@link LockClient#withLock} when the body was cancelled because of the loss: the body's work
 * must be treated as not done under the lock.
 */
public final class LockLostException extends LockException {

    private static final long serialVersionUID = 1L;

    private final long token;

    /**
     * @param lockName the lock whose lease was lost
     * @param token    the fencing token of the lost lease
     * @param reason   why the lease ended
     */
    public LockLostException(String lockName, long token, String reason) {
        super(lockName, "lease on lock '" + lockName + "' (token " + token + ") was lost: " + reason, null);
        this.token = token;
    }

    /** @return the fencing token of the lease that was lost */
    public long token() {
        return token;
    }
}
