package io.reactivelocks.spi.window;

import io.reactivelocks.LockBackendException;
import java.time.Duration;
import reactor.core.publisher.Mono;

/**
 * What a store implements for window locks: one atomic "first of this window?" decision. The
 * engine ({@link io.reactivelocks.window.WindowLock#create}) has checked the arguments already.
 * Every method is lazy (nothing is sent before subscribe) and never blocks.
 */
public interface WindowStore {

    /**
     * Claims the current window of {@code name} for {@code period}: computes the window index from
     * the store's time source, and stores it for {@code (name, period)} only if it is greater than
     * the stored one (so the first caller of a window wins and a stored window never goes back).
     *
     * @param name   a checked name
     * @param period a checked period (whole milliseconds, positive, at most {@code WindowLock.MAX_PERIOD})
     * @return the grant when this call claimed the window, empty when the window (or a later one)
     *         was claimed already; errors with {@link LockBackendException}
     */
    Mono<WindowGrant> claim(String name, Duration period);

    /**
     * Releases the resources the store opened (not those passed in by the application). Idempotent.
     *
     * @return a {@code Mono} that closes on subscribe
     */
    Mono<Void> close();
}
