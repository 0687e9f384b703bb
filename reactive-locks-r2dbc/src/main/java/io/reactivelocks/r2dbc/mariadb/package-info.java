/**
 * The MariaDB store over R2DBC ({@code org.mariadb:r2dbc-mariadb}, an optional dependency the
 * application adds): {@link io.reactivelocks.r2dbc.mariadb.MariaDbLocks#connect} returns a core
 * {@link io.reactivelocks.LockStore} session. Grants are rows in an InnoDB table, expiry is decided by
 * the server's clock ({@code UTC_TIMESTAMP(6)}), fencing tokens come from a MariaDB {@code SEQUENCE}
 * drawn while the name's row is locked, and waiters are woken by a per-backend poller of the names
 * they wait for (MariaDB has no {@code LISTEN}/{@code NOTIFY}) and at once by releases of the same
 * backend.
 *
 * <p>The SQL lives in resources next to these classes, one statement per file; the schema is
 * {@code schema.sql}. Every public method is lazy and non-blocking.
 */
@NullMarked
package io.reactivelocks.r2dbc.mariadb;

import org.jspecify.annotations.NullMarked;
