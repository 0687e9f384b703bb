package io.reactivelocks.spring;

import io.reactivelocks.Lease;
import io.reactivelocks.LockClient;
import io.reactivelocks.window.WindowClaim;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.util.context.Context;
import reactor.util.context.ContextView;

/**
 * The leases held by the enclosing {@link Locked} and {@link ScheduledLock} methods, read from the
 * Reactor {@code Context} of the publisher a locked method returns (never from a thread local): use
 * them inside that publisher, for instance to pass the fencing token to the protected resource.
 *
 * <pre>{@code
 * @Locked("stock:#{#sku}")
 * public Mono<Boolean> restock(String sku, long units) {
 *     return LockedContext.lease().flatMap(lease -> stock.write(sku, units, lease.token()));
 * }
 * }</pre>
 *
 * <p>In a Kotlin {@code suspend} function the same {@code Context} is the coroutine's
 * {@code ReactorContext}, which {@code awaitSingle} passes on: {@code LockedContext.lease().awaitSingle()}.
 */
public final class LockedContext {

    private static final Object KEY = LockedContext.class;

    private LockedContext() {
    }

    /**
     * @return a {@code Mono} of the lease of the innermost enclosing locked method, read from the
     *         subscriber's context on subscribe; empty outside any locked method
     */
    public static Mono<Lease> lease() {
        return Mono.deferContextual(ctx -> Mono.justOrEmpty(innermost(ctx)).map(Frame::lease));
    }

    /**
     * @param name a lock name
     * @return a {@code Mono} of the lease of the innermost enclosing locked method that holds
     *         {@code name}; empty when none does
     * @throws NullPointerException when {@code name} is null
     */
    public static Mono<Lease> lease(String name) {
        Objects.requireNonNull(name, "name");
        return Mono.deferContextual(ctx -> {
            List<Frame> frames = frames(ctx);
            for (int i = frames.size() - 1; i >= 0; i--) {
                if (frames.get(i).lease().name().equals(name)) {
                    return Mono.just(frames.get(i).lease());
                }
            }
            return Mono.empty();
        });
    }

    /**
     * @return a {@code Mono} of the window claim of the innermost enclosing {@link ScheduledLock} run
     *         with a {@link ScheduledLock#lockAtLeastFor()} window (its {@link WindowClaim#token()} fences
     *         the run's writes per window); empty when there is none
     */
    public static Mono<WindowClaim> windowClaim() {
        return Mono.deferContextual(ctx -> {
            List<Frame> frames = frames(ctx);
            for (int i = frames.size() - 1; i >= 0; i--) {
                if (frames.get(i).claim() != null) {
                    return Mono.just(frames.get(i).claim());
                }
            }
            return Mono.empty();
        });
    }

    /** One held lock: the client that holds it, the lease, the window claim of a scheduled run. */
    record Frame(LockClient client, Lease lease, @Nullable WindowClaim claim) {
    }

    static Context with(Context ctx, LockClient client, Lease lease, @Nullable WindowClaim claim) {
        List<Frame> frames = new ArrayList<>(frames(ctx));
        frames.add(new Frame(client, lease, claim));
        return ctx.put(KEY, List.copyOf(frames));
    }

    /** @return the valid lease of {@code name} that an enclosing locked method took on {@code client}, or null */
    static @Nullable Lease held(ContextView ctx, LockClient client, String name) {
        List<Frame> frames = frames(ctx);
        for (int i = frames.size() - 1; i >= 0; i--) {
            Frame f = frames.get(i);
            if (f.client() == client && f.lease().name().equals(name) && f.lease().isValid()) {
                return f.lease();
            }
        }
        return null;
    }

    private static @Nullable Frame innermost(ContextView ctx) {
        List<Frame> frames = frames(ctx);
        return frames.isEmpty() ? null : frames.get(frames.size() - 1);
    }

    private static List<Frame> frames(ContextView ctx) {
        return ctx.getOrDefault(KEY, List.of());
    }
}
