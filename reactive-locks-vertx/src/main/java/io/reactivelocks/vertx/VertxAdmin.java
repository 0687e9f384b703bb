package io.reactivelocks.vertx;

import io.reactivelocks.admin.HeldGrant;
import io.reactivelocks.admin.LockAdmin;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.util.List;
import java.util.Objects;

/**
 * The {@link LockAdmin} API for Vert.x: what every client of the store holds under a prefix, as a
 * {@link LockStream} delivered on the caller's context, and force-release as a future.
 *
 * <pre>{@code
 * VertxAdmin admin = store.admin();
 * admin.list("orders:").handler(g -> log.info("{} held by {} (token {})", g.name(), g.owner(), g.token()));
 * admin.forceRelease("orders:42").onSuccess(removed -> log.info("evicted {}", removed));
 * }</pre>
 */
public final class VertxAdmin {

    private final LockAdmin admin;
    private final CallerContext context;

    VertxAdmin(LockAdmin admin, CallerContext context) {
        this.admin = admin;
        this.context = context;
    }

    /**
     * @param vertx the Vert.x instance whose contexts receive the results
     * @param admin the store's admin
     * @return the Vert.x view of {@code admin}
     * @throws NullPointerException naming the argument when one is null
     */
    public static VertxAdmin create(Vertx vertx, LockAdmin admin) {
        Objects.requireNonNull(admin, "admin");
        return new VertxAdmin(admin, new CallerContext(vertx, null));
    }

    /**
     * @param context the context that receives every result of the returned view; it must belong
     *                to this object's Vert.x
     * @return a view of the same admin bound to {@code context}
     * @throws NullPointerException     naming {@code context} when it is null
     * @throws IllegalArgumentException when {@code context} belongs to another Vert.x instance
     */
    public VertxAdmin on(Context context) {
        return new VertxAdmin(admin, this.context.on(context));
    }

    /** @return the admin behind this view (for its Reactor API) */
    public LockAdmin admin() {
        return admin;
    }

    /**
     * Every grant held now under {@code prefix}, as {@link LockAdmin#list(String)}.
     *
     * @param prefix the start of the names, matched literally; {@code ""} for all
     * @return the grants, by name then token; ends with the last one
     */
    public LockStream<HeldGrant> list(String prefix) {
        return context.stream(admin.list(prefix));
    }

    /**
     * Takes {@code name} away from every holder, as {@link LockAdmin#forceRelease(String)}.
     *
     * @param name the name to free
     * @return a future of the grants removed; failed with {@link io.reactivelocks.LockBackendException}
     */
    public Future<List<HeldGrant>> forceRelease(String name) {
        return context.future(admin.forceRelease(name));
    }

    /**
     * Asks the holder of the lock {@code name} to let go, as {@link LockAdmin#revoke(String, String)}.
     *
     * @param name   the lock name
     * @param reason why, in words
     * @return a future of {@code true} when the lock was held and its holder asked, {@code false} when it was free
     */
    public Future<Boolean> revoke(String name, String reason) {
        return context.future(admin.revoke(name, reason));
    }

    @Override
    public String toString() {
        return "VertxAdmin{" + admin + "}";
    }
}
