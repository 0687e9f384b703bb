package io.reactivelocks.vertx;

import io.reactivelocks.Lease;
import io.reactivelocks.LockOptions;
import io.reactivelocks.semaphore.Semaphore;
import io.reactivelocks.semaphore.SemaphoreState;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.util.List;
import java.util.Objects;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * The {@link Semaphore} API for Vert.x: futures and {@link LockStream}s completed on the caller's
 * context (the current one when the method is called, or the one bound with {@link #on(Context)}),
 * over the semaphore's own engine. Each permit is a {@link Lease}, renewed in the background,
 * fenced, released on completion, failure and cancel, as {@link Semaphore} describes.
 *
 * <pre>{@code
 * VertxSemaphore exports = VertxSemaphore.create(vertx, store.semaphores(options));   // store = RedisLocks.connect(redisClient)
 * exports.withPermit("exports", 4, permit -> runExport(permit.token()));   // at most 4 at once
 * }</pre>
 *
 * <p>Arguments are checked at call time as on {@link Semaphore}; failures fail the future with the
 * {@link io.reactivelocks.LockException} family. A waiting {@link #acquire} ends at the wait
 * timeout of its options; {@link #hold} can be cancelled at any time.
 */
public final class VertxSemaphore {

    private final Semaphore semaphore;
    private final CallerContext context;

    VertxSemaphore(Semaphore semaphore, CallerContext context) {
        this.semaphore = semaphore;
        this.context = context;
    }

    /**
     * @param vertx     the Vert.x instance whose contexts receive the results
     * @param semaphore the semaphore to use (closed only by {@link #close()})
     * @return the Vert.x view of {@code semaphore}
     * @throws NullPointerException naming the argument when one is null
     */
    public static VertxSemaphore create(Vertx vertx, Semaphore semaphore) {
        Objects.requireNonNull(semaphore, "semaphore");
        return new VertxSemaphore(semaphore, new CallerContext(vertx, null));
    }

    /**
     * @param context the context that receives every result of the returned view; it must belong
     *                to this object's Vert.x
     * @return a view of the same semaphore bound to {@code context}
     * @throws NullPointerException     naming {@code context} when it is null
     * @throws IllegalArgumentException when {@code context} belongs to another Vert.x instance
     */
    public VertxSemaphore on(Context context) {
        return new VertxSemaphore(semaphore, this.context.on(context));
    }

    /** @return the semaphore behind this view (for its Reactor API) */
    public Semaphore semaphore() {
        return semaphore;
    }

    /** @return the semaphore's default options, as {@link Semaphore#options()} */
    public LockOptions options() {
        return semaphore.options();
    }

    /**
     * Acquires one permit with the default options, waiting without a thread.
     *
     * @param name    the semaphore name
     * @param permits N, the most holders at once
     * @return a future of the permit's lease; always release it ({@link #release(Lease)})
     */
    public Future<Lease> acquire(String name, int permits) {
        return context.future(semaphore.acquire(name, permits));
    }

    /**
     * Acquires one permit with options for this call, as {@link Semaphore#acquire(String, int, LockOptions)}.
     *
     * @param name    the semaphore name
     * @param permits N, the most holders at once
     * @param options options for this call
     * @return a future of the permit's lease; always release it ({@link #release(Lease)})
     */
    public Future<Lease> acquire(String name, int permits, LockOptions options) {
        return context.future(semaphore.acquire(name, permits, options));
    }

    /**
     * Acquires {@code count} permits at once (all or none), as
     * {@link Semaphore#acquire(String, int, int, LockOptions)}.
     *
     * @param name    the semaphore name
     * @param permits N, the most holders at once
     * @param count   how many permits, from 1 to {@code permits}
     * @param options options for this call
     * @return a future of one lease per permit; failed with {@link io.reactivelocks.LockTimeoutException},
     *         {@link io.reactivelocks.LockBackendException} or {@link io.reactivelocks.LockClientClosedException}
     */
    public Future<List<Lease>> acquire(String name, int permits, int count, LockOptions options) {
        return context.future(semaphore.acquire(name, permits, count, options));
    }

    /**
     * One attempt for one permit, no waiting.
     *
     * @param name    the semaphore name
     * @param permits N, the most holders at once
     * @return a future of the permit's lease, or of {@code null} when none is free
     */
    public Future<@Nullable Lease> tryAcquire(String name, int permits) {
        return context.future(semaphore.tryAcquire(name, permits));
    }

    /**
     * One attempt for one permit with options for this call, no waiting.
     *
     * @param name    the semaphore name
     * @param permits N, the most holders at once
     * @param options options for this call
     * @return a future of the permit's lease, or of {@code null} when none is free
     */
    public Future<@Nullable Lease> tryAcquire(String name, int permits, LockOptions options) {
        return context.future(semaphore.tryAcquire(name, permits, options));
    }

    /**
     * One attempt for {@code count} permits at once, no waiting.
     *
     * @param name    the semaphore name
     * @param permits N, the most holders at once
     * @param count   how many permits, from 1 to {@code permits}
     * @param options options for this call
     * @return a future of one lease per permit, or of {@code null} when not enough are free
     */
    public Future<@Nullable List<Lease>> tryAcquire(String name, int permits, int count, LockOptions options) {
        return context.future(semaphore.tryAcquire(name, permits, count, options));
    }

    /**
     * Runs {@code body} under one permit with the default options (see
     * {@link #withPermit(String, int, LockOptions, Function)}).
     *
     * @param name    the semaphore name
     * @param permits N, the most holders at once
     * @param body    the work to do while holding the permit
     * @param <T>     the body's result type
     * @return a future of the body's result
     */
    public <T> Future<@Nullable T> withPermit(String name, int permits, Function<? super Lease, ? extends Future<T>> body) {
        return withPermit(name, permits, semaphore.options(), body);
    }

    /**
     * Scoped use: acquires one permit, calls {@code body} on the caller's context, releases when the
     * body's future completes or fails. If the permit is lost meanwhile, the returned future fails
     * with {@link io.reactivelocks.LockLostException}.
     *
     * @param name    the semaphore name
     * @param permits N, the most holders at once
     * @param options options for this call
     * @param body    the work to do while holding the permit
     * @param <T>     the body's result type
     * @return a future of the body's result, completed on the caller's context
     */
    public <T> Future<@Nullable T> withPermit(String name, int permits, LockOptions options,
                                              Function<? super Lease, ? extends Future<T>> body) {
        Objects.requireNonNull(body, "body");
        Context ctx = context.get();
        return ContextBridge.toFuture(
                semaphore.withPermit(name, permits, options, lease -> ContextBridge.toMono(() -> body.apply(lease), ctx)), ctx);
    }

    /**
     * Holds one permit as a stream with the default options (see {@link #hold(String, int, LockOptions)}).
     *
     * @param name    the semaphore name
     * @param permits N, the most holders at once
     * @return the hold stream; nothing happens before a handler is set
     */
    public LockStream<Lease> hold(String name, int permits) {
        return hold(name, permits, semaphore.options());
    }

    /**
     * Holds one permit as a stream: setting a handler acquires (waiting), then the handler receives
     * the lease after the grant and after each renewal; the stream ends when the permit is lost.
     * {@link LockStream#cancel()} releases the permit, or leaves the line while waiting.
     *
     * @param name    the semaphore name
     * @param permits N, the most holders at once
     * @param options options for this call
     * @return the hold stream on the caller's context
     */
    public LockStream<Lease> hold(String name, int permits, LockOptions options) {
        return ContextBridge.toStream(semaphore.hold(name, permits, options), context.get(), Lease::release);
    }

    /**
     * Reads the permits in use once, as {@link Semaphore#inspect(String)}.
     *
     * @param name the semaphore name
     * @return a future of the current holders; failed with {@link io.reactivelocks.LockBackendException}
     */
    public Future<SemaphoreState> inspect(String name) {
        return context.future(semaphore.inspect(name));
    }

    /** @return the semaphore's live view (permits held here, acquires in progress), as {@link Semaphore#metrics()} */
    public io.reactivelocks.LockClientMetrics metrics() {
        return semaphore.metrics();
    }

    /**
     * Streams the permits in use, as {@link Semaphore#observe(String)}.
     *
     * @param name the semaphore name
     * @return the state stream on the caller's context
     */
    public LockStream<SemaphoreState> observe(String name) {
        return context.stream(semaphore.observe(name));
    }

    /**
     * Releases a permit, as {@link Lease#release()}.
     *
     * @param permit the permit's lease
     * @return a future completed on the caller's context when the store confirmed
     * @throws NullPointerException naming {@code permit} when it is null
     */
    public Future<Void> release(Lease permit) {
        Objects.requireNonNull(permit, "permit");
        return context.future(permit.release());
    }

    /**
     * Closes the semaphore, as {@link Semaphore#close()}.
     *
     * @return a future completed on the caller's context when it is closed
     */
    public Future<Void> close() {
        return context.future(semaphore.close());
    }
}
