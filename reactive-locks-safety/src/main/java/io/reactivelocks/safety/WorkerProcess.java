package io.reactivelocks.safety;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A {@link Worker} running as a child JVM, seen from the harness: its events as they arrive, what it
 * holds now, and the signals the harness sends it (SIGSTOP, SIGCONT, SIGKILL, stdin commands).
 */
final class WorkerProcess {

    /**
     * One line a worker printed, parsed.
     *
     * @param worker the worker id
     * @param type   G, C, E, V, X, L, Q, I, A, S, O, K (see {@link Worker})
     * @param name   the lock name (null for X)
     * @param token  the token (0 for X)
     * @param nanos  when it happened ({@link System#nanoTime()}, shared by the processes of one machine)
     * @param how    for E: lost or released; for C: long or short; for X: the error kind; for L: the reason;
     *               for G: the mode (m mutex, f fair, s semaphore, r reader, w writer); for O: the request's kind
     *               (r, w, d) and a write's value; for K: kind, ok or stale, the value read (else -1), the arbiter's order
     * @param validUntil for G, E, V: the lease's validity deadline
     */
    record Event(int worker, char type, String name, long token, long nanos, String how, long validUntil) {
    }

    private final int id;
    private final Process process;
    private final Thread reader;
    private final Thread errors;
    private final List<Event> events;
    private final Map<String, Event> holding = new HashMap<>();
    private final Map<String, Event> inSection = new HashMap<>();
    private final List<String> stderrTail = new ArrayList<>();
    private boolean ready;
    private boolean done;
    private long renewals;
    private volatile boolean paused;
    private volatile boolean killed;
    private volatile boolean stopRequested;
    private volatile String threadDump;

    private WorkerProcess(int id, Process process, List<Event> events) {
        this.id = id;
        this.process = process;
        this.events = events;
        this.reader = new Thread(this::read, "worker-" + id + "-out");
        this.errors = new Thread(this::readErrors, "worker-" + id + "-err");
        reader.setDaemon(true);
        errors.setDaemon(true);
        reader.start();
        errors.start();
    }

    /**
     * Starts a worker JVM on this JVM's class path.
     *
     * @param id     the worker id
     * @param args   the worker's arguments after the id
     * @param events where its events go (shared by the run's workers; guarded by itself)
     * @return the started worker
     */
    static WorkerProcess start(int id, List<String> args, List<Event> events) {
        Path java = Paths.get(System.getProperty("java.home"), "bin", "java");
        List<String> command = new ArrayList<>(List.of(java.toString(),
                "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xss512k",
                "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
                "-cp", System.getProperty("java.class.path"),
                Worker.class.getName(), Integer.toString(id)));
        command.addAll(args);
        try {
            Process p = new ProcessBuilder(command).start();
            return new WorkerProcess(id, p, events);
        } catch (IOException e) {
            throw new IllegalStateException("cannot start worker JVM " + java, e);
        }
    }

    int id() {
        return id;
    }

    private void read() {
        try (BufferedReader in = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = in.readLine()) != null) {
                handle(line);
            }
        } catch (IOException e) {
            // the process ended
        }
        synchronized (this) {
            notifyAll();
        }
    }

    private void readErrors() {
        try (BufferedReader in = new BufferedReader(new InputStreamReader(process.getErrorStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = in.readLine()) != null) {
                synchronized (stderrTail) {
                    stderrTail.add(line);
                    if (stderrTail.size() > 40) {
                        stderrTail.remove(0);
                    }
                }
            }
        } catch (IOException e) {
            // the process ended
        }
    }

    private void handle(String line) {
        String[] p = line.split(" ", -1);
        synchronized (this) {
            switch (p[0]) {
                case "READY" -> ready = true;
                case "DONE" -> {
                    done = true;
                    renewals = Long.parseLong(p[2]);
                }
                case "Q", "I", "A" -> add(new Event(id, p[0].charAt(0), p[1], 0, Long.parseLong(p[2]), "", 0));
                case "G", "V" -> {
                    Event e = new Event(id, p[0].charAt(0), p[1], Long.parseLong(p[2]), Long.parseLong(p[3]), p.length > 5 ? p[5] : "",
                            Long.parseLong(p[4]));
                    add(e);
                    if (e.type() == 'G') {
                        holding.put(e.name(), e);
                    }
                }
                case "C" -> {
                    Event e = new Event(id, 'C', p[1], Long.parseLong(p[2]), Long.parseLong(p[3]), p[4], 0);
                    add(e);
                    inSection.put(e.name(), e);
                }
                case "E" -> {
                    Event e = new Event(id, 'E', p[1], Long.parseLong(p[2]), Long.parseLong(p[3]), p[4], Long.parseLong(p[5]));
                    add(e);
                    holding.remove(e.name());
                    inSection.remove(e.name());
                }
                case "X" -> add(new Event(id, 'X', null, 0, Long.parseLong(p[1]), p[2], 0));
                // an arbiter request (O: how = kind [value]) and its answer (K: how = kind ok|stale value order)
                case "O", "K" -> add(arbiterEvent(id, line));
                case "S" -> add(new Event(id, 'S', null, 0, Long.parseLong(p[1]), "", Long.parseLong(p[2])));
                case "L" -> add(new Event(id, 'L', p[1], Long.parseLong(p[2]), Long.parseLong(p[3]),
                        line.substring(line.indexOf(p[3]) + p[3].length()).trim(), 0));
                default -> {
                    // a stray line (a library printing to stdout): ignored
                }
            }
            notifyAll();
        }
    }

    /**
     * An {@code O} or {@code K} line of a worker (an arbiter request and its answer, see {@link Worker}) as an event:
     * how = the request's kind and a write's value ({@code O}), or kind, ok|stale, the value read and the
     * arbiter's order ({@code K}).
     */
    static Event arbiterEvent(int id, String line) {
        String[] p = line.split(" ", -1);
        return new Event(id, p[0].charAt(0), p[2], Long.parseLong(p[3]), Long.parseLong(p[4]),
                p[1] + (p.length > 5 ? " " + String.join(" ", java.util.Arrays.asList(p).subList(5, p.length)) : ""), 0);
    }

    private void add(Event e) {
        synchronized (events) {
            events.add(e);
        }
    }

    /** Waits until the worker said READY; fails with its stderr when it died or took too long. */
    synchronized void awaitReady(long timeoutMillis) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        while (!ready) {
            long left = deadline - System.nanoTime();
            if (left <= 0 || !process.isAlive()) {
                throw new IllegalStateException("worker " + id + " did not start: " + stderr());
            }
            wait(Math.max(1, TimeUnit.NANOSECONDS.toMillis(left)));
        }
    }

    /**
     * Waits until the worker is in a critical section whose write is still to come.
     *
     * @param longOnly only a section started after {@code long} counts
     * @param timeoutMillis how long to wait
     * @return the section's C event, or null when none came in time
     */
    synchronized Event awaitSection(boolean longOnly, long timeoutMillis) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        while (true) {
            for (Event e : inSection.values()) {
                if (!longOnly || e.how().equals("long")) {
                    return e;
                }
            }
            long left = deadline - System.nanoTime();
            if (left <= 0 || !process.isAlive()) {
                return null;
            }
            wait(Math.max(1, TimeUnit.NANOSECONDS.toMillis(left)));
        }
    }

    /** @return the names this worker holds now (by its own reports) */
    synchronized List<String> holding() {
        return new ArrayList<>(holding.keySet());
    }

    synchronized long renewals() {
        return renewals;
    }

    boolean isKilled() {
        return killed;
    }

    void command(String line) {
        try {
            OutputStream out = process.getOutputStream();
            out.write((line + "\n").getBytes(StandardCharsets.UTF_8));
            out.flush();
        } catch (IOException e) {
            // a dead worker cannot be told anything
        }
    }

    void pause() {
        signal("STOP");
        paused = true;
    }

    void resume() {
        if (paused) {
            signal("CONT");
            paused = false;
        }
    }

    void kill() {
        killed = true;
        process.destroyForcibly();
        try {
            process.waitFor(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * Asks the worker to finish its section and exit, and waits (bounded).
     *
     * @return true when it exited by itself with DONE
     */
    boolean stop(long timeoutMillis) throws InterruptedException {
        if (killed) {
            return true;
        }
        requestStop();
        boolean exited = process.waitFor(timeoutMillis, TimeUnit.MILLISECONDS);
        if (!exited) {
            threadDump = dumpThreads();
            process.destroyForcibly();
            process.waitFor(10, TimeUnit.SECONDS);
        }
        reader.join(5_000);
        synchronized (this) {
            return exited && done;
        }
    }

    /** Asks the worker to finish its section and exit, without waiting (see {@link #stop}). */
    void requestStop() {
        if (killed || stopRequested) {
            return;
        }
        stopRequested = true;
        resume();
        command("stop");
        try {
            process.getOutputStream().close();
        } catch (IOException e) {
            // gone already
        }
    }

    /**
     * @return where the worker's threads were written when it did not exit in time (what it was
     *         waiting for), or null
     */
    String threadDump() {
        return threadDump;
    }

    /** Writes the threads of the still running worker ({@code jcmd Thread.print}) to a file under target/. */
    private String dumpThreads() {
        try {
            Path out = Paths.get("target", "worker-" + id + "-" + process.pid() + "-threads.txt").toAbsolutePath();
            java.nio.file.Files.createDirectories(out.getParent());
            Path jcmd = Paths.get(System.getProperty("java.home"), "bin", "jcmd");
            Process p = new ProcessBuilder(jcmd.toString(), Long.toString(process.pid()), "Thread.print")
                    .redirectErrorStream(true).redirectOutput(out.toFile()).start();
            return p.waitFor(20, TimeUnit.SECONDS) ? out.toString() : out + " (jcmd did not finish)";
        } catch (IOException e) {
            return "(no thread dump: " + e + ")";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "(no thread dump: interrupted)";
        }
    }

    String stderr() {
        synchronized (stderrTail) {
            return stderrTail.isEmpty() ? "(no output on stderr)" : String.join("\n", stderrTail);
        }
    }

    private void signal(String signal) {
        try {
            Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(process.pid())).redirectErrorStream(true).start();
            kill.getInputStream().readAllBytes();
            if (!kill.waitFor(10, TimeUnit.SECONDS) || kill.exitValue() != 0) {
                throw new IllegalStateException("kill -" + signal + " " + process.pid() + " failed");
            }
        } catch (IOException e) {
            throw new IllegalStateException("cannot run kill -" + signal, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
