package io.reactivelocks.benchmarks.load;

import io.lettuce.core.RedisClient;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockOptions;
import io.reactivelocks.redis.RedisLockOptions;
import io.reactivelocks.redis.RedisLocks;
import io.reactivelocks.spi.Attempt;
import io.reactivelocks.spi.DelegatingLockBackend;
import io.reactivelocks.spi.GrantRequest;
import io.reactivelocks.spi.LockBackend;
import io.reactivelocks.spi.LockEvent;
import io.reactivelocks.test.server.RedisServer;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import org.HdrHistogram.Histogram;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * A diagnostic beside B3 (issue 30), not part of the report: where one handoff of ours on Redis spends its time,
 * phase by phase, and B3's chain of ours against the raw driver's handoff ({@link RawHandoffs.Redis}) in a JVM of
 * their own. The phases are timed by a {@link DelegatingLockBackend} around the store: the bench's release call,
 * the store's release request, the release notification reaching the engine, the woken waiter's grant request and
 * its answer, the grant reaching the caller. One chain at a time, so the latest timestamp of each kind belongs to
 * the handoff being measured; the first half of the chains warms up.
 *
 * <pre>
 * ./mvnw -q -o -pl benchmarks -am package -DskipTests dependency:build-classpath -Dmdep.outputFile=$PWD/benchmarks/target/classpath.txt
 * java -cp benchmarks/target/classes:$(cat benchmarks/target/classpath.txt) io.reactivelocks.benchmarks.load.HandoffTrace 100 16
 * java -cp ... io.reactivelocks.benchmarks.load.HandoffTrace 100 12 --raw
 * </pre>
 */
public final class HandoffTrace {

    private static final AtomicLong RELEASE_SENT = new AtomicLong();
    private static final AtomicLong RELEASE_ANSWERED = new AtomicLong();
    private static final AtomicLong RELEASED_EVENT = new AtomicLong();
    private static final AtomicLong GRANT_SENT = new AtomicLong();
    private static final AtomicLong GRANT_ANSWERED = new AtomicLong();

    private HandoffTrace() {
    }

    /** The store, timestamping each phase of a handoff. */
    private static final class Traced extends DelegatingLockBackend {
        Traced(LockBackend store) {
            super(store);
        }

        @Override
        public Mono<Attempt> tryGrant(GrantRequest request) {
            return Mono.defer(() -> {
                long sent = System.nanoTime();
                return super.tryGrant(request).doOnNext(a -> {
                    if (a instanceof Attempt.Granted) {
                        GRANT_SENT.set(sent);
                        GRANT_ANSWERED.set(System.nanoTime());
                    }
                });
            });
        }

        @Override
        public Mono<Boolean> release(String name, String owner) {
            return Mono.defer(() -> {
                RELEASE_SENT.set(System.nanoTime());
                return super.release(name, owner).doOnNext(x -> RELEASE_ANSWERED.set(System.nanoTime()));
            });
        }

        @Override
        public Flux<LockEvent> wakeUps(String name) {
            return super.wakeUps(name).doOnNext(e -> {
                if (e instanceof LockEvent.Released) {
                    RELEASED_EVENT.set(System.nanoTime());
                }
            });
        }
    }

    /** One phase: from one timestamp to another, recorded when a grant reaches its caller. */
    private record Phase(String label, LongSupplier from, LongSupplier to) {
    }

    /**
     * @param args waiters per chain (100), chains (16), and {@code --raw} for ours against the raw handoff
     * @throws Exception when a chain cannot be set up
     */
    public static void main(String[] args) throws Exception {
        int n = args.length > 0 ? Integer.parseInt(args[0]) : 100;
        int chains = args.length > 1 ? Integer.parseInt(args[1]) : 16;
        try (RedisServer server = RedisServer.start()) {
            if (args.length > 2 && args[2].equals("--raw")) {
                for (int round = 0; round < 2; round++) {
                    try (Contender raw = new RawHandoffs.Redis(server.url()); Contender ours = ours(server.url(), false)) {
                        report(raw.label, chains(raw, n, chains, null));
                        report("reactive-locks", chains(ours, n, chains, null));
                    }
                }
                return;
            }
            AtomicLong releaseCalled = new AtomicLong();
            AtomicLong granted = new AtomicLong();
            Phase[] phases = {
                new Phase("handoff (release call to grant)", releaseCalled::get, granted::get),
                new Phase("release call -> release request", releaseCalled::get, RELEASE_SENT::get),
                new Phase("release request -> notification", RELEASE_SENT::get, RELEASED_EVENT::get),
                new Phase("notification -> grant request", RELEASED_EVENT::get, GRANT_SENT::get),
                new Phase("grant request -> answer", GRANT_SENT::get, GRANT_ANSWERED::get),
                new Phase("grant answer -> caller", GRANT_ANSWERED::get, granted::get),
                new Phase("notification -> release answer", RELEASED_EVENT::get, RELEASE_ANSWERED::get),
            };
            Histogram[] h = new Histogram[phases.length];
            try (Contender ours = ours(server.url(), true)) {
                chains(ours, n, chains, (called, at) -> {
                    releaseCalled.set(called);
                    granted.set(at);
                    for (int i = 0; i < phases.length; i++) {
                        if (h[i] == null) {
                            h[i] = new Histogram(3);
                        }
                        h[i].recordValue(Math.max(0, phases[i].to().getAsLong() - phases[i].from().getAsLong()));
                    }
                }, () -> java.util.Arrays.fill(h, null));
            }
            for (int i = 0; i < phases.length; i++) {
                report(phases[i].label(), h[i]);
            }
        }
    }

    private static Contender ours(String url, boolean traced) {
        RedisClient client = RedisClient.create(url);
        LockBackend store = RedisLocks.backend(client, RedisLockOptions.defaults());
        return new Ours("redis", LockClient.create(traced ? new Traced(store) : store, LockOptions.defaults()), client::shutdown);
    }

    private static void report(String label, Histogram h) {
        System.out.printf("%-36s p50 %7.1f µs   p90 %7.1f µs   (%d)%n", label, h.getValueAtPercentile(50) / 1000.0,
                h.getValueAtPercentile(90) / 1000.0, h.getTotalCount());
    }

    /** What a grant tells the trace: when the release before it was called, and when it arrived. */
    private interface OnGrant {
        void granted(long releaseCalled, long at);
    }

    private static Histogram chains(Contender c, int n, int chains, OnGrant onGrant) throws InterruptedException {
        return chains(c, n, chains, onGrant, () -> { });
    }

    /** B3's chain ({@link Handoff}): one holder, {@code n} waiters, each released as soon as it is granted. */
    private static Histogram chains(Contender c, int n, int chains, OnGrant onGrant, Runnable measuring)
            throws InterruptedException {
        Histogram h = new Histogram(3);
        for (int k = 0; k < chains; k++) {
            if (k == chains / 2) {
                h = new Histogram(3);
                measuring.run();
            }
            Histogram latencies = h;
            String name = "trace." + c.id + "." + k + "." + System.nanoTime();
            c.prepare(n + 1);
            Contender.Held holder = c.acquireWaiting(name, 0).block(Duration.ofSeconds(10));
            AtomicLong lastRelease = new AtomicLong();
            AtomicInteger grants = new AtomicInteger();
            CountDownLatch all = new CountDownLatch(1);
            for (int i = 1; i <= n; i++) {
                c.acquireWaiting(name, i).subscribe(held -> {
                    long at = System.nanoTime();
                    synchronized (latencies) {
                        latencies.recordValue(Math.max(0, at - lastRelease.get()));
                        if (onGrant != null) {
                            onGrant.granted(lastRelease.get(), at);
                        }
                    }
                    if (grants.incrementAndGet() == n) {
                        all.countDown();
                    } else {
                        lastRelease.set(System.nanoTime());
                    }
                    held.release().subscribe();
                });
            }
            Thread.sleep(300 + 10L * n); // B3's settle time: every waiter refused once and waiting
            lastRelease.set(System.nanoTime());
            java.util.Objects.requireNonNull(holder, "holder").release().subscribe();
            if (!all.await(60, TimeUnit.SECONDS)) {
                throw new IllegalStateException(c.label + ": chain " + k + " granted " + grants.get() + " of " + n);
            }
            Thread.sleep(200);
            c.finish();
        }
        return h;
    }
}
