package io.reactivelocks.safety;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.options.GetOption;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.ClusterTopologyRefreshOptions;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.Delay;
import io.reactivelocks.LockListener;
import io.reactivelocks.LockOptions;
import io.reactivelocks.etcd.EtcdConnectionOptions;
import io.reactivelocks.etcd.EtcdLockOptions;
import io.reactivelocks.etcd.EtcdLocks;
import io.reactivelocks.redis.RedisLockOptions;
import io.reactivelocks.redis.RedisLocks;
import io.reactivelocks.test.server.EtcdClusterTopology;
import io.reactivelocks.test.server.RedisClusterTopology;
import io.reactivelocks.test.server.RedisSentinelTopology;
import io.reactivelocks.test.server.Topology;
import io.reactivelocks.test.server.ZooKeeperEnsembleTopology;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
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
    REDIS_CLUSTER {
        @Override
        Topology start() {
            return RedisClusterTopology.start();
        }

        @Override
        public SafetyBackend.Connection connect(String host, int port, String extra, String namespace, LockOptions options,
                                                LockListener listener) {
            ClientResources resources = ClientResources.builder().reconnectDelay(Delay.constant(Duration.ofMillis(100))).build();
            RedisClusterClient redis = redisCluster(resources, extra, options.requestTimeout());
            return redisConnection(RedisLocks.backend(redis, RedisLockOptions.builder().keyPrefix(namespace + ":").build()),
                    options, listener, () -> {
                redis.shutdown();
                resources.shutdown();
            });
        }

        @Override
        long held(Topology topology, String namespace) {
            ClientResources resources = ClientResources.builder().build();
            RedisClusterClient redis = redisCluster(resources, topology.endpoints(), Duration.ofSeconds(10));
            try (StatefulRedisClusterConnection<String, String> c = redis.connect()) {
                return c.sync().keys(namespace + ":*:lock").size(); // KEYS on every master, merged
            } finally {
                redis.shutdown();
                resources.shutdown();
            }
        }
    },

    /** Redis primary and replica watched by three Sentinels. */
    REDIS_SENTINEL {
        @Override
        Topology start() {
            return RedisSentinelTopology.start();
        }

        @Override
        public SafetyBackend.Connection connect(String host, int port, String extra, String namespace, LockOptions options,
                                                LockListener listener) {
            ClientResources resources = ClientResources.builder().reconnectDelay(Delay.constant(Duration.ofMillis(100))).build();
            RedisURI uri = RedisURI.create(extra);
            uri.setTimeout(options.requestTimeout());
            RedisClient redis = RedisClient.create(resources, uri);
            return redisConnection(RedisLocks.backend(redis, RedisLockOptions.builder().keyPrefix(namespace + ":").uri(uri).build()),
                    options, listener, () -> {
                redis.shutdown();
                resources.shutdown();
            });
        }

        @Override
        long held(Topology topology, String namespace) {
            RedisClient redis = RedisClient.create(RedisURI.create(topology.endpoints()));
            try (StatefulRedisConnection<String, String> c = redis.connect()) {
                return c.sync().keys(namespace + ":*:lock").size();
            } finally {
                redis.shutdown();
            }
        }
    },

    /**
     * PostgreSQL primary with a streaming replica, promoted on failover; synchronous replication
     * unless {@code -Dsafety.postgres.async=true} (see {@code PostgresReplicaSafety}).
     */
    POSTGRESQL_REPLICA {
        @Override
        Topology start() {
            return PostgresReplicaSafety.start();
        }

        @Override
        public SafetyBackend.Connection connect(String host, int port, String extra, String namespace, LockOptions options,
                                                LockListener listener) {
            return PostgresReplicaSafety.connect(extra, namespace, options, listener);
        }

        @Override
        void prepare(Topology topology, String namespace) {
            PostgresReplicaSafety.prepare(topology, namespace);
        }

        @Override
        long held(Topology topology, String namespace) {
            return PostgresReplicaSafety.held(topology, namespace);
        }
    },

    /** etcd cluster of three members; every worker's jetcd client is given the three endpoints. */
    ETCD_CLUSTER {
        @Override
        Topology start() {
            return EtcdClusterTopology.start();
        }

        @Override
        public SafetyBackend.Connection connect(String host, int port, String extra, String namespace, LockOptions options,
                                                LockListener listener) {
            return SafetyBackend.etcdConnection(EtcdConnectionOptions.builder().endpoints(extra.split(",")).build().connect(),
                    namespace, options, listener);
        }

        @Override
        long held(Topology topology, String namespace) {
            return SafetyBackend.etcdHeld(EtcdConnectionOptions.builder().endpoints(topology.endpoints().split(",")).build().connect(),
                    namespace);
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
     * names others), one each to keep the build's time: the leader killed on Redis and PostgreSQL, the
     * leader cut off on etcd and ZooKeeper. The store tests ({@code *TopologyTest}) check every node
     * fault, and the long mode runs them all.
     *
     * @return the faults
     */
    List<Fault> shortModeFaults() {
        return this == ETCD_CLUSTER || this == ZOOKEEPER_ENSEMBLE ? List.of(Fault.PARTITION_LEADER) : List.of(Fault.KILL_LEADER);
    }

    /** A worker's connection to a Redis deployment: the mutex client and the other primitives over one session. */
    private static SafetyBackend.Connection redisConnection(io.reactivelocks.redis.RedisLockBackend backend, LockOptions options,
                                                            LockListener listener, AutoCloseable closer) {
        io.reactivelocks.LockStore store = RedisLocks.connect(backend);
        return new SafetyBackend.Connection(store.locks(options, listener), ObservedFairBackend.watching(store.fairLocks(options), options, listener),
                store.semaphores(options),
                store.readWriteLocks(io.reactivelocks.rwlock.ReadWriteLockOptions.of(options)), store.admin(), () -> {
                    store.close().block(Duration.ofSeconds(10));
                    closer.close();
                });
    }

    @Override
    public Duration minimumLease() {
        return this == ETCD_CLUSTER || this == ZOOKEEPER_ENSEMBLE ? Duration.ofSeconds(2) : Duration.ofMillis(500);
    }

    /**
     * A cluster client on the comma-separated seed URIs that follows failovers (adaptive topology
     * refresh and a periodic one every second).
     */
    static RedisClusterClient redisCluster(ClientResources resources, String seeds, Duration timeout) {
        RedisClusterClient redis = RedisClusterClient.create(resources, Arrays.stream(seeds.split(",")).map(u -> {
            RedisURI uri = RedisURI.create(u);
            uri.setTimeout(timeout);
            return uri;
        }).toList());
        redis.setOptions(ClusterClientOptions.builder()
                .topologyRefreshOptions(ClusterTopologyRefreshOptions.builder()
                        .enableAllAdaptiveRefreshTriggers()
                        .adaptiveRefreshTriggersTimeout(Duration.ofMillis(200))
                        .enablePeriodicRefresh(Duration.ofSeconds(1))
                        .build())
                .build());
        return redis;
    }
}
