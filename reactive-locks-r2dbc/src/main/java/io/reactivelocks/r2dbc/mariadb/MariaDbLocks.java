package io.reactivelocks.r2dbc.mariadb;

import io.r2dbc.spi.ConnectionFactory;
import io.reactivelocks.LockStore;
import java.util.Objects;

/**
 * Entry point: a store session on MariaDB (10.6 or later: the task queue needs {@code SKIP LOCKED}, the
 * rest 10.3) through R2DBC, which hands out every
 * concept the store offers.
 *
 * <pre>{@code
 * ConnectionFactory db = ConnectionFactories.get("r2dbc:mariadb://app:secret@localhost:3306/app");
 * LockStore store = MariaDbLocks.connect(db);
 * LockClient locks = store.locks();
 * Mono<Receipt> r = locks.withLock("order:42", lease -> charge(order, lease.token()));
 * }</pre>
 *
 * <p>{@code connect} returns at once: nothing connects before the first operation is subscribed,
 * and the table and sequence are created on first use (see {@link MariaDbLockOptions#schemaMode()};
 * or call {@link MariaDbLockBackend#migrate()}). Closing the session releases the leases of
 * everything it handed out, stops its poller and closes the pool it created — a pool passed in stays
 * the application's. The driver ({@code org.mariadb:r2dbc-mariadb}) is an optional dependency of this
 * module: add it to the application.
 */
public final class MariaDbLocks {

    private MariaDbLocks() {
    }

    /**
     * @param factory an r2dbc-mariadb connection factory or an r2dbc-pool {@code ConnectionPool}
     * @return a session with {@link MariaDbLockOptions#defaults()}
     * @see #connect(ConnectionFactory, MariaDbLockOptions)
     */
    public static LockStore connect(ConnectionFactory factory) {
        return connect(factory, MariaDbLockOptions.defaults());
    }

    /**
     * A session with MariaDB over one pool (the factory when it is an r2dbc-pool
     * {@code ConnectionPool}, else one the session creates with {@link MariaDbLockOptions#poolMaxSize()})
     * and one poller. Closing the session closes every concept it handed out, then the pool it created.
     *
     * @param factory        an r2dbc-mariadb connection factory or an r2dbc-pool {@code ConnectionPool}
     * @param mariaDbOptions database, table, sequence, schema creation, pool and poll settings
     * @return the session
     * @throws NullPointerException naming the argument when one is null
     */
    public static LockStore connect(ConnectionFactory factory, MariaDbLockOptions mariaDbOptions) {
        Objects.requireNonNull(factory, "factory");
        Objects.requireNonNull(mariaDbOptions, "mariaDbOptions");
        return new MariaDbStoreSession(MariaDbLockBackend.create(factory, mariaDbOptions));
    }

    /**
     * A session over a backend the application built; closing the session closes the backend.
     *
     * @param backend the backend, owned by the session from now on
     * @return the session
     * @throws NullPointerException when {@code backend} is null
     */
    public static LockStore connect(MariaDbLockBackend backend) {
        return new MariaDbStoreSession(Objects.requireNonNull(backend, "backend"));
    }

    /**
     * @param factory        an r2dbc-mariadb connection factory or an r2dbc-pool {@code ConnectionPool}
     * @param mariaDbOptions database, table, sequence, schema creation, pool and poll settings
     * @return a new backend, for {@link #connect(MariaDbLockBackend)}, {@link MariaDbLockBackend#migrate()} or
     *         {@link io.reactivelocks.LockClient#create(io.reactivelocks.spi.LockBackend, io.reactivelocks.LockOptions)}
     */
    public static MariaDbLockBackend backend(ConnectionFactory factory, MariaDbLockOptions mariaDbOptions) {
        return MariaDbLockBackend.create(factory, mariaDbOptions);
    }
}
