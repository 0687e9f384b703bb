package io.reactivelocks.r2dbc.postgresql;

import io.reactivelocks.r2dbc.internal.Micros;
import io.reactivelocks.spi.Attempt;
import io.reactivelocks.spi.FairLockBackend;
import io.reactivelocks.spi.GrantRequest;
import io.reactivelocks.spi.Holder;
import io.reactivelocks.spi.LockBackend;
import io.reactivelocks.spi.WaiterLine;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * A queueing {@link LockBackend} on PostgreSQL: a fair (FIFO) lock. The held lock is a row of the
 * mutex's lock table ({@link PostgresLockBackend}: renewal, inspect, payload and notifications
 * are the mutex's); waiting owners are rows of a waiters table ({@code <lock table>_waiters}:
 * name, owner, place in line from the token sequence, deadline by the server's {@code now()}),
 * which a waiting client refreshes, so that an abandoned waiter expires instead of blocking the
 * line. One function ({@code fair_schema.sql}), serialized per name by the mutex's advisory lock,
 * drops expired waiters, enqueues or refreshes the caller and grants the head of the line when
 * the lock row is free or expired.
 *
 * <p>A waiting request answers {@link Attempt.Queued}; its turn ({@link WaiterLine}) listens on the
 * backend's notification connection and asks again on a release of the name once it counts itself
 * head (the function answers a queued waiter with its rank, so a release wakes only the new head,
 * not the line), when the holder's TTL or the head waiter's deadline passes, and at least every half
 * of the waiter deadline. A try never
 * joins the line and is busy while anyone waits. A release deletes the owner's lock row or place
 * in line and notifies, so that a cancelled waiter leaves at once.
 */
final class PostgresFairLockBackend extends FairLockBackend {

    private final PostgresLockBackend mutex;
    private final boolean owned;
    private final ConceptSchema schema;
    private final String grantSql;
    private final String releaseSql;

    /**
     * @param mutex whose pool, listener, lock table and sequence to use
     * @param owned whether {@link #close()} closes {@code mutex}
     */
    PostgresFairLockBackend(PostgresLockBackend mutex, boolean owned) {
        super(Objects.requireNonNull(mutex, "backend"), mutex::events, mutex.options().scheduler());
        this.mutex = mutex;
        this.owned = owned;
        PostgresLockOptions o = mutex.options();
        Map<String, String> names = names(o);
        this.schema = new ConceptSchema(mutex, "fair lock", names.get("waiter_table"), names.get("grant_fn"),
                SqlScripts.render("fair_schema.sql", names, true), SqlScripts.render("fair_check.sql", names, false));
        this.grantSql = SqlScripts.render("fair_grant.sql", names, false);
        this.releaseSql = SqlScripts.render("fair_release.sql", names, false);
    }

    /**
     * @param o the schema, lock table (the waiters table's name derives from it) and sequence
     * @return the placeholder values of this backend's scripts
     */
    static Map<String, String> names(PostgresLockOptions o) {
        String waiters = SqlIdentifiers.derived(o.table(), "_waiters");
        Map<String, String> names = new HashMap<>();
        names.put("schema", SqlIdentifiers.quote(o.schema()));
        names.put("schema_name", o.schema());
        names.put("sequence", SqlIdentifiers.qualified(o.schema(), o.sequence()));
        names.put("table", SqlIdentifiers.qualified(o.schema(), o.table()));
        names.put("waiter_table", SqlIdentifiers.qualified(o.schema(), waiters));
        names.put("waiter_pkey", SqlIdentifiers.quote(SqlIdentifiers.derived(waiters, "_pkey")));
        names.put("waiter_index", SqlIdentifiers.quote(SqlIdentifiers.derived(waiters, "_seq_idx")));
        names.put("grant_fn", SqlIdentifiers.qualified(o.schema(), SqlIdentifiers.derived(waiters, "_grant")));
        PostgresLockBackend.watcherNames(o, names);
        return names;
    }

    /**
     * Creates the lock schema, then the waiters table and the grant function, if missing; idempotent.
     *
     * @return a {@code Mono} that completes when they exist
     */
    Mono<Void> migrate() {
        return schema.migrate(); // the lock schema first, then the waiters table and function
    }

    @Override
    public String name() {
        return "postgresql";
    }

    /** One grant statement, answered after it committed. */
    @Override
    protected Mono<Object> ask(GrantRequest request) {
        return Mono.defer(() -> {
            String name = TextEscapes.encode(request.name());
            String owner = TextEscapes.encode(request.owner());
            long sentAt = request.clock().nanoTime();
            Flux<Object> rows = mutex.query(grantSql, st -> st.bind(0, name).bind(1, owner)
                            .bind(2, Micros.of(request.leaseTime())).bind(3, request.queue())
                            .bind(4, Micros.of(WaiterLine.waiterDeadline(request.leaseTime())))
                            .bind(5, PostgresLockBackend.storedPayload(request.payload()))
                            .bind(6, mutex.options().channel()).bind(7, NotificationPayload.suffix(owner, name)),
                    (row, md) -> toAnswer(row.get("r_kind", Integer.class), row.get("r_token", Long.class),
                            row.get("r_owner", String.class), row.get("r_remaining_us", Long.class),
                            row.get("r_payload", String.class), row.get("r_ahead", Long.class), request.leaseTime(), sentAt));
            // the whole result first: the answer counts only once the statement committed
            return schema.ready(mutex.withSchema(rows).collectList()).flatMap(all -> all.isEmpty()
                    ? Mono.error(new IllegalStateException("fair lock grant returned no row"))
                    : Mono.just(all.get(0)));
        }).onErrorMap(e -> PostgresErrors.map(request.name(), "acquire", e));
    }

    /** Owner-checked delete of the lock row or the place in line of {@code owner}; notifies. */
    @Override
    public Mono<Boolean> release(String name, String owner) {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(owner, "owner");
        return Mono.defer(() -> {
            String n = TextEscapes.encode(name);
            String o = TextEscapes.encode(owner);
            Flux<Integer> rows = mutex.query(releaseSql, st -> st.bind(0, n).bind(1, o).bind(2, mutex.options().channel())
                            .bind(3, NotificationPayload.suffix(o, n)),
                    (row, md) -> 1);
            return schema.ready(mutex.withSchema(rows).count()).map(deleted -> deleted > 0);
        }).onErrorMap(e -> PostgresErrors.map(name, "release", e));
    }

    /** Closes the underlying backend when this one owns it. Idempotent. */
    @Override
    public Mono<Void> close() {
        return owned ? mutex.close() : Mono.empty();
    }

    private static Object toAnswer(int kind, Long token, String owner, Long remainingUs, String payload,
                                   @Nullable Long ahead, Duration leaseTime, long sentAt) {
        if (kind == 1) {
            return new Attempt.Granted(token, leaseTime, sentAt);
        }
        long remaining = remainingUs == null ? -1 : remainingUs;
        if (kind == 2) {
            return new WaiterLine.StillQueued(remaining < 0 ? -1 : remaining / 1000, ahead == null ? -1 : ahead);
        }
        if (owner == null) {
            return Attempt.busy(null); // free, but waiters are in line
        }
        return Attempt.busy(new Holder(TextEscapes.decode(owner), token, Micros.remaining(remaining),
                payload == null ? null : TextEscapes.decode(payload)));
    }


    @Override
    public String toString() {
        return "PostgresFairLockBackend{" + schema.table() + "}";
    }
}
