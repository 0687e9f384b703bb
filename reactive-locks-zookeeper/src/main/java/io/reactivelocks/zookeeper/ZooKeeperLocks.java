package io.reactivelocks.zookeeper;

import io.reactivelocks.LockOptions;
import io.reactivelocks.LockStore;
import java.util.Objects;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.imps.CuratorFrameworkState;

/**
 * Entry point: lock clients on ZooKeeper, through an Apache Curator client.
 *
 * <pre>{@code
 * CuratorFramework zk = CuratorFrameworkFactory.builder()
 *         .connectString("localhost:2181")
 *         .sessionTimeoutMs(10_000)                       // = the lease time of every lock
 *         .retryPolicy(new ExponentialBackoffRetry(100, 3))
 *         .authorization("digest", "app:secret".getBytes(UTF_8))
 *         .build();
 * zk.start();
 * LockStore store = ZooKeeperLocks.connect(zk, ZooKeeperLockOptions.builder().digestAcl("app", "secret").build());
 * LockClient locks = store.locks(LockOptions.defaults());
 * Mono<Receipt> r = locks.withLock("order:42", lease -> charge(order, lease.token()));
 * }</pre>
 *
 * <p>For an ensemble give Curator the multi-host connect string, {@code "zk-1:2181,zk-2:2181,zk-3:2181"}:
 * the session moves to another server when its server fails or loses the quorum, and lives on if the
 * move takes less than the session timeout; otherwise the session is lost and every hold stream of the
 * client completes before anyone else can be granted the lock. Tokens ({@code czxid}) keep growing
 * across leader elections.
 *
 * <p>A lease lives as long as the client's ZooKeeper session: its TTL is the negotiated session
 * timeout, and {@link LockOptions#leaseTime()} is not used. {@code connect} returns at once;
 * nothing is sent before the first operation is subscribed. Closing the session releases the
 * leases of every concept it handed out and removes the backend's listener; the
 * {@link CuratorFramework} stays the application's to close.
 */
public final class ZooKeeperLocks {

    private ZooKeeperLocks() {
    }

    /**
     * @param client the application's Curator client (not closed by the session)
     * @return a session with {@link ZooKeeperLockOptions#defaults()}
     * @see #connect(CuratorFramework, ZooKeeperLockOptions)
     */
    public static LockStore connect(CuratorFramework client) {
        return connect(client, ZooKeeperLockOptions.defaults());
    }

    /**
     * A session with ZooKeeper that hands out every concept it offers — locks (FIFO, so also the
     * fair lock), semaphores, read-write locks, multi-locks, window locks, elections, fenced values —
     * over the client's one ZooKeeper session (started here when it is not yet). Closing the session
     * closes every concept it handed out (their ephemeral nodes go); the client stays the
     * application's. The task queue is not offered on ZooKeeper.
     *
     * @param client    the application's Curator client
     * @param zkOptions root path, ACL, request timeout
     * @return the session
     * @throws NullPointerException     naming the argument when one is null
     * @throws IllegalArgumentException when the client is closed or its connect string malformed
     */
    public static LockStore connect(CuratorFramework client, ZooKeeperLockOptions zkOptions) {
        return new ZooKeeperStoreSession(Objects.requireNonNull(client, "client"), Objects.requireNonNull(zkOptions, "zkOptions"));
    }

    /**
     * @param client    the application's Curator client (started here if it was not yet)
     * @param zkOptions root, ACL and confirmation settings
     * @return a new backend, for {@link io.reactivelocks.LockClient#create(io.reactivelocks.spi.LockBackend, LockOptions)}
     *         (the fault-injection and safety harnesses wrap it; applications use {@link #connect})
     * @throws IllegalArgumentException when the client was closed, or its connect string is malformed
     */
    public static ZooKeeperLockBackend backend(CuratorFramework client, ZooKeeperLockOptions zkOptions) {
        Objects.requireNonNull(client, "client");
        Objects.requireNonNull(zkOptions, "zkOptions");
        ZooKeeperLockBackend.checkConnectString(client); // before start(): do not let Curator try a malformed one
        started(client);
        return ZooKeeperLockBackend.create(client, zkOptions);
    }

    static CuratorFramework started(CuratorFramework client) {
        if (client.getState() == CuratorFrameworkState.STOPPED) {
            throw new IllegalArgumentException("client must not be closed: " + client);
        }
        if (client.getState() == CuratorFrameworkState.LATENT) {
            client.start();
        }
        return client;
    }
}
