package io.reactivelocks.blocking;

/**
 * The work a blocking scoped call runs on the calling thread while its grant is held: a set of
 * locks ({@link BlockingMultiLock#withLocks}), a leadership ({@link BlockingLeaderElection#campaign})
 * or a task claim ({@link BlockingTaskQueue#process}). It may throw one checked exception type,
 * which the call declares and rethrows unchanged.
 *
 * @param <G> the grant type
 * @param <T> the result type
 * @param <E> the checked exception the body may throw ({@link RuntimeException} when none)
 */
@FunctionalInterface
public interface GrantBody<G, T, E extends Exception> {

    /**
     * @param grant the held grant; do not keep it past the body
     * @return the result
     * @throws E when the work fails
     */
    T apply(G grant) throws E;
}
