package io.reactivelocks.benchmarks.load;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The CPU time of a local server process and its descendants, from {@code /proc/<pid>/stat} (Linux):
 * user + system time of each live process, plus the time of the root's children that have exited
 * ({@code cutime}, {@code cstime}). PostgreSQL and MariaDB serve each connection in a process or thread of
 * the server, etcd and ZooKeeper in threads of one process: either way the server's whole work is counted.
 * The kernel counts in clock ticks of 10 ms (USER_HZ is 100 on Linux), so a round's figure is exact to
 * 10 ms per process — a fraction of a per-cent over a 2 s round that keeps the server busy.
 */
final class ServerCpu {

    /** Nanoseconds per clock tick: USER_HZ is 100 on every Linux architecture the servers run on. */
    static final long NANOS_PER_TICK = 10_000_000L;

    private ServerCpu() {
    }

    /**
     * @param pid the server's process id, or a negative number when it is not a local process
     * @return nanoseconds of CPU so far, or -1 when unknown (no such process, no /proc)
     */
    static long nanos(long pid) {
        if (pid < 0) {
            return -1;
        }
        long sum = ticks(pid, true);
        if (sum < 0) {
            return -1;
        }
        for (ProcessHandle child : ProcessHandle.of(pid).map(h -> h.descendants().toList()).orElse(java.util.List.of())) {
            // a child gone in the meantime (-1) counts no more: its time is in its parent's cutime/cstime by now
            sum += Math.max(0, ticks(child.pid(), false));
        }
        return sum * NANOS_PER_TICK;
    }

    /**
     * @return utime + stime (+ cutime + cstime when {@code withChildren}) in ticks, or -1 when unreadable
     */
    static long ticks(long pid, boolean withChildren) {
        try {
            return parse(new String(Files.readAllBytes(Path.of("/proc", Long.toString(pid), "stat")), StandardCharsets.US_ASCII),
                    withChildren);
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }

    /**
     * @param stat the text of {@code /proc/<pid>/stat}
     * @return utime + stime (fields 14 and 15), and cutime + cstime (16, 17) when {@code withChildren}
     */
    static long parse(String stat, boolean withChildren) {
        // the command (field 2) is in parentheses and may hold spaces: count fields after its closing one
        String[] f = stat.substring(stat.lastIndexOf(')') + 2).trim().split(" ");
        // f[0] is field 3 (state): field n is f[n - 3]
        long t = Long.parseLong(f[11]) + Long.parseLong(f[12]);
        return withChildren ? t + Long.parseLong(f[13]) + Long.parseLong(f[14]) : t;
    }
}
