package io.reactivelocks.r2dbc.postgresql;

import io.reactivelocks.spi.LockEvent;
import io.reactivelocks.spi.RenewOutcome;
import io.reactivelocks.spi.RenewRequest;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.UnaryOperator;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * What the PostgreSQL stores over a table of grants {@code (name, owner, token, expires_at, ...)}
 * share (semaphores, read-write locks): the table and its grant function checked or created on
 * first use, renewal and release ({@link GrantRows}), and revocation requests and events under the
 * concept's listener key. A subclass brings its statements and the reading of their rows. Uses the
 * pool and listening connection of its {@link PostgresLockBackend}, which {@link #close()} closes
 * when the store owns it.
 */
abstract class PostgresGrantStore {

    final PostgresLockBackend backend;
    final ConceptSchema schema;
    private final boolean ownsBackend;
    private final GrantRows grantRows;
    private final UnaryOperator<String> key;

    /**
     * @param backend     whose pool, listener, schema, table name and sequence to use
     * @param ownsBackend whether {@link #close()} closes the backend (not when it is shared)
     * @param concept     the concept's name in messages (e.g. "semaphore")
     * @param table       the placeholder naming the grants table ({@code permit_table}, {@code rw_table})
     * @param schemaSql   the script that creates the table and the grant function, a resource next to this class
     * @param names       the placeholder values of the concept's scripts
     * @param key         the listener key of a stored name
     */
    PostgresGrantStore(PostgresLockBackend backend, boolean ownsBackend, String concept, String table, String schemaSql,
            Map<String, String> names, UnaryOperator<String> key) {
        this.backend = Objects.requireNonNull(backend, "backend");
        this.ownsBackend = ownsBackend;
        this.schema = new ConceptSchema(backend, concept, names.get(table), names.get("grant_fn"),
                SqlScripts.render(schemaSql, names, true), SqlScripts.render("semaphore_check.sql", names, false));
        this.grantRows = new GrantRows(backend, schema, concept, names, key);
        this.key = key;
    }

    /**
     * The placeholder values every grants table's scripts use: schema, sequence, table, its primary
     * key, its grant function and the watcher names.
     *
     * @param o       the schema, lock table (the grants table's name derives from it) and sequence
     * @param suffix  the grants table's suffix to the lock table's name ({@code _permits}, {@code _rw})
     * @param table   the placeholder of the table
     * @param pkey    the placeholder of its primary key
     * @return the values, a mutable map
     */
    static Map<String, String> grantNames(PostgresLockOptions o, String suffix, String table, String pkey) {
        String tableName = SqlIdentifiers.derived(o.table(), suffix);
        Map<String, String> names = new HashMap<>();
        names.put("schema", SqlIdentifiers.quote(o.schema()));
        names.put("schema_name", o.schema());
        names.put("sequence", SqlIdentifiers.qualified(o.schema(), o.sequence()));
        names.put(table, SqlIdentifiers.qualified(o.schema(), tableName));
        names.put(pkey, SqlIdentifiers.quote(SqlIdentifiers.derived(tableName, "_pkey")));
        names.put("grant_fn", SqlIdentifiers.qualified(o.schema(), SqlIdentifiers.derived(tableName, "_grant")));
        PostgresLockBackend.watcherNames(o, names);
        return names;
    }

    /**
     * Creates the grants table and the grant function if missing; idempotent.
     *
     * @return a {@code Mono} that completes when they exist
     */
    Mono<Void> migrate() {
        return schema.migrate();
    }

    /** @return the listener's dispatch key of a name as the caller gave it */
    final String dispatchKey(String name) {
        return key.apply(TextEscapes.encode(name));
    }

    /**
     * @return the backend's name, {@code postgresql}
     */
    public String name() {
        return "postgresql";
    }

    /**
     * @param batch the grants to renew, each owner- and token-checked
     * @return one outcome per request, in order
     */
    public Mono<List<RenewOutcome>> renew(List<RenewRequest> batch) {
        return grantRows.renew(batch);
    }

    /**
     * @param name  the name
     * @param owner the owner whose grant to delete (owner-checked), announced with {@code NOTIFY}
     * @return whether a grant was deleted
     */
    public Mono<Boolean> release(String name, String owner) {
        return grantRows.release(name, owner);
    }

    /**
     * A revocation request: a {@code NOTIFY} under the name's key, as its releases.
     *
     * @param name   the name
     * @param owner  the holder asked to give up
     * @param reason why
     * @return a {@code Mono} that completes when the notification is sent
     */
    public Mono<Void> revoke(String name, String owner, String reason) {
        return backend.notifyRevocation(name, dispatchKey(name), owner, reason);
    }

    /**
     * @param name the name
     * @return the name's events on the backend's listening connection, its grants included (the subscription
     *         registers the name's observer key as well)
     */
    public Flux<LockEvent> events(String name) {
        return backend.semaphoreEvents(name, dispatchKey(name), true);
    }

    /**
     * @param name the name
     * @return the name's releases (and revocations) on the backend's listening connection, without its
     *         grants: the grant function announces those only while someone observes ({@link #events})
     */
    public Flux<LockEvent> wakeUps(String name) {
        return backend.semaphoreEvents(name, dispatchKey(name), false);
    }

    /**
     * Closes the backend when this store owns it.
     *
     * @return a {@code Mono} that completes when done
     */
    public Mono<Void> close() {
        return ownsBackend ? backend.close() : Mono.empty();
    }

    @Override
    public String toString() {
        return getClass().getSimpleName() + "{" + schema.table() + "}";
    }
}
