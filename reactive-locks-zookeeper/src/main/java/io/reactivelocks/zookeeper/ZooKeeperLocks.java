package io.reactivelocks.zookeeper;

import io.reactivelocks.LockClient;
import io.reactivelocks.LockOptions;
import io.reactivelocks.LockStore;
import io.reactivelocks.rwlock.ReadWriteLock;
import io.reactivelocks.rwlock.ReadWriteLockOptions;
import io.reactivelocks.semaphore.Semaphore;
import io.reactivelocks.window.WindowLock;
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
 * LockClient locks = ZooKeeperLocks.create(zk,
 *         ZooKeeperLockOptions.builder().digestAcl("app", "secret").build(), LockOptions.defaults());
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
 * timeout, and {@link LockOptions#leaseTime()} is not used. The factories return at once;
 * nothing is sent before the first operation is subscribed. Closing the returned client
 * releases its leases and removes the backend's listener; the {@link CuratorFramework} stays
 * the application's to close. For leader election on these clients see
 * {@link io.reactivelocks.election.LeaderElection#create(io.reactivelocks.LockClient)}.
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
     * @param client the application's Curator client
     * @return a lock client with {@link ZooKeeperLockOptions#defaults()} and {@link LockOptions#defaults()}
     * @throws IllegalArgumentException when the client was closed, or its connect string is malformed
     */
    public static LockClient create(CuratorFramework client) {
        return create(client, ZooKeeperLockOptions.defaults(), LockOptions.defaults());
    }

    /**
     * @param client  the application's Curator client
     * @param options the lock client's default options
     * @return a lock client with {@link ZooKeeperLockOptions#defaults()}
     * @throws IllegalArgumentException when the client was closed, or its connect string is malformed
     */
    public static LockClient create(CuratorFramework client, LockOptions options) {
        return create(client, ZooKeeperLockOptions.defaults(), options);
    }

    /**
     * @param client    the application's Curator client; started here if it was not yet
     *                  ({@code start()} returns at once: it connects in the background)
     * @param zkOptions root, ACL and confirmation settings
     * @param options   the lock client's default options
     * @return a lock client over a new {@link ZooKeeperLockBackend}
     * @throws IllegalArgumentException when the client was closed, or its connect string is malformed
     */
    public static LockClient create(CuratorFramework client, ZooKeeperLockOptions zkOptions, LockOptions options) {
        Objects.requireNonNull(options, "options");
        return LockClient.create(backend(client, zkOptions), options);
    }

    /**
     * @param client    the application's Curator client (started here if it was not yet)
     * @param zkOptions root, ACL and confirmation settings
     * @return a new backend, for {@link LockClient#create(io.reactivelocks.spi.LockBackend, LockOptions)}
     * @throws IllegalArgumentException when the client was closed, or its connect string is malformed
     */
    public static ZooKeeperLockBackend backend(CuratorFramework client, ZooKeeperLockOptions zkOptions) {
        Objects.requireNonNull(client, "client");
        Objects.requireNonNull(zkOptions, "zkOptions");
        ZooKeeperLockBackend.checkConnectString(client); // before start(): do not let Curator try a malformed one
        started(client);
        return ZooKeeperLockBackend.create(client, zkOptions);
    }

    /**
     * @param client the application's started Curator client (not closed)
     * @return a semaphore with {@link ZooKeeperLockOptions#defaults()} and {@link LockOptions#defaults()}
     * @see #semaphore(CuratorFramework, ZooKeeperLockOptions, LockOptions)
     */
    public static Semaphore semaphore(CuratorFramework client) {
        return semaphore(client, ZooKeeperLockOptions.defaults(), LockOptions.defaults());
    }

    /**
     * @param client  the application's started Curator client (not closed)
     * @param options the permits' renewal, waiting and request timeout (a permit lives as long as the session)
     * @return a semaphore with {@link ZooKeeperLockOptions#defaults()}
     * @see #semaphore(CuratorFramework, ZooKeeperLockOptions, LockOptions)
     */
    public static Semaphore semaphore(CuratorFramework client, LockOptions options) {
        return semaphore(client, ZooKeeperLockOptions.defaults(), options);
    }

    /**
     * A semaphore on ZooKeeper: each permit is an ephemeral sequential node of the client's session
     * under {@code <root>-semaphore}; the k permits of a request are created in one transaction
     * (contiguous sequences, one place in line) and granted when the highest of them is among the N
     * lowest sequences; a permit's token is the nodes' {@code czxid} * 65536 + its index in the
     * request (at most 65,535 permits per request), and it goes with the session (its TTL is the
     * negotiated session timeout, at most the lease time). Waiters keep their nodes in line and watch
     * only what can let them in.
     * {@link Semaphore#close()} leaves the client open.
     *
     * @param client    the application's started Curator client (not closed)
     * @param zkOptions the root path and ACL
     * @param options   the permits' renewal, waiting and request timeout
     * @return a semaphore
     */
    public static Semaphore semaphore(CuratorFramework client, ZooKeeperLockOptions zkOptions, LockOptions options) {
        Objects.requireNonNull(client, "client");
        Objects.requireNonNull(zkOptions, "zkOptions");
        Objects.requireNonNull(options, "options");
        ZooKeeperLockBackend.checkConnectString(client);
        started(client);
        return Semaphore.create(new ZooKeeperSemaphoreStore(client, false, zkOptions.root() + "-semaphore", zkOptions.acl()), options);
    }

    /**
     * @param client the application's started Curator client (not closed)
     * @return a writer-preferring read-write lock with {@link ZooKeeperLockOptions#defaults()} and {@link LockOptions#defaults()}
     * @see #readWriteLock(CuratorFramework, ZooKeeperLockOptions, ReadWriteLockOptions)
     */
    public static ReadWriteLock readWriteLock(CuratorFramework client) {
        return readWriteLock(client, ZooKeeperLockOptions.defaults(), ReadWriteLockOptions.defaults());
    }

    /**
     * @param client  the application's started Curator client (not closed)
     * @param options the grants' renewal, waiting and request timeout (a grant lives as long as the session) and the policy
     * @return a read-write lock with {@link ZooKeeperLockOptions#defaults()}
     * @see #readWriteLock(CuratorFramework, ZooKeeperLockOptions, ReadWriteLockOptions)
     */
    public static ReadWriteLock readWriteLock(CuratorFramework client, ReadWriteLockOptions options) {
        return readWriteLock(client, ZooKeeperLockOptions.defaults(), options);
    }

    /**
     * A read-write lock on ZooKeeper in the order of Curator's {@code InterProcessReadWriteLock}:
     * each request is an ephemeral sequential {@code read-}/{@code write-} node of the client's
     * session under {@code <root>-rw}; a reader holds when no write node precedes it, a writer when
     * its node is the lowest; a waiting caller keeps its node (a waiting writer's node blocks later
     * readers); the token is the node's {@code czxid}; a grant goes with the session (its TTL is the
     * negotiated session timeout, at most the lease time). Waiters watch the children.
     * {@link ReadWriteLock#close()} leaves the client open.
     *
     * @param client    the application's started Curator client (not closed)
     * @param zkOptions the root path and ACL
     * @param options   the grants' renewal, waiting and request timeout, and the policy
     * @return a read-write lock
     */
    public static ReadWriteLock readWriteLock(CuratorFramework client, ZooKeeperLockOptions zkOptions, ReadWriteLockOptions options) {
        Objects.requireNonNull(client, "client");
        Objects.requireNonNull(zkOptions, "zkOptions");
        Objects.requireNonNull(options, "options");
        ZooKeeperLockBackend.checkConnectString(client);
        started(client);
        return ReadWriteLock.create(new ZooKeeperReadWriteStore(client, false, zkOptions.root() + "-rw", zkOptions.acl()), options);
    }

    /**
     * @param client the application's Curator client (started here if it was not yet; not closed)
     * @return a window lock with {@link ZooKeeperLockOptions#defaults()} and {@link LockOptions#defaults()}
     * @see #windowLock(CuratorFramework, ZooKeeperLockOptions, LockOptions)
     */
    public static WindowLock windowLock(CuratorFramework client) {
        return windowLock(client, ZooKeeperLockOptions.defaults(), LockOptions.defaults());
    }

    /**
     * @param client the application's client
     * @param options request timeout, drift allowance and clock of the claims
     * @return a window lock with {@link ZooKeeperLockOptions#defaults()}
     * @see #windowLock(CuratorFramework, ZooKeeperLockOptions, LockOptions)
     */
    public static WindowLock windowLock(CuratorFramework client, LockOptions options) {
        return windowLock(client, ZooKeeperLockOptions.defaults(), options);
    }

    /**
     * A window lock on ZooKeeper, decided by the server's clock: one persistent node per name and
     * period under {@code <root>-window}; each claim is one versioned write, and the window is
     * {@code floor(mtime / period)} of that write (the leader stamps {@code mtime}), claimed when it
     * is above every window claimed before, so at most one claim per window holds even if the
     * leader's clock steps back. The token is the write's {@code mzxid}. Every attempt is a write.
     *
     * @param client    the application's Curator client (started here if it was not yet; not closed)
     * @param zkOptions the root (window nodes live under {@code <root>-window}) and the ACL of new nodes
     * @param options   request timeout, drift allowance and clock of the claims
     * @return a window lock
     * @throws IllegalArgumentException when the client was closed, or its connect string is malformed
     */
    public static WindowLock windowLock(CuratorFramework client, ZooKeeperLockOptions zkOptions, LockOptions options) {
        Objects.requireNonNull(client, "client");
        Objects.requireNonNull(zkOptions, "zkOptions");
        Objects.requireNonNull(options, "options");
        ZooKeeperLockBackend.checkConnectString(client);
        started(client);
        return WindowLock.create(new ZooKeeperWindowStore(client, false, zkOptions.root() + "-window", zkOptions.acl()), options);
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
