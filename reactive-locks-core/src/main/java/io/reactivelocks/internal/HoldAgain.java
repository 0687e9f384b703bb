package io.reactivelocks.internal;

import io.reactivelocks.Lease;
import io.reactivelocks.LockClock;
import io.reactivelocks.LockOptions;
import io.reactivelocks.LockTimeoutException;
import java.time.Duration;
import java.util.function.Function;
import reactor.core.publisher.Flux;
import reactor.util.retry.Retry;

/**
 * The late-grant rule for hold streams. A grant can be lost between the store's answer and the
 * moment its hold stream is subscribed (its validity was nearly spent when the answer came, and the
 * thread that delivers it was descheduled past the deadline): the stream would then end without a
 * single lease, which a subscriber cannot tell from anything. Instead the grant is given back (the
 * hold's own clean-up, awaited) and the hold asks again with what is left of its wait timeout; a
 * spent wait ends it with {@link LockTimeoutException}. Every concept's {@code hold} goes through
 * here. Not API.
 */
public final class HoldAgain {

    private static final reactor.util.Logger LOG = reactor.util.Loggers.getLogger(HoldAgain.class);

    private HoldAgain() {
    }

    /**
     * @param name    the name, for the timeout's message
     * @param options the caller's options; each new ask gets them with the wait that is left
     * @param once    one hold with the given options: an acquire and the held lease's updates, which
     *                end at once, without an element, when the grant was lost before delivery
     * @return the hold stream: never completes without its first lease
     */
    public static Flux<Lease> hold(String name, LockOptions options, Function<LockOptions, Flux<Lease>> once) {
        return Flux.defer(() -> {
            LockClock clock = options.clock();
            Duration wait = options.waitTimeout();
            long start = clock.nanoTime();
            return Flux.defer(() -> {
                LockOptions now = options;
                if (wait != null) {
                    long left = wait.toNanos() - (clock.nanoTime() - start);
                    if (left <= 0) {
                        return Flux.error(new LockTimeoutException(name, wait));
                    }
                    now = options.mutate().waitTimeout(Duration.ofNanos(left)).build();
                }
                return once.apply(now).switchIfEmpty(Flux.error(LostBeforeDelivery::new));
            }).retryWhen(Retry.indefinitely().filter(LostBeforeDelivery.class::isInstance)
                    .doBeforeRetry(s -> LOG.debug("lock '{}': the grant was lost before its hold stream was subscribed;"
                            + " asking again", name)));
        });
    }

    /** A grant lost before its hold stream saw it: the signal to ask again (never leaves this class). */
    private static final class LostBeforeDelivery extends RuntimeException {
        private static final long serialVersionUID = 1L;

        LostBeforeDelivery() {
            super("grant lost before delivery", null, false, false);
        }
    }
}
