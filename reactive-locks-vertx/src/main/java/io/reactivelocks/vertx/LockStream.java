package io.reactivelocks.vertx;

import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.streams.ReadStream;
import org.jspecify.annotations.Nullable;

/**
 * A Vert.x {@link ReadStream} of a lock stream (leases of a hold, lock states, leaderships, ...)
 * that can be cancelled. Nothing is subscribed before the first non-null {@link #handler}; elements,
 * the end and failures are then delivered on the stream's context, in order. {@link #pause()},
 * {@link #fetch(long)} and {@link #resume()} are Reactor demand on the underlying publisher.
 *
 * <p>The stream <em>ends</em> ({@link #endHandler}) when the underlying publisher completes — for a
 * hold, when the lease is lost — and <em>fails</em> ({@link #exceptionHandler}; with none set, the
 * failure is reported to the context as an unhandled exception) with its error. {@link #cancel()},
 * or a {@code null} handler, cancels the subscription instead: neither end nor failure is delivered
 * after it.
 *
 * @param <T> the element type
 */
public interface LockStream<T> extends ReadStream<T> {

    /**
     * Cancels the subscription: for a hold, releases the lock (the returned future completes when
     * the store confirmed) or, while still waiting, leaves the queue — the store's clean-up then
     * follows in the background. Idempotent: later calls complete at once.
     *
     * @return a future completed on the stream's context when the cancel step is done; failed with
     *         the store's error when a release could not be confirmed (the lease then expires by its TTL)
     */
    Future<Void> cancel();

    /**
     * @return {@code true} once the stream has ended, failed or been cancelled
     */
    boolean isDone();

    /**
     * Sets the failure handler.
     *
     * @param handler called on the stream's context with the publisher's error
     * @return this stream
     */
    @Override
    LockStream<T> exceptionHandler(@Nullable Handler<Throwable> handler);

    /**
     * Sets the element handler; the first non-null handler subscribes (and starts the operation,
     * e.g. the acquire of a hold); {@code null} cancels like {@link #cancel()}.
     *
     * @param handler called on the stream's context with each element
     * @return this stream
     */
    @Override
    LockStream<T> handler(@Nullable Handler<T> handler);

    /**
     * Stops delivering elements until {@link #fetch(long)} or {@link #resume()}.
     *
     * @return this stream
     */
    @Override
    LockStream<T> pause();

    /**
     * Delivers elements again without limit (flowing mode, the default).
     *
     * @return this stream
     */
    @Override
    LockStream<T> resume();

    /**
     * Adds {@code amount} to the number of elements that may be delivered.
     *
     * @param amount how many more elements, at least 0
     * @return this stream
     */
    @Override
    LockStream<T> fetch(long amount);

    /**
     * Sets the end handler (called once, when the underlying publisher completes, also when it
     * had completed before the handler was set).
     *
     * @param endHandler called on the stream's context
     * @return this stream
     */
    @Override
    LockStream<T> endHandler(@Nullable Handler<Void> endHandler);
}
