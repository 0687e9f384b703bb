package io.reactivelocks.safety;

import io.reactivelocks.LockListener;
import io.reactivelocks.LockOptions;
import io.reactivelocks.test.server.Topology;
import java.time.Duration;

/**
 * The replicated deployments the harness runs against, each started by a {@link Topology} fixture of
 * reactive-locks-test. Workers connect to the deployment's endpoints directly (no per-worker proxy:
 * the faults act on the nodes — {@link Fault#KILL_LEADER}, {@link Fault#FAILOVER},
 * {@link Fault#PARTITION_LEADER}, {@link Fault#SLOW_NODE} — besides the worker faults
 * {@link Fault#PAUSE_WORKER} and {@link Fault#KILL_WORKER}).
 */
public enum SafetyTopology implements SafetyStore {

    /** Redis Cluster: three masters with a replica each. */
    REDIS_CLUSTER,

    /** Redis primary and replica watched by three Sentinels. */
    REDIS_SENTINEL,

    /** PostgreSQL primary with a streaming replica, promoted on failover. */
    POSTGRESQL_REPLICA,

    /** etcd cluster of three members. */
    ETCD_CLUSTER,

    /** ZooKeeper ensemble of three servers. */
    ZOOKEEPER_ENSEMBLE;

    /**
     * Starts the deployment.
     *
     * @return the running deployment
     */
    Topology start() {
        throw new UnsupportedOperationException("the safety harness has no fixture for " + this + " yet");
    }

    @Override
    public SafetyBackend.Connection connect(String host, int port, String extra, String namespace, LockOptions options,
                                            LockListener listener) {
        throw new UnsupportedOperationException("the safety harness cannot connect to " + this + " yet");
    }

    /**
     * Readies the namespace before the workers start (tables for PostgreSQL).
     *
     * @param topology  the running deployment
     * @param namespace the run's namespace
     */
    void prepare(Topology topology, String namespace) {
    }

    /**
     * Counts what is held.
     *
     * @param topology  the running deployment
     * @param namespace the run's namespace
     * @return how many locks (held keys, rows, nodes) of the namespace are on the deployment now
     */
    long held(Topology topology, String namespace) {
        throw new UnsupportedOperationException("the safety harness cannot count locks on " + this + " yet");
    }

    @Override
    public Duration minimumLease() {
        return this == ETCD_CLUSTER || this == ZOOKEEPER_ENSEMBLE ? Duration.ofSeconds(2) : Duration.ofMillis(500);
    }
}
