package io.reactivelocks.blocking;

/**
 * The work that {@link BlockingLocks#withLock} and {@link BlockingSemaphore#withPermit} run on the
 * calling thread while the lock (or permit) is held. It may throw one checked exception type, which
 * the call declares and rethrows unchanged.
 *
 * @param <T> the result type
 * @param <E> the checked exception the body may throw ({@link RuntimeException} when none)
 */
@FunctionalInterface
public interface LeaseBody<T, E extends Exception> {

    /**
     * @param lease the held grant: pass {@link BlockingLease#token()} to fenced resources; do not
     *              keep it past the body (the caller releases it when the body ends)
     * @return the result
     * @throws E when the work fails
     */
    T apply(BlockingLease lease) throws E;
}
