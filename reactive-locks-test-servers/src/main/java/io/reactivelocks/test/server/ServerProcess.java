package io.reactivelocks.test.server;

import java.io.File;
import java.io.IOException;
import java.lang.ProcessBuilder.Redirect;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * A server binary running as a child process of this JVM, on free loopback ports, in a fresh temp
 * dir, with its output in {@code server.log} in that dir. The test holds its pid and can
 * {@link #pause()}, {@link #resume()}, {@link #kill()} and {@link #restart()} it (same ports, same
 * dir). {@link #close()} kills the process tree and deletes the temp dir; a JVM shutdown hook does
 * the same for every process still running when the JVM exits.
 *
 * <p>Every method blocks the calling thread, bounded by the start timeout or a few seconds.
 */
public final class ServerProcess implements ServerHandle {

    private static final Duration EXIT_TIMEOUT = Duration.ofSeconds(15);
    private static final int START_ATTEMPTS = 3;
    private static final int LOG_TAIL_LINES = 40;

    /**
     * Where a server process lives: its loopback host and ports and its temp dir.
     *
     * @param name       the server kind, for messages
     * @param host       the loopback address the server binds
     * @param port       the main port clients connect to
     * @param extraPorts further free ports (for example etcd's peer port), in request order
     * @param directory  the temp dir, deleted on close
     * @param logFile    the file that receives the server's stdout and stderr
     */
    public record Layout(String name, String host, int port, List<Integer> extraPorts, Path directory, Path logFile) {

        /**
         * Returns one of the extra ports asked for with {@link Builder#extraPorts(int)}.
         *
         * @param index zero-based index
         * @return the port
         */
        public int extraPort(int index) {
            return extraPorts.get(index);
        }

        /**
         * Resolves a path inside the temp dir.
         *
         * @param relative a relative path
         * @return the path inside {@link #directory()}
         */
        public Path path(String relative) {
            return directory.resolve(relative);
        }
    }

    /**
     * Starts a builder for a server process.
     *
     * @param name the server kind, used in messages, thread and dir names
     * @return a new builder
     */
    public static Builder builder(String name) {
        return new Builder(name);
    }

    /** Describes how to start, prepare and probe a server process; {@link #start()} runs it. */
    public static final class Builder {
        private final String name;
        private Function<Layout, List<String>> command;
        private int extraPorts;
        private Consumer<Layout> prepare = layout -> { };
        private Consumer<Layout> afterFirstStart = layout -> { };
        private Predicate<Layout> readiness = layout -> Loopback.accepts(layout.host(), layout.port(), 500);
        private Duration startTimeout = Duration.ofSeconds(60);
        private Duration pollInterval = Duration.ofMillis(50);
        private final Map<String, String> environment = new LinkedHashMap<>();

        private Builder(String name) {
            this.name = Objects.requireNonNull(name, "name");
        }

        /**
         * Sets the command line, computed from the layout (ports and dir); it is the same for every restart.
         *
         * @param command builds the command line
         * @return this builder
         */
        public Builder command(Function<Layout, List<String>> command) {
            this.command = Objects.requireNonNull(command, "command");
            return this;
        }

        /**
         * Asks for further free ports besides the main one.
         *
         * @param count how many
         * @return this builder
         */
        public Builder extraPorts(int count) {
            if (count < 0) {
                throw new IllegalArgumentException("extraPorts must be >= 0: " + count);
            }
            this.extraPorts = count;
            return this;
        }

        /**
         * Runs once before the first start, after the temp dir and ports exist (for example initdb).
         * It should throw {@link ServerStartException} on failure.
         *
         * @param prepare the preparation step
         * @return this builder
         */
        public Builder prepare(Consumer<Layout> prepare) {
            this.prepare = Objects.requireNonNull(prepare, "prepare");
            return this;
        }

        /**
         * Runs once after the first start succeeded (for example creating a database); not on restarts.
         *
         * @param step the initialization step
         * @return this builder
         */
        public Builder afterFirstStart(Consumer<Layout> step) {
            this.afterFirstStart = Objects.requireNonNull(step, "step");
            return this;
        }

        /**
         * Sets the readiness probe, polled until it returns true; each call must be bounded (socket
         * timeouts). The default probe is a TCP connect to the main port.
         *
         * @param readiness returns true once the server answers requests
         * @return this builder
         */
        public Builder readiness(Predicate<Layout> readiness) {
            this.readiness = Objects.requireNonNull(readiness, "readiness");
            return this;
        }

        /**
         * Sets how long a start or restart may take before it fails (default 60 s).
         *
         * @param timeout the bound
         * @return this builder
         */
        public Builder startTimeout(Duration timeout) {
            if (timeout.isNegative() || timeout.isZero()) {
                throw new IllegalArgumentException("startTimeout must be positive: " + timeout);
            }
            this.startTimeout = timeout;
            return this;
        }

        /**
         * Adds an environment variable for the server process.
         *
         * @param key   variable name
         * @param value variable value
         * @return this builder
         */
        public Builder environment(String key, String value) {
            environment.put(Objects.requireNonNull(key, "key"), Objects.requireNonNull(value, "value"));
            return this;
        }

        /**
         * Allocates ports and a temp dir, runs the preparation, starts the process and waits until
         * the readiness probe passes. A start that fails because a port was taken meanwhile is
         * retried with fresh ports (three attempts).
         *
         * @return the running server
         * @throws ServerStartException when the server does not start or become ready in time
         */
        public ServerProcess start() {
            Objects.requireNonNull(command, "command");
            ServerStartException last = null;
            for (int attempt = 1; attempt <= START_ATTEMPTS; attempt++) {
                ServerProcess process = new ServerProcess(this, newLayout());
                try {
                    prepare.accept(process.layout);
                    process.launchAndAwaitReady();
                    afterFirstStart.accept(process.layout);
                    return process;
                } catch (ServerStartException e) {
                    process.close();
                    last = e;
                    if (!String.valueOf(e.getMessage()).toLowerCase(Locale.ROOT).contains("address already in use")) {
                        throw e;
                    }
                } catch (RuntimeException | Error e) {
                    process.close();
                    throw e;
                }
            }
            throw last;
        }

        private Layout newLayout() {
            List<Integer> ports = Loopback.freePorts(1 + extraPorts);
            try {
                Path dir = Files.createTempDirectory("reactive-locks-" + name + "-");
                return new Layout(name, Loopback.HOST, ports.get(0), List.copyOf(ports.subList(1, ports.size())),
                        dir, dir.resolve("server.log"));
            } catch (IOException e) {
                throw new ServerStartException("cannot create a temp dir for " + name + ": " + e, e);
            }
        }
    }

    private final String name;
    private final Layout layout;
    private final Function<Layout, List<String>> commandFactory;
    private final Predicate<Layout> readiness;
    private final Duration startTimeout;
    private final Duration pollInterval;
    private final Map<String, String> environment;
    private final ReentrantLock lock = new ReentrantLock();
    private volatile Process process;
    private volatile boolean paused;
    private volatile boolean closed;
    private int starts;

    private ServerProcess(Builder b, Layout layout) {
        this.name = b.name;
        this.layout = layout;
        this.commandFactory = b.command;
        this.readiness = b.readiness;
        this.startTimeout = b.startTimeout;
        this.pollInterval = b.pollInterval;
        this.environment = Map.copyOf(b.environment);
    }

    /** @return the server kind given to {@link #builder(String)} */
    @Override
    public String name() {
        return name;
    }

    /** @return the loopback address the server binds */
    @Override
    public String host() {
        return layout.host();
    }

    /** @return the main port; the same after {@link #restart()} */
    @Override
    public int port() {
        return layout.port();
    }

    /** @return {@link ServerOrigin#LOCAL_BINARY} */
    @Override
    public ServerOrigin origin() {
        return ServerOrigin.LOCAL_BINARY;
    }

    /** @return true: a child process supports every fault method */
    @Override
    public boolean supportsFaults() {
        return true;
    }

    /** @return the ports, temp dir and log file of this server */
    public Layout layout() {
        return layout;
    }

    /** @return the temp dir of this server (its data lives here) */
    public Path directory() {
        return layout.directory();
    }

    /** @return the file that receives the server's output */
    public Path logFile() {
        return layout.logFile();
    }

    /**
     * Reads the end of the server's log.
     *
     * @param maxLines how many lines at most
     * @return the last lines of the log
     */
    public String logTail(int maxLines) {
        return Commands.tail(layout.logFile(), maxLines);
    }

    /** @return the pid of the current server process (a new one after {@link #restart()}) */
    @Override
    public long pid() {
        return requireProcess().pid();
    }

    /** @return true while the server process runs (also while paused) */
    public boolean isAlive() {
        Process p = process;
        return p != null && p.isAlive();
    }

    /** @return true between {@link #pause()} and {@link #resume()} */
    public boolean isPaused() {
        return paused;
    }

    /**
     * Sends SIGSTOP to the server process, then to its descendants (for example PostgreSQL
     * backends), so that the whole server freezes; returns once the kernel reports them stopped
     * (bounded, a few seconds).
     *
     * @throws IllegalStateException when the process does not run
     */
    @Override
    public void pause() {
        lock.lock();
        try {
            Process p = requireAlive("pause");
            Commands.Result r = Commands.signal("STOP", List.of(p.pid()));
            if (!r.ok()) {
                throw new IllegalStateException("cannot pause " + name + " (pid " + p.pid() + "): " + r.output());
            }
            paused = true;
            awaitStopped(p.pid());
            // the parent is stopped, so it forks no new children while we stop the existing ones
            List<Long> children = descendantPids(p);
            Commands.signal("STOP", children);
            children.forEach(ServerProcess::awaitStopped);
        } finally {
            lock.unlock();
        }
    }

    /**
     * Sends SIGCONT to the descendants and then to the server process; a no-op when it runs normally.
     *
     * @throws IllegalStateException when the process does not run
     */
    @Override
    public void resume() {
        lock.lock();
        try {
            Process p = requireAlive("resume");
            Commands.signal("CONT", descendantPids(p));
            Commands.Result r = Commands.signal("CONT", List.of(p.pid()));
            if (!r.ok()) {
                throw new IllegalStateException("cannot resume " + name + " (pid " + p.pid() + "): " + r.output());
            }
            paused = false;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Sends SIGKILL to the process tree and waits (bounded) until the server process has exited.
     * The temp dir (data) is kept for {@link #restart()}; a no-op when it is not running.
     */
    @Override
    public void kill() {
        lock.lock();
        try {
            destroyTree();
        } finally {
            lock.unlock();
        }
    }

    /**
     * Kills the server if it still runs, then starts it again with the same command line, ports and
     * data dir, and waits until it is ready.
     *
     * @throws ServerStartException when it does not come back within the start timeout
     * @throws IllegalStateException when it was closed
     */
    @Override
    public void restart() {
        lock.lock();
        try {
            if (closed) {
                throw new IllegalStateException(name + " server was closed; it cannot be restarted");
            }
            destroyTree();
            launchAndAwaitReady();
        } finally {
            lock.unlock();
        }
    }

    /** Same as {@link #close()}: kills the process tree and deletes the temp dir. */
    public void stop() {
        close();
    }

    /** Kills the process tree, waits (bounded) for it to exit and deletes the temp dir; idempotent. */
    @Override
    public void close() {
        lock.lock();
        try {
            closed = true;
            destroyTree();
            LiveProcesses.remove(this);
            Commands.deleteTree(layout.directory());
        } finally {
            lock.unlock();
        }
    }

    @Override
    public String toString() {
        Process p = process;
        return "ServerProcess[" + name + " " + host() + ":" + port() + (p == null ? "" : " pid " + p.pid())
                + (paused ? " paused" : "") + (closed ? " closed" : "") + "]";
    }

    private void launchAndAwaitReady() {
        List<String> command = List.copyOf(commandFactory.apply(layout));
        starts++;
        try {
            Files.writeString(layout.logFile(), "---- start #" + starts + " at " + Instant.now() + ": "
                    + String.join(" ", command) + System.lineSeparator(), StandardCharsets.UTF_8,
                    StandardOpenOption.CREATE, StandardOpenOption.APPEND);
            ProcessBuilder pb = new ProcessBuilder(command)
                    .directory(layout.directory().toFile())
                    .redirectErrorStream(true)
                    .redirectOutput(Redirect.appendTo(layout.logFile().toFile()))
                    .redirectInput(Redirect.from(new File("/dev/null")));
            pb.environment().putAll(environment);
            LiveProcesses.add(this);
            process = pb.start();
            paused = false;
        } catch (IOException e) {
            throw new ServerStartException("cannot start " + name + " with `" + String.join(" ", command) + "`: " + e, e);
        }
        awaitReady(command);
    }

    private void awaitReady(List<String> command) {
        long deadline = System.nanoTime() + startTimeout.toNanos();
        Exception lastProbeError = null;
        while (true) {
            Process p = process;
            if (!p.isAlive()) {
                throw startFailure("exited with code " + exitCode(p) + " before it was ready", command, lastProbeError);
            }
            try {
                if (readiness.test(layout)) {
                    return;
                }
                lastProbeError = null;
            } catch (RuntimeException e) {
                lastProbeError = e;
            }
            if (System.nanoTime() - deadline > 0) {
                destroyTree();
                throw startFailure("was not ready within " + startTimeout, command, lastProbeError);
            }
            if (Thread.interrupted()) {
                destroyTree();
                Thread.currentThread().interrupt();
                throw startFailure("start was interrupted", command, lastProbeError);
            }
            LockSupport.parkNanos(pollInterval.toNanos());
        }
    }

    private ServerStartException startFailure(String what, List<String> command, Exception probeError) {
        return new ServerStartException(name + " on " + host() + ":" + port() + " " + what
                + (probeError == null ? "" : " (last probe error: " + probeError + ")")
                + "\ncommand: " + String.join(" ", command)
                + "\nlog " + layout.logFile() + " ends with:\n" + logTail(LOG_TAIL_LINES), probeError);
    }

    private static String exitCode(Process p) {
        try {
            return Integer.toString(p.exitValue());
        } catch (IllegalThreadStateException e) {
            return "?";
        }
    }

    private Process requireProcess() {
        Process p = process;
        if (p == null) {
            throw new IllegalStateException(name + " server has not been started");
        }
        return p;
    }

    private Process requireAlive(String action) {
        Process p = requireProcess();
        if (!p.isAlive()) {
            throw new IllegalStateException("cannot " + action + " " + name + ": its process (pid " + p.pid()
                    + ") is not running; restart() it first");
        }
        return p;
    }

    /** Waits (bounded) until /proc reports the process stopped; signals are delivered asynchronously. */
    private static void awaitStopped(long pid) {
        Path stat = Path.of("/proc", Long.toString(pid), "stat");
        long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
        while (System.nanoTime() - deadline < 0) {
            String text;
            try {
                text = Files.readString(stat, StandardCharsets.US_ASCII);
            } catch (IOException e) {
                return; // gone, or no /proc on this system
            }
            int end = text.lastIndexOf(')');
            char state = end >= 0 && end + 2 < text.length() ? text.charAt(end + 2) : '?';
            if (state == 'T' || state == 't' || state == 'Z' || state == 'X') {
                return;
            }
            LockSupport.parkNanos(Duration.ofMillis(1).toNanos());
        }
    }

    private static List<Long> descendantPids(Process p) {
        List<Long> pids = new ArrayList<>();
        p.descendants().forEach(h -> pids.add(h.pid()));
        return pids;
    }

    /** SIGKILLs the server and its descendants and waits, bounded, for the server to exit. */
    private void destroyTree() {
        Process p = process;
        paused = false;
        if (p == null || !p.isAlive()) {
            return;
        }
        // stop the parent first so it cannot fork while we collect its children
        Commands.signal("STOP", List.of(p.pid()));
        List<ProcessHandle> children = p.descendants().toList();
        p.destroyForcibly();
        children.forEach(ProcessHandle::destroyForcibly);
        try {
            p.onExit().get(EXIT_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for " + name + " to exit", e);
        } catch (ExecutionException | TimeoutException e) {
            throw new IllegalStateException(name + " (pid " + p.pid() + ") did not exit within " + EXIT_TIMEOUT
                    + " after SIGKILL", e);
        }
        long deadline = System.nanoTime() + Duration.ofSeconds(2).toNanos();
        while (children.stream().anyMatch(ProcessHandle::isAlive) && System.nanoTime() - deadline < 0) {
            LockSupport.parkNanos(Duration.ofMillis(10).toNanos());
        }
    }

    /** Best-effort kill for the shutdown hook: no waiting beyond a short bound. */
    private void destroyOnShutdown() {
        Process p = process;
        if (p != null && p.isAlive()) {
            List<ProcessHandle> children = p.descendants().toList();
            p.destroyForcibly();
            children.forEach(ProcessHandle::destroyForcibly);
            try {
                p.onExit().get(2, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } catch (ExecutionException | TimeoutException ignored) {
                // the JVM is exiting; nothing more to do
            }
        }
        Commands.deleteTree(layout.directory());
    }

    /** The processes still running; a shutdown hook kills them when the JVM exits. */
    private static final class LiveProcesses {
        private static final Set<ServerProcess> LIVE = ConcurrentHashMap.newKeySet();

        static {
            Runtime.getRuntime().addShutdownHook(new Thread(() -> LIVE.forEach(ServerProcess::destroyOnShutdown),
                    "reactive-locks-server-process-reaper"));
        }

        private LiveProcesses() {
        }

        static void add(ServerProcess p) {
            LIVE.add(p);
        }

        static void remove(ServerProcess p) {
            LIVE.remove(p);
        }
    }
}
