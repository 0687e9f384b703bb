package io.reactivelocks.r2dbc.mariadb;

import io.reactivelocks.LockNames;
import io.reactivelocks.fencing.FencedValue;
import io.reactivelocks.fencing.FencedValues;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.util.retry.Retry;

/**
 * Fenced values on MariaDB: one row per key {@code (k, value, fence)} in
 * {@code <lock table>_fenced_values}. A write or delete is one autocommit statement
 * ({@code INSERT … ON DUPLICATE KEY UPDATE … RETURNING fence}) that holds the key's row lock and writes
 * only when the token is at least the fence (equal: the same grant again); a delete keeps the fence. Uses the pool of its {@link MariaDbLockBackend},
 * which it does not close.
 */
final class MariaDbFencedValues implements FencedValues {

    private static final Duration FOREVER = Duration.ofMillis(Long.MAX_VALUE);
    private static final int ROLLED_BACK_RETRIES = 3;

    private final MariaDbLockBackend backend;
    private final String table;
    private final Mono<Void> ready;
    private final String writeSql;
    private final String readSql;

    MariaDbFencedValues(MariaDbLockBackend backend) {
        this.backend = Objects.requireNonNull(backend, "backend");
        MariaDbLockOptions o = backend.options();
        String tableName = MariaDbLockBackend.derived(o.table(), "_fenced_values");
        Map<String, String> names = new HashMap<>();
        names.put("fenced_table", MariaDbSql.qualified(o.database(), tableName));
        this.table = names.get("fenced_table");
        List<String> statements = MariaDbSql.statements("fenced_values_schema.sql", names);
        this.ready = Mono.defer(() -> backend.firstUse("fenced values", List.of(tableName), statements))
                .cache(v -> FOREVER, e -> Duration.ZERO, () -> FOREVER);
        this.writeSql = MariaDbSql.render("fenced_values_write.sql", names);
        this.readSql = MariaDbSql.render("fenced_values_read.sql", names);
    }

    @Override
    public Mono<Boolean> write(String key, long token, String value) {
        LockNames.check(key, "key");
        Objects.requireNonNull(value, "value");
        return upsert(key, token, value, "fenced write");
    }

    @Override
    public Mono<Boolean> delete(String key, long token) {
        LockNames.check(key, "key");
        return upsert(key, token, null, "fenced delete");
    }

    private Mono<Boolean> upsert(String key, long token, @Nullable String value, String operation) {
        return Mono.defer(() -> {
            String k = StoredText.encode(key);
            byte[] bytes = value == null ? null : value.getBytes(StandardCharsets.UTF_8);
            return ready.then(backend.query(writeSql, st -> {
                        st.bind(0, k);
                        if (bytes == null) {
                            st.bindNull(1, byte[].class);
                        } else {
                            st.bind(1, bytes);
                        }
                        st.bind(2, token);
                    }, (row, md) -> Statements.number(row, "fence") == token).next())
                    .retryWhen(Retry.max(ROLLED_BACK_RETRIES).filter(MariaDbErrors::rolledBack));
        }).onErrorMap(e -> MariaDbErrors.map(key, operation, e));
    }

    @Override
    public Mono<FencedValue> read(String key) {
        LockNames.check(key, "key");
        return Mono.defer(() -> ready.then(backend.query(readSql, st -> st.bind(0, StoredText.encode(key)), (row, md) -> {
                    Object v = row.get("value");
                    return v == null ? Optional.<FencedValue>empty() : Optional.of(new FencedValue(
                            new String(Statements.bytes(row, "value"), StandardCharsets.UTF_8),
                            Statements.number(row, "fence")));
                }).next()))
                .flatMap(Mono::justOrEmpty)
                .onErrorMap(e -> MariaDbErrors.map(key, "fenced read", e));
    }

    @Override
    public Mono<Void> close() {
        return Mono.empty();
    }

    @Override
    public String toString() {
        return "MariaDbFencedValues{" + table + "}";
    }
}
