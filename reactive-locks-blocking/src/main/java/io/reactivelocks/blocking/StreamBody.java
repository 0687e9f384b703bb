package io.reactivelocks.blocking;

/**
 * The work a blocking facade runs on the calling thread for each element of a core stream (a
 * hold's renewals, an observed state, a captured task), in the stream's order. Returning
 * {@code false} stops the stream (a hold is then released); throwing stops it too and the call
 * rethrows the exception unchanged.
 *
 * @param <T> the element type
 * @param <E> the checked exception the body may throw ({@link RuntimeException} when none)
 */
@FunctionalInterface
public interface StreamBody<T, E extends Exception> {

    /**
     * @param element the next element
     * @return {@code true} to wait for the next element, {@code false} to stop
     * @throws E when the work fails (the stream is stopped)
     */
    boolean accept(T element) throws E;
}
