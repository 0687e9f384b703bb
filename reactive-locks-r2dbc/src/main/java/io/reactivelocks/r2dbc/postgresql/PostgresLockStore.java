package io.reactivelocks.r2dbc.postgresql;

import io.reactivelocks.LockOptions;
import io.reactivelocks.LockStore;

/**
 * The {@link LockStore} session of PostgreSQL, with one extra: its task queue is a
 * {@link PostgresTaskQueue}, which adds {@link PostgresTaskQueue#migrate()}. Made by
 * {@link PostgresLocks#connect(io.r2dbc.spi.ConnectionFactory, PostgresLockOptions)}; everything else
 * is core's {@link LockStore}.
 */
public interface PostgresLockStore extends LockStore {

    /**
     * A task queue over the session's pool and {@code LISTEN} connection; closing it leaves them
     * open, closing the session closes it.
     *
     * @param options the claims' lease time, renewal, waiting and request timeout
     * @return a task queue
     * @throws NullPointerException  when {@code options} is null
     * @throws IllegalStateException when the session is closed
     */
    @Override
    PostgresTaskQueue taskQueue(LockOptions options);
}
