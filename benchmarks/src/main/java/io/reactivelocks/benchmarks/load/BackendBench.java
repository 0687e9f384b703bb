package io.reactivelocks.benchmarks.load;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.HdrHistogram.Histogram;

/**
 * One backend: its server (started like the tests start it, through the reactive-locks-test
 * fixtures), its contenders, its server-side command counter and its round-trip probe.
 */
abstract class BackendBench implements AutoCloseable {

    final String key;
    final String title;

    BackendBench(String key, String title) {
        this.key = key;
        this.title = title;
    }

    /** Starts the server and whatever admin connections the counters need. */
    abstract void start();

    /** @return the contenders of B1, floor first, then ours, then the competitors; opened now */
    abstract List<Contender> contenders();

    /**
     * @return the B8 groups (semaphore, read-write lock, fair lock: ours and the anchors that have
     *         them), opened now; none by default
     */
    List<Primitives.Group> primitives() {
        return List.of();
    }

    /**
     * @return the server's count of commands (requests) so far; monotonic. What is counted is
     *         said by {@link #counterDescription()}.
     */
    abstract Counts counts();

    /** @return how {@link #counts()} is measured, for the report */
    abstract String counterDescription();

    /**
     * Measures one request round trip (the cheapest request the backend has) {@code samples}
     * times in a row.
     *
     * @param samples how many
     * @return the latencies in nanoseconds
     */
    abstract Histogram roundTrip(int samples);

    /** @return what the round-trip probe sends, for the report */
    abstract String roundTripDescription();

    /** @return server version and durability settings, for the report */
    abstract Map<String, String> serverInfo();

    /** Stops the server. */
    @Override
    public abstract void close();

    /**
     * @param counted    requests the client sent, as the server counts them
     * @param executed   commands the server executed including those run inside scripts
     *                   ({@code -1} when the backend has no such notion)
     */
    record Counts(long counted, long executed) {
        Counts minus(Counts o) {
            return new Counts(counted - o.counted, executed < 0 || o.executed < 0 ? -1 : executed - o.executed);
        }
    }

    /**
     * @return the process id of the server the contenders talk to (its child processes count with it:
     *         PostgreSQL's backends), or -1 when it is not a local process
     */
    long serverPid() {
        return -1;
    }

    /**
     * @return the CPU time the server process and its descendants have used so far, nanoseconds, or -1
     *         when unknown ({@link ServerCpu})
     */
    final long serverCpuNanos() {
        return ServerCpu.nanos(serverPid());
    }

    /** The command line of a server process, from /proc (Linux), for the report. */
    static String commandLine(long pid) {
        try {
            byte[] raw = Files.readAllBytes(Path.of("/proc", Long.toString(pid), "cmdline"));
            String s = new String(raw, StandardCharsets.UTF_8).replace('\0', ' ').trim();
            return s.replaceAll("/tmp/[^ ]*", "<tmp>");
        } catch (IOException | RuntimeException e) {
            return "(unavailable: " + e + ")";
        }
    }

    static Map<String, String> info() {
        return new LinkedHashMap<>();
    }
}
