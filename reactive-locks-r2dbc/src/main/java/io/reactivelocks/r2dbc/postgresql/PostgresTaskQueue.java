package io.reactivelocks.r2dbc.postgresql;

import io.reactivelocks.LockBackendException;
import io.reactivelocks.r2dbc.SchemaMode;
import io.reactivelocks.task.TaskQueue;
import reactor.core.publisher.Mono;

/**
 * The {@link TaskQueue} on PostgreSQL, with one extra: {@link #migrate()}. Handed out by
 * {@link PostgresLockStore#taskQueue}; everything else is core's {@link TaskQueue} (see there for the
 * semantics, and {@code task_schema.sql} for the table). Captures are one
 * {@code FOR UPDATE SKIP LOCKED} statement each, tokens come from the lock sequence, expiry is the
 * server's {@code now()}, wake-ups are {@code NOTIFY}s on the backend's channel.
 */
public interface PostgresTaskQueue extends TaskQueue {

    /**
     * Creates the schema, the sequence, the task table and its index if missing
     * ({@code task_schema.sql}): idempotent and safe from many processes at once. Needs the
     * privileges to create them; not needed when {@link PostgresLockOptions#schemaMode()}
     * is {@link SchemaMode#CREATE} (the default). On subscribe it runs once; cancel returns the connection; errors are
     * {@link LockBackendException} (not transient for missing privileges).
     *
     * @return a {@code Mono} that completes when the task table exists
     */
    Mono<Void> migrate();
}
