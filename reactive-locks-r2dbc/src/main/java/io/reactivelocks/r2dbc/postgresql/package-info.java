/**
 * PostgreSQL backend over R2DBC: fenced leases in one table, fencing tokens from a durable
 * sequence, expiry by the server's clock, wake-ups and observation through {@code LISTEN}/{@code NOTIFY}
 * on one dedicated connection per backend, window locks and task capture. Fenced writes on the
 * application's own rows are {@link io.reactivelocks.r2dbc.FencedWrites}, shared by every dialect.
 *
 * <ul>
 *   <li>{@link io.reactivelocks.r2dbc.postgresql.PostgresLocks} — entry point: a {@link io.reactivelocks.r2dbc.postgresql.PostgresLockStore}
 *       session that hands out every concept over one pool and one {@code LISTEN} connection.</li>
 *   <li>{@link io.reactivelocks.r2dbc.postgresql.PostgresLockBackend} — the {@code LockBackend}; {@code migrate()},
 *       {@code validateSchema()}, {@code purgeExpired()}.</li>
 *   <li>{@link io.reactivelocks.r2dbc.postgresql.PostgresLockOptions} — schema and table names, channel, pool and listener settings,
 *       and the {@link io.reactivelocks.r2dbc.SchemaMode} (create, validate or leave alone the tables; a failed
 *       check or refused creation is a {@link io.reactivelocks.r2dbc.postgresql.PostgresSchemaException}).</li>
 *   <li>the session's {@code windowLocks} — the core {@code WindowLock}: at most one claim per name and period.</li>
 *   <li>the session's {@code fencedValues} — the core {@code FencedValues}: a fenced key/value table.</li>
 *   <li>{@link io.reactivelocks.r2dbc.postgresql.PostgresTaskQueue} — core's {@link io.reactivelocks.task.TaskQueue}
 *       on PostgreSQL ({@link io.reactivelocks.r2dbc.postgresql.PostgresLockStore#taskQueue}): one
 *       {@code FOR UPDATE SKIP LOCKED} statement per capture, sequence tokens, {@code NOTIFY} wake-ups;
 *       adds only {@code migrate()}.</li>
 * </ul>
 *
 * <p>The SQL lives in resources next to these classes, one statement per file; the schema is
 * {@code schema.sql}. Every public method is lazy and non-blocking.
 */
@NullMarked
package io.reactivelocks.r2dbc.postgresql;

import org.jspecify.annotations.NullMarked;
