package io.reactivelocks.r2dbc.mariadb;

import io.r2dbc.spi.Connection;
import io.reactivelocks.spi.LockEvent;
import io.reactivelocks.spi.RenewOutcome;
import io.reactivelocks.spi.RenewRequest;
import io.reactivelocks.spi.semaphore.PermitGrant;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Function;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.util.retry.Retry;

/**
 * What the MariaDB stores over a {@link GrantTable} share (semaphores, read-write locks): the
 * table's first-use step, the grant transaction's retries and bookkeeping, and renewal, release,
 * revocation, events and close, all on the table. A subclass brings its statements and the grant's
 * decision. Uses the pool of its {@link MariaDbLockBackend}, which it does not close.
 */
abstract class MariaDbGrantStore {

    /** How often a grant transaction the server rolled back (deadlock, lock wait) is tried again. */
    private static final int ROLLED_BACK_RETRIES = 3;

    final MariaDbLockBackend backend;
    final GrantTable grants;

    /**
     * @param backend   whose pool, options and first-use mode to use
     * @param concept   the concept, for messages (e.g. "semaphore")
     * @param kind      the concept's kind of revocation requests ('s' semaphore, 'r' read-write lock)
     * @param tableName the grants table's unquoted name
     * @param schema    the script that creates the table, a resource next to this class
     * @param names     the placeholder values of the concept's scripts, {@code grant_table} among them
     */
    MariaDbGrantStore(MariaDbLockBackend backend, String concept, String kind, String tableName, String schema,
                      Map<String, String> names) {
        this.backend = Objects.requireNonNull(backend, "backend");
        this.grants = new GrantTable(backend, concept, kind, tableName, schema, names);
    }

    /**
     * One grant, tried again when the server rolls its transaction back, with the owners noted as
     * asking until it answers and a grant announced to this store's waiters and observers. The grant
     * is one statement that runs its own transaction (an anonymous compound statement, which also
     * rolls back whatever fails inside it), so it is sent on a plain connection.
     *
     * @param name      the name, as the caller gave it
     * @param owners    the owners asking (the first is announced)
     * @param leavesRow whether the owners keep a row even when not granted (a waiting writer's intent)
     * @param grant     the grant's statement on its connection
     * @return the answer, lazily
     */
    Mono<PermitGrant> grant(String name, List<String> owners, boolean leavesRow, Function<Connection, Mono<PermitGrant>> grant) {
        grants.asking(name, owners);
        return grants.ready(Mono.usingWhen(backend.connections(), grant, Connection::close))
                .retryWhen(Retry.max(ROLLED_BACK_RETRIES).filter(MariaDbErrors::rolledBack))
                .doOnNext(g -> {
                    grants.answered(name, owners, leavesRow || g instanceof PermitGrant.Granted);
                    if (g instanceof PermitGrant.Granted) {
                        grants.announce(new LockEvent.Acquired(name, owners.get(0), 0));
                    }
                });
    }

    /**
     * @return the backend's name, {@code mariadb}
     */
    public String name() {
        return MariaDbErrors.BACKEND;
    }

    /**
     * @param batch the grants to renew, each owner- and token-checked
     * @return one outcome per request, in order
     */
    public Mono<List<RenewOutcome>> renew(List<RenewRequest> batch) {
        return grants.renew(batch);
    }

    /**
     * @param name  the name
     * @param owner the owner whose grant to delete (owner-checked)
     * @return whether a grant was deleted
     */
    public Mono<Boolean> release(String name, String owner) {
        return grants.release(name, owner);
    }

    /**
     * A revocation request: a row the holder's poller reads (kept 10 seconds).
     *
     * @param name   the name
     * @param owner  the holder asked to give up
     * @param reason why
     * @return a {@code Mono} that completes when the request is stored
     */
    public Mono<Void> revoke(String name, String owner, String reason) {
        return grants.revoke(name, owner, reason);
    }

    /**
     * @param name the name
     * @return the name's events, from this store's poller
     */
    public Flux<LockEvent> events(String name) {
        return grants.events(name);
    }

    /**
     * Stops the poller and deletes what this store's owners may have left.
     *
     * @return a {@code Mono} that completes when done
     */
    public Mono<Void> close() {
        return Mono.defer(grants::close);
    }

    @Override
    public String toString() {
        return getClass().getSimpleName() + "{" + grants.table() + "}";
    }
}
