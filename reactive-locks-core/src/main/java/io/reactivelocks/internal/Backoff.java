package io.reactivelocks.internal;

import java.util.concurrent.ThreadLocalRandom;
import reactor.util.retry.RetryBackoffSpec;

/**
 * Delay between contended attempts, from the parameters of a Reactor {@link RetryBackoffSpec}.
 * Public only for the other engines in {@code io.reactivelocks.internal.*}; not API.
 */
public final class Backoff {

    private Backoff() {
    }

    /**
     * @param spec    min, max and jitter factor
     * @param attempt the number of attempts made so far, 1 for the first wait
     * @param random  a uniform value in [0, 1)
     * @return the delay in nanoseconds: {@code d = min(max, min·2^(attempt−1))}, uniform in {@code [d(1−j), d]}
     */
    static long delayNanos(RetryBackoffSpec spec, long attempt, double random) {
        long min = spec.minBackoff.toNanos();
        long max = spec.maxBackoff.toNanos();
        long shift = Math.max(0, attempt - 1);
        long d = (shift >= 62 || min > (max >> shift)) ? max : Math.min(max, min << shift);
        double j = Math.min(1.0, Math.max(0.0, spec.jitterFactor));
        long lo = (long) (d * (1.0 - j));
        return lo + (long) ((d - lo) * random);
    }

    /**
     * @param spec    min, max and jitter factor
     * @param attempt the number of attempts made so far, 1 for the first wait
     * @return the delay in nanoseconds, with a random jitter
     */
    public static long delayNanos(RetryBackoffSpec spec, long attempt) {
        return delayNanos(spec, attempt, ThreadLocalRandom.current().nextDouble());
    }
}
