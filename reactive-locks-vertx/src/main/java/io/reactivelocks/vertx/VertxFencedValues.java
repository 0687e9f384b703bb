package io.reactivelocks.vertx;

import io.reactivelocks.fencing.FencedValue;
import io.reactivelocks.fencing.FencedValues;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * The {@link FencedValues} API for Vert.x: fenced writes, reads and deletes as futures completed
 * on the caller's context (the current one when the method is called, or the one bound with
 * {@link #on(Context)}). A write or delete is admitted only when its token is not below the key's
 * fence, in one atomic store request.
 *
 * <pre>{@code
 * VertxFencedValues values = VertxFencedValues.create(vertx, store.fencedValues());
 * locks.withLock("config", lease -> values.write("config", lease.token(), json));   // false: a newer writer was there
 * }</pre>
 */
public final class VertxFencedValues {

    private final FencedValues values;
    private final CallerContext context;

    VertxFencedValues(FencedValues values, CallerContext context) {
        this.values = values;
        this.context = context;
    }

    /**
     * @param vertx  the Vert.x instance whose contexts receive the results
     * @param values the fenced values to use (closed only by {@link #close()})
     * @return the Vert.x view of {@code values}
     * @throws NullPointerException naming the argument when one is null
     */
    public static VertxFencedValues create(Vertx vertx, FencedValues values) {
        Objects.requireNonNull(values, "values");
        return new VertxFencedValues(values, new CallerContext(vertx, null));
    }

    /**
     * @param context the context that receives every result of the returned view; it must belong
     *                to this object's Vert.x
     * @return a view of the same values bound to {@code context}
     * @throws NullPointerException     naming {@code context} when it is null
     * @throws IllegalArgumentException when {@code context} belongs to another Vert.x instance
     */
    public VertxFencedValues on(Context context) {
        return new VertxFencedValues(values, this.context.on(context));
    }

    /** @return the fenced values behind this view (for their Reactor API) */
    public FencedValues fencedValues() {
        return values;
    }

    /**
     * Writes {@code value} under {@code key} if the token is not below the key's fence, and raises
     * the fence, as {@link FencedValues#write(String, long, String)}.
     *
     * @param key   the key
     * @param token the writer's fencing token, e.g. {@code lease.token()}
     * @param value the value
     * @return a future of {@code true} when accepted, {@code false} when a newer token is on the key;
     *         failed with {@link io.reactivelocks.LockBackendException}
     */
    public Future<Boolean> write(String key, long token, String value) {
        return context.future(values.write(key, token, value));
    }

    /**
     * Reads a key's value and fence, as {@link FencedValues#read(String)}.
     *
     * @param key the key
     * @return a future of the value and its fence, or of {@code null} when the key has no value
     */
    public Future<@Nullable FencedValue> read(String key) {
        return context.future(values.read(key));
    }

    /**
     * Deletes a key's value if the token is not below its fence (the fence stays), as
     * {@link FencedValues#delete(String, long)}.
     *
     * @param key   the key
     * @param token the writer's fencing token
     * @return a future of {@code true} when admitted, {@code false} when refused
     */
    public Future<Boolean> delete(String key, long token) {
        return context.future(values.delete(key, token));
    }

    /**
     * Releases the connections the values opened, as {@link FencedValues#close()}.
     *
     * @return a future completed on the caller's context when closed
     */
    public Future<Void> close() {
        return context.future(values.close());
    }
}
