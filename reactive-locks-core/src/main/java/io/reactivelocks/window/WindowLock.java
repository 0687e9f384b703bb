package io.reactivelocks.window;

import io.reactivelocks.LockBackendException;
import io.reactivelocks.LockOptions;
import io.reactivelocks.internal.window.DefaultWindowLock;
import io.reactivelocks.spi.window.WindowStore;
import java.time.Duration;
import reactor.core.publisher.Mono;

/**
 * A window lock ("run this job once per hour across the fleet"): at most one claim per name and
 * period. The window index is {@code floor(store time / period)}; the first caller of a window
 * wins and receives a {@link WindowClaim} with a fencing token; every other caller of that window
 * gets nothing. Nothing is ever released — the next window is simply claimable again. A stored
 * window never goes back, so a caller whose store clock lags cannot claim an older window again.
 *
 * <pre>{@code
 * WindowLock hourly = store.windowLocks(options);       // store = RedisLocks.connect(redis), PostgresLocks, ...; or LocalWindowStore
 * hourly.tryClaim("report", Duration.ofHours(1))
 *       .flatMap(claim -> sendReport(claim.window(), claim.token()))
 *       .subscribe();
 * }</pre>
 *
 * <p>Which clock decides the window is the store's choice, documented by each store: the server's
 * on Redis ({@code TIME}), PostgreSQL ({@code now()}) and ZooKeeper (the leader's time of the
 * write); the client's wall clock on etcd, which has no clock a transaction can read.
 */
public interface WindowLock {

    /** The longest period accepted: 366 days. */
    Duration MAX_PERIOD = Duration.ofDays(366);

    /**
     * @param store the store that decides claims (closed by {@link #close()})
     * @return a window lock with {@link LockOptions#defaults()} (request timeout, drift allowance, clock)
     */
    static WindowLock create(WindowStore store) {
        return create(store, LockOptions.defaults());
    }

    /**
     * @param store   the store that decides claims (closed by {@link #close()})
     * @param options the request timeout, drift allowance, clock and scheduler to use; the lease,
     *                renewal and wait settings do not apply
     * @return a window lock over {@code store}
     * @throws NullPointerException when an argument is null
     */
    static WindowLock create(WindowStore store, LockOptions options) {
        return new DefaultWindowLock(store, options);
    }

    /**
     * Claims the current window of {@code name} for {@code period}. Each subscription is one
     * attempt (one store request), never retried: after a transient error it is unknown whether
     * the window was claimed, and a second attempt of the same window finds it claimed. Cancelling
     * does not recall a request already sent.
     *
     * @param name   the lock name: non-empty, at most 1024 UTF-8 bytes; windows of different names
     *               are independent
     * @param period the window length: a whole number of milliseconds, from 1 ms to {@link #MAX_PERIOD};
     *               the same name may be claimed independently with different periods
     * @return the claim when this call was the first of the window; empty when the window was
     *         claimed already; errors with {@link LockBackendException} when the store failed or did
     *         not answer within the request timeout
     * @throws NullPointerException     when an argument is null
     * @throws IllegalArgumentException when the name is empty or too long, or the period is not a
     *                                  whole number of milliseconds between 1 ms and {@link #MAX_PERIOD}
     */
    Mono<WindowClaim> tryClaim(String name, Duration period);

    /** @return the options this window lock uses (its {@code clock()} measures {@link WindowClaim#endsAtNanos()}) */
    LockOptions options();

    /**
     * Closes the store (its connections, where it opened them). Idempotent; later claims fail with
     * {@link io.reactivelocks.LockClientClosedException}.
     *
     * @return a {@code Mono} that closes on subscribe
     */
    Mono<Void> close();
}
