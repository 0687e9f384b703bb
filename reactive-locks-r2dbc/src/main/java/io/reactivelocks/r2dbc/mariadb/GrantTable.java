package io.reactivelocks.r2dbc.mariadb;

import io.r2dbc.spi.Connection;
import io.reactivelocks.r2dbc.internal.OutstandingRows;
import io.reactivelocks.spi.LockEvent;
import io.reactivelocks.spi.RenewOutcome;
import io.reactivelocks.spi.RenewRequest;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * What the concepts with a table of grants {@code (name, owner, token, expires_at)} share (semaphore
 * permits, read-write grants): their table's first-use step, owner- and token-checked renewal and
 * release, and a {@link NamePoller} of their own over the table (a grant that went or came changes a
 * name's fingerprint) plus at-once wake-ups for releases through this store.
 */
final class GrantTable {

    private static final Duration FOREVER = Duration.ofMillis(Long.MAX_VALUE);
    private static final Duration CLOSE_SWEEP_TIMEOUT = Duration.ofSeconds(2);

    private final MariaDbLockBackend backend;
    private final String concept;
    private final String table;
    private final Mono<Void> ready;
    private final RenewBatch renewals;
    private final String releaseSql;
    private final NamePoller poller;
    private final String kind;
    /** Rows this store's owners may have (grants, intents), deleted owner-checked on close. */
    private final OutstandingRows outstanding = new OutstandingRows();

    /**
     * @param backend    whose pool, options and first-use mode to use
     * @param concept    the concept, for messages (e.g. "semaphore")
     * @param kind       the concept's kind of revocation requests ('s' semaphore, 'r' read-write lock)
     * @param tableName  the table's unquoted name
     * @param schema     the script that creates the table (and the sequence), a resource next to this class
     * @param names      the placeholder values of the concept's scripts; {@code grant_table} is added
     */
    GrantTable(MariaDbLockBackend backend, String concept, String kind, String tableName, String schema, Map<String, String> names) {
        this.backend = backend;
        this.concept = concept;
        this.table = names.get("grant_table");
        List<String> statements = MariaDbSql.statements(schema, names);
        this.ready = Mono.defer(() -> backend.firstUse(concept, List.of(tableName, backend.options().sequence(),
                        MariaDbLockBackend.revocationTable(backend.options())), statements))
                .cache(v -> FOREVER, e -> Duration.ZERO, () -> FOREVER);
        this.renewals = new RenewBatch(MariaDbSql.render("grant_renew.sql", names));
        this.releaseSql = MariaDbSql.render("grant_release.sql", names);
        this.kind = kind;
        this.poller = new NamePoller(backend.options().pollInterval(), backend.options().scheduler(), this::poll,
                backend.revocationReader(kind));
    }

    /** @return the table, qualified and quoted */
    String table() {
        return table;
    }

    /** Prefixes {@code work} with the table's first-use step. */
    <T> Mono<T> ready(Mono<T> work) {
        return ready.then(work);
    }

    Mono<List<RenewOutcome>> renew(List<RenewRequest> batch) {
        return Mono.defer(() -> {
            if (batch.isEmpty()) {
                return Mono.just(List.<RenewOutcome>of());
            }
            return ready(Mono.usingWhen(backend.connections(), c -> renewals.renew(c, batch), Connection::close));
        }).onErrorMap(e -> MariaDbErrors.map(batch.size() == 1 ? batch.get(0).lock().name() : null, concept + " renewal", e));
    }

    /** Notes owners about to be granted: until answered, they may leave rows behind. */
    void asking(String name, List<String> owners) {
        for (String o : owners) {
            outstanding.asking(name, o);
        }
    }

    /**
     * Notes an answer.
     *
     * @param left whether the owners have rows now (granted, or a waiting writer's intent)
     */
    void answered(String name, List<String> owners, boolean left) {
        for (String o : owners) {
            outstanding.answered(name, o, left);
        }
    }

    Mono<Boolean> release(String name, String owner) {
        return Mono.defer(() -> ready(Mono.usingWhen(backend.connections(),
                        c -> Statements.update(c, releaseSql, st -> st.bind(0, StoredText.encode(name)).bind(1, owner)),
                        Connection::close))
                .map(deleted -> deleted > 0)
                .doOnNext(deleted -> {
                    outstanding.released(name, owner, deleted);
                    if (deleted) {
                        poller.announce(new LockEvent.Released(name, owner, false));
                    }
                }))
                .onErrorMap(e -> MariaDbErrors.map(name, concept + " release", e));
    }

    /** Tells this store's waiters and observers at once of a change made through it. */
    void announce(LockEvent event) {
        poller.announce(event);
    }

    /** A revocation request to the holder of a grant, read by its poller. */
    Mono<Void> revoke(String name, String owner, String reason) {
        return ready(backend.revoke(name, kind, owner, reason)).onErrorMap(e -> MariaDbErrors.map(name, concept + " revocation request", e));
    }

    Flux<LockEvent> events(String name) {
        return poller.events(name);
    }

    /**
     * Stops the poller and deletes (owner-checked) what this store's owners may have left — grants
     * lost and never released, grants whose answer never came; bounded, errors ignored (such rows expire).
     */
    Mono<Void> close() {
        poller.close();
        List<OutstandingRows.Row> left = outstanding.drain();
        return left.isEmpty() ? Mono.empty() : Mono.usingWhen(backend.connections(), c -> Flux.fromIterable(left)
                        .concatMap(k -> Statements.update(c, releaseSql, st -> st.bind(0, StoredText.encode(k.name())).bind(1, k.owner())))
                        .then(), Connection::close)
                .timeout(CLOSE_SWEEP_TIMEOUT, backend.options().scheduler())
                .onErrorResume(e -> Mono.empty());
    }

    private Flux<Map.Entry<String, NamePoller.Seen>> poll(List<String> stored) {
        String sql = MariaDbSql.render("grant_poll.sql", Map.of("grant_table", table, "names", MariaDbSql.marks(stored.size())));
        return backend.query(sql, st -> {
            for (int i = 0; i < stored.size(); i++) {
                st.bind(i, stored.get(i));
            }
        }, (row, md) -> Map.entry(new String(Statements.bytes(row, "name"), StandardCharsets.UTF_8),
                new NamePoller.Seen(new String(Statements.bytes(row, "owner"), StandardCharsets.UTF_8),
                        Statements.number(row, "token"), true)));
    }
}
