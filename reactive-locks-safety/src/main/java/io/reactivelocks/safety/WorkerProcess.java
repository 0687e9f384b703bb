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
        String store = args.isEmpty() ? "worker" : args.get(0);
        List<String> command = new ArrayList<>(List.of(java.toString(),
                "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xss512k",
                "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn"));
        Archive archive = Archive.of(store);
        command.addAll(archive.options());
        command.addAll(List.of("-cp", CLASS_PATH, Worker.class.getName(), Integer.toString(id)));
        command.addAll(args);
        try {
            Process p = new ProcessBuilder(command).start();
            archive.started(p);
            return new WorkerProcess(id, p, events);
        } catch (IOException e) {
            throw new IllegalStateException("cannot start worker JVM " + java, e);
        }
    }

    /**
     * This JVM's class path with each directory replaced by a jar of its contents (made once, under
     * {@code target/safety-cds}): a class-data archive cannot be written for a class path with a
     * non-empty directory, and a worker JVM starts in about half the CPU time with one. The class
     * path as it is when a jar cannot be made.
     */
    private static final String CLASS_PATH = withoutDirectories(System.getProperty("java.class.path"));

    private static String withoutDirectories(String classPath) {
        List<String> out = new ArrayList<>();
        int n = 0;
        try {
            for (String entry : classPath.split(java.io.File.pathSeparator)) {
                Path dir = Paths.get(entry);
                if (!java.nio.file.Files.isDirectory(dir)) {
                    out.add(entry);
                    continue;
                }
                Path jar = Archive.DIR.resolve("classes-" + (n++) + ".jar");
                java.nio.file.Files.createDirectories(Archive.DIR);
                try (java.util.jar.JarOutputStream zip = new java.util.jar.JarOutputStream(java.nio.file.Files.newOutputStream(jar));
                     java.util.stream.Stream<Path> files = java.nio.file.Files.walk(dir)) {
                    for (Path f : files.filter(java.nio.file.Files::isRegularFile).sorted().toList()) {
                        zip.putNextEntry(new java.util.jar.JarEntry(dir.relativize(f).toString().replace('\\', '/')));
                        java.nio.file.Files.copy(f, zip);
                        zip.closeEntry();
                    }
                }
                out.add(jar.toString());
            }
            return String.join(java.io.File.pathSeparator, out);
        } catch (IOException | RuntimeException e) {
            return classPath;
        }
    }

    /**
     * The class-data archive of the workers of one store (JDK 13+ dynamic archives): the first worker
     * of a store writes it when it exits, the workers started after that exit read it. A worker JVM
     * loads and links a few thousand classes of its driver (Netty, gRPC, R2DBC...): with the archive it
     * starts in about half the CPU time, which a build of many short safety runs on a loaded machine
     * feels. An archive that does not fit (another JDK, another class path) is ignored by the JVM;
     * its messages go to stderr, never into the worker's protocol on stdout. Off with
     * {@code -Dsafety.cds=false}.
     */
    private static final class Archive {
        private static final java.util.Map<String, Process> WRITERS = new java.util.concurrent.ConcurrentHashMap<>();
        private static final Path DIR = Paths.get(System.getProperty("safety.cds.dir", "target/safety-cds"));

        private final String store;
        private final List<String> options;
        private final boolean writes;

        private Archive(String store, List<String> options, boolean writes) {
            this.store = store;
            this.options = options;
            this.writes = writes;
        }

        static synchronized Archive of(String store) {
            boolean directories = java.util.Arrays.stream(CLASS_PATH.split(java.io.File.pathSeparator))
                    .anyMatch(e -> java.nio.file.Files.isDirectory(Paths.get(e)));
            if (directories || !Boolean.parseBoolean(System.getProperty("safety.cds", "true"))) {
                return new Archive(store, List.of(), false);
            }
            List<String> quiet = List.of("-Xlog:disable", "-Xlog:all=warning:stderr");
            Path file = DIR.resolve(store.toLowerCase(java.util.Locale.ROOT) + ".jsa");
            Process writer = WRITERS.get(store);
            if (writer == null) {
                try {
                    java.nio.file.Files.createDirectories(DIR);
                    java.nio.file.Files.deleteIfExists(file); // an archive of an earlier build may not fit this one
                } catch (IOException e) {
                    return new Archive(store, List.of(), false);
                }
                List<String> o = new ArrayList<>(quiet);
                o.add("-XX:ArchiveClassesAtExit=" + file);
                return new Archive(store, o, true);
            }
            if (!writer.isAlive() && java.nio.file.Files.isRegularFile(file)) {
                List<String> o = new ArrayList<>(quiet);
                o.add("-XX:SharedArchiveFile=" + file);
                return new Archive(store, o, false);
            }
            return new Archive(store, List.of(), false); // being written: this one starts without
        }

        List<String> options() {
            return options;
        }

        void started(Process p) {
            if (writes) {
                WRITERS.put(store, p);
            }
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
