package io.reactivelocks.etcd;

import io.etcd.jetcd.Client;
import io.reactivelocks.LockOptions;
import io.reactivelocks.LockStore;
import java.util.Objects;

/**
 * Entry point: a store session on etcd, which hands out every concept etcd offers.
 *
 * <pre>{@code
 * Client etcd = Client.builder().endpoints("http://localhost:2379").build();
 * LockStore store = EtcdLocks.connect(etcd);
 * LockClient locks = store.locks();
 * Mono<Receipt> r = locks.withLock("order:42", lease -> charge(order, lease.token()));
 * }</pre>
 *
 * <p>For an etcd cluster give the client every member's endpoint ({@code Client.builder().endpoints(
 * "http://etcd-1:2379", "http://etcd-2:2379", "http://etcd-3:2379")}, or
 * {@link EtcdConnectionOptions.Builder#endpoints(String...)} with {@link #connect}). A holder whose session
 * lease cannot be kept alive across a leader change or a partition sees its hold stream complete before
 * anyone else can be granted the lock; tokens (create revisions) keep growing across leader changes.
 *
 * <p>{@code connect} returns at once: nothing is sent to etcd before the first operation is
 * subscribed. Closing the session releases the leases of every concept it handed out, revokes its
 * session leases and — only for {@link #connect(EtcdConnectionOptions, EtcdLockOptions)} — closes
 * the jetcd client; a {@link Client} passed in stays the application's to close.
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
     * @param client      the application's jetcd client
     * @param etcdOptions key prefix and session settings
     * @return a new backend, for {@link io.reactivelocks.LockClient#create(io.reactivelocks.spi.LockBackend, LockOptions)}
     *         (the fault-injection and safety harnesses wrap it; applications use {@link #connect(Client, EtcdLockOptions)})
     */
    public static EtcdLockBackend backend(Client client, EtcdLockOptions etcdOptions) {
        return EtcdLockBackend.create(client, etcdOptions);
    }

    static EtcdLockOptions withTtl(EtcdLockOptions etcdOptions, LockOptions options) {
        Objects.requireNonNull(etcdOptions, "etcdOptions");
        return etcdOptions.isSessionTtlSet() ? etcdOptions
                : etcdOptions.mutate().sessionTtl(options.leaseTime().compareTo(java.time.Duration.ofSeconds(1)) < 0
                        ? java.time.Duration.ofSeconds(1) : options.leaseTime()).build();
    }
}
