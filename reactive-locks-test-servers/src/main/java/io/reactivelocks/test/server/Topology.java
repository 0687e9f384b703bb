package io.reactivelocks.test.server;

import java.time.Duration;
import java.util.List;

/**
 * A replicated deployment of one store, started by the tests from the Debian packages on loopback:
 * several server processes of this JVM (a Redis Cluster, Redis under Sentinel, a PostgreSQL primary
 * with a streaming replica, an etcd cluster, a ZooKeeper ensemble). Besides giving clients its
 * endpoints it injects the faults users meet in production — the leader or primary killed, a planned
 * failover, one node cut off from the others, a slow node — and brings the deployment back afterwards,
 * so that the contract suites and the safety harness can run across a failover.
 *
 * <p>Every fault method returns once the fault is in place (it does not wait for the deployment to
 * recover); {@link #heal()} undoes every fault in place (restarts killed nodes, which rejoin as
 * followers or replicas, removes partitions and latency) and returns once the deployment serves
 * writes again with all its nodes. Methods are called from one test thread at a time.
 */
public interface Topology extends AutoCloseable {

    /**
     * Which deployment this is, for reports, e.g. {@code "redis-cluster"}, {@code "etcd-3"}.
     *
     * @return a short stable name
     */
    String name();

    /**
     * The endpoints a client is configured with, in that store's client syntax (a Redis Sentinel or
     * cluster URI, an R2DBC URL with several hosts, an etcd endpoint list, a ZooKeeper connect string).
     *
     * @return the endpoints
     */
    String endpoints();

    /**
     * Every server process of the deployment, in a stable order (data nodes first).
     *
     * @return the nodes
     */
    List<ServerHandle> nodes();

    /**
     * The node that serves writes now (primary, master of the first slot range, raft leader, ZooKeeper
     * leader), asked from the nodes.
     *
     * @return the current leader
     * @throws IllegalStateException when no node is leader within the fixture's timeout
     */
    ServerHandle leader();

    /** Kills the current leader with SIGKILL; the deployment fails over by itself (or as its operator tooling would). */
    void killLeader();

    /** A planned switchover to another node (Sentinel/cluster failover, etcd move-leader, promotion of the replica). */
    void failover();

    /** Cuts the current leader off from the other nodes (clients still reach every node) until {@link #heal()}. */
    void partitionLeader();

    /**
     * Delays the traffic between one node and the others until {@link #heal()}.
     *
     * @param latency the delay added to every chunk
     */
    void slowNode(Duration latency);

    /** Undoes every fault in place and returns once all nodes are back and a leader serves writes. */
    void heal();

    /** Stops every node and deletes their data. */
    @Override
    void close();
}
