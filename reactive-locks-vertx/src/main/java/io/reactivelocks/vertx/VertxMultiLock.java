package io.reactivelocks.vertx;

import io.reactivelocks.LockOptions;
import io.reactivelocks.multi.MultiLease;
import io.reactivelocks.multi.MultiLock;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.streams.ReadStream;
import java.util.Collection;
import java.util.Objects;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * The {@link MultiLock} API for Vert.x: several lock names at once (taken in one canonical order,
 * all or none) as futures and {@link LockStream}s completed on the caller's context (the current
 * one when the method is called, or the one bound with {@link #on(Context)}).
 *
 * <pre>{@code
 * VertxMultiLock accounts = VertxMultiLock.create(vertx, store.multiLocks(LockOptions.defaults()));
 * accounts.withLocks(List.of("account:1", "account:2"), both -> transfer(both.token("account:1")));
 * }</pre>
 *
 * <p>Arguments are checked at call time as on {@link MultiLock}; failures fail the future with the
 * {@link io.reactivelocks.LockException} family.
 */
public final class VertxMultiLock {

    private final MultiLock multiLock;
    private final CallerContext context;

    VertxMultiLock(MultiLock multiLock, CallerContext context) {
        this.multiLock = multiLock;
        this.context = context;
    }

    /**
     * @param vertx     the Vert.x instance whose contexts receive the results
     * @param multiLock the multi-lock to use
     * @return the Vert.x view of {@code multiLock}
     * @throws NullPointerException naming the argument when one is null
     */
    public static VertxMultiLock create(Vertx vertx, MultiLock multiLock) {
        Objects.requireNonNull(multiLock, "multiLock");
        return new VertxMultiLock(multiLock, new CallerContext(vertx, null));
    }

    /**
     * @param context the context that receives every result of the returned view; it must belong
     *                to this object's Vert.x
     * @return a view of the same multi-lock bound to {@code context}
     * @throws NullPointerException     naming {@code context} when it is null
     * @throws IllegalArgumentException when {@code context} belongs to another Vert.x instance
     */
    public VertxMultiLock on(Context context) {
        return new VertxMultiLock(multiLock, this.context.on(context));
    }

    /** @return the multi-lock behind this view (for its Reactor API) */
    public MultiLock multiLock() {
        return multiLock;
    }

    /** @return the Vert.x view of the lock client the names are taken with, as {@link MultiLock#client()} */
    public VertxLocks client() {
        return new VertxLocks(multiLock.client(), context);
    }

    /**
     * Acquires every name with the client's default options (see {@link #acquire(Collection, LockOptions)}).
     *
     * @param names the lock names
     * @return a future of the lease on all names
     */
    public Future<MultiLease> acquire(Collection<String> names) {
        return context.future(multiLock.acquire(names));
    }

    /**
     * Acquires every name, in canonical order, waiting without a thread until all are granted or
     * the wait timeout; a failure releases the names taken so far. Always release the result
     * ({@link #release(MultiLease)}), or prefer {@link #withLocks} / {@link #hold}.
     *
     * @param names   the lock names
     * @param options options for this call
     * @return a future of the lease on all names, on the caller's context
     */
    public Future<MultiLease> acquire(Collection<String> names, LockOptions options) {
        return context.future(multiLock.acquire(names, options));
    }

    /**
     * One attempt on every name with the client's default options.
     *
     * @param names the lock names
     * @return a future of the lease on all names, or of {@code null} when one is held elsewhere
     */
    public Future<@Nullable MultiLease> tryAcquire(Collection<String> names) {
        return context.future(multiLock.tryAcquire(names));
    }

    /**
     * One attempt on every name, no waiting; the names taken are given back when one is held elsewhere.
     *
     * @param names   the lock names
     * @param options options for this call
     * @return a future of the lease on all names, or of {@code null} when one is held elsewhere
     */
    public Future<@Nullable MultiLease> tryAcquire(Collection<String> names, LockOptions options) {
        return context.future(multiLock.tryAcquire(names, options));
    }

    /**
     * Runs {@code body} under every name with the client's default options (see
     * {@link #withLocks(Collection, LockOptions, Function)}).
     *
     * @param names the lock names
     * @param body  the work: returns a Vert.x future
     * @param <T>   the body's result type
     * @return a future of the body's result
     */
    public <T> Future<@Nullable T> withLocks(Collection<String> names, Function<? super MultiLease, ? extends Future<T>> body) {
        return withLocks(names, multiLock.client().options(), body);
    }

    /**
     * Scoped use: acquires every name, calls {@code body} on the caller's context, releases all when
     * the body's future completes or fails. A loss of any name fails the result with
     * {@link io.reactivelocks.LockLostException}.
     *
     * @param names   the lock names
     * @param options options for this call
     * @param body    the work: returns a Vert.x future
     * @param <T>     the body's result type
     * @return a future of the body's result, on the caller's context after the release was attempted
     * @throws NullPointerException naming {@code body} when it is null
     */
    public <T> Future<@Nullable T> withLocks(Collection<String> names, LockOptions options,
                                             Function<? super MultiLease, ? extends Future<T>> body) {
        Objects.requireNonNull(body, "body");
        Context ctx = context.get();
        return ContextBridge.toFuture(
                multiLock.withLocks(names, options, lease -> ContextBridge.toMono(() -> body.apply(lease), ctx)), ctx);
    }

    /**
     * Streams under every name with the client's default options (see
     * {@link #withLocksMany(Collection, LockOptions, Function)}).
     *
     * @param names the lock names
     * @param body  makes the stream to read while holding the names
     * @param <T>   the element type
     * @return the stream of the body's elements; nothing happens before a handler is set
     */
    public <T> LockStream<T> withLocksMany(Collection<String> names, Function<? super MultiLease, ? extends ReadStream<T>> body) {
        return withLocksMany(names, multiLock.client().options(), body);
    }

    /**
     * Scoped streaming, as {@link MultiLock#withLocksMany}: setting a handler acquires every name,
     * then {@code body}'s {@link ReadStream} is read with the returned stream's demand; all names
     * are released when it ends or fails, or when the returned stream is cancelled.
     *
     * @param names   the lock names
     * @param options options for this call
     * @param body    makes the stream to read while holding the names
     * @param <T>     the element type
     * @return the stream of the body's elements on the caller's context
     * @throws NullPointerException naming {@code body} when it is null
     */
    public <T> LockStream<T> withLocksMany(Collection<String> names, LockOptions options,
                                           Function<? super MultiLease, ? extends ReadStream<T>> body) {
        Objects.requireNonNull(body, "body");
        Context ctx = context.get();
        return ContextBridge.toStream(multiLock.withLocksMany(names, options,
                lease -> ContextBridge.toFlux(() -> body.apply(lease), ctx)), ctx);
    }

    /**
     * Holds every name as a stream with the client's default options (see {@link #hold(Collection, LockOptions)}).
     *
     * @param names the lock names
     * @return the hold stream; nothing happens before a handler is set
     */
    public LockStream<MultiLease> hold(Collection<String> names) {
        return hold(names, multiLock.client().options());
    }

    /**
     * Holds every name as a stream: setting a handler acquires, the handler receives the lease on all
     * names after the grant and after renewals; the stream ends when any name is lost.
     * {@link LockStream#cancel()} releases every name, or stops waiting.
     *
     * @param names   the lock names
     * @param options options for this call
     * @return the hold stream on the caller's context
     */
    public LockStream<MultiLease> hold(Collection<String> names, LockOptions options) {
        return ContextBridge.toStream(multiLock.hold(names, options), context.get(), MultiLease::release);
    }

    /**
     * Releases every name of a multi-lease, as {@link MultiLease#release()}.
     *
     * @param lease the lease on all names
     * @return a future completed on the caller's context when the store confirmed
     * @throws NullPointerException naming {@code lease} when it is null
     */
    public Future<Void> release(MultiLease lease) {
        Objects.requireNonNull(lease, "lease");
        return context.future(lease.release());
    }

    /**
     * @param lease the lease on all names
     * @return a future completed on the caller's context when any of its names is lost, as {@link MultiLease#lost()}
     * @throws NullPointerException naming {@code lease} when it is null
     */
    public Future<Void> lost(MultiLease lease) {
        Objects.requireNonNull(lease, "lease");
        return context.future(lease.lost());
    }
}
