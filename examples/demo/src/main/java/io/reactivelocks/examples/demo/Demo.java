package io.reactivelocks.examples.demo;

import io.reactivelocks.LockClient;
import io.reactivelocks.LockException;
import io.reactivelocks.LockLostException;
import io.reactivelocks.LockOptions;
import io.reactivelocks.LockTimeoutException;
import io.reactivelocks.fencing.Fencing;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import reactor.core.Disposable;
import reactor.core.Exceptions;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import reactor.util.retry.Retry;

/**
 * The README's first command: several simulated service instances (each its own
 * {@link LockClient}) contend for a few accounts guarded by fenced ledgers. One instance is
 * frozen (a stop-the-world pause) inside its critical section for longer than its lease; another
 * takes over, and the frozen one's late write is rejected by its stale fencing token.
 *
 * <p>Usage: {@code Demo [--duration=10s] [--workers=4] [--resources=3] [--backend=embedded|memory|
 * redis://host:port|postgresql://user:password@host:port/database|mariadb://user:password@host:port/database|
 * etcd://host:port|zookeeper://host:port]}.
 * The default backend is an embedded PostgreSQL whose binaries come from Maven Central
 * ({@link EmbeddedPostgres}; as root it runs as {@code nobody}). On a server the frozen instance
 * reaches it through a TCP proxy that goes silent while it is frozen.
 *
 * <p>The run always ends by itself: the instances first connect (a warm-up lock each, at most
 * 30 s), then stop taking new locks at the end of the duration;
 * an instance that gives up waiting for an account (its acquire times out after three lease
 * times) or meets a store error counts it and tries again; whatever is still running a bounded
 * grace time after the end is cancelled and named.
 */
public final class Demo {

    static final String USAGE = "usage: Demo [--duration=10s] [--workers=4] [--resources=3] "
            + "[--backend=embedded|memory|redis://host:port|postgresql://user:password@host:port/database"
            + "|mariadb://user:password@host:port/database|etcd://host:port|zookeeper://host:port]";

    /** Demo settings. */
    public record Config(Duration duration, int workers, int resources, Duration lease, Duration pause, boolean live,
                         String backend) {
        /** Settings on the in-memory backend. */
        public Config(Duration duration, int workers, int resources, Duration lease, Duration pause, boolean live) {
            this(duration, workers, resources, lease, pause, live, "memory");
        }
    }

    /** What the run did. */
    public record Summary(long acquisitions, long handoffs, double handoffP50Ms, double handoffP99Ms,
                          long staleWritesRejected, long staleWritesAccepted, long lostUpdates, long leasesLost,
                          long acquiresFailed) {
    }

    private Demo() {
    }

    /**
     * Runs the demo from the command line; exits 0 when no stale write was accepted and no update
     * lost, 1 otherwise, 2 on bad arguments or a backend that cannot be had.
     *
     * @param args see the class documentation
     */
    public static void main(String[] args) {
        int status;
        try {
            Summary s = run(parse(args), System.out);
            status = s.staleWritesAccepted() == 0 && s.lostUpdates() == 0 ? 0 : 1;
        } catch (IllegalArgumentException e) {
            System.err.println(e.getMessage());
            System.err.println(USAGE);
            status = 2;
        } catch (IllegalStateException e) {
            System.err.println(e.getMessage()); // e.g. the embedded PostgreSQL could not start, and why
            status = 2;
        } catch (RuntimeException | Error e) {
            e.printStackTrace();
            status = 1;
        }
        System.exit(status); // also ends the drivers' non-daemon threads, whatever they are doing
    }

    /**
     * @param args the command line
     * @return the settings it asks for, with the defaults (10 s, 4 instances, 3 accounts, embedded PostgreSQL)
     * @throws IllegalArgumentException naming an unknown or malformed argument
     */
    static Config parse(String... args) {
        Duration duration = Duration.ofSeconds(10);
        int workers = 4;
        int resources = 3;
        String backend = DemoBackends.DEFAULT;
        for (String a : args) {
            try {
                if (a.startsWith("--duration=")) {
                    duration = parseDuration(a.substring("--duration=".length()));
                } else if (a.startsWith("--workers=")) {
                    workers = Integer.parseInt(a.substring("--workers=".length()));
                } else if (a.startsWith("--resources=")) {
                    resources = Integer.parseInt(a.substring("--resources=".length()));
                } else if (a.startsWith("--backend=")) {
                    backend = a.substring("--backend=".length());
                } else {
                    throw new IllegalArgumentException("unknown argument " + a);
                }
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("not a number in " + a, e);
            }
        }
        if (workers < 2 || resources < 1 || duration.isNegative() || duration.isZero()) {
            throw new IllegalArgumentException("--workers must be at least 2, --resources at least 1, --duration positive");
        }
        return new Config(duration, workers, resources, Duration.ofMillis(600), Duration.ofMillis(1500), true, backend);
    }

    static Duration parseDuration(String s) {
        if (s.endsWith("ms")) {
            return Duration.ofMillis(Long.parseLong(s.substring(0, s.length() - 2)));
        }
        if (s.endsWith("s")) {
            return Duration.ofSeconds(Long.parseLong(s.substring(0, s.length() - 1)));
        }
        if (s.endsWith("m")) {
            return Duration.ofMinutes(Long.parseLong(s.substring(0, s.length() - 1)));
        }
        return Duration.ofSeconds(Long.parseLong(s));
    }

    /**
     * Runs the demo to the end of its duration (plus a bounded grace time for the last critical
     * sections).
     *
     * @param config settings
     * @param out    where the live view and the summary go
     * @return the summary
     * @throws IllegalArgumentException when the backend is not one the demo knows
     * @throws IllegalStateException when the embedded PostgreSQL cannot start (the message says why)
     */
    public static Summary run(Config config, PrintStream out) {
        if (config.backend() == null || config.backend().equals(DemoBackends.DEFAULT)) {
            out.println("starting an embedded PostgreSQL (binaries from Maven Central, unpacked on the first run)...");
        }
        try (DemoBackends backends = DemoBackends.open(config.backend())) {
            Duration lease = backends.lease(config.lease());
            Duration pause = config.pause().plus(lease.minus(config.lease()).multipliedBy(2));
            return run(new Config(config.duration(), config.workers(), config.resources(), lease, pause, config.live(),
                    backends.kind()), backends, out);
        }
    }

    private static Summary run(Config config, DemoBackends backends, PrintStream out) {
        FencedLedger ledger = new FencedLedger();
        Stats stats = new Stats(config.resources());
        List<String> accounts = new ArrayList<>();
        for (int i = 1; i <= config.resources(); i++) {
            accounts.add("account:" + i);
        }
        long[] endAt = new long[1]; // set when the instances are connected: the duration is contention, not start-up
        // an instance waits at most three lease times for an account, then counts it and tries again
        Duration waitTimeout = config.lease().multipliedBy(3);
        AtomicBoolean paused = new AtomicBoolean();
        // the frozen instance runs its timers and critical section on a thread we can stall
        Scheduler freezable = Schedulers.fromExecutorService(Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "worker-0-frozen-later");
            t.setDaemon(true);
            return t;
        }));
        List<LockClient> clients = new ArrayList<>();
        List<LockOptions> options = new ArrayList<>();
        List<Mono<Void>> workers = new ArrayList<>();
        for (int w = 0; w < config.workers(); w++) {
            LockOptions.Builder ob = LockOptions.builder().leaseTime(config.lease()).waitTimeout(waitTimeout);
            if (w == 0) {
                ob.scheduler(freezable);
            }
            LockOptions workerOptions = ob.build();
            LockClient client = backends.client(w, workerOptions);
            clients.add(client);
            options.add(workerOptions);
            int worker = w;
            Mono<Void> one = Mono.defer(() -> {
                        String account = accounts.get(ThreadLocalRandom.current().nextInt(accounts.size()));
                        int idx = accounts.indexOf(account);
                        AtomicBoolean granted = new AtomicBoolean();
                        stats.waiting(idx, +1);
                        stats.phase(worker, "waiting for " + account);
                        return client.withLock(account, lease -> {
                                    granted.set(true);
                                    stats.granted(idx, worker, lease.token());
                                    stats.phase(worker, "holding " + account + " with token " + lease.token());
                                    Mono<Long> read = Mono.fromSupplier(() -> ledger.read(account));
                                    if (worker == 0) {
                                        read = read.publishOn(freezable);
                                    }
                                    return read
                                            .delayElement(Duration.ofMillis(ThreadLocalRandom.current().nextInt(2, 15)),
                                                    worker == 0 ? freezable : Schedulers.parallel())
                                            .map(balance -> {
                                                if (worker == 0 && System.nanoTime() > endAt[0] - config.duration().toNanos() / 2
                                                        && paused.compareAndSet(false, true)) {
                                                    out.println("  >> worker-0 freezes for " + config.pause().toMillis()
                                                            + " ms inside its critical section (lease " + config.lease().toMillis()
                                                            + " ms, token " + lease.token() + ")");
                                                    stats.phase(worker, "frozen holding " + account + " with token " + lease.token());
                                                    backends.freeze();
                                                    LockSupport.parkNanos(config.pause().toNanos()); // a stop-the-world pause
                                                    backends.thaw();
                                                    boolean ok = ledger.write(account, lease.token(), balance + 1);
                                                    out.println("  >> worker-0 wakes and writes with token " + lease.token()
                                                            + ": " + (ok ? "accepted (no newer holder had written yet,"
                                                            + " so nothing is lost)" : "rejected as stale"));
                                                    return ok;
                                                }
                                                return ledger.write(account, lease.token(), balance + 1);
                                            });
                                })
                                .doOnNext(ok -> {
                                    stats.released(idx);
                                    stats.phase(worker, "released " + account);
                                })
                                .onErrorResume(LockLostException.class, e -> {
                                    stats.leasesLost.incrementAndGet();
                                    stats.released(idx);
                                    stats.phase(worker, "lost " + account);
                                    return Mono.empty();
                                })
                                .onErrorResume(LockException.class, e -> {
                                    // gave up waiting (LockTimeoutException) or the store failed: a service would
                                    // log it and try again later; so does the demo, after a short pause
                                    if (granted.get()) {
                                        stats.released(idx);
                                    } else {
                                        stats.waiting(idx, -1);
                                    }
                                    stats.acquiresFailed.incrementAndGet();
                                    stats.phase(worker, (e instanceof LockTimeoutException ? "gave up waiting for "
                                            : "store error on ") + account);
                                    return Mono.delay(Duration.ofMillis(50)).then(Mono.<Boolean>empty());
                                })
                                .then();
                    })
                    .repeat(() -> System.nanoTime() < endAt[0])
                    .then();
            workers.add(one);
        }
        Flux<Long> view = Flux.interval(Duration.ofMillis(500))
                .doOnNext(t -> {
                    if (config.live()) {
                        out.println(stats.line(accounts, t + 1));
                    }
                });
        out.println("reactive-locks demo: " + config.workers() + " instances, " + config.resources()
                + " fenced accounts, lease " + config.lease().toMillis() + " ms, " + backends.label() + " backend, "
                + config.duration().toSeconds() + " s");
        warmUp(clients, options, out);
        endAt[0] = System.nanoTime() + config.duration().toNanos();
        Disposable liveView = view.subscribe();
        // the last critical sections end within a wait timeout, a freeze and some store round trips after the end
        Duration grace = waitTimeout.plus(config.pause()).plusSeconds(5);
        try {
            Mono.when(workers)
                    .timeout(config.duration().plus(grace))
                    .onErrorResume(TimeoutException.class, e -> {
                        out.println("  >> not finished " + grace.toSeconds() + " s after the end, cancelled: " + stats.phases());
                        return Mono.empty();
                    })
                    .block();
        } finally {
            liveView.dispose();
        }
        Flux.fromIterable(clients).flatMap(LockClient::close)
                .then()
                .timeout(Duration.ofSeconds(10))
                .onErrorResume(e -> {
                    out.println("  >> closing the lock clients: " + e);
                    return Mono.empty();
                })
                .block();
        freezable.dispose();

        long lost = 0;
        for (String a : accounts) {
            lost += Math.abs(ledger.acceptedWrites(a) - ledger.read(a));
        }
        double[] h = stats.handoffsMs();
        Summary s = new Summary(stats.acquisitions.get(), h.length, percentile(h, 0.5), percentile(h, 0.99),
                ledger.staleRejected(), ledger.staleAccepted(), lost, stats.leasesLost.get(), stats.acquiresFailed.get());
        out.printf("summary: acquisitions %d, handoffs %d (p50 %.2f ms, p99 %.2f ms), leases lost %d, "
                        + "stale writes rejected %d, stale writes accepted %d, lost updates %d, "
                        + "acquires given up or failed %d%n",
                s.acquisitions(), s.handoffs(), s.handoffP50Ms(), s.handoffP99Ms(), s.leasesLost(),
                s.staleWritesRejected(), s.staleWritesAccepted(), s.lostUpdates(), s.acquiresFailed());
        return s;
    }

    /**
     * Each instance takes and gives back a lock of its own, all at once, so that connections,
     * sessions and schema exist (and the code is loaded) before the timed run starts. The warm-up
     * uses the instance's own options (session stores refuse a per-call lease time other than the
     * client's) and is retried a few times, since a cold start can outlast the demo's short lease; an
     * instance that cannot take it within 30 s is named, and the run goes on without waiting for it.
     */
    private static void warmUp(List<LockClient> clients, List<LockOptions> options, PrintStream out) {
        Flux.range(0, clients.size())
                .flatMap(w -> clients.get(w).tryAcquire("demo-warm-up:" + w, options.get(w))
                        .flatMap(l -> l.release().thenReturn(true))
                        .retryWhen(Retry.fixedDelay(5, Duration.ofMillis(200)).filter(e -> e instanceof LockException))
                        .timeout(Duration.ofSeconds(30))
                        .onErrorResume(e -> {
                            out.println("  >> worker-" + w + " could not take a lock yet: " + Exceptions.unwrap(e));
                            return Mono.empty();
                        }))
                .then()
                .block();
    }

    private static double percentile(double[] sorted, double p) {
        if (sorted.length == 0) {
            return 0;
        }
        return sorted[Math.min(sorted.length - 1, (int) Math.ceil(p * sorted.length) - 1)];
    }

    /** An account balance per name that accepts a write only with a token at least as high as any seen. */
    static final class FencedLedger {
        private final Map<String, long[]> rows = new ConcurrentHashMap<>(); // balance, highest token, accepted writes
        private final AtomicLong staleRejected = new AtomicLong();

        long read(String account) {
            long[] r = rows.get(account);
            synchronized (this) {
                return r == null ? 0 : r[0];
            }
        }

        synchronized boolean write(String account, long token, long balance) {
            long[] r = rows.computeIfAbsent(account, k -> new long[] {0, Long.MIN_VALUE, 0});
            if (!Fencing.admits(r[1], token)) {
                staleRejected.incrementAndGet();
                return false;
            }
            r[0] = balance;
            r[1] = token;
            r[2]++;
            return true;
        }

        synchronized long acceptedWrites(String account) {
            long[] r = rows.get(account);
            return r == null ? 0 : r[2];
        }

        long staleRejected() {
            return staleRejected.get();
        }

        long staleAccepted() {
            return 0; // the fence never accepts a lower token: counted to show it
        }
    }

    /** Counters and the live view. */
    static final class Stats {
        final AtomicLong acquisitions = new AtomicLong();
        final AtomicLong leasesLost = new AtomicLong();
        final AtomicLong acquiresFailed = new AtomicLong();
        private final int[] waiting;
        private final long[] releasedAt;
        private final String[] holder;
        private final List<Double> handoffs = new ArrayList<>();
        private final Map<Integer, String> phases = new ConcurrentHashMap<>();
        private final long startedAt = System.nanoTime();

        Stats(int resources) {
            waiting = new int[resources];
            releasedAt = new long[resources];
            holder = new String[resources];
            Arrays.fill(holder, "-");
        }

        /** What an instance is doing, for the report of a run that does not finish in time. */
        void phase(int worker, String what) {
            phases.put(worker, what + String.format(" (since %.1fs)", (System.nanoTime() - startedAt) / 1e9));
        }

        String phases() {
            StringBuilder sb = new StringBuilder();
            new TreeMap<>(phases).forEach((w, p) -> sb.append("worker-").append(w).append(": ").append(p).append("; "));
            return sb.toString();
        }

        synchronized void waiting(int idx, int delta) {
            waiting[idx] += delta;
        }

        synchronized void granted(int idx, int worker, long token) {
            acquisitions.incrementAndGet();
            waiting[idx]--;
            if (releasedAt[idx] != 0) {
                handoffs.add((System.nanoTime() - releasedAt[idx]) / 1e6);
                releasedAt[idx] = 0;
            }
            holder[idx] = "worker-" + worker + "#" + token;
        }

        synchronized void released(int idx) {
            releasedAt[idx] = waiting[idx] > 0 ? System.nanoTime() : 0;
            holder[idx] = "-";
        }

        synchronized double[] handoffsMs() {
            return handoffs.stream().mapToDouble(Double::doubleValue).sorted().toArray();
        }

        synchronized String line(List<String> accounts, long tick) {
            StringBuilder sb = new StringBuilder(String.format("[%5.1fs] acquisitions %6d |", tick / 2.0, acquisitions.get()));
            for (int i = 0; i < accounts.size(); i++) {
                sb.append(' ').append(accounts.get(i)).append(": ").append(holder[i]).append(" (").append(waiting[i]).append(" waiting) |");
            }
            return sb.toString();
        }
    }
}
