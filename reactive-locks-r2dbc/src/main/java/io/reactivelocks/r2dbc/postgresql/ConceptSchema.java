package io.reactivelocks.r2dbc.postgresql;

import java.time.Duration;
import reactor.core.publisher.Mono;

/**
 * The table and grant function of a concept store (semaphore, read-write lock): created by
 * {@link #migrate()}, or once on first use as {@link PostgresLockOptions#schemaMode()} says (created:
 * a check query first, the schema script only when something is missing; validated; or neither).
 */
final class ConceptSchema {

    private static final Duration FOREVER = Duration.ofMillis(Long.MAX_VALUE);

    private final PostgresLockBackend backend;
    private final String concept;
    private final String table;
    private final String function;
    private final String schemaSql;
    private final String checkSql;
    private final Mono<Void> ready;

    /**
     * @param backend   whose pool runs the scripts
     * @param concept   the concept's name in error messages
     * @param table     the table, qualified and quoted
     * @param function  the grant function, qualified and quoted
     * @param schemaSql the idempotent schema script
     * @param checkSql  the check query ($1 table, $2 function; one row with a boolean {@code ready})
     */
    ConceptSchema(PostgresLockBackend backend, String concept, String table, String function, String schemaSql, String checkSql) {
        this.backend = backend;
        this.concept = concept;
        this.table = table;
        this.function = function;
        this.schemaSql = schemaSql;
        this.checkSql = checkSql;
        ExpectedSchema expected = ExpectedSchema.of(schemaSql);
        this.ready = Mono.defer(() -> backend.firstUse(concept, expected, ensure()))
                .cache(v -> FOREVER, e -> Duration.ZERO, () -> FOREVER);
    }

    /** @return the table, qualified and quoted */
    String table() {
        return table;
    }

    /** @return creates the lock schema (with the watchers), then this concept's table and function if missing; idempotent */
    Mono<Void> migrate() {
        return backend.migrate().then(backend.runScript(schemaSql)).onErrorMap(e -> PostgresErrors.map(null, concept + " schema migration", e));
    }

    private Mono<Void> ensure() {
        return backend.query(checkSql, st -> st.bind(0, table).bind(1, function),
                        (row, md) -> Boolean.TRUE.equals(row.get("ready", Boolean.class)))
                .next()
                .defaultIfEmpty(false)
                .flatMap(ok -> ok ? Mono.<Void>empty() : backend.runScript(schemaSql));
    }

    /**
     * @param work a statement
     * @param <T>  its result
     * @return the statement, after the first-use schema step ({@link PostgresLockOptions#schemaMode()})
     */
    <T> Mono<T> ready(Mono<T> work) {
        // the lock schema first: it has the watchers table and the notify function every grant function calls
        return backend.schemaReady().then(ready).then(work);
    }
}
