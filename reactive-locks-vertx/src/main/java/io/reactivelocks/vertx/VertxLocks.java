package io.reactivelocks.vertx;

import io.reactivelocks.Lease;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockClientMetrics;
import io.reactivelocks.LockOptions;
import io.reactivelocks.LockState;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.internal.ContextInternal;
import io.vertx.core.streams.ReadStream;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * The {@link LockClient} API for Vert.x: every operation returns a Vert.x {@link Future} (or a
 * {@link LockStream}) completed on the <em>caller's</em> context — the context current when the
 * method is called, or the one bound with {@link #on(Context)} — so its callbacks run on that
 * context's event loop. It adds no engine: each call is the client's own operation (same waiting,
 * renewal, fencing, cancel clean-up), and nothing in it blocks a thread, so a waiter costs no
 * thread, worker or event loop.
 *
 * <pre>{@code
 * VertxLocks locks = VertxLocks.create(vertx, store.locks());   // any LockClient; store = RedisLocks.connect(redisClient)
 * locks.withLock("order:42", lease -> charge(order, lease.token()))             // Future<Receipt>
 *      .onSuccess(receipt -> ...);                                               // on the caller's event loop
 * }</pre>
 *
 * <p>Vert.x futures start at once and cannot be cancelled: a waiting {@link #acquire} ends at the
 * wait timeout of its options ({@link io.reactivelocks.LockTimeoutException}); to wait without a
 * bound and still be able to stop, use {@link #hold}, whose {@link LockStream#cancel()} leaves the
 * queue. Arguments are checked at call time as on the client ({@link NullPointerException} /
 * {@link IllegalArgumentException} naming the argument); failures are the client's
 * {@link io.reactivelocks.LockException} family, failing the future. {@link #withLock} is reentrant
 * as on the other facades: its body runs on a duplicate of the caller's context (same event loop)
 * that carries the names held, so a {@code withLock} of the same name and client called from the
 * body — or from a callback of a future the body made — reuses the outer lease instead of waiting
 * for it; other contexts, and work started on another context, wait as usual.
 */
public final class VertxLocks {

    private final LockClient client;
    private final CallerContext context;
    /** The key of the names this client holds in a duplicated context's local data (one per client). */
    private final HeldKey heldKey;

    VertxLocks(LockClient client, CallerContext context) {
        this.client = client;
        this.context = context;
        this.heldKey = new HeldKey(client);
    }

    /** A client's key in the local data of the contexts {@link #withLock} bodies run on. */
    private record HeldKey(LockClient client) {
    }

    /**
     * @param vertx  the Vert.x instance whose contexts receive the results
     * @param client the lock client to use (not closed by this object unless {@link #close()} is called)
     * @return the Vert.x view of {@code client}
     * @throws NullPointerException naming the argument when one is null
     */
    public static VertxLocks create(Vertx vertx, LockClient client) {
        Objects.requireNonNull(client, "client");
        return new VertxLocks(client, new CallerContext(vertx, null));
    }

    /**
     * @param context the context that receives every result of the returned view, whichever thread
     *                calls it; it must belong to this object's Vert.x
     * @return a view of the same client bound to {@code context}
     * @throws NullPointerException     naming {@code context} when it is null
     * @throws IllegalArgumentException when {@code context} belongs to another Vert.x instance
     */
    public VertxLocks on(Context context) {
        return new VertxLocks(client, this.context.on(context));
    }

    /** @return the lock client behind this view (for its Reactor API) */
    public LockClient client() {
        return client;
    }

    /** @return the Vert.x instance of this view */
    public Vertx vertx() {
        return context.vertx();
    }

    /** @return the client's default options, as {@link LockClient#options()} */
    public LockOptions options() {
        return client.options();
    }

    /**
     * @return the client's live counters (held leases, pending acquires), as {@link LockClient#metrics()};
     *         reading them does no I/O
     */
    public LockClientMetrics metrics() {
        return client.metrics();
    }

    /**
     * Acquires with the client's default options (see {@link #acquire(String, LockOptions)}).
     *
     * @param name the lock name
     * @return a future of the granted lease
     */
    public Future<Lease> acquire(String name) {
        return acquire(name, client.options());
    }

    /**
     * Acquires the lock as {@link LockClient#acquire(String, LockOptions)} does, waiting without a
     * thread until granted or the options' wait timeout. The lease is renewed in the background
     * until {@link #release(Lease)}d, lost or the client is closed: always release it, or prefer
     * {@link #withLock} / {@link #hold}.
     *
     * @param name    the lock name
     * @param options options for this call
     * @return a future of the lease, completed on the caller's context; failed with
     *         {@link io.reactivelocks.LockTimeoutException}, {@link io.reactivelocks.LockBackendException}
     *         or {@link io.reactivelocks.LockClientClosedException}
     */
    public Future<Lease> acquire(String name, LockOptions options) {
        return context.future(client.acquire(name, options));
    }

    /**
     * One attempt with the client's default options (see {@link #tryAcquire(String, LockOptions)}).
     *
     * @param name the lock name
     * @return a future of the lease, or of {@code null} when someone else holds the lock
     */
    public Future<@Nullable Lease> tryAcquire(String name) {
        return tryAcquire(name, client.options());
    }

    /**
     * One attempt, no waiting, as {@link LockClient#tryAcquire(String, LockOptions)}.
     *
     * @param name    the lock name
     * @param options options for this call
     * @return a future of the lease (renewed until released), or of {@code null} when someone else
     *         holds the lock; failed with {@link io.reactivelocks.LockBackendException}
     */
    public Future<@Nullable Lease> tryAcquire(String name, LockOptions options) {
        return context.future(client.tryAcquire(name, options));
    }

    /**
     * Runs {@code body} under the lock with the client's default options (see
     * {@link #withLock(String, LockOptions, Function)}).
     *
     * @param name the lock name
     * @param body the work to do while holding the lock
     * @param <T>  the body's result type
     * @return a future of the body's result
     */
    public <T> Future<@Nullable T> withLock(String name, Function<? super Lease, ? extends Future<T>> body) {
        return withLock(name, client.options(), body);
    }

    /**
     * Scoped use: acquires, calls {@code body} on the caller's context with the lease, and releases
     * when the body's future completes or fails (or {@code body} throws). If the lease is lost
     * while the body runs, the returned future fails with {@link io.reactivelocks.LockLostException}
     * — the body's work did not finish under the lock — and the body's own result is dropped.
     *
     * @param name    the lock name
     * @param options options for this call
     * @param body    the work to do while holding the lock: returns a Vert.x future
     * @param <T>     the body's result type
     * @return a future of the body's result, completed on the caller's context after the release
     *         was attempted; failed with the body's failure, or the acquire's errors
     */
    public <T> Future<@Nullable T> withLock(String name, LockOptions options, Function<? super Lease, ? extends Future<T>> body) {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(options, "options");
        Objects.requireNonNull(body, "body");
        Context ctx = context.get();
        Map<String, Lease> held = heldOn(Vertx.currentContext());
        Lease reentered = held.get(name);
        if (reentered != null) {
            // inside the body of a withLock of this name on this client: its lease, no second acquire
            try {
                return Objects.requireNonNull(body.apply(reentered), "the future returned by the body");
            } catch (Throwable t) {
                return Future.failedFuture(t);
            }
        }
        // the body runs on a duplicate of the caller's context (same event loop, same order) that carries the
        // names held: Vert.x keeps a duplicate current through the body's callbacks, so a nested withLock sees them
        ContextInternal bodyContext = ((ContextInternal) ctx).duplicate();
        return ContextBridge.toFuture(client.withLock(name, options, lease -> {
            Map<String, Lease> inside = new HashMap<>(held);
            inside.put(name, lease);
            bodyContext.putLocal(heldKey, Map.copyOf(inside));
            return ContextBridge.toMono(() -> body.apply(lease), bodyContext);
        }), ctx);
    }

    /** @return the names this view's client holds through a {@code withLock} whose body {@code current} runs */
    private Map<String, Lease> heldOn(@Nullable Context current) {
        if (current instanceof ContextInternal c && c.isDuplicate()) {
            Map<String, Lease> held = c.getLocal(heldKey);
            if (held != null) {
                return held;
            }
        }
        return Map.of();
    }

    /**
     * Streams under the lock with the client's default options (see
     * {@link #withLockMany(String, LockOptions, Function)}).
     *
     * @param name the lock name
     * @param body makes the stream to read while holding the lock
     * @param <T>  the element type
     * @return the stream of the body's elements; nothing happens before a handler is set
     */
    public <T> LockStream<T> withLockMany(String name, Function<? super Lease, ? extends ReadStream<T>> body) {
        return withLockMany(name, client.options(), body);
    }

    /**
     * Scoped streaming, as {@link LockClient#withLockMany(String, LockOptions, Function)}: setting a
     * handler acquires, then {@code body} is called on the caller's context with the lease and its
     * {@link ReadStream} is read with the returned stream's demand; the lock is released when the
     * body's stream ends or fails, or when the returned stream is cancelled (which also stops the
     * body's stream). A loss fails the stream with {@link io.reactivelocks.LockLostException}.
     *
     * @param name    the lock name
     * @param options options for this call
     * @param body    makes the stream to read while holding the lock
     * @param <T>     the element type
     * @return the stream of the body's elements on the caller's context
     * @throws NullPointerException naming the argument when one is null
     */
    public <T> LockStream<T> withLockMany(String name, LockOptions options, Function<? super Lease, ? extends ReadStream<T>> body) {
        Objects.requireNonNull(body, "body");
        Context ctx = context.get();
        return ContextBridge.toStream(client.withLockMany(name, options,
                lease -> ContextBridge.toFlux(() -> body.apply(lease), ctx)), ctx);
    }

    /**
     * Holds the lock with the client's default options (see {@link #hold(String, LockOptions)}).
     *
     * @param name the lock name
     * @return the hold stream; nothing happens before a handler is set
     */
    public LockStream<Lease> hold(String name) {
        return hold(name, client.options());
    }

    /**
     * Holds the lock as a stream, as {@link LockClient#hold(String, LockOptions)}: setting a handler
     * acquires (waiting), the handler receives the lease and then an updated lease after each
     * confirmed renewal, and the stream ends ({@code endHandler}) when the lease is lost — before any
     * other client can be granted the lock. {@link LockStream#cancel()} releases the lock, or leaves
     * the queue while still waiting.
     *
     * @param name    the lock name
     * @param options options for this call
     * @return the hold stream on the caller's context
     */
    public LockStream<Lease> hold(String name, LockOptions options) {
        return ContextBridge.toStream(client.hold(name, options), context.get(), Lease::release);
    }

    /**
     * Streams the lock's state as {@link LockClient#observe(String)}: first the current state, then
     * each change of holder or payload; ends when the client closes.
     *
     * @param name the lock name
     * @return the state stream on the caller's context
     */
    public LockStream<LockState> observe(String name) {
        return context.stream(client.observe(name));
    }

    /**
     * Reads the lock's state once, as {@link LockClient#inspect(String)}.
     *
     * @param name the lock name
     * @return a future of the state; failed with {@link io.reactivelocks.LockBackendException}
     */
    public Future<LockState> inspect(String name) {
        return context.future(client.inspect(name));
    }

    /**
     * Completes when the lock is next free, as {@link LockClient#awaitRelease(String)}.
     *
     * @param name the lock name
     * @return a future completed on the caller's context when the lock is free
     */
    public Future<Void> awaitRelease(String name) {
        return context.future(client.awaitRelease(name));
    }

    /**
     * Releases a lease, as {@link Lease#release()}: owner-checked, idempotent.
     *
     * @param lease the lease to release
     * @return a future completed on the caller's context when the store confirmed; failed with
     *         {@link io.reactivelocks.LockBackendException} when it could not be reached
     * @throws NullPointerException naming {@code lease} when it is null
     */
    public Future<Void> release(Lease lease) {
        Objects.requireNonNull(lease, "lease");
        return context.future(lease.release());
    }

    /**
     * Releases a lease after the work it guarded, as {@link Lease#releaseAfterWork()}: a release
     * the store could not confirm is not an error (the lease then expires by its TTL).
     *
     * @param lease the lease to release
     * @return a future completed on the caller's context once the release was attempted; never failed
     * @throws NullPointerException naming {@code lease} when it is null
     */
    public Future<Void> releaseAfterWork(Lease lease) {
        Objects.requireNonNull(lease, "lease");
        return context.future(lease.releaseAfterWork());
    }

    /**
     * @param lease a lease
     * @return a future completed on the caller's context when the lease is lost (not when it is
     *         released: then it never completes)
     * @throws NullPointerException naming {@code lease} when it is null
     */
    public Future<Void> lost(Lease lease) {
        Objects.requireNonNull(lease, "lease");
        return context.future(lease.lost());
    }

    /**
     * Listens for an operator's request to let go, as {@link Lease#revoked()}: cooperative, the holder decides.
     *
     * @param lease a lease
     * @return a future completed on the caller's context with the request's reason, or with
     *         {@code null} when the lease ends (released or lost) first
     * @throws NullPointerException naming {@code lease} when it is null
     */
    public Future<@Nullable String> revoked(Lease lease) {
        Objects.requireNonNull(lease, "lease");
        return context.future(lease.revoked());
    }

    /**
     * Replaces the payload stored with a lease, as {@link Lease#updatePayload(String)}.
     *
     * @param lease   the held lease
     * @param payload the new payload; {@code null} removes it
     * @return a future completed when the store confirmed; failed with
     *         {@link io.reactivelocks.LockLostException} when the lease is no longer held
     * @throws NullPointerException     naming {@code lease} when it is null
     * @throws IllegalArgumentException naming {@code payload} when it is too long or malformed
     */
    public Future<Void> updatePayload(Lease lease, @Nullable String payload) {
        Objects.requireNonNull(lease, "lease");
        return context.future(lease.updatePayload(payload));
    }

    /**
     * Closes the client behind this view, as {@link LockClient#close()}: pending acquires fail,
     * held leases are released, observe streams end.
     *
     * @return a future completed on the caller's context when the client is closed
     */
    public Future<Void> close() {
        return context.future(client.close());
    }
}
