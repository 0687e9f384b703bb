package io.reactivelocks.blocking;

import io.reactivelocks.LockBackendException;
import io.reactivelocks.LockOptions;
import io.reactivelocks.window.WindowClaim;
import io.reactivelocks.window.WindowLock;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import reactor.core.publisher.Mono;

/**
 * A blocking view of a {@link WindowLock} ("run this job once per hour across the fleet"): at most
 * one claim per name and period. Interruption, errors and the refusal on Reactor non-blocking
 * threads are as described on {@link BlockingLocks}.
 *
 * <pre>{@code
 * BlockingWindowLock hourly = BlockingWindowLock.of(store.windowLocks(LockOptions.defaults()));
 * hourly.tryClaim("report", Duration.ofHours(1)).ifPresent(claim -> sendReport(claim.window(), claim.token()));
 * }</pre>
 */
public final class BlockingWindowLock implements AutoCloseable {

    private final WindowLock windows;

    private BlockingWindowLock(WindowLock windows) {
        this.windows = windows;
    }

    /**
     * @param windows the reactive window lock whose store decides the claims
     * @return a blocking view of it; cheap, holds no resources of its own
     * @throws NullPointerException naming {@code windows} when it is null
     */
    public static BlockingWindowLock of(WindowLock windows) {
        return new BlockingWindowLock(Objects.requireNonNull(windows, "windows"));
    }

    /** @return the reactive window lock underneath */
    public WindowLock windowLock() {
        return windows;
    }

    /** @return the options the window lock uses (its clock measures {@link WindowClaim#endsAtNanos()}) */
    public LockOptions options() {
        return windows.options();
    }

    /**
     * Claims the current window of {@code name} for {@code period}: one store request, never
     * retried (see {@link WindowLock#tryClaim}).
     *
     * @param name   the lock name
     * @param period the window length: whole milliseconds, from 1 ms to {@link WindowLock#MAX_PERIOD}
     * @return the claim when this call was the first of the window; empty when it was claimed already
     * @throws InterruptedException     when interrupted while waiting: the request may have reached the store
     * @throws LockBackendException     when the store failed or did not answer within the request timeout
     * @throws IllegalArgumentException when the name or the period is invalid
     * @throws IllegalStateException    when called on a Reactor non-blocking thread
     */
    public Optional<WindowClaim> tryClaim(String name, Duration period) throws InterruptedException {
        Mono<WindowClaim> claim = windows.tryClaim(name, period);
        Await.refuseNonBlocking("BlockingWindowLock.tryClaim");
        return Optional.ofNullable(Await.interruptibly(claim, "tryClaim", c -> { }));
    }

    /** Closes the window lock underneath (see {@link WindowLock#close}); idempotent, not interruptible. */
    @Override
    public void close() {
        Await.closing(windows.close(), "BlockingWindowLock.close");
    }

    /** @return a description naming the window lock */
    @Override
    public String toString() {
        return "BlockingWindowLock[" + windows + "]";
    }
}
