package io.reactivelocks.safety;

/** The kinds of fault a safety run injects, one kind per run. */
public enum Fault {
    /** SIGSTOP of a worker in its critical section (between its read and its write) for two lease times, then SIGCONT. */
    PAUSE_WORKER("pause-worker"),
    /** SIGSTOP of the server for two lease times, then SIGCONT. */
    PAUSE_SERVER("pause-server"),
    /** SIGKILL of the server, then a restart on the same port and data directory. */
    RESTART_SERVER("restart-server"),
    /** SIGKILL of a worker that holds a lock (a replacement worker starts). */
    KILL_WORKER("kill-worker"),
    /** The proxy of a worker in its critical section goes silent for two lease times, then its connections are cut. */
    PARTITION_WORKER("partition-worker"),
    /** Every worker's proxy delays each chunk by a tenth of the lease plus up to as much jitter, for three lease times. */
    LATENCY("latency");

    private final String label;

    Fault(String label) {
        this.label = label;
    }

    /** @return the name used in reports */
    public String label() {
        return label;
    }
}
