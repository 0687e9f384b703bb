package io.reactivelocks.benchmarks.load;

import java.time.Duration;

/**
 * How long and how often each benchmark runs: the full run (about 20 minutes on 2 cores) or
 * {@code --quick} (a few minutes, fewer rounds; its figures are noisier).
 *
 * @param quick          whether this is the quick mode
 * @param concurrencies  B1 concurrency levels
 * @param rounds         B1 measured rounds per contender and level (contenders interleaved)
 * @param round          B1 length of one measured round
 * @param warmup         B1 warm-up per contender and level
 * @param firstWarmup    B1 JIT warm-up per contender before the first level, with {@link Uncontended#JIT_WORKERS} workers
 * @param waiters        B3 waiter counts
 * @param chains         B3 handoff chains per waiter count (same order as {@code waiters})
 * @param leaseCounts    B4 held leases
 * @param b4Lease        B4 lease time (ours) and watchdog timeout (Redisson); renewal every third
 * @param b4Ticks        B4 renewal ticks inside the measured window
 * @param rttSamples     round-trip probe samples
 */
record Settings(boolean quick, int[] concurrencies, int rounds, Duration round, Duration warmup, Duration firstWarmup,
                int[] waiters, int[] chains, int[] leaseCounts, Duration b4Lease, int b4Ticks, int rttSamples) {

    static Settings full() {
        return new Settings(false, new int[] {1, 16, 64}, 5, Duration.ofSeconds(2), Duration.ofMillis(1500),
                Duration.ofSeconds(4), new int[] {16, 100}, new int[] {10, 4}, new int[] {10_000, 100_000},
                Duration.ofSeconds(30), 2, 3000);
    }

    static Settings quickSettings() {
        return new Settings(true, new int[] {1, 16, 64}, 2, Duration.ofSeconds(1), Duration.ofMillis(500),
                Duration.ofSeconds(2), new int[] {16, 100}, new int[] {3, 1}, new int[] {100_000},
                Duration.ofSeconds(9), 2, 1000);
    }

    Duration renewalInterval() {
        return b4Lease.dividedBy(3);
    }

    /**
     * @return the B4 window: {@link #b4Ticks} renewal intervals (Redisson's; ours runs from the end of one tick to
     *     the end of the {@link #b4Ticks}-th next, about as long: a window of fixed length held 2 or 3 of its
     *     ticks by its phase)
     */
    Duration b4Window() {
        return renewalInterval().multipliedBy(b4Ticks);
    }

    String describe() {
        StringBuilder s = new StringBuilder();
        s.append(quick ? "quick mode" : "full mode").append(": B1 ").append(rounds).append(" rounds × ")
                .append(round.toMillis()).append(" ms per contender and level (warm-up ").append(warmup.toMillis())
                .append(" ms; at the first level ").append(firstWarmup.toMillis()).append(" ms with ")
                .append(Uncontended.JIT_WORKERS).append(" workers before it, for the JIT); B3 ");
        for (int i = 0; i < waiters.length; i++) {
            s.append(i > 0 ? ", " : "").append(chains[i]).append(" chains of ").append(waiters[i]).append(" waiters");
        }
        s.append("; B4 lease ").append(b4Lease.toSeconds()).append(" s (renewal every ").append(renewalInterval().toMillis())
                .append(" ms), window ").append(b4Window().toMillis()).append(" ms");
        return s.toString();
    }
}
