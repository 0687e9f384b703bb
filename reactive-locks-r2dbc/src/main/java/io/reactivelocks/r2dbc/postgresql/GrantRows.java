package io.reactivelocks.r2dbc.postgresql;

import io.reactivelocks.spi.RenewOutcome;
import io.reactivelocks.spi.RenewRequest;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;
import java.util.stream.Collectors;
import reactor.core.publisher.Mono;

/**
 * Renewal and release of the rows of a concept table whose rows are {@code (name, owner, token,
 * expires_at, ...)} (semaphore permits, read-write lock grants): {@code semaphore_renew.sql} and
 * {@code semaphore_release.sql} on that table, a release announced with {@code NOTIFY} under the
 * concept's listener key.
 */
final class GrantRows {

    private final PostgresLockBackend backend;
    private final ConceptSchema schema;
    private final String concept;
    private final UnaryOperator<String> key;
    private final String renewSql;
    private final String releaseSql;

    /**
     * @param backend the pool and channel
     * @param schema  the concept's table (checked on first use)
     * @param concept the concept's name in error messages
     * @param names   the placeholder values; {@code permit_table} names the table
     * @param key     the listener key of a stored name
     */
    GrantRows(PostgresLockBackend backend, ConceptSchema schema, String concept, Map<String, String> names, UnaryOperator<String> key) {
        this.backend = backend;
        this.schema = schema;
        this.concept = concept;
        this.key = key;
        this.renewSql = SqlScripts.render("semaphore_renew.sql", names, false);
        this.releaseSql = SqlScripts.render("semaphore_release.sql", names, false);
    }

    /**
     * One statement for the whole batch ({@code semaphore_renew.sql}, the leases passed as arrays and
     * joined with {@code unnest}), as the lock's renewal.
     *
     * @param batch the grants to renew, owner- and token-checked
     * @return one outcome per request, in order
     */
    Mono<List<RenewOutcome>> renew(List<RenewRequest> batch) {
        return Mono.defer(() -> {
            int n = batch.size();
            if (n == 0) {
                return Mono.just(List.<RenewOutcome>of());
            }
            RenewArrays arrays = RenewArrays.of(batch);
            return schema.ready(backend.query(renewSql, arrays::bind, (row, md) -> RenewArrays.renewed(row))
                            .collect(Collectors.toSet()))
                    .map(arrays::outcomes)
                    .onErrorMap(e -> PostgresErrors.map(n == 1 ? batch.get(0).lock().name() : null, concept + " renewal", e));
        });
    }

    /**
     * @param name  the name
     * @param owner the owner id
     * @return whether the owner's row was there and is now deleted (and the release announced)
     */
    Mono<Boolean> release(String name, String owner) {
        return schema.ready(Mono.defer(() -> {
            String stored = TextEscapes.encode(name);
            return PostgresLockBackend.firstOfAll(backend.query(releaseSql,
                    st -> st.bind(0, stored).bind(1, TextEscapes.encode(owner)).bind(2, backend.options().channel())
                            .bind(3, "R 0 -1 " + key.apply(stored)),
                    (row, md) -> Boolean.TRUE));
        })).defaultIfEmpty(false).onErrorMap(e -> PostgresErrors.map(name, concept + " release", e));
    }
}
