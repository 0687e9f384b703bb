package io.reactivelocks.safety;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.options.GetOption;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockListener;
import io.reactivelocks.LockOptions;
import io.reactivelocks.etcd.EtcdConnectionOptions;
import io.reactivelocks.etcd.EtcdLockOptions;
import io.reactivelocks.etcd.EtcdLocks;
import io.reactivelocks.test.server.EtcdClusterTopology;
import io.reactivelocks.test.server.Topology;
import io.reactivelocks.test.server.ZooKeeperEnsembleTopology;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

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

    /** etcd cluster of three members; every worker's jetcd client is given the three endpoints. */
    ETCD_CLUSTER {
        @Override
        Topology start() {
            return EtcdClusterTopology.start();
        }

        @Override
        public SafetyBackend.Connection connect(String host, int port, String extra, String namespace, LockOptions options,
                                                LockListener listener) {
            Client etcd = EtcdConnectionOptions.builder().endpoints(extra.split(",")).build().connect();
            LockClient client = LockClient.create(EtcdLocks.backend(etcd, EtcdLockOptions.builder().prefix(namespace)
                    .sessionTtl(options.leaseTime()).build()), options, listener);
            return new SafetyBackend.Connection(client, etcd::close);
        }

        @Override
        long held(Topology topology, String namespace) {
            try (Client etcd = EtcdConnectionOptions.builder().endpoints(topology.endpoints().split(",")).build().connect()) {
                ByteSequence prefix = ByteSequence.from(namespace + "/", StandardCharsets.UTF_8);
                return etcd.getKVClient().get(prefix, GetOption.builder().isPrefix(true).withCountOnly(true).build())
                        .get(10, TimeUnit.SECONDS).getCount();
            } catch (Exception e) {
                throw new IllegalStateException("cannot count etcd keys under " + namespace, e);
            }
        }
    },

    /** ZooKeeper ensemble of three servers; every worker's Curator client is given the multi-host connect string. */
    ZOOKEEPER_ENSEMBLE {
        @Override
        Topology start() {
            return ZooKeeperEnsembleTopology.start();
        }

        @Override
        public SafetyBackend.Connection connect(String host, int port, String extra, String namespace, LockOptions options,
                                                LockListener listener) {
            return SafetyBackend.zooKeeperConnection(extra, namespace, options, listener);
        }

        @Override
        long held(Topology topology, String namespace) {
            return SafetyBackend.zooKeeperHeld(topology.endpoints(), namespace);
        }
    };

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

    /**
     * The node faults of this deployment's short mode in the build (unless {@code -Dsafety.topology.faults}
     * names others): the leader killed and the leader cut off by default. etcd and ZooKeeper run only the
     * partition, to keep the build's time: their store tests ({@code EtcdClusterTopologyTest},
     * {@code ZooKeeperEnsembleTopologyTest}) check every node fault, and the long mode runs them all.
     *
     * @return the faults
     */
    List<Fault> shortModeFaults() {
        return this == ETCD_CLUSTER || this == ZOOKEEPER_ENSEMBLE ? List.of(Fault.PARTITION_LEADER)
                : List.of(Fault.KILL_LEADER, Fault.PARTITION_LEADER);
    }

    @Override
    public Duration minimumLease() {
        return this == ETCD_CLUSTER || this == ZOOKEEPER_ENSEMBLE ? Duration.ofSeconds(2) : Duration.ofMillis(500);
    }
}
