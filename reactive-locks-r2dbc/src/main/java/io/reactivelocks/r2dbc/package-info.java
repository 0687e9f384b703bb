/**
 * What every SQL dialect of this module shares: fenced writes on the application's own rows.
 *
 * <ul>
 *   <li>{@link io.reactivelocks.r2dbc.FencedWrites} — {@code UPDATE ... WHERE fence IS NULL OR fence <= :token}
 *       on a table of the application; a refused write is a
 *       {@link io.reactivelocks.fencing.StaleTokenException}, a missing row a
 *       {@link io.reactivelocks.r2dbc.MissingRowException}.</li>
 *   <li>{@link io.reactivelocks.r2dbc.SqlDialect} — PostgreSQL or MariaDB/MySQL, named or detected from the driver.</li>
 *   <li>{@link io.reactivelocks.r2dbc.SpringFencedWrites} — the same over Spring's {@code DatabaseClient},
 *       inside the caller's transaction.</li>
 * </ul>
 *
 * <p>The lock stores themselves live in one package per dialect ({@code .postgresql}, {@code .mariadb}); the
 * {@link SchemaMode} both take is here, and the code they share without users calling it (the stored form of
 * names) is in {@code io.reactivelocks.r2dbc.internal}.
 */
@NullMarked
package io.reactivelocks.r2dbc;

import org.jspecify.annotations.NullMarked;
