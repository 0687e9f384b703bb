package io.reactivelocks.r2dbc.internal;

import io.r2dbc.pool.ConnectionPool;
import io.r2dbc.pool.ConnectionPoolConfiguration;
import io.r2dbc.spi.ConnectionFactory;
import io.r2dbc.spi.Wrapped;
import java.time.Duration;
import java.util.Objects;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

/**
 * The connections of a SQL backend: the factory it was given when that is an r2dbc-pool
 * {@code ConnectionPool} (or wraps one), else a pool of its own over the factory, which
 * {@link #close(Duration, Scheduler)} disposes of. Not API: the dialect packages' code.
 */
public final class BackendPool {

    /** How many wrappers deep a factory is searched for a pool. */
    private static final int UNWRAP_DEPTH = 10;

    private final ConnectionFactory connections;
    private final @Nullable ConnectionPool ownedPool;

    private BackendPool(ConnectionFactory connections, @Nullable ConnectionPool ownedPool) {
        this.connections = connections;
        this.ownedPool = ownedPool;
    }

    /**
     * @param factory        the factory the backend was given
     * @param name           the name of an own pool (e.g. in its metrics)
     * @param maxSize        the most connections of an own pool, at least 1
     * @param connectTimeout how long creating one connection of an own pool may take
     * @return the factory itself when it is a pool, else a new pool over it; nothing connects yet
     */
    public static BackendPool of(ConnectionFactory factory, String name, int maxSize, Duration connectTimeout) {
        Objects.requireNonNull(factory, "factory");
        if (isPool(factory)) {
            return new BackendPool(factory, null);
        }
        ConnectionPool own = new ConnectionPool(ConnectionPoolConfiguration.builder(factory)
                .name(name)
                .initialSize(0)
                .minIdle(0)
                .maxSize(maxSize)
                // an idle connection found dead when handed out (the server restarted meanwhile)
                // fails validation before any statement was sent on it: take the next, or a
                // new one, at once — all idle ones may be dead, hence one retry per pooled connection
                .acquireRetry(maxSize)
                .maxIdleTime(Duration.ofMinutes(5))
                .maxCreateConnectionTime(connectTimeout)
                .build());
        return new BackendPool(own, own);
    }

    /** @return the factory of the backend's connections: a pool */
    public ConnectionFactory connections() {
        return connections;
    }

    /**
     * Disposes of the own pool, if any, waiting at most {@code timeout} for it; the disposal goes on
     * in the background if it takes longer. Errors are ignored. Lazy.
     *
     * @param timeout   how long to wait for the disposal
     * @param scheduler the scheduler of the timeout
     * @return a {@code Mono} that completes when the pool is closed or the wait is over
     */
    public Mono<Void> close(Duration timeout, Scheduler scheduler) {
        ConnectionPool pool = ownedPool;
        return pool == null ? Mono.empty() : Mono.defer(() -> {
            Mono<Void> disposal = pool.close().cache();
            disposal.subscribe(null, e -> { });
            return disposal.timeout(timeout, scheduler).onErrorResume(e -> Mono.empty());
        });
    }

    /**
     * @param factory a connection factory
     * @return the factory under any pool wrappers (a connection that must not be pooled comes from it)
     */
    public static ConnectionFactory unpooled(ConnectionFactory factory) {
        ConnectionFactory f = factory;
        for (int i = 0; i < UNWRAP_DEPTH; i++) {
            if (f instanceof Wrapped<?> w && w.unwrap() instanceof ConnectionFactory inner && inner != f) {
                f = inner;
            } else {
                break;
            }
        }
        return f;
    }

    private static boolean isPool(ConnectionFactory factory) {
        Object f = factory;
        for (int i = 0; i < UNWRAP_DEPTH && f != null; i++) {
            if (f instanceof ConnectionPool) {
                return true;
            }
            f = f instanceof Wrapped<?> w ? w.unwrap() : null;
        }
        return false;
    }

    @Override
    public String toString() {
        return connections.toString();
    }
}
