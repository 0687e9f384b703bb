package io.reactivelocks.vertx.zookeeper;

import io.reactivelocks.LockClient;
import io.reactivelocks.LockOptions;
import io.reactivelocks.semaphore.Semaphore;
import io.reactivelocks.window.WindowLock;
import io.reactivelocks.zookeeper.ZooKeeperLockOptions;
import io.reactivelocks.zookeeper.ZooKeeperLocks;
import io.vertx.spi.cluster.zookeeper.ZookeeperClusterManager;
import java.util.Objects;
import org.apache.curator.framework.CuratorFramework;

/**
 * Lock clients on the ZooKeeper of a clustered Vert.x: the lock, semaphore and window lock of
 * {@link ZooKeeperLocks}, on the Curator client of Vert.x's {@link ZookeeperClusterManager} (its
 * connection and session), so an application clustered on ZooKeeper needs no second client.
 *
 * <pre>{@code
 * ZookeeperClusterManager cluster = new ZookeeperClusterManager(zkConfig);
 * Vertx.builder().withClusterManager(cluster).buildClustered().onSuccess(vertx -> {
 *     VertxLocks locks = VertxLocks.create(vertx, VertxZooKeeperLocks.create(cluster));
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
 * used. The Curator client stays the cluster manager's: close the lock clients before Vert.x.
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
     * @return a lock client with {@link ZooKeeperLockOptions#defaults()} and {@link LockOptions#defaults()}
     * @see #create(ZookeeperClusterManager, ZooKeeperLockOptions, LockOptions)
     */
    public static LockClient create(ZookeeperClusterManager clusterManager) {
        return create(clusterManager, ZooKeeperLockOptions.defaults(), LockOptions.defaults());
    }

    /**
     * @param clusterManager the cluster manager of a started clustered Vert.x
     * @param options        the lock client's default options
     * @return a lock client with {@link ZooKeeperLockOptions#defaults()}
     * @see #create(ZookeeperClusterManager, ZooKeeperLockOptions, LockOptions)
     */
    public static LockClient create(ZookeeperClusterManager clusterManager, LockOptions options) {
        return create(clusterManager, ZooKeeperLockOptions.defaults(), options);
    }

    /**
     * A lock client on the cluster manager's Curator client, as
     * {@link ZooKeeperLocks#create(CuratorFramework, ZooKeeperLockOptions, LockOptions)}. Closing it
     * releases its leases and leaves the Curator client open.
     *
     * @param clusterManager the cluster manager of a started clustered Vert.x
     * @param zkOptions      root, ACL and confirmation settings
     * @param options        the lock client's default options
     * @return a lock client
     * @throws NullPointerException     naming the argument when one is null
     * @throws IllegalArgumentException when the cluster manager has not joined yet, or was closed
     */
    public static LockClient create(ZookeeperClusterManager clusterManager, ZooKeeperLockOptions zkOptions, LockOptions options) {
        return ZooKeeperLocks.create(curator(clusterManager), zkOptions, options);
    }

    /**
     * @param clusterManager the cluster manager of a started clustered Vert.x
     * @return a semaphore with {@link ZooKeeperLockOptions#defaults()} and {@link LockOptions#defaults()}
     * @see #semaphore(ZookeeperClusterManager, ZooKeeperLockOptions, LockOptions)
     */
    public static Semaphore semaphore(ZookeeperClusterManager clusterManager) {
        return semaphore(clusterManager, ZooKeeperLockOptions.defaults(), LockOptions.defaults());
    }

    /**
     * @param clusterManager the cluster manager of a started clustered Vert.x
     * @param options        the permits' renewal, waiting and request timeout
     * @return a semaphore with {@link ZooKeeperLockOptions#defaults()}
     * @see #semaphore(ZookeeperClusterManager, ZooKeeperLockOptions, LockOptions)
     */
    public static Semaphore semaphore(ZookeeperClusterManager clusterManager, LockOptions options) {
        return semaphore(clusterManager, ZooKeeperLockOptions.defaults(), options);
    }

    /**
     * A semaphore on the cluster manager's Curator client, as
     * {@link ZooKeeperLocks#semaphore(CuratorFramework, ZooKeeperLockOptions, LockOptions)}.
     *
     * @param clusterManager the cluster manager of a started clustered Vert.x
     * @param zkOptions      the root path and ACL
     * @param options        the permits' renewal, waiting and request timeout
     * @return a semaphore
     * @throws NullPointerException     naming the argument when one is null
     * @throws IllegalArgumentException when the cluster manager has not joined yet, or was closed
     */
    public static Semaphore semaphore(ZookeeperClusterManager clusterManager, ZooKeeperLockOptions zkOptions, LockOptions options) {
        return ZooKeeperLocks.semaphore(curator(clusterManager), zkOptions, options);
    }

    /**
     * @param clusterManager the cluster manager of a started clustered Vert.x
     * @return a window lock with {@link ZooKeeperLockOptions#defaults()} and {@link LockOptions#defaults()}
     * @see #windowLock(ZookeeperClusterManager, ZooKeeperLockOptions, LockOptions)
     */
    public static WindowLock windowLock(ZookeeperClusterManager clusterManager) {
        return windowLock(clusterManager, ZooKeeperLockOptions.defaults(), LockOptions.defaults());
    }

    /**
     * @param clusterManager the cluster manager of a started clustered Vert.x
     * @param options        request timeout, drift allowance and clock of the claims
     * @return a window lock with {@link ZooKeeperLockOptions#defaults()}
     * @see #windowLock(ZookeeperClusterManager, ZooKeeperLockOptions, LockOptions)
     */
    public static WindowLock windowLock(ZookeeperClusterManager clusterManager, LockOptions options) {
        return windowLock(clusterManager, ZooKeeperLockOptions.defaults(), options);
    }

    /**
     * A window lock on the cluster manager's Curator client, as
     * {@link ZooKeeperLocks#windowLock(CuratorFramework, ZooKeeperLockOptions, LockOptions)}.
     *
     * @param clusterManager the cluster manager of a started clustered Vert.x
     * @param zkOptions      the root and the ACL of new nodes
     * @param options        request timeout, drift allowance and clock of the claims
     * @return a window lock
     * @throws NullPointerException     naming the argument when one is null
     * @throws IllegalArgumentException when the cluster manager has not joined yet, or was closed
     */
    public static WindowLock windowLock(ZookeeperClusterManager clusterManager, ZooKeeperLockOptions zkOptions, LockOptions options) {
        return ZooKeeperLocks.windowLock(curator(clusterManager), zkOptions, options);
    }
}
