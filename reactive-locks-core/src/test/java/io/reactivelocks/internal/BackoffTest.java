package io.reactivelocks.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;
import reactor.util.retry.Retry;
import reactor.util.retry.RetryBackoffSpec;

class BackoffTest {

    private static final long MS = 1_000_000L;

    @Test
    void withoutJitterTheDelayDoublesFromMinUpToMax() {
        RetryBackoffSpec spec = Retry.backoff(Long.MAX_VALUE, Duration.ofMillis(10)).maxBackoff(Duration.ofSeconds(1)).jitter(0);
        assertThat(Backoff.delayNanos(spec, 1, 0.5)).isEqualTo(10 * MS);
        assertThat(Backoff.delayNanos(spec, 2, 0.5)).isEqualTo(20 * MS);
        assertThat(Backoff.delayNanos(spec, 7, 0.5)).isEqualTo(640 * MS);
        assertThat(Backoff.delayNanos(spec, 8, 0.5)).isEqualTo(1000 * MS);
        assertThat(Backoff.delayNanos(spec, 500, 0.5)).isEqualTo(1000 * MS);
        assertThat(Backoff.delayNanos(spec, Long.MAX_VALUE, 0.5)).isEqualTo(1000 * MS);
    }

    @Test
    void fullJitterStaysWithinZeroAndTheStep() {
        RetryBackoffSpec spec = Retry.backoff(Long.MAX_VALUE, Duration.ofMillis(10)).maxBackoff(Duration.ofSeconds(1)).jitter(1.0);
        long min = Long.MAX_VALUE;
        long max = 0;
        for (int i = 0; i < 10_000; i++) {
            long d = Backoff.delayNanos(spec, 4);
            assertThat(d).isBetween(0L, 80 * MS);
            min = Math.min(min, d);
            max = Math.max(max, d);
        }
        assertThat(min).as("jitter spreads low").isLessThan(8 * MS);
        assertThat(max).as("jitter spreads high").isGreaterThan(72 * MS);
        assertThat(Backoff.delayNanos(spec, 4, 0.0)).isZero();
    }

    @Test
    void partialJitterKeepsTheLowerPart() {
        RetryBackoffSpec spec = Retry.backoff(Long.MAX_VALUE, Duration.ofMillis(100)).maxBackoff(Duration.ofSeconds(1)).jitter(0.25);
        for (int i = 0; i < 1000; i++) {
            assertThat(Backoff.delayNanos(spec, 1)).isBetween(75 * MS, 100 * MS);
        }
    }
}
