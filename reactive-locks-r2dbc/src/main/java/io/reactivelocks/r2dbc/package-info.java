/**
 * What the SQL stores of this module share whatever their dialect: for now the {@link SchemaMode}
 * of the MariaDB store (the PostgreSQL store keeps its own {@code postgresql.SchemaMode}, with the same
 * three values). Each dialect lives in a package of its own ({@code .postgresql}, {@code .mariadb}).
 */
@NullMarked
package io.reactivelocks.r2dbc;

import org.jspecify.annotations.NullMarked;
