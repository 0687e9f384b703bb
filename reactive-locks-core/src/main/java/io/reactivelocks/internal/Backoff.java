package io.reactivelocks.internal;

import java.util.concurrent.ThreadLocalRandom;
import reactor.util.retry.RetryBackoffSpec;

/**
 * The delay between attempts, from the parameters of a Reactor {@link RetryBackoffSpec} (its
 * minimum, maximum and jitter factor): exponential from the minimum, capped at the maximum, drawn
 * uniformly from the upper {@code jitter} part of the step. The engine paces contended acquires
 * with it; stores and lock kinds that poll or retry on their own use the same steps.
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
    public static long delayNanos(RetryBackoffSpec spec, long attempt, double random) {
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
     * @return the delay in nanoseconds, as {@link #delayNanos(RetryBackoffSpec, long, double)} with a
     *         random draw of {@link ThreadLocalRandom}
     */
    public static long delayNanos(RetryBackoffSpec spec, long attempt) {
        return delayNanos(spec, attempt, ThreadLocalRandom.current().nextDouble());
    }
}
