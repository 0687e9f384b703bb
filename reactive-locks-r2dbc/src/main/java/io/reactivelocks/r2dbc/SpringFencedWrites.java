package io.reactivelocks.r2dbc;

import io.r2dbc.spi.Connection;
import java.util.Objects;
import java.util.function.Function;
import org.reactivestreams.Publisher;
import org.springframework.r2dbc.core.DatabaseClient;
import reactor.core.publisher.Flux;

/**
 * {@link FencedWrites} for Spring applications (plain Spring R2DBC or Spring Data R2DBC
 * repositories): the statements run on the connection Spring's {@link DatabaseClient} hands out,
 * so a fenced write inside a reactive transaction ({@code @Transactional} with an
 * {@code R2dbcTransactionManager}, or a {@code TransactionalOperator}) is part of it — committed
 * with the repository's other writes, or rolled back with them; a {@link io.reactivelocks.fencing.StaleTokenException}
 * is a runtime exception, so it rolls the transaction back by default.
 *
 * <pre>{@code
 * FencedWrites accounts = SpringFencedWrites.of(databaseClient, "accounts", "id");
 * }</pre>
 *
 * <p>Needs {@code org.springframework:spring-r2dbc} on the class path (an optional dependency of this
 * module; Spring Boot's R2DBC starter brings it).
 */
public final class SpringFencedWrites {

    private SpringFencedWrites() {
    }

    /**
     * Fenced writes on a table through a {@code DatabaseClient}, in the dialect of its connection
     * factory's driver ({@link SqlDialect#of}).
     *
     * @param client    the application's {@code DatabaseClient}
     * @param table     the table; an SQL identifier
     * @param keyColumn the column identifying a row; an SQL identifier
     * @return fenced writes on {@code table} with the fence in column {@code fence}
     * @throws NullPointerException     when an argument is null
     * @throws IllegalArgumentException when a name is not an SQL identifier, or the driver's dialect is not known
     */
    public static FencedWrites of(DatabaseClient client, String table, String keyColumn) {
        Objects.requireNonNull(client, "client");
        return of(client, SqlDialect.of(client.getConnectionFactory()), table, keyColumn);
    }

    /**
     * Fenced writes on a table through a {@code DatabaseClient}, in a dialect named explicitly.
     *
     * @param client    the application's {@code DatabaseClient}
     * @param dialect   the SQL dialect of its database
     * @param table     the table; an SQL identifier
     * @param keyColumn the column identifying a row; an SQL identifier
     * @return fenced writes on {@code table} with the fence in column {@code fence}
     * @throws NullPointerException     when an argument is null
     * @throws IllegalArgumentException when a name is not an SQL identifier
     */
    public static FencedWrites of(DatabaseClient client, SqlDialect dialect, String table, String keyColumn) {
        Objects.requireNonNull(client, "client");
        return FencedWrites.of(new ConnectionSource() {
            @Override
            public <T> Flux<T> withConnection(Function<Connection, ? extends Publisher<T>> work) {
                return client.inConnectionMany(c -> Flux.from(work.apply(c)));
            }

            @Override
            public String toString() {
                return client.toString();
            }
        }, dialect, table, keyColumn);
    }
}
