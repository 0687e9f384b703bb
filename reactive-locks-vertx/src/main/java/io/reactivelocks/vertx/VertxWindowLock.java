package io.reactivelocks.vertx;

import io.reactivelocks.LockOptions;
import io.reactivelocks.window.WindowClaim;
import io.reactivelocks.window.WindowLock;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.time.Duration;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * The {@link WindowLock} API for Vert.x: claims as futures completed on the caller's context (the
 * current one when the method is called, or the one bound with {@link #on(Context)}).
 *
 * <pre>{@code
 * VertxWindowLock hourly = VertxWindowLock.create(vertx, store.windowLocks(options));   // store = RedisLocks.connect(redisClient)
 * vertx.setPeriodic(60_000, id -> hourly.tryClaim("report", Duration.ofHours(1))
 *         .onSuccess(claim -> { if (claim != null) sendReport(claim.window(), claim.token()); }));
 * }</pre>
 */
public final class VertxWindowLock {

    private final WindowLock windowLock;
    private final CallerContext context;

    VertxWindowLock(WindowLock windowLock, CallerContext context) {
        this.windowLock = windowLock;
        this.context = context;
    }

    /**
     * @param vertx      the Vert.x instance whose contexts receive the results
     * @param windowLock the window lock to use (closed only by {@link #close()})
     * @return the Vert.x view of {@code windowLock}
     * @throws NullPointerException naming the argument when one is null
     */
    public static VertxWindowLock create(Vertx vertx, WindowLock windowLock) {
        Objects.requireNonNull(windowLock, "windowLock");
        return new VertxWindowLock(windowLock, new CallerContext(vertx, null));
    }

    /**
     * @param context the context that receives every result of the returned view; it must belong
     *                to this object's Vert.x
     * @return a view of the same window lock bound to {@code context}
     * @throws NullPointerException     naming {@code context} when it is null
     * @throws IllegalArgumentException when {@code context} belongs to another Vert.x instance
     */
    public VertxWindowLock on(Context context) {
        return new VertxWindowLock(windowLock, this.context.on(context));
    }

    /** @return the window lock behind this view (for its Reactor API) */
    public WindowLock windowLock() {
        return windowLock;
    }

    /** @return the window lock's options, as {@link WindowLock#options()} */
    public LockOptions options() {
        return windowLock.options();
    }

    /**
     * Claims the current window, as {@link WindowLock#tryClaim(String, Duration)}: one store request,
     * never retried.
     *
     * @param name   the lock name
     * @param period the window length (whole milliseconds, 1 ms to {@link WindowLock#MAX_PERIOD})
     * @return a future of the claim when this call was the first of the window, of {@code null} when
     *         the window was claimed already; failed with {@link io.reactivelocks.LockBackendException}
     */
    public Future<@Nullable WindowClaim> tryClaim(String name, Duration period) {
        return context.future(windowLock.tryClaim(name, period));
    }

    /**
     * Closes the window lock, as {@link WindowLock#close()}.
     *
     * @return a future completed on the caller's context when it is closed
     */
    public Future<Void> close() {
        return context.future(windowLock.close());
    }
}
