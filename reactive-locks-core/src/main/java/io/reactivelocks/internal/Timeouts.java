package io.reactivelocks.internal;

import java.time.Duration;
import java.util.concurrent.TimeoutException;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

/**
 * Request timeouts without Reactor's per-subscribe cost: {@code Mono.timeout(Duration)} and
 * {@code timeout(Publisher)} build a description of the source with a regular expression on
 * every subscribe; the variant with a fallback does not.
 */
final class Timeouts {

    private Timeouts() {
    }

    static <T> Mono<T> within(Mono<T> source, Duration timeout, Scheduler scheduler) {
        return source.timeout(Mono.delay(timeout, scheduler),
                Mono.error(() -> new TimeoutException("no answer within " + timeout)));
    }
}
