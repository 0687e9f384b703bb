package io.reactivelocks.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.reactivelocks.Lease;
import io.reactivelocks.LockBackendException;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockState;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Predicate;
import org.awaitility.core.ConditionTimeoutException;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;

/**
 * What the topology tests do to a lock around a fault: a holder that keeps its lease or learns it
 * lost it, a burst of grants just before the fault (how many the new master forgot), a new client's
 * first grant after it (its token and how long it took). Blocking helpers for test threads only.
 */
final class TopologyProbe {

    static final Duration STEP = Duration.ofSeconds(30);

    /** A {@code hold} stream being watched: its leases and when it completed (0 while it runs). */
    static final class Holder implements AutoCloseable {
        final List<Lease> leases = new CopyOnWriteArrayList<>();
        final AtomicLong lastLeaseAt = new AtomicLong();
        final AtomicLong endedAt = new AtomicLong();
        final AtomicReference<Throwable> error = new AtomicReference<>();
        final Disposable subscription;

        Holder(LockClient client, String name) {
            subscription = client.hold(name).subscribe(l -> {
                leases.add(l);
                lastLeaseAt.set(System.nanoTime());
            }, e -> {
                error.set(e);
                endedAt.set(System.nanoTime());
            }, () -> endedAt.set(System.nanoTime()));
            try {
                await().atMost(STEP).until(() -> !leases.isEmpty() || ended());
            } catch (ConditionTimeoutException e) {
                throw new AssertionError("the holder of " + name + " got no lease within " + STEP + "\n" + lettuceThreads(), e);
            }
            if (leases.isEmpty()) {
                throw new AssertionError("the holder of " + name + " ended without a lease", error.get());
            }
        }

        long token() {
            return leases.get(0).token();
        }

        boolean ended() {
            return endedAt.get() != 0;
        }

        /**
         * Waits (bounded) until the hold ended or was renewed well after the fault, then releases it.
         *
         * @param faultAt when the fault was injected (System.nanoTime)
         * @return what the holder saw, for the report
         */
        String settle(long faultAt, Duration renewedAfter) {
            await().atMost(Duration.ofSeconds(30)).until(() -> ended() || lastLeaseAt.get() - faultAt > renewedAfter.toNanos());
            String seen = ended() ? "lost its lease (hold completed) after " + (endedAt.get() - faultAt) / 1_000_000 + " ms"
                    : "kept its lease (renewed " + (lastLeaseAt.get() - faultAt) / 1_000_000 + " ms after the fault)";
            close();
            return seen;
        }

        @Override
        public void close() {
            subscription.dispose();
        }
    }

    /** The grants made just before a fault: name and token. */
    record Grant(String name, long token, String owner) {
    }

    private TopologyProbe() {
    }

    /** Grants each name (long lease, so only a failover can free it) and returns the grants. */
    static List<Grant> burst(LockClient client, List<String> names, io.reactivelocks.LockOptions options) {
        List<Grant> out = new ArrayList<>();
        for (String n : names) {
            Lease l = client.tryAcquire(n, options).block(STEP);
            assertThat(l).as("burst grant of %s", n).isNotNull();
            out.add(new Grant(n, l.token(), l.owner()));
        }
        return out;
    }

    /** @return how many of the grants the store no longer holds for their owner (forgotten by a failover) */
    static int forgotten(LockClient checker, List<Grant> grants) {
        int n = 0;
        for (Grant g : grants) {
            LockState s = await().atMost(STEP).ignoreExceptions().until(() -> checker.inspect(g.name()).block(STEP), x -> x != null);
            if (!(s instanceof LockState.Held h) || !h.owner().equals(g.owner())) {
                n++;
            }
        }
        return n;
    }

    /**
     * One {@code tryAcquire} right after the fault; it must end within {@code bound}, as a grant or
     * as a {@link LockBackendException}, never hang.
     *
     * @return the outcome: "error: ..." or "granted"/"busy"
     */
    static String firstAttempt(LockClient client, String name, Duration bound) {
        long t0 = System.nanoTime();
        String outcome = client.tryAcquire(name)
                .flatMap(l -> l.release().thenReturn("granted"))
                .defaultIfEmpty("busy")
                .onErrorResume(LockBackendException.class, e -> Mono.just("error: " + e.getClass().getSimpleName()
                        + (e.isTransient() ? " (transient)" : " (permanent)")))
                .block(bound.plusSeconds(5));
        long ms = (System.nanoTime() - t0) / 1_000_000;
        assertThat(Duration.ofMillis(ms)).as("first attempt after the fault: %s", outcome).isLessThanOrEqualTo(bound);
        return outcome + " after " + ms + " ms";
    }

    /**
     * Retries {@code tryAcquire} until granted.
     *
     * @return the lease (still held) and the ms it took
     */
    static Lease acquireAgain(LockClient client, String name, Duration bound, Predicate<Lease> check) {
        Lease[] got = new Lease[1];
        AtomicReference<Throwable> last = new AtomicReference<>();
        AtomicLong busy = new AtomicLong();
        try {
            await().atMost(bound).pollInterval(Duration.ofMillis(100)).until(() -> {
                try {
                    got[0] = client.tryAcquire(name).block(STEP);
                } catch (RuntimeException e) {
                    last.set(e);
                    return false;
                }
                if (got[0] == null) {
                    busy.incrementAndGet();
                }
                return got[0] != null;
            });
        } catch (ConditionTimeoutException e) {
            // say why: the last error (a connection that never came back, a READONLY replica…) or how often it was busy
            throw new AssertionError("no grant of " + name + " within " + bound + " (" + busy.get() + " attempts found it busy; "
                    + "the last error: " + last.get() + ")\n" + lettuceThreads(), last.get() != null ? last.get() : e);
        }
        assertThat(check.test(got[0])).as("check of the lease after the fault").isTrue();
        return got[0];
    }

    /** @return the stacks of the driver's threads (a wedged endpoint shows there: a spinning or parked writer) */
    static String lettuceThreads() {
        StringBuilder out = new StringBuilder("lettuce threads:\n");
        Thread.getAllStackTraces().forEach((t, stack) -> {
            if (!t.getName().startsWith("lettuce")) {
                return;
            }
            out.append("  ").append(t.getName()).append(' ').append(t.getState()).append('\n');
            for (int i = 0; i < Math.min(stack.length, 14); i++) {
                out.append("      at ").append(stack[i]).append('\n');
            }
        });
        return out.toString();
    }

    static void log(String topology, String message) {
        System.out.println("[" + topology + "] " + message);
    }
}
