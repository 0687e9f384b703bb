package io.reactivelocks.safety;

/** The kinds of fault a safety run injects, one kind per run. */
public enum Fault {
    /**
     * SIGSTOP of a worker in its critical section (between its read and its write) for two lease times — longer, up to
     * eight more, until another worker was granted its name (a loaded store may end the frozen lease late) — then SIGCONT.
     */
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
    LATENCY("latency"),
    /**
     * An operator's force-release ({@code LockStore.admin().forceRelease}) of the name a worker holds
     * in its critical section, sent by the harness over a session of its own: the worker learns it
     * at its next renewal (or from its held key's watch); its late write must be refused by the fence.
     */
    FORCE_RELEASE("force-release"),
    /** SIGKILL of a replicated deployment's leader or primary while a worker is in its critical section; healed after two lease times. */
    KILL_LEADER("kill-leader"),
    /** A planned switchover of a replicated deployment while a worker is in its critical section. */
    FAILOVER("failover"),
    /** The leader of a replicated deployment cut off from the other nodes (clients still reach it) for two lease times. */
    PARTITION_LEADER("partition-leader"),
    /** One node's traffic with the other nodes delayed by a tenth of the lease for three lease times. */
    SLOW_NODE("slow-node");

    private final String label;

    Fault(String label) {
        this.label = label;
    }

    /**
     * Whether a run against {@code store} can inject this fault: the worker faults everywhere, the
     * server and proxy faults on one server, the node faults on a replicated deployment.
     *
     * @param store the store of the run
     * @return whether the fault applies
     */
    public boolean appliesTo(SafetyStore store) {
        return switch (this) {
            case PAUSE_WORKER, KILL_WORKER, FORCE_RELEASE -> true;
            case PAUSE_SERVER, RESTART_SERVER, PARTITION_WORKER, LATENCY -> store instanceof SafetyBackend;
            case KILL_LEADER, FAILOVER, PARTITION_LEADER, SLOW_NODE -> store instanceof SafetyTopology;
        };
    }

    /** @return the name used in reports */
    public String label() {
        return label;
    }
}
