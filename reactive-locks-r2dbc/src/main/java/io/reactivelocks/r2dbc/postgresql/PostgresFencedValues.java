package io.reactivelocks.r2dbc.postgresql;

import io.r2dbc.spi.Statement;
import io.reactivelocks.fencing.FencedValue;
import io.reactivelocks.fencing.FencedValues;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import reactor.core.publisher.Mono;

/**
 * Fenced values in a PostgreSQL table ({@code <schema>.<lock table>_fenced_values}, created on
 * first use as {@link PostgresLockOptions#schemaMode()} says; see
 * {@code fenced_values_schema.sql}): one row per key holding the value (UTF-8 bytes) beside its
 * fence. A write is one upsert whose {@code WHERE fence <= token} applies
 * {@link io.reactivelocks.fencing.Fencing#admits} under the row lock, so check and write are atomic.
 * Keys and values are bind parameters. Uses the pool of its {@link PostgresLockBackend}, which
 * {@link #close()} closes.
 */
final class PostgresFencedValues implements FencedValues {

    private static final Duration FOREVER = Duration.ofMillis(Long.MAX_VALUE);

    private final PostgresLockBackend backend;
    private final String table;
    private final String schemaSql;
    private final String checkSql;
    private final String writeSql;
    private final String readSql;
    private final Mono<Void> schemaReady;

    PostgresFencedValues(PostgresLockBackend backend) {
        this.backend = Objects.requireNonNull(backend, "backend");
        Map<String, String> names = names(backend.options());
        this.table = names.get("fenced_table");
        this.schemaSql = SqlScripts.render("fenced_values_schema.sql", names, true);
        this.checkSql = SqlScripts.render("fenced_values_check.sql", names, false);
        this.writeSql = SqlScripts.render("fenced_values_write.sql", names, false);
        this.readSql = SqlScripts.render("fenced_values_read.sql", names, false);
        ExpectedSchema expected = ExpectedSchema.of(schemaSql);
        this.schemaReady = Mono.defer(() -> backend.firstUse("fenced values", expected, ensureTable()))
                .cache(v -> FOREVER, e -> Duration.ZERO, () -> FOREVER);
    }

    /**
     * @param o the schema and lock table (the fenced-values table's name derives from it)
     * @return the placeholder values of these scripts
     */
    static Map<String, String> names(PostgresLockOptions o) {
        String tableName = SqlIdentifiers.derived(o.table(), "_fenced_values");
        Map<String, String> names = new HashMap<>();
        names.put("schema", SqlIdentifiers.quote(o.schema()));
        names.put("schema_name", o.schema());
        names.put("fenced_table", SqlIdentifiers.qualified(o.schema(), tableName));
        names.put("fenced_pkey", SqlIdentifiers.quote(SqlIdentifiers.derived(tableName, "_pkey")));
        return names;
    }

    private Mono<Void> ensureTable() {
        return backend.query(checkSql, st -> st.bind(0, table), (row, md) -> Boolean.TRUE.equals(row.get("ready", Boolean.class)))
                .next()
                .defaultIfEmpty(false)
                .flatMap(ready -> ready ? Mono.<Void>empty() : backend.runScript(schemaSql));
    }

    private <T> Mono<T> ready(Mono<T> work) {
        return schemaReady.then(work);
    }

    @Override
    public Mono<Boolean> write(String key, long token, String value) {
        io.reactivelocks.LockNames.check(key, "key");
        Objects.requireNonNull(value, "value");
        return upsert(key, token, value, "fenced write");
    }

    @Override
    public Mono<Boolean> delete(String key, long token) {
        io.reactivelocks.LockNames.check(key, "key");
        return upsert(key, token, null, "fenced delete");
    }

    private Mono<Boolean> upsert(String key, long token, String value, String operation) {
        return ready(Mono.defer(() -> {
            String stored = TextEscapes.encode(key);
            byte[] bytes = value == null ? null : value.getBytes(StandardCharsets.UTF_8);
            return PostgresLockBackend.firstOfAll(backend.query(writeSql, st -> bindWrite(st, stored, bytes, token),
                    (row, md) -> Boolean.TRUE));
        })).defaultIfEmpty(false).onErrorMap(e -> PostgresErrors.map(key, operation, e));
    }

    private static void bindWrite(Statement st, String key, byte[] value, long token) {
        st.bind(0, key);
        if (value == null) {
            st.bindNull(1, byte[].class);
        } else {
            st.bind(1, value);
        }
        st.bind(2, token);
    }

    @Override
    public Mono<FencedValue> read(String key) {
        io.reactivelocks.LockNames.check(key, "key");
        return ready(Mono.defer(() -> PostgresLockBackend.firstOfAll(backend.query(readSql,
                        st -> st.bind(0, TextEscapes.encode(key)),
                        (row, md) -> {
                            byte[] v = row.get("value", byte[].class);
                            return v == null ? Optional.<FencedValue>empty()
                                    : Optional.of(new FencedValue(new String(v, StandardCharsets.UTF_8), row.get("fence", Long.class)));
                        }))))
                .flatMap(Mono::justOrEmpty)
                .onErrorMap(e -> PostgresErrors.map(key, "fenced read", e));
    }

    @Override
    public Mono<Void> close() {
        return backend.close();
    }

    @Override
    public String toString() {
        return "PostgresFencedValues{" + table + "}";
    }
}
