package io.reactivelocks.r2dbc.mariadb;

import io.r2dbc.spi.Connection;
import java.util.List;
import java.util.Map;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The MariaDB store's schema steps: what the first use of a concept does about its tables and
 * sequence under {@link MariaDbLockOptions#schemaMode()} — create what is missing (checked in
 * {@code information_schema.TABLES}), check that nothing is, or nothing — and the creation itself,
 * one statement at a time on one connection, serialized between processes by {@code GET_LOCK}.
 */
final class SchemaSteps {

    private static final String SCHEMA_LOCK = "reactive_locks_schema";

    private final MariaDbLockBackend backend;

    SchemaSteps(MariaDbLockBackend backend) {
        this.backend = backend;
    }

    /**
     * The first-use step of one concept: create what is missing, check that nothing is, or nothing.
     *
     * @param concept    the concept, for messages
     * @param objects    the tables and sequences it needs
     * @param statements the statements that create them
     * @return the step
     */
    Mono<Void> firstUse(String concept, List<String> objects, List<String> statements) {
        return switch (backend.options().schemaMode()) {
            case CREATE -> existing(objects).flatMap(found -> found.containsAll(objects) ? Mono.empty() : run(statements));
            case VALIDATE -> check(objects, concept);
            case NONE -> Mono.empty();
        };
    }

    /** @return a step that errors with a {@link MariaDbSchemaException} naming the missing objects */
    Mono<Void> check(List<String> objects, String concept) {
        return existing(objects).flatMap(found -> {
            List<String> missing = objects.stream().filter(o -> !found.contains(o)).toList();
            return missing.isEmpty() ? Mono.empty() : Mono.error(MariaDbSchemaException.missing(concept, backend.options().database(), missing));
        });
    }

    private Mono<List<String>> existing(List<String> objects) {
        String sql = MariaDbSql.render("schema_check.sql", Map.of("objects", MariaDbSql.marks(objects.size())));
        return backend.query(sql, st -> {
            if (backend.options().database() == null) {
                st.bindNull(0, String.class);
            } else {
                st.bind(0, backend.options().database());
            }
            for (int i = 0; i < objects.size(); i++) {
                st.bind(i + 1, objects.get(i));
            }
        }, (row, md) -> Statements.text(row, "name")).collectList();
    }

    /**
     * Runs schema statements on one connection, serialized between processes by {@code GET_LOCK} on a
     * name of the database. The lock belongs to the connection, which goes back to the pool: it is
     * released on every end — completion, error and cancel (a request timeout).
     */
    Mono<Void> run(List<String> statements) {
        return Mono.usingWhen(backend.connections(),
                c -> Statements.first(c, "SELECT GET_LOCK(CONCAT(?, COALESCE(?, DATABASE())), 10) AS got", this::bindLock,
                                (row, md) -> Statements.number(row, "got"))
                        .thenMany(Flux.fromIterable(statements).concatMap(s -> Statements.update(c, s, st -> { })))
                        .then(),
                c -> unlock(c).then(Mono.defer(() -> Mono.from(c.close()))),
                (c, e) -> unlock(c).then(Mono.defer(() -> Mono.from(c.close()))),
                c -> unlock(c).then(Mono.defer(() -> Mono.from(c.close()))));
    }

    private Mono<Void> unlock(Connection c) {
        return Statements.first(c, "SELECT RELEASE_LOCK(CONCAT(?, COALESCE(?, DATABASE()))) AS released", this::bindLock,
                        (row, md) -> 1L)
                .then()
                .onErrorResume(e -> Mono.empty());
    }

    private void bindLock(io.r2dbc.spi.Statement st) {
        st.bind(0, SCHEMA_LOCK + ":");
        if (backend.options().database() == null) {
            st.bindNull(1, String.class);
        } else {
            st.bind(1, backend.options().database());
        }
    }
}
