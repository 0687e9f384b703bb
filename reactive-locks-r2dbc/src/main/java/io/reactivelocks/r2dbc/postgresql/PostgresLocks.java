package io.reactivelocks.r2dbc.postgresql;

import io.r2dbc.spi.ConnectionFactory;
import io.reactivelocks.LockOptions;
import java.util.Objects;

/**
 * Entry point: a store session on PostgreSQL through R2DBC, which hands out every concept.
 *
 * <pre>{@code
 * ConnectionFactory db = ConnectionFactories.get("r2dbc:postgresql://app:secret@localhost:5432/app");
 * PostgresLockStore store = PostgresLocks.connect(db);
 * LockClient locks = store.locks();
 * Mono<Receipt> r = locks.withLock("order:42", lease -> charge(order, lease.token()));
 * }</pre>
 *
 * <p>{@code connect} returns at once: nothing connects before the first operation is
 * subscribed, and the tables are created on first use (see
 * {@link PostgresLockOptions#schemaMode()}; or call {@link PostgresLockBackend#migrate()} on a
 * backend built with {@link #backend} and handed to {@link #connect(PostgresLockBackend)}).
 * Closing the session releases the leases of everything it handed out, closes the listening
 * connection, and closes the pool it created — a pool passed in stays the application's.
 *
 * <p><b>A primary with streaming replicas.</b> Give {@code connect} the r2dbc-postgresql
 * multi-host URL, which connects to whichever node is primary:
 * <pre>{@code
 * ConnectionFactory db = ConnectionFactories.get("r2dbc:postgresql:failover://app:secret@db1:5432,db2:5432/app"
 *         + "?targetServerType=primary&hostRecheckTime=1s&connectTimeout=PT2S");
 * PostgresLockStore store = PostgresLocks.connect(db);
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
    public static PostgresLockStore connect(ConnectionFactory factory) {
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
    public static PostgresLockStore connect(ConnectionFactory factory, PostgresLockOptions postgresOptions) {
        Objects.requireNonNull(factory, "factory");
        Objects.requireNonNull(postgresOptions, "postgresOptions");
        return new PostgresStoreSession(PostgresLockBackend.create(factory, postgresOptions));
    }

    /**
     * A session over a backend the application built; closing the session closes the backend.
     *
     * @param backend the backend, owned by the session from now on
     * @return the session
     * @throws NullPointerException when {@code backend} is null
     */
    public static PostgresLockStore connect(PostgresLockBackend backend) {
        return new PostgresStoreSession(Objects.requireNonNull(backend, "backend"));
    }

    /**
     * @param factory         an r2dbc-postgresql connection factory or an r2dbc-pool {@code ConnectionPool}
     * @param postgresOptions tables, channel, schema creation, pool and listener settings
     * @return a new backend, for {@link #connect(PostgresLockBackend)}, {@link PostgresLockBackend#migrate()} or
     *         {@link io.reactivelocks.LockClient#create(io.reactivelocks.spi.LockBackend, LockOptions)}
     */
    public static PostgresLockBackend backend(ConnectionFactory factory, PostgresLockOptions postgresOptions) {
        return PostgresLockBackend.create(factory, postgresOptions);
    }
}
