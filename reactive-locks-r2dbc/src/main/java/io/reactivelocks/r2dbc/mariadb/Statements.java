package io.reactivelocks.r2dbc.mariadb;

import io.r2dbc.spi.Connection;
import io.r2dbc.spi.Row;
import io.r2dbc.spi.RowMetadata;
import io.r2dbc.spi.Statement;
import java.nio.charset.StandardCharsets;
import java.util.function.BiFunction;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Running one statement on a connection the caller holds, and reading its columns: what every part of
 * the MariaDB store shares. Every method is lazy; nothing blocks.
 */
final class Statements {

    private Statements() {
    }

    static <T> Flux<T> rows(Connection c, String sql, Consumer<Statement> binder, BiFunction<Row, RowMetadata, T> mapper) {
        return Flux.defer(() -> {
            Statement st = c.createStatement(sql);
            binder.accept(st);
            return Flux.from(st.execute()).concatMap(r -> r.map(mapper));
        });
    }

    /** The first row of a statement's result, once the whole result was read. */
    static <T> Mono<T> first(Connection c, String sql, Consumer<Statement> binder, BiFunction<Row, RowMetadata, T> mapper) {
        return rows(c, sql, binder, mapper).collectList().flatMap(all -> all.isEmpty() ? Mono.empty() : Mono.just(all.get(0)));
    }

    /** Runs one statement and answers the number of rows it changed (found rows, with the driver's defaults). */
    static Mono<Long> update(Connection c, String sql, Consumer<Statement> binder) {
        return Flux.defer(() -> {
            Statement st = c.createStatement(sql);
            binder.accept(st);
            return Flux.from(st.execute()).concatMap(r -> r.getRowsUpdated());
        }).reduce(0L, Long::sum);
    }

    static void bindText(Statement st, int index, @Nullable String value) {
        if (value == null) {
            st.bindNull(index, String.class);
        } else {
            st.bind(index, value);
        }
    }

    /** @return a binary or text column as bytes */
    static byte[] bytes(Row row, String column) {
        Object v = row.get(column);
        if (v instanceof byte[] b) {
            return b;
        }
        if (v instanceof java.nio.ByteBuffer bb) {
            byte[] b = new byte[bb.remaining()];
            bb.duplicate().get(b);
            return b;
        }
        return String.valueOf(v).getBytes(StandardCharsets.UTF_8);
    }

    /** @return a column in stored form, decoded */
    static String text(Row row, String column) {
        return StoredText.decode(bytes(row, column));
    }

    static long number(Row row, String column) {
        Object v = row.get(column);
        if (v instanceof Number num) {
            return num.longValue();
        }
        if (v instanceof Boolean b) {
            return b ? 1 : 0;
        }
        return v == null ? 0 : Long.parseLong(String.valueOf(v));
    }
}
