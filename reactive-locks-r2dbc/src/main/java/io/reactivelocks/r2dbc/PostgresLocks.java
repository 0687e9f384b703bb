package io.reactivelocks.r2dbc;

import io.r2dbc.spi.ConnectionFactory;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockOptions;
import io.reactivelocks.LockStore;
import io.reactivelocks.fencing.FencedValues;
import io.reactivelocks.rwlock.ReadWriteLock;
import io.reactivelocks.rwlock.ReadWriteLockOptions;
import io.reactivelocks.semaphore.Semaphore;
import io.reactivelocks.window.WindowLock;
import java.util.Objects;

/**
 * Entry point: lock clients on PostgreSQL through R2DBC.
 *
 * <pre>{@code
 * ConnectionFactory db = ConnectionFactories.get("r2dbc:postgresql://app:secret@localhost:5432/app");
 * LockClient locks = PostgresLocks.create(db);
 * Mono<Receipt> r = locks.withLock("order:42", lease -> charge(order, lease.token()));
 * }</pre>
 *
 * <p>Every factory method returns at once: nothing connects before the first operation is
 * subscribed, and the tables are created on first use (see
 * {@link PostgresLockOptions#schemaMode()}; or call {@link PostgresLockBackend#migrate()}).
 * Closing the returned client releases its leases, closes the listening connection, and closes the
 * pool the backend created — a pool passed in stays the application's. To share one backend, use
 * window locks, or migrate explicitly, build the backend with {@link #backend} and call
 * {@link LockClient#create(io.reactivelocks.spi.LockBackend, LockOptions)}.
 *
 * <p><b>A primary with streaming replicas.</b> Give every factory here the r2dbc-postgresql
 * multi-host URL, which connects to whichever node is primary:
 * <pre>{@code
 * ConnectionFactory db = ConnectionFactories.get("r2dbc:postgresql:failover://app:secret@db1:5432,db2:5432/app"
 *         + "?targetServerType=primary&hostRecheckTime=1s&connectTimeout=PT2S");
 * LockClient locks = PostgresLocks.create(db);
 * }</pre>
 * The backend's pool hands out no connection to a dead or stopped primary (it fails validation,
 * the next one is opened through the URL on the promoted node) and its {@code LISTEN} connection
 * reconnects the same way, so waiters are woken by releases on the new primary. Keep
 * {@code hostRecheckTime} short (the driver caches which host was primary for that long; default
 * 10 s). PostgreSQL promotes nothing by itself: the operator tooling (Patroni, repmgr, a managed
 * service) does. <b>Use synchronous replication</b> ({@code synchronous_standby_names} naming the
 * replica, {@code synchronous_commit = on} or {@code remote_apply} for the locks' role) and let the
 * tooling promote only a synchronous standby (Patroni {@code synchronous_mode}): every grant of every
 * concept here (mutex, fair lock, semaphore, read-write lock, window lock, task claim, fenced value)
 * is handed out by a commit, which then returns only once the replica has the grant and the
 * sequence's WAL, so a promotion neither forgets a lock nor hands out a token again. With
 * asynchronous replication, promoting a replica that lags after the primary crashed does both:
 * the sequence resumes behind tokens already handed out (measured in {@code PostgresReplicaTopologyTest}:
 * token 106 granted again after 124 was handed out) and locks granted meanwhile are gone. A planned
 * switchover (clean shutdown of the primary, which sends all its WAL first) is safe either way.
 */
public final class PostgresLocks {

    private PostgresLocks() {
    }

    /**
     * @param factory an r2dbc-postgresql connection factory or an r2dbc-pool {@code ConnectionPool}
     * @return a session with {@link PostgresLockOptions#defaults()}
     * @see #connect(ConnectionFactory, PostgresLockOptions)
     */
    public static LockStore connect(ConnectionFactory factory) {
        return connect(factory, PostgresLockOptions.defaults());
    }

    /**
     * A session with PostgreSQL that hands out every concept — locks, fair locks, semaphores,
     * read-write locks, multi-locks, window locks, elections, fenced values, task queues (a
     * {@link PostgresTaskQueue}) — over one pool (the factory when it is an r2dbc-pool
     * {@code ConnectionPool}, else one the session creates with
     * {@link PostgresLockOptions#poolMaxSize()}) and one {@code LISTEN} connection, opened on first
     * use. Closing the session closes every concept it handed out, then the listening connection and
     * the pool it created; a pool passed in stays the application's.
     *
     * @param factory         an r2dbc-postgresql connection factory or an r2dbc-pool {@code ConnectionPool}
     * @param postgresOptions schema, tables, channel, schema creation, pool and listener settings
     * @return the session
     * @throws NullPointerException naming the argument when one is null
     */
    public static LockStore connect(ConnectionFactory factory, PostgresLockOptions postgresOptions) {
        return new PostgresStoreSession(PostgresLockBackend.create(factory, postgresOptions));
    }

    /**
     * A session over a backend the application built; closing the session closes the backend.
     *
     * @param backend the backend, owned by the session from now on
     * @return the session
     * @throws NullPointerException when {@code backend} is null
     */
    public static LockStore connect(PostgresLockBackend backend) {
        return new PostgresStoreSession(Objects.requireNonNull(backend, "backend"));
    }

    /**
     * @param factory an r2dbc-postgresql connection factory or an r2dbc-pool {@code ConnectionPool}
     * @return a lock client with {@link LockOptions#defaults()} and {@link PostgresLockOptions#defaults()}
     */
    public static LockClient create(ConnectionFactory factory) {
        return create(factory, PostgresLockOptions.defaults(), LockOptions.defaults());
    }

    /**
     * @param factory an r2dbc-postgresql connection factory or an r2dbc-pool {@code ConnectionPool}
     * @param options the lock client's default options
     * @return a lock client with {@link PostgresLockOptions#defaults()}
     */
    public static LockClient create(ConnectionFactory factory, LockOptions options) {
        return create(factory, PostgresLockOptions.defaults(), options);
    }

    /**
     * @param factory         an r2dbc-postgresql connection factory or an r2dbc-pool {@code ConnectionPool}
     * @param postgresOptions tables, channel, schema creation, pool and listener settings
     * @param options         the lock client's default options
     * @return a lock client over a new {@link PostgresLockBackend}
     */
    public static LockClient create(ConnectionFactory factory, PostgresLockOptions postgresOptions, LockOptions options) {
        Objects.requireNonNull(options, "options");
        return LockClient.create(backend(factory, postgresOptions), options);
    }

    /**
     * @param factory         an r2dbc-postgresql connection factory or an r2dbc-pool {@code ConnectionPool}
     * @param postgresOptions tables, channel, schema creation, pool and listener settings
     * @return a new backend, for {@link LockClient#create(io.reactivelocks.spi.LockBackend, LockOptions)},
     *         {@link PostgresLockBackend#migrate()} or {@link #windowLock(PostgresLockBackend, LockOptions)}
     */
    public static PostgresLockBackend backend(ConnectionFactory factory, PostgresLockOptions postgresOptions) {
        return PostgresLockBackend.create(factory, postgresOptions);
    }

    /**
     * @param factory an r2dbc-postgresql connection factory or an r2dbc-pool {@code ConnectionPool}
     * @return a window lock with {@link PostgresLockOptions#defaults()} and {@link LockOptions#defaults()}
     * @see #windowLock(ConnectionFactory, PostgresLockOptions, LockOptions)
     */
    public static WindowLock windowLock(ConnectionFactory factory) {
        return windowLock(factory, PostgresLockOptions.defaults(), LockOptions.defaults());
    }

    /**
     * @param factory the application's connection factory
     * @param options request timeout, drift allowance and clock of the claims
     * @return a window lock with {@link PostgresLockOptions#defaults()}
     * @see #windowLock(ConnectionFactory, PostgresLockOptions, LockOptions)
     */
    public static WindowLock windowLock(ConnectionFactory factory, LockOptions options) {
        return windowLock(factory, PostgresLockOptions.defaults(), options);
    }

    /**
     * A window lock on PostgreSQL: the window is {@code floor(server epoch / period)} by the server's
     * {@code now()}; one conditional upsert per claim only advances the stored window of
     * {@code (name, period)} (the first caller of a window wins, a stored window never goes back);
     * the token comes from the lock sequence. One row per name and period in
     * {@link PostgresLockOptions#windowTable()}, created with the schema. Closing the window lock
     * closes the pool its backend created (a pool passed in stays the application's).
     *
     * @param factory         an r2dbc-postgresql connection factory or an r2dbc-pool {@code ConnectionPool}
     * @param postgresOptions tables, schema creation, pool settings
     * @param options         request timeout, drift allowance and clock of the claims
     * @return a window lock
     */
    public static WindowLock windowLock(ConnectionFactory factory, PostgresLockOptions postgresOptions, LockOptions options) {
        Objects.requireNonNull(options, "options");
        return WindowLock.create(new PostgresWindowStore(backend(factory, postgresOptions), true), options);
    }

    /**
     * A window lock sharing the connections and tables of an existing backend; {@link WindowLock#close()}
     * leaves the backend open. Otherwise as {@link #windowLock(ConnectionFactory, PostgresLockOptions, LockOptions)}.
     *
     * @param backend the backend to share; its owner closes it
     * @param options request timeout, drift allowance and clock of the claims
     * @return a window lock
     */
    public static WindowLock windowLock(PostgresLockBackend backend, LockOptions options) {
        Objects.requireNonNull(backend, "backend");
        Objects.requireNonNull(options, "options");
        return WindowLock.create(new PostgresWindowStore(backend, false), options);
    }

    /**
     * @param factory an r2dbc-postgresql connection factory or an r2dbc-pool {@code ConnectionPool}
     * @return a fair lock client with {@link PostgresLockOptions#defaults()} and {@link LockOptions#defaults()}
     * @see #fairLock(ConnectionFactory, PostgresLockOptions, LockOptions)
     */
    public static LockClient fairLock(ConnectionFactory factory) {
        return fairLock(factory, PostgresLockOptions.defaults(), LockOptions.defaults());
    }

    /**
     * @param factory an r2dbc-postgresql connection factory or an r2dbc-pool {@code ConnectionPool}
     * @param options the lock client's default options
     * @return a fair lock client with {@link PostgresLockOptions#defaults()}
     * @see #fairLock(ConnectionFactory, PostgresLockOptions, LockOptions)
     */
    public static LockClient fairLock(ConnectionFactory factory, LockOptions options) {
        return fairLock(factory, PostgresLockOptions.defaults(), options);
    }

    /**
     * A fair (FIFO) lock client on PostgreSQL: waiters are granted in arrival order. Waiting owners
     * are rows {@code (name, owner, seq, expires_at)} of the table {@code <lock table>_waiters},
     * with a place in line from the lock sequence and a deadline by the server's {@code now()}
     * (twice the lease time, at least 1 s) that a waiting client refreshes, so that an abandoned
     * waiter expires instead of blocking the line; one function call, serialized per name by the
     * mutex's advisory lock, drops expired waiters, enqueues the caller and grants the head when
     * the lock row is free. A waiter wakes on the name's release {@code NOTIFY}, the holder's TTL
     * or the head waiter's deadline. {@code tryAcquire} never joins the line and does not pass
     * waiters; a cancelled waiter leaves the line at once. The held lock is a row of the lock
     * table, as the mutex's ({@link #create}): tokens, renewal, {@code observe} and payloads are
     * the mutex's. The waiters table and function are created on first use unless disabled. It
     * opens its own pool and listening connection; closing the client closes them.
     *
     * @param factory         an r2dbc-postgresql connection factory or an r2dbc-pool {@code ConnectionPool}
     * @param postgresOptions tables, channel, schema creation, pool and listener settings
     * @param options         the lock client's default options
     * @return a lock client whose waiters are granted in arrival order
     */
    public static LockClient fairLock(ConnectionFactory factory, PostgresLockOptions postgresOptions, LockOptions options) {
        Objects.requireNonNull(options, "options");
        return LockClient.create(new PostgresFairLockBackend(backend(factory, postgresOptions), true), options);
    }

    /**
     * A fair lock client sharing the pool, listening connection and tables of an existing backend;
     * closing the client leaves the backend open. Otherwise as
     * {@link #fairLock(ConnectionFactory, PostgresLockOptions, LockOptions)}.
     *
     * @param backend the backend to share; its owner closes it
     * @param options the lock client's default options
     * @return a lock client whose waiters are granted in arrival order
     */
    public static LockClient fairLock(PostgresLockBackend backend, LockOptions options) {
        Objects.requireNonNull(backend, "backend");
        Objects.requireNonNull(options, "options");
        return LockClient.create(new PostgresFairLockBackend(backend, false), options);
    }

    /**
     * @param factory the application's connection factory
     * @return a semaphore with {@link PostgresLockOptions#defaults()} and {@link LockOptions#defaults()}
     * @see #semaphore(ConnectionFactory, PostgresLockOptions, LockOptions)
     */
    public static Semaphore semaphore(ConnectionFactory factory) {
        return semaphore(factory, PostgresLockOptions.defaults(), LockOptions.defaults());
    }

    /**
     * @param factory the application's connection factory
     * @param options the permits' lease time, renewal, waiting and request timeout
     * @return a semaphore with {@link PostgresLockOptions#defaults()}
     * @see #semaphore(ConnectionFactory, PostgresLockOptions, LockOptions)
     */
    public static Semaphore semaphore(ConnectionFactory factory, LockOptions options) {
        return semaphore(factory, PostgresLockOptions.defaults(), options);
    }

    /**
     * A semaphore on PostgreSQL: permits are rows {@code (name, owner, token, expires_at)} of the
     * table {@code <lock table>_permits}, granted by one function call that takes a per-name
     * advisory transaction lock and counts the unexpired rows against N; tokens come from the lock
     * sequence; expiry is the server's {@code now()}; releases are announced with {@code NOTIFY} to
     * wake waiters. The table and function are created on first use unless disabled. It opens its
     * own pool and listening connection and closes them with {@link Semaphore#close()}.
     *
     * @param factory         the application's connection factory
     * @param postgresOptions schema, table, channel, pool and listener settings
     * @param options         the permits' lease time, renewal, waiting and request timeout
     * @return a semaphore
     */
    public static Semaphore semaphore(ConnectionFactory factory, PostgresLockOptions postgresOptions, LockOptions options) {
        Objects.requireNonNull(options, "options");
        return Semaphore.create(new PostgresSemaphoreStore(backend(factory, postgresOptions), true), options);
    }

    /**
     * A semaphore sharing the pool, listening connection and schema of an existing backend;
     * {@link Semaphore#close()} leaves the backend open. Otherwise as
     * {@link #semaphore(ConnectionFactory, PostgresLockOptions, LockOptions)}.
     *
     * @param backend the backend to share; its owner closes it
     * @param options the permits' lease time, renewal, waiting and request timeout
     * @return a semaphore
     */
    public static Semaphore semaphore(PostgresLockBackend backend, LockOptions options) {
        Objects.requireNonNull(backend, "backend");
        Objects.requireNonNull(options, "options");
        return Semaphore.create(new PostgresSemaphoreStore(backend, false), options);
    }

    /**
     * @param factory the application's connection factory
     * @return a writer-preferring read-write lock with {@link PostgresLockOptions#defaults()} and {@link LockOptions#defaults()}
     * @see #readWriteLock(ConnectionFactory, PostgresLockOptions, ReadWriteLockOptions)
     */
    public static ReadWriteLock readWriteLock(ConnectionFactory factory) {
        return readWriteLock(factory, PostgresLockOptions.defaults(), ReadWriteLockOptions.defaults());
    }

    /**
     * @param factory the application's connection factory
     * @param options the grants' timing and the policy
     * @return a read-write lock with {@link PostgresLockOptions#defaults()}
     * @see #readWriteLock(ConnectionFactory, PostgresLockOptions, ReadWriteLockOptions)
     */
    public static ReadWriteLock readWriteLock(ConnectionFactory factory, ReadWriteLockOptions options) {
        return readWriteLock(factory, PostgresLockOptions.defaults(), options);
    }

    /**
     * A read-write lock on PostgreSQL: grants are rows {@code (name, owner, mode, token, expires_at)}
     * of the table {@code <lock table>_rw}, beside the waiting writers' intents (rows that expire one
     * lease time after their writer's last attempt), granted by one function call that takes a
     * per-name advisory transaction lock; tokens come from the lock sequence; expiry is the
     * server's {@code now()}; releases are announced with {@code NOTIFY} to wake waiters. The table
     * and function are created on first use unless disabled (the SQL is {@code rwlock_schema.sql}
     * next to this class). It opens its own pool and listening connection and closes them with
     * {@link ReadWriteLock#close()}.
     *
     * @param factory         the application's connection factory
     * @param postgresOptions schema, table, channel, pool and listener settings
     * @param options         the grants' timing and the policy
     * @return a read-write lock
     */
    public static ReadWriteLock readWriteLock(ConnectionFactory factory, PostgresLockOptions postgresOptions, ReadWriteLockOptions options) {
        Objects.requireNonNull(options, "options");
        return ReadWriteLock.create(new PostgresReadWriteStore(backend(factory, postgresOptions), true), options);
    }

    /**
     * A read-write lock sharing the pool, listening connection and schema of an existing backend;
     * {@link ReadWriteLock#close()} leaves the backend open. Otherwise as
     * {@link #readWriteLock(ConnectionFactory, PostgresLockOptions, ReadWriteLockOptions)}.
     *
     * @param backend the backend to share; its owner closes it
     * @param options the grants' timing and the policy
     * @return a read-write lock
     */
    public static ReadWriteLock readWriteLock(PostgresLockBackend backend, ReadWriteLockOptions options) {
        Objects.requireNonNull(backend, "backend");
        Objects.requireNonNull(options, "options");
        return ReadWriteLock.create(new PostgresReadWriteStore(backend, false), options);
    }

    /**
     * @param factory an r2dbc-postgresql connection factory or an r2dbc-pool {@code ConnectionPool}
     * @return fenced values with {@link PostgresLockOptions#defaults()}
     * @see #fencedValues(ConnectionFactory, PostgresLockOptions)
     */
    public static FencedValues fencedValues(ConnectionFactory factory) {
        return fencedValues(factory, PostgresLockOptions.defaults());
    }

    /**
     * Fenced values in a PostgreSQL table, {@code <schema>.<lock table>_fenced_values} (by default
     * {@code public.reactive_locks_fenced_values}; created on first use in
     * {@link SchemaMode#CREATE}, see {@link PostgresLockOptions#schemaMode()}): one row per key with the
     * value beside its fence, written by one upsert whose {@code WHERE fence <= token} is
     * {@link io.reactivelocks.fencing.Fencing#admits}. For columns of the application's own rows use
     * {@link FencedWrites}. Closing it closes the pool it created (a pool passed in stays the
     * application's).
     *
     * @param factory         an r2dbc-postgresql connection factory or an r2dbc-pool {@code ConnectionPool}
     * @param postgresOptions schema, table prefix, schema creation, pool settings
     * @return fenced values
     */
    public static FencedValues fencedValues(ConnectionFactory factory, PostgresLockOptions postgresOptions) {
        return new PostgresFencedValues(backend(factory, postgresOptions));
    }

    /**
     * A task queue on PostgreSQL over a backend of its own (its own pool and listening connection,
     * opened on first use; the task table is created on first use); closing the queue closes them.
     * See {@link io.reactivelocks.task.TaskQueue} for the semantics.
     *
     * @param factory an r2dbc-postgresql connection factory or an r2dbc-pool {@code ConnectionPool}
     * @return a task queue with {@link LockOptions#defaults()} (claims of 30 s) and {@link PostgresLockOptions#defaults()}
     * @throws NullPointerException when factory is null
     */
    public static PostgresTaskQueue taskQueue(ConnectionFactory factory) {
        return taskQueue(factory, PostgresLockOptions.defaults(), LockOptions.defaults());
    }

    /**
     * @param factory an r2dbc-postgresql connection factory or an r2dbc-pool {@code ConnectionPool}
     * @param options claim time (the lease time), renewal, backoff, timeouts, clock and scheduler
     * @return a task queue with {@link PostgresLockOptions#defaults()}; closing it closes its connections
     * @throws NullPointerException when an argument is null
     */
    public static PostgresTaskQueue taskQueue(ConnectionFactory factory, LockOptions options) {
        return taskQueue(factory, PostgresLockOptions.defaults(), options);
    }

    /**
     * @param factory         an r2dbc-postgresql connection factory or an r2dbc-pool {@code ConnectionPool}
     * @param postgresOptions schema, task table, sequence, channel, schema creation, pool and listener settings
     * @param options         claim time (the lease time), renewal, backoff, timeouts, clock and scheduler
     * @return a task queue over a new {@link PostgresLockBackend}; closing it closes that backend
     * @throws NullPointerException when an argument is null
     */
    public static PostgresTaskQueue taskQueue(ConnectionFactory factory, PostgresLockOptions postgresOptions,
                                              LockOptions options) {
        Objects.requireNonNull(options, "options");
        return new DefaultPostgresTaskQueue(new PostgresTaskStore(backend(factory, postgresOptions), true), options);
    }

    /**
     * A task queue sharing a backend's pool, listening connection, schema and sequence (with lock
     * clients, say); closing the queue leaves the backend open.
     *
     * @param backend the backend to share
     * @param options claim time (the lease time), renewal, backoff, timeouts, clock and scheduler
     * @return a task queue
     * @throws NullPointerException when an argument is null
     */
    public static PostgresTaskQueue taskQueue(PostgresLockBackend backend, LockOptions options) {
        Objects.requireNonNull(options, "options");
        return new DefaultPostgresTaskQueue(new PostgresTaskStore(backend, false), options);
    }
}
