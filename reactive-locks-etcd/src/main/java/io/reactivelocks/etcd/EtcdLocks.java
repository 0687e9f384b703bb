package io.reactivelocks.etcd;

import io.etcd.jetcd.Client;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockOptions;
import io.reactivelocks.LockStore;
import io.reactivelocks.rwlock.ReadWriteLock;
import io.reactivelocks.rwlock.ReadWriteLockOptions;
import io.reactivelocks.semaphore.Semaphore;
import io.reactivelocks.window.WindowLock;
import java.util.Objects;
import reactor.core.scheduler.Schedulers;

/**
 * Entry point: lock clients on etcd.
 *
 * <pre>{@code
 * Client etcd = Client.builder().endpoints("http://localhost:2379").build();
 * LockClient locks = EtcdLocks.create(etcd);
 * Mono<Receipt> r = locks.withLock("order:42", lease -> charge(order, lease.token()));
 * }</pre>
 *
 * <p>For an etcd cluster give the client every member's endpoint ({@code Client.builder().endpoints(
 * "http://etcd-1:2379", "http://etcd-2:2379", "http://etcd-3:2379")}, or
 * {@link EtcdConnectionOptions.Builder#endpoints(String...)} with {@link #connect}). A holder whose session
 * lease cannot be kept alive across a leader change or a partition sees its hold stream complete before
 * anyone else can be granted the lock; tokens (create revisions) keep growing across leader changes.
 *
 * <p>Every factory returns at once: nothing is sent to etcd before the first operation is
 * subscribed. Closing the returned client releases its leases, revokes the backend's session
 * lease and — only for {@link #connect} — closes the jetcd client; a {@link Client} passed in
 * stays the application's to close. For leader election on these clients see
 * {@link io.reactivelocks.election.LeaderElection#create(LockClient)}; for window locks
 * {@link #windowLock(Client, EtcdLockOptions, LockOptions)}.
 *
 * <p>One thing below this library: jetcd hands every request to Failsafe on the client's executor
 * ({@code ClientBuilder.executorService}, a cached thread pool by default), and a caller that finds
 * no idle pooled thread starts one under the pool's lock — a wait of microseconds that BlockHound
 * reports when many requests start at once on event-loop threads. The tests allow exactly that call
 * ({@code DriverBlockHoundIntegration}); nothing of this library's own code waits.
 */
public final class EtcdLocks {

    private EtcdLocks() {
    }

    /**
     * @param client the application's jetcd client (not closed by the session)
     * @return a session with {@link EtcdLockOptions#defaults()}
     * @see #connect(Client, EtcdLockOptions)
     */
    public static LockStore connect(Client client) {
        return connect(client, EtcdLockOptions.defaults());
    }

    /**
     * A session with etcd that hands out every concept it offers — locks (FIFO, so also the fair
     * lock), semaphores, read-write locks, multi-locks, window locks, elections, fenced values — over the client's
     * one channel; lock clients of one lease time share one session lease. Closing the session
     * closes every concept it handed out and revokes its session leases; the client stays the
     * application's. The task queue is not offered on etcd.
     *
     * @param client      the application's jetcd client
     * @param etcdOptions key prefix and session settings; an unset session TTL becomes each lock
     *                    client's lease time
     * @return the session
     * @throws NullPointerException naming the argument when one is null
     */
    public static LockStore connect(Client client, EtcdLockOptions etcdOptions) {
        return new EtcdStoreSession(Objects.requireNonNull(client, "client"), false,
                Objects.requireNonNull(etcdOptions, "etcdOptions"));
    }

    /**
     * A session over a jetcd client of its own, built from endpoints, authentication and TLS
     * settings, and closed with the session; otherwise as {@link #connect(Client, EtcdLockOptions)}.
     *
     * @param connection  endpoints, authentication, TLS
     * @param etcdOptions key prefix and session settings
     * @return the session
     * @throws NullPointerException         naming the argument when one is null
     * @throws java.io.UncheckedIOException when a TLS file cannot be read
     */
    public static LockStore connect(EtcdConnectionOptions connection, EtcdLockOptions etcdOptions) {
        Objects.requireNonNull(connection, "connection");
        Objects.requireNonNull(etcdOptions, "etcdOptions");
        return new EtcdStoreSession(connection.connect(), true, etcdOptions);
    }

    /**
     * @param client the application's jetcd client
     * @return a lock client with {@link LockOptions#defaults()} and {@link EtcdLockOptions#defaults()}
     */
    public static LockClient create(Client client) {
        return create(client, EtcdLockOptions.defaults(), LockOptions.defaults());
    }

    /**
     * @param client  the application's jetcd client
     * @param options the lock client's default options (the session TTL is their lease time)
     * @return a lock client with {@link EtcdLockOptions#defaults()}
     */
    public static LockClient create(Client client, LockOptions options) {
        return create(client, EtcdLockOptions.defaults(), options);
    }

    /**
     * @param client      the application's jetcd client
     * @param etcdOptions key prefix and session settings; an unset session TTL becomes
     *                    {@code options.leaseTime()}
     * @param options     the lock client's default options
     * @return a lock client over a new {@link EtcdLockBackend}
     */
    public static LockClient create(Client client, EtcdLockOptions etcdOptions, LockOptions options) {
        Objects.requireNonNull(client, "client");
        Objects.requireNonNull(options, "options");
        return LockClient.create(EtcdLockBackend.create(client, withTtl(etcdOptions, options)), options);
    }

    /**
     * Connects with user/password and TLS settings; the jetcd client is the lock client's own and
     * is closed with it.
     *
     * @param connection  endpoints, authentication, TLS
     * @param etcdOptions key prefix and session settings; an unset session TTL becomes
     *                    {@code options.leaseTime()}
     * @param options     the lock client's default options
     * @return a lock client over a new {@link EtcdLockBackend} owning its jetcd client
     * @throws java.io.UncheckedIOException when a TLS file cannot be read
     */
    public static LockClient connect(EtcdConnectionOptions connection, EtcdLockOptions etcdOptions, LockOptions options) {
        Objects.requireNonNull(connection, "connection");
        Objects.requireNonNull(options, "options");
        EtcdLockOptions o = withTtl(etcdOptions, options);
        return LockClient.create(EtcdLockBackend.owning(connection.connect(), o), options);
    }

    /**
     * @param client      the application's jetcd client
     * @param etcdOptions key prefix and session settings
     * @return a new backend, for {@link LockClient#create(io.reactivelocks.spi.LockBackend, LockOptions)}
     */
    public static EtcdLockBackend backend(Client client, EtcdLockOptions etcdOptions) {
        return EtcdLockBackend.create(client, etcdOptions);
    }

    /**
     * @param client the application's jetcd client (not closed)
     * @return a semaphore with {@link EtcdLockOptions#defaults()} and {@link LockOptions#defaults()}
     * @see #semaphore(Client, EtcdLockOptions, LockOptions)
     */
    public static Semaphore semaphore(Client client) {
        return semaphore(client, EtcdLockOptions.defaults(), LockOptions.defaults());
    }

    /**
     * @param client  the application's jetcd client (not closed)
     * @param options the permits' lease time, renewal, waiting and request timeout
     * @return a semaphore with {@link EtcdLockOptions#defaults()}
     * @see #semaphore(Client, EtcdLockOptions, LockOptions)
     */
    public static Semaphore semaphore(Client client, LockOptions options) {
        return semaphore(client, EtcdLockOptions.defaults(), options);
    }

    /**
     * A semaphore on etcd: each permit is a key under {@code <prefix>-semaphore} on a lease of its
     * own (the lease time rounded up to whole seconds); the k permits of a request are put in one
     * transaction, one place in line, and granted when they and the keys before them are at most N;
     * a permit's token is that create revision * 65536 + its index in the request (at most 65,535
     * permits per request). Waiters keep their keys in line and watch only what can let them in.
     * {@link Semaphore#close()} leaves the client open.
     *
     * @param client      the application's jetcd client (not closed)
     * @param etcdOptions the key prefix
     * @param options     the permits' lease time, renewal, waiting and request timeout
     * @return a semaphore
     */
    public static Semaphore semaphore(Client client, EtcdLockOptions etcdOptions, LockOptions options) {
        Objects.requireNonNull(client, "client");
        Objects.requireNonNull(etcdOptions, "etcdOptions");
        Objects.requireNonNull(options, "options");
        ChannelReconnect.follow(client, etcdOptions.reconnectInterval(), etcdOptions.scheduler());
        return Semaphore.create(new EtcdSemaphoreStore(client, false, etcdOptions.prefix() + "-semaphore"), options);
    }

    /**
     * @param client the application's jetcd client (not closed)
     * @return a writer-preferring read-write lock with {@link EtcdLockOptions#defaults()} and {@link LockOptions#defaults()}
     * @see #readWriteLock(Client, EtcdLockOptions, ReadWriteLockOptions)
     */
    public static ReadWriteLock readWriteLock(Client client) {
        return readWriteLock(client, EtcdLockOptions.defaults(), ReadWriteLockOptions.defaults());
    }

    /**
     * @param client  the application's jetcd client (not closed)
     * @param options the grants' lease time, renewal, waiting and request timeout, and the policy
     * @return a read-write lock with {@link EtcdLockOptions#defaults()}
     * @see #readWriteLock(Client, EtcdLockOptions, ReadWriteLockOptions)
     */
    public static ReadWriteLock readWriteLock(Client client, ReadWriteLockOptions options) {
        return readWriteLock(client, EtcdLockOptions.defaults(), options);
    }

    /**
     * A read-write lock on etcd in the order of etcd's and Curator's recipes: each request is a key
     * under {@code <prefix>-rw} on a lease of its own (the lease time rounded up to whole seconds);
     * in create-revision order a reader holds when no write key precedes it, a writer when its key
     * is the first; a waiting caller keeps its key (a waiting writer's key blocks later readers);
     * the token is the key's create revision. Waiters watch the name's keys.
     * {@link ReadWriteLock#close()} leaves the client open.
     *
     * @param client      the application's jetcd client (not closed)
     * @param etcdOptions the key prefix
     * @param options     the grants' lease time, renewal, waiting and request timeout, and the policy
     * @return a read-write lock
     */
    public static ReadWriteLock readWriteLock(Client client, EtcdLockOptions etcdOptions, ReadWriteLockOptions options) {
        Objects.requireNonNull(client, "client");
        Objects.requireNonNull(etcdOptions, "etcdOptions");
        Objects.requireNonNull(options, "options");
        ChannelReconnect.follow(client, etcdOptions.reconnectInterval(), etcdOptions.scheduler());
        return ReadWriteLock.create(new EtcdReadWriteStore(client, false, etcdOptions.prefix() + "-rw"), options);
    }

    /**
     * @param client the application's jetcd client (not closed by the window lock)
     * @return a window lock with {@link EtcdLockOptions#defaults()} and {@link LockOptions#defaults()}
     * @see #windowLock(Client, EtcdLockOptions, LockOptions)
     */
    public static WindowLock windowLock(Client client) {
        return windowLock(client, EtcdLockOptions.defaults(), LockOptions.defaults());
    }

    /**
     * @param client the application's client
     * @param options request timeout, drift allowance and clock of the claims
     * @return a window lock with {@link EtcdLockOptions#defaults()}
     * @see #windowLock(Client, EtcdLockOptions, LockOptions)
     */
    public static WindowLock windowLock(Client client, LockOptions options) {
        return windowLock(client, EtcdLockOptions.defaults(), options);
    }

    /**
     * A window lock on etcd: one key per name and period under {@code <prefix>-window} holds the last
     * claimed window index, and a claim is one transaction that puts this window's index only if the
     * stored one is lower (the first caller of a window wins, a stored window never goes back); the
     * token is the put's revision. etcd has no clock a transaction can read, so the window index
     * comes from this client's wall clock ({@code options.scheduler()}'s {@code now}, else the system
     * clock): at most one claim per window index holds whatever the clocks do, but window boundaries
     * are as good as the fleet's clock synchronization (keep it well under a period).
     *
     * @param client      the application's jetcd client (not closed by the window lock)
     * @param etcdOptions the key prefix (window keys live under {@code <prefix>-window})
     * @param options     request timeout, drift allowance, clock of the claims; its scheduler's
     *                    {@code now} decides the window when set
     * @return a window lock
     */
    public static WindowLock windowLock(Client client, EtcdLockOptions etcdOptions, LockOptions options) {
        Objects.requireNonNull(client, "client");
        Objects.requireNonNull(etcdOptions, "etcdOptions");
        Objects.requireNonNull(options, "options");
        ChannelReconnect.follow(client, etcdOptions.reconnectInterval(), etcdOptions.scheduler());
        return WindowLock.create(new EtcdWindowStore(client, false, etcdOptions.prefix() + "-window",
                options.scheduler() != null ? options.scheduler() : Schedulers.parallel()), options);
    }

    static EtcdLockOptions withTtl(EtcdLockOptions etcdOptions, LockOptions options) {
        Objects.requireNonNull(etcdOptions, "etcdOptions");
        return etcdOptions.isSessionTtlSet() ? etcdOptions
                : etcdOptions.mutate().sessionTtl(options.leaseTime().compareTo(java.time.Duration.ofSeconds(1)) < 0
                        ? java.time.Duration.ofSeconds(1) : options.leaseTime()).build();
    }
}
