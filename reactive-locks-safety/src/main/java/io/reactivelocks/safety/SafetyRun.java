package io.reactivelocks.safety;

import io.reactivelocks.LockListener;
import io.reactivelocks.LockOptions;
import io.reactivelocks.test.fault.FaultProxy;
import io.reactivelocks.test.server.ServerFixture;
import io.reactivelocks.test.server.Topology;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One safety run: W worker JVMs × L lock names against one server or one replicated deployment for a
 * bounded time, one kind of fault injected in cycles, then the checks ({@link SafetyCheck}).
 *
 * <p>A cycle: the workers run undisturbed for {@code settle}, then the fault is applied and
 * lifted (its length depends on the kind and the lease), then the next cycle. After the last cycle
 * every worker is asked to stop (a paused one is resumed first), and the harness waits — at most a
 * lease time plus a margin, which is how long a killed worker's lock may legitimately stay — until
 * nothing of the run is held on the server (I5). Every run writes its history ({@link HistoryRecorder}:
 * {@code target/safety-histories/} unless {@code -Dsafety.histories=DIR} says otherwise), which the
 * checkers of {@code io.reactivelocks.safety.check} judge.
 */
public final class SafetyRun {

    private static final AtomicInteger RUNS = new AtomicInteger();

    /**
     * What a run does.
     *
     * @param backend  the store: one server ({@link SafetyBackend}) or a deployment ({@link SafetyTopology})
     * @param fault    the fault kind (one that {@link Fault#appliesTo applies to} the store)
     * @param workers  how many worker JVMs
     * @param names    how many lock names
     * @param lease    the lease time
     * @param settle   undisturbed time before each fault
     * @param duration the run's length (at least one cycle runs)
     * @param minAcquisitions cycles go on after {@code duration} until this many grants were seen, up to
     *                 {@code maxDuration}; the undisturbed time after the last cycle goes on until this many
     *                 grants and one after the last fault were seen, up to {@link #TAIL_BOUND} more
     * @param maxDuration the longest a run goes on to reach {@code minAcquisitions}
     * @param seed     the random seed (worker choice, worker randomness)
     * @param primitives the primitives of the names: name i has {@code primitives[i % size]}
     * @param permits  N of the semaphore names
     */
    public record Settings(SafetyStore backend, Fault fault, int workers, int names, Duration lease, Duration settle,
                           Duration duration, long minAcquisitions, Duration maxDuration, long seed, List<Primitive> primitives,
                           int permits) {
        /** Checks the settings. */
        public Settings {
            Objects.requireNonNull(backend, "backend");
            Objects.requireNonNull(fault, "fault");
            if (!fault.appliesTo(backend)) {
                throw new IllegalArgumentException("fault " + fault + " does not apply to " + backend);
            }
            primitives = List.copyOf(primitives);
            if (primitives.isEmpty()) {
                throw new IllegalArgumentException("primitives must not be empty");
            }
            if (permits < 1) {
                throw new IllegalArgumentException("permits must be at least 1, was " + permits);
            }
            if (workers < 2) {
                throw new IllegalArgumentException("workers must be at least 2, was " + workers);
            }
            if (names < 1) {
                throw new IllegalArgumentException("names must be at least 1, was " + names);
            }
            if (lease.compareTo(backend.minimumLease()) < 0) {
                lease = backend.minimumLease();
            }
        }

        /**
         * Settings of the short mode: 2 workers, 2 names, the shortest lease the store takes, a 1 s
         * settle, one fault cycle, and an undisturbed tail that lasts until {@value #SHORT_MODE_GRANTS} grants and
         * one after the fault were seen (bounded by {@link #TAIL_BOUND}: a slow machine's cold worker JVMs and a
         * holder kept in its section through the fault can leave a fixed-length run with a handful). Two workers are enough for every fault of a mutex run (a paused,
         * cut-off, killed or evicted holder and one that takes over); each worker is a JVM that
         * contends as fast as it can, so a third one costs the build's CPU without a new case (the
         * mixed-primitive short mode keeps three: its FIFO check needs two waiters behind a holder).
         *
         * @param backend the store
         * @param fault   the fault kind
         * @return the settings
         */
        public static Settings shortMode(SafetyStore backend, Fault fault) {
            return new Settings(backend, fault, 2, 2, Duration.ofSeconds(1), Duration.ofMillis(1000), Duration.ZERO, SHORT_MODE_GRANTS,
                    Duration.ZERO, 42,
                    List.of(Primitive.MUTEX), 2);
        }

        /**
         * Settings of the short mode of the new primitives: 3 workers, one name per primitive given,
         * the shortest lease, a 0.5 s settle and one worker-pause cycle per name that can be fenced
         * (semaphore, read-write lock); each settle time is a burst on the fair name, the first one two lease times.
         *
         * @param backend    the store
         * @param fault      the fault kind
         * @param primitives the primitives, one name each
         * @return the settings
         */
        public static Settings shortMode(SafetyStore backend, Fault fault, List<Primitive> primitives) {
            return new Settings(backend, fault, 3, primitives.size(), Duration.ofSeconds(1), Duration.ofMillis(500), Duration.ZERO, 0,
                    Duration.ZERO, 42, primitives, 2);
        }

        /**
         * @param primitives the primitives of the names
         * @return these settings with other primitives
         */
        public Settings withPrimitives(List<Primitive> primitives) {
            return new Settings(backend, fault, workers, names, lease, settle, duration, minAcquisitions, maxDuration, seed, primitives,
                    permits);
        }

        /**
         * @param name a name of the run (its index is the number after the last {@code n})
         * @return the name's primitive
         */
        public Primitive primitiveOf(int name) {
            return primitives.get(name % primitives.size());
        }

        /** @return the names whose pause cycles the harness aims at (semaphore and read-write names; none in a single-primitive run) */
        int fencedTargets() {
            if (primitives.size() < 2) {
                return 0;
            }
            return (int) primitives.stream().filter(p -> p == Primitive.SEMAPHORE || p == Primitive.RWLOCK).count();
        }

        /**
         * Settings of the long mode: 8 workers, 8 names, a 2 s lease, fault cycles for {@code duration}.
         *
         * @param backend  the store
         * @param fault    the fault kind
         * @param duration how long at least
         * @param minAcquisitions how many grants at least (see {@link Settings})
         * @param maxDuration how long at most to get them
         * @return the settings
         */
        public static Settings longMode(SafetyStore backend, Fault fault, Duration duration, long minAcquisitions, Duration maxDuration) {
            return new Settings(backend, fault, 8, 8, Duration.ofSeconds(2), Duration.ofSeconds(3), duration, minAcquisitions,
                    maxDuration, System.nanoTime(), List.of(Primitive.MUTEX), 2);
        }
    }

    /**
     * A fault as applied.
     *
     * @param fault  the kind
     * @param worker the worker it hit, or -1 for the server / every worker
     * @param start  when it began ({@link System#nanoTime()})
     * @param end    when it was lifted
     * @param names  the names the hit worker held (or was in a section of) at the start
     */
    public record Applied(Fault fault, int worker, long start, long end, List<String> names) {
    }

    /**
     * Everything a run produced.
     *
     * @param settings    what ran
     * @param events      the workers' events
     * @param ops         the arbiter's decisions
     * @param applied     the faults applied
     * @param heldAfter   locks of the run still on the server once the bounded wait ended
     * @param clearMillis how long after the stop the server had nothing of the run left
     * @param renewals    renewals the workers saw
     * @param problems    harness-level problems (a worker that did not stop, a fault that found no target)
     * @param startNanos  when the run started
     * @param endNanos    when the workers were asked to stop
     * @param history     the run's history file (docs/SAFETY.md, "History format"), or null when none was written
     */
    public record Outcome(Settings settings, List<WorkerProcess.Event> events, List<Arbiter.Op> ops, List<Applied> applied,
                          long heldAfter, long clearMillis, long renewals, List<String> problems, long startNanos, long endNanos,
                          java.nio.file.@org.jspecify.annotations.Nullable Path history) {

        /** An outcome without a history file (made in tests). */
        public Outcome(Settings settings, List<WorkerProcess.Event> events, List<Arbiter.Op> ops, List<Applied> applied,
                       long heldAfter, long clearMillis, long renewals, List<String> problems, long startNanos, long endNanos) {
            this(settings, events, ops, applied, heldAfter, clearMillis, renewals, problems, startNanos, endNanos, null);
        }
    }

    /** The first settle time of a run with fair names is at least this many lease times of burst on a fair name. */
    static final int FAIR_BURST_LEASES = 2;

    /**
     * Grants on the fair name the first burst waits for past its {@link #FAIR_BURST_LEASES} lease times (each grant
     * with workers in line gives the FIFO check pairs), for at most {@link #FAIR_BURST_MAX_EXTRA_LEASES} more.
     */
    static final int FAIR_BURST_GRANTS = 12;

    /** How many lease times the first burst may go on past {@link #FAIR_BURST_LEASES} to reach {@link #FAIR_BURST_GRANTS}. */
    static final int FAIR_BURST_MAX_EXTRA_LEASES = 4;

    /** How many grants a short run goes on until (its tail bounded by {@link #TAIL_BOUND}). */
    public static final int SHORT_MODE_GRANTS = 8;

    /** The longest the undisturbed tail of a run goes on past its settle time to see its grants. */
    public static final Duration TAIL_BOUND = Duration.ofSeconds(30);

    /**
     * How long a run asks again when counting what was left on the server fails (a count that answers waits
     * for the keys to go only 2 leases + 5 s: what is left then is the verdict's "left on server").
     */
    static final Duration COUNT_BOUND = Duration.ofSeconds(60);

    private SafetyRun() {
    }

    /**
     * Runs once against {@code server}, which must be a child process of this JVM (fault methods).
     *
     * @param server   the running server of {@code settings.backend()}, a {@link SafetyBackend}
     * @param settings what to run
     * @return the outcome, to be judged by {@link SafetyCheck}
     * @throws InterruptedException when interrupted
     */
    public static Outcome run(ServerFixture server, Settings settings) throws InterruptedException {
        if (!(settings.backend() instanceof SafetyBackend)) {
            throw new IllegalArgumentException("a run against one server needs a SafetyBackend, got " + settings.backend());
        }
        return run(new Target(server, null), settings);
    }

    /**
     * Runs once against a replicated deployment started by this JVM; its faults act on the nodes.
     *
     * @param topology the running deployment of {@code settings.backend()}, a {@link SafetyTopology}
     * @param settings what to run
     * @return the outcome, to be judged by {@link SafetyCheck}
     * @throws InterruptedException when interrupted
     */
    public static Outcome run(Topology topology, Settings settings) throws InterruptedException {
        if (!(settings.backend() instanceof SafetyTopology)) {
            throw new IllegalArgumentException("a run against a replicated deployment needs a SafetyTopology, got " + settings.backend());
        }
        return run(new Target(null, Objects.requireNonNull(topology, "topology")), settings);
    }

    /** One server (workers through their own proxies) or one deployment (workers to its endpoints). */
    private record Target(ServerFixture server, Topology topology) {

        void prepare(SafetyStore store, String namespace) {
            if (server != null) {
                ((SafetyBackend) store).prepare(server, namespace);
            } else {
                ((SafetyTopology) store).prepare(topology, namespace);
            }
        }

        long held(SafetyStore store, String namespace) {
            return server != null ? ((SafetyBackend) store).held(server, namespace) : ((SafetyTopology) store).held(topology, namespace);
        }

        /** @return a session of the harness itself (an operator's), straight to the server or the deployment */
        SafetyBackend.Connection operatorConnection(SafetyStore store, String namespace, LockOptions options) {
            return server != null
                    ? store.connect(server.host(), server.port(), ((SafetyBackend) store).extra(server), namespace, options, LockListener.NONE)
                    : store.connect("-", 0, topology.endpoints(), namespace, options, LockListener.NONE);
        }

        /** @return host, port and extra of a worker's command line; a proxy of its own in front of a single server */
        List<String> connection(SafetyStore store, List<FaultProxy> proxies) {
            if (server == null) {
                return List.of("-", "0", topology.endpoints());
            }
            FaultProxy proxy = FaultProxy.start(server.host(), server.port());
            proxies.add(proxy);
            return List.of(proxy.host(), Integer.toString(proxy.port()), ((SafetyBackend) store).extra(server));
        }
    }

    private static Outcome run(Target target, Settings settings) throws InterruptedException {
        SafetyStore backend = settings.backend();
        String namespace = "s" + ProcessHandle.current().pid() + "_" + RUNS.incrementAndGet();
        List<String> names = new ArrayList<>();
        Map<String, Primitive> kinds = new HashMap<>();
        for (int i = 0; i < settings.names(); i++) {
            names.add(namespace + "-n" + i);
            kinds.put(names.get(i), settings.primitiveOf(i));
        }
        target.prepare(backend, namespace);
        SplittableRandom random = new SplittableRandom(settings.seed());
        List<WorkerProcess.Event> events = new ArrayList<>();
        List<Applied> applied = new ArrayList<>();
        List<String> problems = new ArrayList<>();
        List<WorkerProcess> workers = new ArrayList<>();
        List<FaultProxy> proxies = new ArrayList<>();
        long lease = settings.lease().toMillis();
        try (Arbiter arbiter = Arbiter.start(kinds, settings.permits())) {
            AtomicInteger ids = new AtomicInteger();
            for (int i = 0; i < settings.workers(); i++) {
                workers.add(startWorker(ids.getAndIncrement(), target, settings, namespace, names, arbiter, proxies, events, random));
            }
            for (WorkerProcess w : workers) {
                w.awaitReady(60_000);
            }
            long start = System.nanoTime();
            long end = start + settings.duration().toNanos();
            int cycle = 0;
            do {
                // the settle time; with fair names, a burst on one of them: every worker takes only that
                // name, so that waiters queue behind its holder and the FIFO check has pairs to judge
                String burst = fairName(settings, names, cycle);
                focus(workers, burst);
                long burstStart = System.nanoTime();
                pause(burst != null && cycle == 0 ? Math.max(settings.settle().toMillis(), lease * FAIR_BURST_LEASES)
                        : settings.settle().toMillis());
                if (burst != null && cycle == 0) {
                    // a starved machine fits fewer grants into the burst's time: it goes on until the line
                    // turned over often enough for the FIFO check, within a bound
                    long bound = System.nanoTime() + lease * FAIR_BURST_MAX_EXTRA_LEASES * 1_000_000L;
                    while (grantsOf(events, burst, burstStart) < FAIR_BURST_GRANTS && System.nanoTime() - bound < 0) {
                        pause(50);
                    }
                }
                focus(workers, burst == null ? null : "-");
                // in a mixed run each cycle aims at the next name that can be fenced (semaphore, read-write)
                String aim = null;
                int targets = settings.fencedTargets();
                if (targets > 0) {
                    int k = cycle % targets;
                    for (int i = 0; i < names.size(); i++) {
                        Primitive p = settings.primitiveOf(i);
                        if ((p == Primitive.SEMAPHORE || p == Primitive.RWLOCK) && k-- == 0) {
                            aim = names.get(i);
                            break;
                        }
                    }
                }
                cycle++;
                Applied a = inject(settings, target, namespace, workers, proxies, events, random, lease, problems, aim, kinds,
                        () -> startWorker(ids.getAndIncrement(), target, settings, namespace, names, arbiter, proxies, events, random));
                if (a != null) {
                    applied.add(a);
                }
            } while (System.nanoTime() - end < 0 || cycle < settings.fencedTargets() || (grants(events) < settings.minAcquisitions()
                    && System.nanoTime() - (start + settings.maxDuration().toNanos()) < 0));
            pause(settings.settle().toMillis());
            // the tail goes on until the run has its grants and the store granted again after the last fault
            long lastFault = applied.isEmpty() ? start : applied.get(applied.size() - 1).end();
            long tailEnd = System.nanoTime() + TAIL_BOUND.toNanos();
            while ((grants(events) < settings.minAcquisitions() || grantsAfter(events, lastFault) == 0)
                    && System.nanoTime() - tailEnd < 0) {
                pause(50);
            }
            long stopAt = System.nanoTime();
            long renewals = 0;
            for (WorkerProcess w : workers) {
                w.requestStop(); // all at once: they wind down in parallel
            }
            for (WorkerProcess w : workers) {
                if (!w.stop(30_000)) {
                    if (!w.isKilled()) {
                        problems.add("worker " + w.id() + " did not stop cleanly: " + w.stderr()
                                + (w.threadDump() == null ? "" : "\nits threads when it did not exit: " + w.threadDump()));
                    }
                }
                renewals += w.renewals();
                for (String line : w.stderr().split("\n")) {
                    if (line.startsWith(Worker.HUNG)) {
                        problems.add("worker " + w.id() + ": " + line);
                    }
                }
            }
            long held = -1;
            long deadline = System.nanoTime() + Duration.ofMillis(lease * 2 + 5_000).toNanos();
            // a count that fails is asked again for longer: the first count of a run opens the harness' first client
            // of the store (on a loaded machine its start-up alone took more than the 10 s one count may take), and the
            // store may still be recovering from the fault; not being able to count is a harness problem, not a verdict
            long countDeadline = System.nanoTime() + COUNT_BOUND.toNanos();
            long backoff = 50;
            RuntimeException countError = null;
            while (true) {
                try {
                    held = target.held(backend, namespace);
                    countError = null;
                } catch (RuntimeException e) {
                    countError = e; // the store may still be recovering from the fault: ask again
                }
                if (held == 0 || System.nanoTime() - (countError == null ? deadline : countDeadline) > 0) {
                    break;
                }
                pause(backoff);
                backoff = Math.min(500, backoff * 2);
            }
            if (countError != null) {
                problems.add("could not count what was left on the server: " + countError
                        + (countError.getCause() == null ? "" : " (" + countError.getCause() + ")"));
            }
            long clear = Duration.ofNanos(System.nanoTime() - stopAt).toMillis();
            List<WorkerProcess.Event> copy;
            synchronized (events) {
                copy = new ArrayList<>(events);
            }
            java.nio.file.Path history = null;
            try {
                history = HistoryRecorder.write(HistoryRecorder.directory(), settings, namespace, copy, arbiter.log(), applied, start, stopAt);
            } catch (RuntimeException e) {
                problems.add("could not write the run's history: " + e);
            }
            return new Outcome(settings, copy, arbiter.log(), applied, held, clear, renewals, problems, start, stopAt, history);
        } finally {
            for (WorkerProcess w : workers) {
                if (!w.isKilled()) {
                    w.resume();
                    w.kill();
                }
            }
            for (FaultProxy p : proxies) {
                p.close();
            }
        }
    }

    /**
     * @param events a run's events
     * @param nanos  a {@link System#nanoTime()} reading
     * @return the grants seen after it
     */
    static long grantsAfter(List<WorkerProcess.Event> events, long nanos) {
        synchronized (events) {
            return events.stream().filter(e -> e.type() == 'G' && e.nanos() - nanos > 0).count();
        }
    }

    private static long grantsOf(List<WorkerProcess.Event> events, String name, long nanos) {
        synchronized (events) {
            return events.stream().filter(e -> e.type() == 'G' && name.equals(e.name()) && e.nanos() - nanos > 0).count();
        }
    }

    private static long grants(List<WorkerProcess.Event> events) {
        synchronized (events) {
            return events.stream().filter(e -> e.type() == 'G').count();
        }
    }

    private static WorkerProcess startWorker(int id, Target target, Settings settings, String namespace, List<String> names,
                                             Arbiter arbiter, List<FaultProxy> proxies, List<WorkerProcess.Event> events,
                                             SplittableRandom random) {
        List<String> args = new ArrayList<>();
        args.add(settings.backend().name());
        args.addAll(target.connection(settings.backend(), proxies));
        args.addAll(List.of(namespace, Integer.toString(arbiter.port()), String.join(",", names),
                Long.toString(settings.lease().toMillis()), Long.toString(random.nextLong()),
                String.join(",", names.stream().map(n -> settings.primitiveOf(Integer.parseInt(n.substring(n.lastIndexOf('n') + 1))).name())
                        .toList()), Integer.toString(settings.permits())));
        return WorkerProcess.start(id, args, events);
    }

    private interface Spawner {
        WorkerProcess spawn();
    }

    private static Applied inject(Settings settings, Target target0, String namespace, List<WorkerProcess> workers, List<FaultProxy> proxies,
                                  List<WorkerProcess.Event> events, SplittableRandom random, long lease, List<String> problems, String aim, Map<String, Primitive> kinds,
                                  Spawner spawner)
            throws InterruptedException {
        List<WorkerProcess> alive = workers.stream().filter(w -> !w.isKilled()).toList();
        WorkerProcess target = alive.get(random.nextInt(alive.size()));
        switch (settings.fault()) {
            case PAUSE_WORKER -> {
                WorkerProcess.Event section = sectionOf(target, lease, problems, aim);
                if (section == null) {
                    return null;
                }
                long start = System.nanoTime();
                target.pause();
                crowd(alive, target, section.name(), kinds);
                pause(lease * 2);
                // the point of the fault is a takeover while the holder is frozen: the store ends its lease when it
                // says, and a loaded store says it late (etcd revoked a 2 s lease more than 4 s after the pause began)
                awaitTakeover(events, target.id(), section.name(), start, lease * 8);
                target.resume();
                crowd(alive, target, null, kinds);
                return new Applied(Fault.PAUSE_WORKER, target.id(), start, System.nanoTime(), List.of(section.name()));
            }
            case PARTITION_WORKER -> {
                WorkerProcess.Event section = sectionOf(target, lease, problems, aim);
                if (section == null) {
                    return null;
                }
                FaultProxy proxy = proxies.get(target.id());
                long start = System.nanoTime();
                proxy.blackhole();
                crowd(alive, target, section.name(), kinds);
                pause(lease * 2);
                proxy.cutConnections();
                proxy.heal();
                crowd(alive, target, null, kinds);
                return new Applied(Fault.PARTITION_WORKER, target.id(), start, System.nanoTime(), List.of(section.name()));
            }
            case FORCE_RELEASE -> {
                // the operator's session first, connected and warmed up: the worker's section is short on a short lease
                LockOptions adminOptions = LockOptions.builder().leaseTime(Duration.ofMillis(Math.max(lease, 2_000)))
                        .requestTimeout(Duration.ofSeconds(5)).build();
                try (SafetyBackend.Connection operator = target0.operatorConnection(settings.backend(), namespace, adminOptions)) {
                    operator.admin().list(namespace).collectList().block(Duration.ofSeconds(20));
                    WorkerProcess.Event section = sectionOf(target, lease, problems, aim);
                    if (section == null) {
                        return null;
                    }
                    long start = System.nanoTime();
                    List<io.reactivelocks.admin.HeldGrant> evicted = operator.admin().forceRelease(section.name())
                            .block(Duration.ofSeconds(20));
                    if (evicted == null || evicted.isEmpty()) {
                        problems.add("force-release: nothing held on " + section.name() + " while worker " + target.id()
                                + " was in its critical section");
                    }
                    crowd(alive, target, section.name(), kinds);
                    pause(lease * 2);
                    crowd(alive, target, null, kinds);
                    return new Applied(Fault.FORCE_RELEASE, target.id(), start, System.nanoTime(), List.of(section.name()));
                } catch (RuntimeException e) {
                    problems.add("force-release failed: " + e);
                    return null;
                }
            }
            case KILL_WORKER -> {
                WorkerProcess holder = null;
                List<String> held = List.of();
                long deadline = System.nanoTime() + Duration.ofMillis(lease * 3).toNanos();
                while (holder == null && System.nanoTime() - deadline < 0) {
                    for (WorkerProcess w : alive) {
                        List<String> h = w.holding();
                        if (!h.isEmpty()) {
                            holder = w;
                            held = h;
                            break;
                        }
                    }
                    if (holder == null) {
                        pause(5);
                    }
                }
                if (holder == null) {
                    problems.add("kill-worker: no worker held a lock within " + lease * 3 + " ms");
                    return null;
                }
                long start = System.nanoTime();
                holder.kill();
                long end = System.nanoTime();
                WorkerProcess replacement = spawner.spawn();
                workers.add(replacement);
                replacement.awaitReady(60_000);
                return new Applied(Fault.KILL_WORKER, holder.id(), start, end, held);
            }
            case PAUSE_SERVER -> {
                // a holder in a long section, so that the fault catches a lease in the middle
                WorkerProcess.Event section = sectionOf(target, lease, problems, aim);
                long start = System.nanoTime();
                target0.server().pause();
                pause(lease * 2);
                target0.server().resume();
                return new Applied(Fault.PAUSE_SERVER, -1, start, System.nanoTime(), section == null ? List.of() : List.of(section.name()));
            }
            case RESTART_SERVER -> {
                WorkerProcess.Event section = sectionOf(target, lease, problems, aim);
                long start = System.nanoTime();
                target0.server().kill();
                target0.server().restart();
                return new Applied(Fault.RESTART_SERVER, -1, start, System.nanoTime(), section == null ? List.of() : List.of(section.name()));
            }
            case LATENCY -> {
                long start = System.nanoTime();
                Duration base = Duration.ofMillis(lease / 10);
                for (FaultProxy p : proxies) {
                    p.latency(base, base);
                }
                pause(lease * 3);
                for (FaultProxy p : proxies) {
                    p.latency(Duration.ZERO, Duration.ZERO);
                }
                return new Applied(Fault.LATENCY, -1, start, System.nanoTime(), List.of());
            }
            case KILL_LEADER, FAILOVER, PARTITION_LEADER -> {
                // a holder in a long section, so that the fault catches a lease in the middle
                WorkerProcess.Event section = sectionOf(target, lease, problems, aim);
                Topology topology = target0.topology();
                long start = System.nanoTime();
                switch (settings.fault()) {
                    case KILL_LEADER -> topology.killLeader();
                    case FAILOVER -> topology.failover();
                    default -> topology.partitionLeader();
                }
                pause(lease * 2);
                topology.heal();
                return new Applied(settings.fault(), -1, start, System.nanoTime(), section == null ? List.of() : List.of(section.name()));
            }
            case SLOW_NODE -> {
                long start = System.nanoTime();
                target0.topology().slowNode(Duration.ofMillis(lease / 10));
                pause(lease * 3);
                target0.topology().heal();
                return new Applied(Fault.SLOW_NODE, -1, start, System.nanoTime(), List.of());
            }
            default -> throw new IllegalStateException("unknown fault " + settings.fault());
        }
    }

    /**
     * The fair name a cycle's settle time is a burst on (the fair names in turn), or null when the
     * run has none.
     */
    private static String fairName(Settings settings, List<String> names, int cycle) {
        List<String> fair = new ArrayList<>();
        for (int i = 0; i < names.size(); i++) {
            if (settings.primitiveOf(i) == Primitive.FAIR) {
                fair.add(names.get(i));
            }
        }
        return fair.isEmpty() ? null : fair.get(cycle % fair.size());
    }

    /** Every live worker takes only {@code name} ({@code -}: lets them choose again; null: nothing to say). */
    private static void focus(List<WorkerProcess> workers, String name) {
        if (name == null) {
            return;
        }
        for (WorkerProcess w : workers) {
            if (!w.isKilled()) {
                w.command("focus " + name);
            }
        }
    }

    /**
     * While a holder of a semaphore or read-write name is cut off, the other workers take only that
     * name ({@code name}), so that the permits or the lock it held are taken over while it is away;
     * {@code null} lets them choose again.
     */
    private static void crowd(List<WorkerProcess> alive, WorkerProcess target, String name, Map<String, Primitive> kinds) {
        if (name != null) {
            Primitive p = kinds.getOrDefault(name, Primitive.MUTEX);
            if (p != Primitive.SEMAPHORE && p != Primitive.RWLOCK) {
                return;
            }
        }
        for (WorkerProcess w : alive) {
            if (w != target) {
                w.command("focus " + (name == null ? "-" : name));
            }
        }
    }

    /** Tells the worker to make its next section (on {@code aim}, when not null) long and waits until it is inside it. */
    private static WorkerProcess.Event sectionOf(WorkerProcess target, long lease, List<String> problems, String aim)
            throws InterruptedException {
        target.command(aim == null ? "long" : "long " + aim);
        WorkerProcess.Event section = target.awaitSection(true, lease * 10 + 10_000);
        if (section == null) {
            problems.add("worker " + target.id() + " did not enter a long critical section: " + target.stderr());
        }
        return section;
    }

    /**
     * Waits until a worker other than {@code holder} was granted {@code name} after {@code since}, at most
     * {@code boundMillis} (a run whose workers do not ask for that name in time goes on without it).
     */
    private static void awaitTakeover(List<WorkerProcess.Event> events, int holder, String name, long since, long boundMillis)
            throws InterruptedException {
        long until = System.nanoTime() + boundMillis * 1_000_000;
        synchronized (events) {
            while (System.nanoTime() - until < 0) {
                for (WorkerProcess.Event e : events) {
                    if (e.type() == 'G' && e.worker() != holder && name.equals(e.name()) && e.nanos() - since > 0) {
                        return;
                    }
                }
                events.wait(20); // the workers' readers add events under this lock (no notify): a bounded poll
            }
        }
    }

    /** Lets time pass: fault lengths and settle times are the point of a run, not a wait for a condition. */
    private static void pause(long millis) throws InterruptedException {
        Thread.sleep(millis);
    }
}
