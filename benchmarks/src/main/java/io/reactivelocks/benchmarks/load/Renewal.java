package io.reactivelocks.benchmarks.load;

import com.sun.management.OperatingSystemMXBean;
import io.lettuce.core.RedisClient;
import io.reactivelocks.Lease;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockListener;
import io.reactivelocks.LockOptions;
import io.reactivelocks.redis.RedisLockOptions;
import io.reactivelocks.redis.RedisLocks;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.LongAdder;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.api.RedissonReactiveClient;
import reactor.core.publisher.Flux;

/**
 * B4 and B7 on Redis: hold {@code n} leases, then measure one window of renewal ticks — server
 * requests per second, round trips per tick, client CPU per renewed lease — and, right after the
 * acquisitions, the heap each held lease costs. Ours (the engine's batched renewal) against
 * Redisson's lock watchdog with the same timeout.
 */
final class Renewal {

    /** Acquisitions in flight while filling (and emptying) the set of held leases. */
    static final int FILL_CONCURRENCY = 256;

    /** One contender holding {@code leases} leases. */
    record Case(String label, Role role, int leases, double acquireSeconds, double heapPerLease, double windowSeconds,
                double ticks, long renewals, long requests, long executed, long scriptCalls, long scriptMicros,
                double cpuNanos, double idleCpuNanos, long connections, long renewalWrites, long renewalLeases,
                long scriptsOver5ms, long longestScriptMicros, String error) {

        /**
         * @return the window's CPU less the idle share, per renewal; NaN when there were none, or when the idle share
         *     (a rate measured before the window) was not below the window's CPU: other work on the machine, no figure
         */
        double cpuPerRenewal() {
            return renewals == 0 || cpuNanos <= idleCpuNanos ? Double.NaN : (cpuNanos - idleCpuNanos) / renewals;
        }

        double requestsPerSecond() {
            return requests / windowSeconds;
        }

        double executedPerSecond() {
            return executed / windowSeconds;
        }

        /** Ours: renewal batches (each one pipelined write of its script calls); Redisson: script calls (each sent alone). */
        double roundTripsPerTickPerConnection() {
            return roundTripsPerTick() / Math.max(1, connections);
        }

        /**
         * Ours: {@code renew} calls per tick, a tick being one renewal of every held lease (the leases the calls
         * carried ÷ {@code n}), so the figure does not depend on where the window falls between ticks; Redisson
         * (a timer per lock, spread over the interval): script calls ÷ (window ÷ interval).
         */
        double roundTripsPerTick() {
            if (renewalWrites >= 0 && renewalLeases > 0) {
                return renewalWrites / ((double) renewalLeases / leases);
            }
            return (double) (renewalWrites >= 0 ? renewalWrites : scriptCalls) / ticks;
        }

        double scriptCallsPerTick() {
            return (double) scriptCalls / ticks;
        }
    }

    private Renewal() {
    }

    static List<Case> run(RedisBench bench, Settings s) {
        List<Case> out = new ArrayList<>();
        boolean oursFirst = true;
        for (int n : s.leaseCounts()) {
            Case a = oursFirst ? ours(bench, s, n) : redisson(bench, s, n);
            Case b = oursFirst ? redisson(bench, s, n) : ours(bench, s, n);
            out.add(oursFirst ? a : b);
            out.add(oursFirst ? b : a);
            oursFirst = !oursFirst;
        }
        return out;
    }

    private interface Holder {
        void acquire(String[] names);

        long renewedSoFar();

        /** @return renewal batches the client sent so far (each pipelined: one round trip), or -1 if not known */
        default long renewalWritesSoFar() {
            return -1;
        }

        /** @return leases those batches carried so far, or -1 if not known */
        default long renewalLeasesSoFar() {
            return -1;
        }

        /** @return leases of the renewal batches answered so far (or failed), or -1 if not known */
        default long renewalLeasesDoneSoFar() {
            return -1;
        }

        /** @return renewal batches sent and not answered yet */
        default int renewalsInFlight() {
            return 0;
        }

        /**
         * Waits (at most {@code millis}) until a renewal batch is answered; returns at once if one was answered
         * after {@code doneSoFar} leases. Ours: woken by the store wrapper, no polling.
         */
        default void awaitRenewalsDone(long doneSoFar, long millis) {
            Handoff.sleep(Duration.ofMillis(Math.min(millis, 10)));
        }

        /** @return the renewal batches sent since {@code since} (nanoTime), as "+s.sss s: n leases" */
        default String renewalsSince(long since) {
            return "";
        }

        void releaseAll(String[] names);

        void close();
    }

    static Case ours(RedisBench bench, Settings s, int n) {
        RedisClient client = RedisClient.create(bench.url());
        LongAdder renewed = new LongAdder();
        LockListener listener = new LockListener() {
            @Override
            public void onRenewed(String name, long token) {
                renewed.increment();
            }
        };
        LockOptions options = LockOptions.builder().leaseTime(s.b4Lease()).build();
        CountingBackend backend = new CountingBackend(RedisLocks.backend(client, RedisLockOptions.defaults()));
        LockClient locks = LockClient.create(backend, options, listener);
        locks.acquire("b4.warm").flatMap(Lease::release).block(Duration.ofSeconds(30));
        Lease[] held = new Lease[n];
        Holder h = new Holder() {
            @Override
            public void acquire(String[] names) {
                Flux.range(0, n).flatMap(i -> locks.acquire(names[i]).doOnNext(l -> held[i] = l), FILL_CONCURRENCY)
                        .blockLast(Duration.ofMinutes(5));
            }

            @Override
            public long renewedSoFar() {
                return renewed.sum();
            }

            @Override
            public long renewalWritesSoFar() {
                return backend.renewCalls.sum();
            }

            @Override
            public long renewalLeasesSoFar() {
                return backend.renewLeases.sum();
            }

            @Override
            public long renewalLeasesDoneSoFar() {
                return backend.renewLeasesDone.sum();
            }

            @Override
            public int renewalsInFlight() {
                return backend.inFlight.get();
            }

            @Override
            public String renewalsSince(long since) {
                return backend.callsSince(since);
            }

            @Override
            public void awaitRenewalsDone(long doneSoFar, long millis) {
                backend.awaitDone(doneSoFar, millis);
            }

            @Override
            public void releaseAll(String[] names) {
                Flux.range(0, n).flatMap(i -> held[i].release(), FILL_CONCURRENCY).blockLast(Duration.ofMinutes(5));
                java.util.Arrays.fill(held, null);
            }

            @Override
            public void close() {
                locks.close().block(Duration.ofSeconds(60));
                client.shutdown();
            }
        };
        return measure(bench, s, n, "reactive-locks", Role.OURS, h, 1);
    }

    static Case redisson(RedisBench bench, Settings s, int n) {
        long clientsBefore = RedisBench.field(bench.admin().info("clients"), "connected_clients");
        RedissonClient redisson = Redisson.create(RedisBench.RedissonLock.config(bench.url(), s.b4Lease()));
        RedissonReactiveClient r = redisson.reactive();
        r.getLock("b4.warm").lock(1L).then(r.getLock("b4.warm").unlock(1L)).block(Duration.ofSeconds(30));
        long connections = RedisBench.field(bench.admin().info("clients"), "connected_clients") - clientsBefore;
        Holder h = new Holder() {
            @Override
            public void acquire(String[] names) {
                Flux.range(0, n).flatMap(i -> r.getLock(names[i]).lock(1L), FILL_CONCURRENCY).blockLast(Duration.ofMinutes(5));
            }

            @Override
            public long renewedSoFar() {
                return -1; // counted on the server (PEXPIRE calls of the watchdog script)
            }

            @Override
            public void releaseAll(String[] names) {
                Flux.range(0, n).flatMap(i -> r.getLock(names[i]).unlock(1L), FILL_CONCURRENCY).blockLast(Duration.ofMinutes(5));
            }

            @Override
            public void close() {
                redisson.shutdown();
            }
        };
        return measure(bench, s, n, "Redisson RLock watchdog", Role.COMPETITOR, h, connections);
    }

    private static Case measure(RedisBench bench, Settings s, int n, String label, Role role, Holder h, long connections) {
        String[] names = new String[n];
        String tag = role == Role.OURS ? "ours" : "redisson";
        for (int i = 0; i < n; i++) {
            names[i] = "b4." + tag + "." + n + "." + i;
        }
        OperatingSystemMXBean os = (OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        String error = null;
        try {
            // idle CPU of this process (the client open, nothing held): subtracted from the window
            long heap0 = usedHeapAfterGc();
            Duration idle = Duration.ofSeconds(3);
            long c0 = os.getProcessCpuTime();
            long w0 = System.nanoTime();
            Handoff.sleep(idle);
            double idleRate = (double) (os.getProcessCpuTime() - c0) / (System.nanoTime() - w0);

            long a0 = System.nanoTime();
            h.acquire(names);
            double acquireSeconds = (System.nanoTime() - a0) / 1e9;
            long heap1 = usedHeapAfterGc();
            double perLease = (double) (heap1 - heap0) / n;
            Log.info("  B4 %s n=%d acquired in %.1f s, heap %.0f B per held lease", label, n, acquireSeconds, perLease);

            // let three rounds of renewals pass first, so the renewal path is compiled by the JIT outside the window: with
            // one round, a JFR recording of the quick mode found the C2 compiler thread busy for 303 ms inside the
            // window (more than the renewals' own Java code), which the CPU per renewal then counted
            Handoff.sleep(s.renewalInterval().multipliedBy(3).plus(s.renewalInterval().dividedBy(3)));
            java.lang.management.CompilationMXBean jit = java.lang.management.ManagementFactory.getCompilationMXBean();
            // ours: the window runs from the end of one tick (every renewal call answered) to the end of the b4Ticks-th
            // next, so it holds whole ticks — their sends, replies, listener calls and CPU — wherever they fall; a window
            // of a fixed length held 2 or 3 ticks (or parts of them) by its phase
            boolean byTicks = h.renewalLeasesDoneSoFar() >= 0;
            long waitLimit = s.b4Window().plus(s.renewalInterval().multipliedBy(3)).plusSeconds(60).toNanos();
            if (byTicks) {
                awaitTicksDone(h, h.renewalLeasesDoneSoFar() + 1, waitLimit);
            }
            // every script call over 1 ms in the window goes to the server's SLOWLOG: none may run 5 ms or more
            bench.admin().configSet("slowlog-log-slower-than", "1000");
            bench.admin().configSet("slowlog-max-len", "8192");
            bench.admin().slowlogReset();
            BackendBench.Counts k0 = bench.counts();
            long[] eval0 = scriptStats(bench);
            long pexpire0 = bench.commandStat("pexpire")[0];
            long renewed0 = h.renewedSoFar();
            long writes0 = h.renewalWritesSoFar();
            long leases0 = h.renewalLeasesSoFar();
            long cpu0 = os.getProcessCpuTime();
            long jit0 = jit.getTotalCompilationTime();
            long t0 = System.nanoTime();
            if (byTicks) {
                awaitTicksDone(h, h.renewalLeasesDoneSoFar() + (long) s.b4Ticks() * n, waitLimit);
            } else {
                Handoff.sleep(s.b4Window());
            }
            long cpu1 = os.getProcessCpuTime();
            long t1 = System.nanoTime();
            long renewed1 = h.renewedSoFar();
            long writes1 = h.renewalWritesSoFar();
            long leases1 = h.renewalLeasesSoFar();
            long pexpire1 = bench.commandStat("pexpire")[0];
            long[] eval1 = scriptStats(bench);
            BackendBench.Counts k = bench.counts().minus(k0);
            long[] slow = slowScripts(bench);
            long renewals = renewed0 >= 0 ? renewed1 - renewed0 : pexpire1 - pexpire0;
            double window = (t1 - t0) / 1e9;
            double ticks = byTicks && leases1 > leases0 ? (double) (leases1 - leases0) / n
                    : window / (s.renewalInterval().toNanos() / 1e9);
            Case c = new Case(label, role, n, acquireSeconds, perLease, window, ticks, renewals, k.counted(),
                    k.executed(), eval1[0] - eval0[0], eval1[1] - eval0[1], cpu1 - cpu0, idleRate * (t1 - t0), connections,
                    writes0 >= 0 ? writes1 - writes0 : -1, leases0 >= 0 ? leases1 - leases0 : -1, slow[0], slow[1], null);
            Log.info("  B4 %s n=%d window %.1f s: %d renewals (server PEXPIREs %d), %d script calls, %.1f req/s, "
                            + "CPU %.0f ms (idle %.0f ms) = %.2f µs per renewal", label, n, window, renewals, pexpire1 - pexpire0,
                    c.scriptCalls(), c.requestsPerSecond(), c.cpuNanos() / 1e6, c.idleCpuNanos() / 1e6, c.cpuPerRenewal() / 1e3);
            if (writes0 >= 0) {
                Log.info("  B4 %s n=%d renew calls in the window (from its start): %s", label, n, h.renewalsSince(t0));
            }
            Log.info("  B4 %s n=%d JIT compilation inside the window: %d ms", label, n, jit.getTotalCompilationTime() - jit0);
            Log.info("  B4 %s n=%d script calls of 5 ms or more inside the server: %d (longest over 1 ms: %s µs)", label, n,
                    slow[0], slow[1] < 0 ? "none" : Long.toString(slow[1]));
            h.releaseAll(names);
            return c;
        } catch (RuntimeException e) {
            error = e.toString();
            Log.info("  B4 %s n=%d FAILED: %s", label, n, error);
            return new Case(label, role, n, Double.NaN, Double.NaN, Double.NaN, s.b4Ticks(), 0, 0, 0, 0, 0, 0, 0,
                    connections, -1, -1, -1, -1, error);
        } finally {
            h.close();
        }
    }

    /**
     * Our store with its {@code renew} calls counted: the engine calls it once per renewal batch,
     * and the Redis store writes the batch's script calls (256 keys each) at once on its one
     * connection, so one call is one round trip however many script calls it carries.
     */
    static final class CountingBackend implements io.reactivelocks.spi.LockBackend {
        private final io.reactivelocks.spi.LockBackend store;
        final LongAdder renewCalls = new LongAdder();
        final LongAdder renewLeases = new LongAdder();
        final LongAdder renewLeasesDone = new LongAdder();
        final java.util.concurrent.atomic.AtomicInteger inFlight = new java.util.concurrent.atomic.AtomicInteger();
        private final List<long[]> calls = java.util.Collections.synchronizedList(new ArrayList<>());
        /** Notified whenever a renewal batch is answered (or failed). */
        private final Object done = new Object();

        CountingBackend(io.reactivelocks.spi.LockBackend store) {
            this.store = store;
        }

        @Override
        public String name() {
            return store.name();
        }

        @Override
        public reactor.core.publisher.Mono<io.reactivelocks.spi.Attempt> tryGrant(io.reactivelocks.spi.GrantRequest request) {
            return store.tryGrant(request);
        }

        @Override
        public reactor.core.publisher.Mono<List<io.reactivelocks.spi.RenewOutcome>> renew(List<io.reactivelocks.spi.RenewRequest> batch) {
            return store.renew(batch).doOnSubscribe(x -> {
                long now = System.nanoTime();
                renewCalls.increment();
                renewLeases.add(batch.size());
                inFlight.incrementAndGet();
                calls.add(new long[] {now, batch.size()});
            }).doFinally(x -> {
                renewLeasesDone.add(batch.size());
                inFlight.decrementAndGet();
                synchronized (done) {
                    done.notifyAll();
                }
            });
        }

        /**
         * Waits until more than {@code doneSoFar} leases were answered and none is in flight, at most {@code millis}.
         * The window's end is found this way rather than by polling every few ms: a JVM that polls every 10 ms
         * costs tens of ms of process CPU per 10 s on a loaded VM (~0.25 µs per renewal of a 20 s window at 100k
         * leases), which the window would count as the client's renewal CPU.
         */
        void awaitDone(long doneSoFar, long millis) {
            long until = System.nanoTime() + millis * 1_000_000L;
            synchronized (done) {
                long left;
                while ((renewLeasesDone.sum() <= doneSoFar || inFlight.get() > 0)
                        && (left = until - System.nanoTime()) > 0) {
                    try {
                        done.wait(Math.max(1, left / 1_000_000L));
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        return;
                    }
                }
            }
        }

        String callsSince(long since) {
            StringBuilder out = new StringBuilder();
            synchronized (calls) {
                for (long[] c : calls) {
                    if (c[0] >= since) {
                        out.append(out.length() == 0 ? "" : ", ")
                                .append(String.format(java.util.Locale.ROOT, "+%.3f s: %d", (c[0] - since) / 1e9, c[1]));
                    }
                }
            }
            return out.toString();
        }

        @Override
        public reactor.core.publisher.Mono<Boolean> release(String name, String owner) {
            return store.release(name, owner);
        }

        @Override
        public reactor.core.publisher.Mono<Boolean> updatePayload(io.reactivelocks.spi.HeldLock lock, String payload) {
            return store.updatePayload(lock, payload);
        }

        @Override
        public reactor.core.publisher.Mono<io.reactivelocks.spi.Holder> inspect(String name) {
            return store.inspect(name);
        }

        @Override
        public Flux<io.reactivelocks.spi.LockEvent> events(String name) {
            return store.events(name);
        }

        @Override
        public io.reactivelocks.spi.RenewalMode renewalMode() {
            return store.renewalMode();
        }

        @Override
        public Flux<io.reactivelocks.spi.Renewal> sessionRenewals(io.reactivelocks.spi.HeldLock lease, io.reactivelocks.LockClock clock) {
            return store.sessionRenewals(lease, clock);
        }

        @Override
        public reactor.core.publisher.Mono<Void> close() {
            return store.close();
        }
    }

    /** Waits until the renewal calls answered carried {@code leases} leases in all and none is in flight. */
    private static void awaitTicksDone(Holder h, long leases, long limitNanos) {
        long until = System.nanoTime() + limitNanos;
        while (h.renewalLeasesDoneSoFar() < leases || h.renewalsInFlight() > 0) {
            if (System.nanoTime() > until) {
                throw new IllegalStateException("renewal ticks did not complete within " + limitNanos / 1_000_000 + " ms");
            }
            // woken when a batch is answered (ours), not by polling: the window's ends fall between ticks, where nothing runs
            h.awaitRenewalsDone(h.renewalLeasesDoneSoFar(), Math.max(1, (until - System.nanoTime()) / 1_000_000L));
        }
    }

    /** @return EVAL/EVALSHA calls of 5 ms or more in the SLOWLOG (threshold 1 ms), and the longest logged (µs, -1: none) */
    private static long[] slowScripts(RedisBench bench) {
        long over = 0;
        long longest = -1;
        for (Object entry : bench.admin().slowlogGet(8192)) {
            List<?> e = (List<?>) entry;
            long micros = ((Number) e.get(2)).longValue();
            Object args = e.get(3);
            String command = args instanceof List<?> a && !a.isEmpty() ? String.valueOf(a.get(0)) : "";
            if (command.equalsIgnoreCase("evalsha") || command.equalsIgnoreCase("eval")) {
                longest = Math.max(longest, micros);
                if (micros >= 5000) {
                    over++;
                }
            }
        }
        return new long[] {over, longest};
    }

    /** @return calls and µs of EVAL + EVALSHA so far */
    private static long[] scriptStats(RedisBench bench) {
        long[] a = bench.commandStat("evalsha");
        long[] b = bench.commandStat("eval");
        return new long[] {a[0] + b[0], a[1] + b[1]};
    }

    static long usedHeapAfterGc() {
        for (int i = 0; i < 3; i++) {
            System.gc();
            Handoff.sleep(Duration.ofMillis(200));
        }
        return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    }
}
