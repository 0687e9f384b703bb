package io.reactivelocks.internal;

import io.reactivelocks.Lease;
import io.reactivelocks.LockClock;
import io.reactivelocks.LockOptions;
import io.reactivelocks.LockTimeoutException;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Every concept's hold stream: acquire, then the held grant's updates; cancelling releases it.
 *
 * <p><b>Release on cancel, whenever it comes.</b> Not {@code Flux.usingWhen}: a cancel that meets
 * the grant on its way in could leave it held and renewed with no subscriber (seen in the contract's
 * cancel-at-random-moments test, about once in a few thousand rounds under load). Here the grant is
 * recorded the moment it arrives, and whichever of "arrived" and "ended" comes second releases it:
 * each side writes its own flag, then reads the other's, so at least one of them sees both (a
 * release twice is a no-op).
 *
 * <p><b>The late-grant rule.</b> A grant can be lost between the store's answer and the moment its
 * updates are subscribed (its validity was nearly spent when the answer came, and the thread that
 * delivers it was descheduled past the deadline): the stream would then end without a single lease,
 * which a subscriber cannot tell from anything. Instead the hold asks again with what is left of its
 * wait timeout (the lost grant's clean-up was sent when it was lost); a spent wait ends it with
 * {@link LockTimeoutException}. Not API.
 */
public final class HoldAgain {

    private static final reactor.util.Logger LOG = reactor.util.Loggers.getLogger(HoldAgain.class);

    private HoldAgain() {
    }

    /**
     * @param name    the name, for the timeout's message and log lines
     * @param options the caller's options; each new ask gets them with the wait that is left
     * @param acquire one acquire with the given options
     * @param updates the held grant's lease and renewals, ending at loss; empty when the grant was
     *                lost before this call
     * @param release gives the grant back (idempotent)
     * @param <H>     the grant's handle
     * @return the hold stream: never completes without its first lease
     */
    public static <H> Flux<Lease> hold(String name, LockOptions options, Function<LockOptions, Mono<H>> acquire,
                                       Function<H, Flux<Lease>> updates, Function<H, Mono<Void>> release) {
        return Flux.defer(() -> {
            Held<H> held = new Held<>(name, release);
            LockClock clock = options.clock();
            long start = clock.nanoTime();
            return ask(name, options, start, acquire, updates, held).doFinally(signal -> held.end());
        });
    }

    private static <H> Flux<Lease> ask(String name, LockOptions options, long start, Function<LockOptions, Mono<H>> acquire,
                                       Function<H, Flux<Lease>> updates, Held<H> held) {
        return Flux.defer(() -> {
            LockOptions now = options;
            Duration wait = options.waitTimeout();
            if (wait != null) {
                long left = wait.toNanos() - (options.clock().nanoTime() - start);
                if (left <= 0) {
                    return Flux.error(new LockTimeoutException(name, wait));
                }
                now = options.mutate().waitTimeout(Duration.ofNanos(left)).build();
            }
            return acquire.apply(now)
                    .doOnNext(held::arrived)
                    .flatMapMany(h -> updates.apply(h).switchIfEmpty(Flux.defer(() -> {
                        LOG.debug("lock '{}': the grant was lost before its hold stream was subscribed; asking again", name);
                        return ask(name, options, start, acquire, updates, held);
                    })));
        });
    }

    /** The grant of one hold stream and whether the stream ended: the second of the two releases. */
    private static final class Held<H> {
        private final String name;
        private final Function<H, Mono<Void>> release;
        private final AtomicReference<H> current = new AtomicReference<>();
        private volatile boolean ended;

        Held(String name, Function<H, Mono<Void>> release) {
            this.name = name;
            this.release = release;
        }

        void arrived(H h) {
            H previous = current.getAndSet(h);
            if (previous != null) {
                releaseDetached(previous); // lost before delivery: its clean-up was sent already, this is a no-op
            }
            if (ended) {
                releaseDetached(h);
            }
        }

        void end() {
            ended = true;
            H h = current.get();
            if (h != null) {
                releaseDetached(h);
            }
        }

        private void releaseDetached(H h) {
            release.apply(h).subscribe(null, e -> LOG.warn("could not release lock '{}' on the store (it expires by its lease): {}",
                    name, e.toString()));
        }
    }
}
