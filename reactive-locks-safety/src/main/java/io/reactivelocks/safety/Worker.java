package io.reactivelocks.safety;

import io.reactivelocks.Lease;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockListener;
import io.reactivelocks.LockOptions;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * One worker process of a safety run. It loops until told to stop (a line {@code stop} on stdin,
 * or stdin closing): pick a lock name at random, {@link LockClient#hold hold} it, and in the critical
 * section read the name's counter from the {@link Arbiter} with the lease's token, wait a random
 * time (0–10 ms; one section in a hundred one to two renewal intervals), and write counter + 1
 * with the same token — whether or not the lease is still valid, so that a late write reaches the arbiter and is judged there. Cancelling the hold releases the lock.
 *
 * <p>Each name has a {@link Primitive}. A semaphore name is held with {@code Semaphore.hold(name, N)}
 * and its section is read, wait, write, then {@code D} (done: frees the arbiter's slot) before the
 * permit is released. A read-write name is held on its read side (70 %) or write side: a reader reads,
 * waits and reads again (the value must not have changed), a writer reads, waits and writes value + 1;
 * a long section is always a writer's. A fair name's sections last 50–150 ms (so that waiters queue)
 * and the worker reports when it starts to wait ({@code Q}).
 *
 * <p>It reports on stdout, one event per line (times are {@link System#nanoTime()}, which on Linux
 * is {@code CLOCK_MONOTONIC} and so comparable between processes of one machine):
 * <pre>
 * READY
 * Q name t                            a hold is about to be subscribed: the worker starts to wait
 * I name t                            a grant request of the fair lock is about to be sent
 * A name t                            the store answered that request "queued": the waiter is in its line
 * G name token t validUntil mode      granted (mode m mutex, f fair, s semaphore, r reader, w writer)
 * C name token t                      in the critical section: the read was accepted, the write is next
 * E name token t lost|released lastValidUntil   the hold ended (lost: the stream completed)
 * V name token t validUntil           I4 violation: a lease emitted after its validity
 * L name token t reason               the engine's reason for a loss (its LockListener)
 * X t kind message                    an acquire that failed (timeout, store error): not a violation
 * S from to                           the worker's JVM did not run from {@code from} to {@code to} (a stall of
 *                                     over {@link #STALL}: the machine's scheduler or a pause; I4 does not count it)
 * O kind name token t [value]         an arbiter request is about to be sent (kind r read, w write, d done)
 * K kind name token t ok|stale value order   its answer arrived: accepted or refused, the value read (else -1),
 *                                     the arbiter's decision order (the register operations of the run's history)
 * DONE acquisitions renewals
 * </pre>
 *
 * <p>On stdin, {@code long} makes the next critical section wait two lease times between its read
 * and its write (the harness then freezes or cuts off the worker in exactly that window, where a
 * late write does harm; {@code long NAME}: the next section on NAME), {@code focus NAME} makes
 * every section take NAME until {@code focus -} (the other workers crowd the name of a frozen
 * holder), and {@code stop} ends the worker after its current section.
 *
 * <p>Arguments: {@code id backend host port extra namespace arbiterPort names leaseMillis seed
 * primitives permits} (see {@link SafetyStore}: host and port of the worker's proxy, or {@code - 0} and the
 * endpoints as extra for a replicated deployment; names and their primitives comma-separated).
 */
public final class Worker {

    private final int id;
    private final SafetyBackend.Connection connection;
    private final ArbiterClient arbiter;
    private final List<String> names;
    private final Map<String, Primitive> primitives = new HashMap<>();
    private final int permits;
    private final AtomicReference<String> longName = new AtomicReference<>();
    private final AtomicReference<String> focus = new AtomicReference<>();
    private final LockOptions options;
    private final SplittableRandom random;
    private final PrintStream out;
    private final AtomicBoolean stopping = new AtomicBoolean();
    private final AtomicBoolean longNext = new AtomicBoolean();
    private final AtomicLong acquisitions = new AtomicLong();
    private final AtomicLong renewals = new AtomicLong();
    private final Scheduler blocking = Schedulers.newBoundedElastic(4, 64, "arbiter-io");

    private Worker(int id, SafetyBackend.Connection connection, ArbiterClient arbiter, List<String> names, List<Primitive> kinds,
                   int permits, LockOptions options, long seed, PrintStream out) {
        this.id = id;
        this.connection = connection;
        this.arbiter = arbiter;
        this.names = names;
        for (int i = 0; i < names.size(); i++) {
            primitives.put(names.get(i), kinds.get(i));
        }
        this.permits = permits;
        this.options = options;
        this.random = new SplittableRandom(seed);
        this.out = out;
    }

    /**
     * Runs one worker (see the class documentation for the arguments).
     *
     * @param args the arguments
     * @throws Exception when the worker cannot start
     */
    /** A gap in the stall watch's 10 ms ticks longer than this is reported as a stall ({@code S} line). */
    static final Duration STALL = Duration.ofMillis(50);

    /**
     * Reports the stretches in which this JVM did not run: a thread that asks to wake every 10 ms and
     * reports each wake-up that came more than {@link #STALL} late. A timer of the engine cannot fire
     * while the process is not scheduled, so the check does not count those stretches as the engine's
     * lateness; a late timer in a running JVM is still counted.
     */
    private static void watchStalls(PrintStream out) {
        Thread watch = new Thread(() -> {
            long tick = Duration.ofMillis(10).toNanos();
            long last = System.nanoTime();
            while (!Thread.currentThread().isInterrupted()) {
                java.util.concurrent.locks.LockSupport.parkNanos(tick);
                long now = System.nanoTime();
                if (now - last - tick > STALL.toNanos()) {
                    synchronized (out) {
                        out.println("S " + (last + tick) + " " + now);
                    }
                }
                last = now;
            }
        }, "stall-watch");
        watch.setDaemon(true);
        watch.start();
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 12) {
            System.err.println("usage: Worker id backend host port extra namespace arbiterPort names leaseMillis seed primitives permits");
            System.exit(2);
        }
        int id = Integer.parseInt(args[0]);
        SafetyStore backend = SafetyStore.named(args[1]);
        String host = args[2];
        int port = Integer.parseInt(args[3]);
        String extra = args[4];
        String namespace = args[5];
        int arbiterPort = Integer.parseInt(args[6]);
        List<String> names = List.of(args[7].split(","));
        Duration lease = Duration.ofMillis(Long.parseLong(args[8]));
        long seed = Long.parseLong(args[9]);
        List<Primitive> kinds = new ArrayList<>();
        for (String k : args[10].split(",")) {
            kinds.add(Primitive.valueOf(k));
        }
        int permits = Integer.parseInt(args[11]);

        PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        watchStalls(out);
        LockOptions options = LockOptions.builder()
                .leaseTime(lease)
                .waitTimeout(Duration.ofSeconds(10))
                .requestTimeout(Duration.ofSeconds(1))
                .build();
        LockListener listener = new LineListener() {
            @Override
            public void onLost(String name, long token, String reason, Duration held) {
                synchronized (out) {
                    out.println("L " + name + " " + token + " " + System.nanoTime() + " " + oneLine(reason));
                }
            }

            @Override
            public void onAsked(String name) {
                long now = System.nanoTime(); // before the request leaves
                synchronized (out) {
                    out.println("I " + name + " " + now);
                }
            }

            @Override
            public void onInLine(String name) {
                long now = System.nanoTime(); // the answer is here: the place was fixed before
                synchronized (out) {
                    out.println("A " + name + " " + now);
                }
            }
        };
        SafetyBackend.Connection connection = backend.connect(host, port, extra, namespace, options, listener);
        Worker worker = new Worker(id, connection, ArbiterClient.connect(arbiterPort, id, line -> {
            synchronized (out) {
                out.println(line);
            }
        }), names, kinds, permits, options, seed, out);
        worker.warmUp(namespace + "-warm" + id);
        Thread stdin = new Thread(worker::watchStdin, "stdin");
        stdin.setDaemon(true);
        stdin.start();
        out.println("READY");
        worker.run();
        out.println("DONE " + worker.acquisitions.get() + " " + worker.renewals.get());
        connection.close();
        out.flush();
        System.exit(0);
    }

    /**
     * One try and release on the client of each primitive of the run, on a name of its own, before READY: the
     * connections, scripts and code paths are warm when the run starts (the first seconds of a run
     * are a burst on a fair name; cold clients would spend them connecting). Failures are ignored.
     */
    private void warmUp(String name) {
        List<Mono<Void>> tries = new ArrayList<>();
        for (Primitive p : java.util.EnumSet.copyOf(primitives.values())) {
            switch (p) {
                case MUTEX -> tries.add(connection.client().tryAcquire(name).flatMap(Lease::release));
                case FAIR -> tries.add(connection.fair().tryAcquire(name + "f").flatMap(Lease::release));
                case SEMAPHORE -> tries.add(connection.semaphore().tryAcquire(name + "s", permits).flatMap(Lease::release));
                case RWLOCK -> {
                    tries.add(connection.rw().write().tryAcquire(name + "w").flatMap(Lease::release));
                    tries.add(connection.rw().read().tryAcquire(name + "r").flatMap(Lease::release));
                }
            }
        }
        for (Mono<Void> t : tries) {
            try {
                t.block(Duration.ofSeconds(30));
            } catch (RuntimeException e) {
                // the run reports what matters; a slow start is not a violation
            }
        }
    }

    private void watchStdin() {
        try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
            String line;
            while ((line = in.readLine()) != null) {
                if (line.trim().equals("stop")) {
                    break;
                }
                String[] w = line.trim().split(" ");
                if (w[0].equals("long")) {
                    longName.set(w.length > 1 ? w[1] : null);
                    longNext.set(true);
                } else if (w[0].equals("focus") && w.length > 1) {
                    focus.set(w[1].equals("-") ? null : w[1]);
                }
            }
        } catch (Exception e) {
            // stdin gone: the harness is gone too
        }
        stopping.set(true);
    }

    /** The longest a critical section may take: the wait timeout, a few request timeouts and the longest pause, with room. */
    static final Duration SECTION_BOUND = Duration.ofSeconds(25);
    /** What a worker writes on stderr when a section outlasted {@link #SECTION_BOUND}; the harness reports it. */
    static final String HUNG = "HUNG section";

    private void run() {
        while (!stopping.get()) {
            String focused = focus.get();
            String name = focused != null ? focused : names.get(random.nextInt(names.size()));
            try {
                // every step of a section is bounded (wait timeout, request timeouts, the arbiter's socket
                // timeout): one that outlasts them all is a defect, reported with what the clients were doing
                section(name).timeout(SECTION_BOUND, Mono.defer(() -> {
                    System.err.println(HUNG + " on '" + name + "' did not end within " + SECTION_BOUND.toSeconds() + " s; "
                            + "mutex client: pending " + connection.client().metrics().pendingAcquires()
                            + ", held " + connection.client().metrics().heldLeases()
                            + "; fair client: pending " + connection.fair().metrics().pendingAcquires()
                            + ", held " + connection.fair().metrics().heldLeases());
                    return Mono.error(new IllegalStateException("section did not end within " + SECTION_BOUND));
                })).block(Duration.ofSeconds(60));
            } catch (RuntimeException e) {
                emit("X " + System.nanoTime() + " " + e.getClass().getSimpleName() + " " + oneLine(e.getMessage()));
            }
        }
        connection.close();
    }

    /** Whether the next section on {@code name} is the long one the harness asked for (taken once). */
    private boolean takeLong(String name) {
        String wanted = longName.get();
        if (wanted != null && !wanted.equals(name)) {
            return false;
        }
        return longNext.compareAndSet(true, false);
    }

    /** The hold stream of {@code name} by its primitive. */
    private Flux<Lease> holdOf(String name, char mode) {
        return switch (mode) {
            case 's' -> connection.semaphore().hold(name, permits, options);
            case 'r' -> connection.rw().read().hold(name, options);
            case 'w' -> connection.rw().write().hold(name, options);
            case 'f' -> connection.fair().hold(name, options);
            default -> connection.client().hold(name, options);
        };
    }

    /** One critical section on {@code name}: hold, read, wait, write, cancel the hold. */
    private Mono<Void> section(String name) {
        return Mono.defer(() -> {
            Primitive primitive = primitives.getOrDefault(name, Primitive.MUTEX);
            boolean isLong = takeLong(name);
            char mode = switch (primitive) {
                case SEMAPHORE -> 's';
                case RWLOCK -> isLong || random.nextInt(10) >= 7 ? 'w' : 'r';
                case FAIR -> 'f';
                default -> 'm';
            };
            Sinks.One<Lease> granted = Sinks.one();
            AtomicReference<Lease> last = new AtomicReference<>();
            AtomicBoolean ended = new AtomicBoolean();
            emit("Q " + name + " " + System.nanoTime()); // before any request of this acquire
            Disposable hold = holdOf(name, mode).subscribe(
                    lease -> {
                        long now = System.nanoTime();
                        if (now - lease.validUntilNanos() > 0) {
                            emit("V " + name + " " + lease.token() + " " + now + " " + lease.validUntilNanos());
                        }
                        Lease previous = last.getAndSet(lease);
                        if (previous == null) {
                            acquisitions.incrementAndGet();
                            emit("G " + name + " " + lease.token() + " " + now + " " + lease.validUntilNanos() + " " + mode);
                            granted.tryEmitValue(lease);
                        } else {
                            renewals.incrementAndGet();
                        }
                    },
                    error -> {
                        Lease lease = last.get();
                        if (lease != null && ended.compareAndSet(false, true)) {
                            emit("E " + name + " " + lease.token() + " " + System.nanoTime() + " lost " + lease.validUntilNanos());
                            emit("X " + System.nanoTime() + " hold-" + error.getClass().getSimpleName() + " " + oneLine(error.getMessage()));
                        }
                        granted.tryEmitError(error);
                    },
                    () -> {
                        Lease lease = last.get();
                        if (lease != null && ended.compareAndSet(false, true)) {
                            emit("E " + name + " " + lease.token() + " " + System.nanoTime() + " lost " + lease.validUntilNanos());
                        }
                        // a hold never ends without its first lease (HoldAgain): if it does, the section ends with that error
                        granted.tryEmitError(new IllegalStateException("the hold stream of '" + name + "' completed without a lease"));
                    });
            return granted.asMono()
                    .flatMap(lease -> critical(lease, mode, isLong))
                    .doFinally(signal -> {
                        Lease lease = last.get();
                        if (lease != null && ended.compareAndSet(false, true)) {
                            emit("E " + name + " " + lease.token() + " " + System.nanoTime() + " released " + lease.validUntilNanos());
                        }
                        hold.dispose();
                    });
        });
    }

    private Mono<Void> critical(Lease lease, char mode, boolean isLong) {
        long pause;
        int dice = random.nextInt(100);
        if (isLong) {
            pause = options.leaseTime().toMillis() * 2;
        } else if (dice == 0) {
            // one section in a hundred long enough to see renewals
            pause = options.renewalInterval().toMillis() + random.nextInt((int) Math.max(1, options.renewalInterval().toMillis()));
        } else if (mode == 'f') {
            pause = 50 + random.nextInt(101); // long enough for the others to queue behind
        } else {
            pause = random.nextInt(11);
        }
        String m = mode == 'r' || mode == 'w' ? " " + mode : "";
        return Mono.fromCallable(() -> arbiter.read(lease.name(), lease.token(), m))
                .subscribeOn(blocking)
                .doOnNext(read -> {
                    if (read.value() >= 0) {
                        emit("C " + lease.name() + " " + lease.token() + " " + System.nanoTime() + (isLong ? " long" : " short"));
                    }
                })
                .flatMap(read -> Mono.delay(Duration.ofMillis(pause))
                        .then(Mono.fromCallable(() -> {
                            if (read.value() < 0) {
                                return 0L; // the read itself was stale: nothing to write
                            }
                            if (mode == 'r') {
                                arbiter.read(lease.name(), lease.token(), m); // a reader reads again: a writer in between is judged
                                return 1L;
                            }
                            boolean validAtSend = lease.isValid();
                            arbiter.write(lease.name(), lease.token(), read.value() + 1, validAtSend, m);
                            return 1L;
                        }).subscribeOn(blocking)))
                .then(mode == 's' ? Mono.fromCallable(() -> arbiter.done(lease.name(), lease.token())).subscribeOn(blocking).then()
                        : Mono.<Void>empty());
    }

    private void emit(String line) {
        synchronized (out) {
            out.println(line);
        }
    }

    private static String oneLine(String s) {
        return s == null ? "" : s.replace('\n', ' ').replace('\r', ' ');
    }

    /**
     * The worker's view of the arbiter: one socket, one request at a time. Each request is reported before
     * it is sent ({@code O}) and when its answer arrived ({@code K}): the register operations of the run's history.
     */
    static final class ArbiterClient {
        private final java.net.Socket socket;
        private final BufferedReader in;
        private final PrintStream out;
        private final int worker;
        private final java.util.function.Consumer<String> report;

        private ArbiterClient(java.net.Socket socket, int worker, java.util.function.Consumer<String> report) throws java.io.IOException {
            this.socket = socket;
            this.worker = worker;
            this.report = report;
            this.in = new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.UTF_8));
            this.out = new PrintStream(socket.getOutputStream(), true, StandardCharsets.UTF_8);
        }

        static ArbiterClient connect(int port, int worker, java.util.function.Consumer<String> report) throws java.io.IOException {
            java.net.Socket s = new java.net.Socket("127.0.0.1", port);
            s.setTcpNoDelay(true);
            s.setSoTimeout(10_000);
            return new ArbiterClient(s, worker, report);
        }

        /** Sends one request and reports it and its answer (the answer's last word is the arbiter's decision order). */
        private String[] ask(char kind, String name, long token, String request, String value) throws java.io.IOException {
            report.accept("O " + kind + " " + name + " " + token + " " + System.nanoTime() + value);
            out.println(request);
            String line = in.readLine();
            if (line == null) {
                throw new java.io.EOFException("the arbiter closed the connection");
            }
            String[] answer = line.split(" ");
            long now = System.nanoTime();
            boolean ok = answer[0].equals("OK");
            String read = kind == 'r' && ok ? answer[1] : "-1";
            report.accept("K " + kind + " " + name + " " + token + " " + now + " " + (ok ? "ok" : "stale") + " " + read + " "
                    + answer[answer.length - 1].substring(1));
            return answer;
        }

        /** @return the value read, or value -1 when the arbiter refused the read as stale */
        synchronized Read read(String name, long token, String mode) throws java.io.IOException {
            String[] answer = ask('r', name, token, "R " + name + " " + token + " " + worker + mode, "");
            return new Read(answer[0].equals("OK") ? Long.parseLong(answer[1]) : -1);
        }

        synchronized boolean write(String name, long token, long value, boolean validAtSend, String mode) throws java.io.IOException {
            return ask('w', name, token, "W " + name + " " + token + " " + worker + " " + value + " " + (validAtSend ? 1 : 0) + mode,
                    " " + value)[0].equals("OK");
        }

        /** A semaphore holder is done with its permit (sent before it releases it). */
        synchronized boolean done(String name, long token) throws java.io.IOException {
            return ask('d', name, token, "D " + name + " " + token + " " + worker, "")[0].equals("OK");
        }

        record Read(long value) {
        }
    }
}
