package io.reactivelocks.vertx.zookeeper;

import io.reactivelocks.LockOptions;
import io.reactivelocks.LockStore;
import io.reactivelocks.zookeeper.ZooKeeperLockOptions;
import io.reactivelocks.zookeeper.ZooKeeperLocks;
import io.vertx.spi.cluster.zookeeper.ZookeeperClusterManager;
import java.util.Objects;
import org.apache.curator.framework.CuratorFramework;

/**
 * Locks on the ZooKeeper of a clustered Vert.x: the store session of {@link ZooKeeperLocks} (lock,
 * semaphore, window lock, ...), on the Curator client of Vert.x's {@link ZookeeperClusterManager} (its
 * connection and session), so an application clustered on ZooKeeper needs no second client.
 *
 * <pre>{@code
 * ZookeeperClusterManager cluster = new ZookeeperClusterManager(zkConfig);
 * Vertx.builder().withClusterManager(cluster).buildClustered().onSuccess(vertx -> {
 *     LockStore store = VertxZooKeeperLocks.connect(cluster);
 *     VertxLocks locks = VertxLocks.create(vertx, store.locks());
 *     locks.withLock("order:42", lease -> charge(order, lease.token()));
 * });
 * }</pre>
 *
 * <p>Unlike {@code vertx.sharedData().getLockWithTimeout(...)} on the same cluster manager —
 * Curator's blocking {@code InterProcessSemaphoreMutex}, one worker thread parked per waiter — a
 * waiter here is a queue node and a watch: no thread, no worker; it waits on its predecessor only,
 * is removed from ZooKeeper when cancelled, and a lost lock (session expired, node deleted) is
 * signalled ({@code hold} ends, {@code withLock} fails with {@link io.reactivelocks.LockLostException}).
 *
 * <p>Lock nodes live under the cluster manager's Curator namespace (its {@code rootPath}, by default
 * {@code io.vertx}) at the {@link ZooKeeperLockOptions#root()} of the options. A lease lives as long
 * as the cluster manager's ZooKeeper session: its TTL is the session timeout of the cluster manager's
 * configuration ({@code sessionTimeout}, 20 s by default), and {@link LockOptions#leaseTime()} is not
 * used. The Curator client stays the cluster manager's: close the session before Vert.x.
 * Requires {@code io.vertx:vertx-zookeeper} and {@code io.reactivelocks:reactive-locks-zookeeper} on
 * the class path (optional dependencies of this module).
 */
public final class VertxZooKeeperLocks {

    private VertxZooKeeperLocks() {
    }

    /**
     * @param clusterManager the cluster manager of a started clustered Vert.x
     * @return its Curator client
     * @throws NullPointerException     naming {@code clusterManager} when it is null
     * @throws IllegalArgumentException when the cluster manager has not joined a cluster yet (its
     *                                  Curator client is made when the clustered Vert.x starts)
     */
    public static CuratorFramework curator(ZookeeperClusterManager clusterManager) {
        Objects.requireNonNull(clusterManager, "clusterManager");
        CuratorFramework curator = clusterManager.getCuratorFramework();
        if (curator == null) {
            throw new IllegalArgumentException("clusterManager has no Curator client yet: start the clustered Vert.x first");
        }
        return curator;
    }

    /**
     * @param clusterManager the cluster manager of a started clustered Vert.x
     * @return a session with {@link ZooKeeperLockOptions#defaults()}
     * @see #connect(ZookeeperClusterManager, ZooKeeperLockOptions)
     */
    public static LockStore connect(ZookeeperClusterManager clusterManager) {
        return connect(clusterManager, ZooKeeperLockOptions.defaults());
    }

    /**
     * A store session on the cluster manager's Curator client, as
     * {@link ZooKeeperLocks#connect(CuratorFramework, ZooKeeperLockOptions)}: it hands out the lock,
     * semaphore, window lock and every other concept ZooKeeper offers. Closing it closes what it
     * handed out (their leases released) and leaves the Curator client open.
     *
     * @param clusterManager the cluster manager of a started clustered Vert.x
     * @param zkOptions      root, ACL and confirmation settings
     * @return a session
     * @throws NullPointerException     naming the argument when one is null
     * @throws IllegalArgumentException when the cluster manager has not joined yet, or was closed
     */
    public static LockStore connect(ZookeeperClusterManager clusterManager, ZooKeeperLockOptions zkOptions) {
        return ZooKeeperLocks.connect(curator(clusterManager), zkOptions);
    }
}
