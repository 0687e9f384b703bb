package io.reactivelocks.r2dbc.mariadb;

import io.r2dbc.spi.Connection;
import io.reactivelocks.r2dbc.internal.Micros;
import io.reactivelocks.spi.Attempt;
import io.reactivelocks.spi.FairLockBackend;
import io.reactivelocks.spi.GrantRequest;
import io.reactivelocks.spi.Holder;
import io.reactivelocks.spi.LockEvent;
import io.reactivelocks.spi.WaiterLine;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.util.retry.Retry;

/**
 * Fair locks on MariaDB: the holder is a row of the lock table (renewed, released, inspected and
 * observed as the mutex's), and the waiters wait in line in a table beside it
 * ({@code <lock table>_waiters}), ordered by a number from the lock sequence, each entry with a
 * deadline by the server's clock that its waiter refreshes when it asks again ({@link WaiterLine}).
 * A grant is first one statement that takes the name's row of the lock table when it is free and
 * nobody waits before the caller, or sets the lease again for its holder ({@code fair_acquire.sql});
 * when that does not grant and the caller waits, one {@code READ COMMITTED} transaction that locks the
 * name's row decides again: the holder is asked again, or the head of the line (or the first caller
 * when nobody waits) is granted, or the caller is put in line. A release wakes the head of the line
 * only: each waiter is told its place and the holder. Uses the pool and poller of its
 * {@link MariaDbLockBackend}, which it does not close.
 */
final class MariaDbFairLockBackend extends FairLockBackend {

    private static final Duration FOREVER = Duration.ofMillis(Long.MAX_VALUE);
    private static final int ROLLED_BACK_RETRIES = 3;

    private final MariaDbLockBackend mutex;
    private final Mono<Void> ready;
    private final String purgeSql;
    private final String firstSql;
    private final String enqueueSql;
    private final String aheadSql;
    private final String leaveSql;
    private final String acquireSql;
    private final String leavePurgeSql;
    /**
     * The owners that may have an entry in line (from just before a transaction that may put them
     * there until they leave it): only their grants and releases remove an entry, the others' send
     * nothing for it.
     */
    private final Set<Key> inLine = ConcurrentHashMap.newKeySet();

    private record Key(String name, String owner) {
    }

    MariaDbFairLockBackend(MariaDbLockBackend mutex) {
        super(Objects.requireNonNull(mutex, "backend"), mutex::waiterEvents, mutex.options().scheduler());
        this.mutex = mutex;
        MariaDbLockOptions o = mutex.options();
        Map<String, String> names = names(o);
        List<String> statements = MariaDbSql.statements("fair_schema.sql", names);
        String tableName = MariaDbLockBackend.derived(o.table(), "_waiters");
        this.ready = Mono.defer(() -> mutex.firstUse("fair lock", List.of(tableName, o.sequence()), statements))
                .cache(v -> FOREVER, e -> Duration.ZERO, () -> FOREVER);
        this.purgeSql = MariaDbSql.render("fair_purge.sql", names);
        this.firstSql = MariaDbSql.render("fair_first.sql", names);
        this.enqueueSql = MariaDbSql.render("fair_enqueue.sql", names);
        this.aheadSql = MariaDbSql.render("fair_ahead.sql", names);
        this.leaveSql = MariaDbSql.render("fair_leave.sql", names);
        this.acquireSql = MariaDbSql.render("fair_acquire.sql", names);
        this.leavePurgeSql = MariaDbSql.render("fair_leave_purge.sql", names);
    }

    /** @return the placeholder values of the fair lock's scripts */
    static Map<String, String> names(MariaDbLockOptions o) {
        String waiters = MariaDbLockBackend.derived(o.table(), "_waiters");
        Map<String, String> names = new HashMap<>(MariaDbLockBackend.names(o));
        names.put("waiter_table", MariaDbSql.qualified(o.database(), waiters));
        names.put("waiter_index", MariaDbSql.quote(MariaDbLockBackend.derived(waiters, "_seq_idx")));
        return names;
    }

    @Override
    public String name() {
        return MariaDbErrors.BACKEND;
    }

    @Override
    protected Mono<Object> ask(GrantRequest request) {
        return Mono.defer(() -> {
            String n = StoredText.encode(request.name());
            long sentAt = request.clock().nanoTime();
            mutex.asking(n, request.owner());
            return mutex.schemaReady().then(ready).then(takeOrQueue(n, request, sentAt))
                    .retryWhen(Retry.max(ROLLED_BACK_RETRIES).filter(MariaDbErrors::rolledBack))
                    .doOnNext(a -> {
                        mutex.answered(n, request.owner(), a instanceof Attempt.Granted);
                        if (a instanceof Attempt.Granted g) {
                            mutex.announce(new LockEvent.Acquired(request.name(), request.owner(), g.token()));
                        }
                    });
        }).onErrorMap(e -> MariaDbErrors.map(request.name(), "acquire", e));
    }

    /**
     * First the one statement that takes the lock when it is free and nobody waits before the caller
     * ({@code fair_acquire.sql}), then, granted, the caller leaves the line if it may be in it; not
     * granted, a transaction that decides again and puts the caller in line (or answers busy).
     */
    private Mono<Object> takeOrQueue(String n, GrantRequest request, long sentAt) {
        String o = request.owner();
        Key k = new Key(n, o);
        String payload = request.payload() == null ? null : StoredText.encode(request.payload());
        Mono<Object> fast = Mono.usingWhen(mutex.connections(), c -> Statements.rows(c, acquireSql, st -> {
            st.bind(0, n).bind(1, n).bind(2, o).bind(3, Micros.of(request.leaseTime()));
            Statements.bindText(st, 4, payload);
            st.bind(5, o).bind(6, o).bind(7, n).bind(8, o);
        }, (row, md) -> Map.entry(new Holder(Statements.text(row, "owner"), Statements.number(row, "token"),
                Micros.remaining(Statements.number(row, "remaining_us")),
                row.get("payload") == null ? null : Statements.text(row, "payload")), Statements.number(row, "leaving") != 0))
                .last().flatMap(answer -> {
                    Holder h = answer.getKey();
                    if (h.owner().equals(o)) {
                        Object granted = new Attempt.Granted(h.token(), request.leaseTime(), sentAt);
                        return answer.getValue()
                                ? Statements.update(c, leavePurgeSql, st -> st.bind(0, n).bind(1, o)).doOnNext(x -> inLine.remove(k)).thenReturn(granted)
                                : Mono.fromRunnable(() -> inLine.remove(k)).thenReturn(granted);
                    }
                    if (request.queue()) {
                        return Mono.empty();
                    }
                    boolean live = h.remaining() != null && !h.remaining().isZero();
                    return Mono.just((Object) Attempt.busy(live ? h : null));
                }), Connection::close);
        return fast.switchIfEmpty(Mono.defer(() -> {
            inLine.add(k); // before the transaction: a release from now on removes the entry it may leave
            return mutex.inTransaction(c -> grant(c, n, request, sentAt)).doOnNext(a -> {
                if (a instanceof Attempt.Granted) {
                    inLine.remove(k); // the transaction removed the entry
                }
            });
        }));
    }

    private Mono<Object> grant(Connection c, String n, GrantRequest request, long sentAt) {
        String o = request.owner();
        long ttl = Micros.of(request.leaseTime());
        return Statements.update(c, mutex.sql("lock_row"), st -> st.bind(0, n))
                .then(Statements.update(c, purgeSql, st -> st.bind(0, n)))
                .then(Statements.first(c, mutex.sql("read"), st -> st.bind(0, n), (row, md) -> new Holder(
                        Statements.text(row, "owner"), Statements.number(row, "token"),
                        Micros.remaining(Statements.number(row, "remaining_us")),
                        row.get("payload") == null ? null : Statements.text(row, "payload"))))
                .flatMap(h -> {
                    boolean live = h.remaining() != null && !h.remaining().isZero();
                    if (live && h.owner().equals(o)) { // a retried request
                        return Statements.update(c, mutex.sql("again"), st -> st.bind(0, ttl).bind(1, n))
                                .then(Statements.update(c, leaveSql, st -> st.bind(0, n).bind(1, o)))
                                .thenReturn((Object) new Attempt.Granted(h.token(), request.leaseTime(), sentAt));
                    }
                    if (live) {
                        return request.queue() ? enqueue(c, n, o, request, h.remaining(), h.owner(), h.owner())
                                : Mono.just((Object) Attempt.busy(h));
                    }
                    return Statements.first(c, firstSql, st -> st.bind(0, n).bind(1, h.owner()), (row, md) -> Map.entry(
                                    Statements.text(row, "owner"), Statements.number(row, "remaining_us")))
                            .map(head -> head.getKey().equals(o) ? Map.entry("", 0L) : head)
                            .defaultIfEmpty(Map.entry("", 0L))
                            .flatMap(head -> {
                                if (!head.getKey().isEmpty()) { // free, but others are in line before the caller
                                    return request.queue()
                                            ? enqueue(c, n, o, request, Micros.remaining(head.getValue()), h.owner(), null)
                                            : Mono.just((Object) Attempt.busy(null));
                                }
                                return take(c, n, o, ttl, request, sentAt);
                            });
                });
    }

    private Mono<Object> take(Connection c, String n, String o, long ttl, GrantRequest request, long sentAt) {
        String payload = request.payload() == null ? null : StoredText.encode(request.payload());
        return Statements.first(c, mutex.sql("token"), st -> { }, (row, md) -> Statements.number(row, "token"))
                .flatMap(t -> Statements.update(c, mutex.sql("take"), st -> {
                    st.bind(0, o).bind(1, t).bind(2, ttl);
                    Statements.bindText(st, 3, payload);
                    st.bind(4, n);
                }).then(Statements.update(c, leaveSql, st -> st.bind(0, n).bind(1, o)))
                        .thenReturn((Object) new Attempt.Granted(t, request.leaseTime(), sentAt)));
    }

    /**
     * @param lastHolder the owner of the name's row (its entry is not counted as ahead), or {@code ''}
     * @param holder     the live holder, told to the waiter, or {@code null} when the lock is free
     */
    private Mono<Object> enqueue(Connection c, String n, String o, GrantRequest request, @Nullable Duration hint,
                                 String lastHolder, @Nullable String holder) {
        long deadline = Micros.of(WaiterLine.waiterDeadline(request.leaseTime()));
        return Statements.first(c, mutex.sql("token"), st -> { }, (row, md) -> Statements.number(row, "token"))
                .flatMap(seq -> Statements.update(c, enqueueSql, st -> st.bind(0, n).bind(1, o).bind(2, seq).bind(3, deadline)))
                .then(Statements.first(c, aheadSql, st -> st.bind(0, n).bind(1, lastHolder).bind(2, n).bind(3, o),
                        (row, md) -> Statements.number(row, "ahead")))
                // the place is handed on, so a release wakes only the waiters it may have made head: the
                // waiters' events name the owner only of changes announced one by one (a release a read
                // found may fold several handoffs, and comes without its owner: every waiter asks then)
                .map(ahead -> (Object) new WaiterLine.StillQueued(hint == null ? -1 : hint.toMillis(), ahead, holder));
    }

    /** Owner-checked: removes the owner's entry in line and its hold, if any; announced at once to the session's waiters. */
    @Override
    public Mono<Boolean> release(String name, String owner) {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(owner, "owner");
        return Mono.defer(() -> {
            String n = StoredText.encode(name);
            Key k = new Key(n, owner);
            boolean queued = inLine.contains(k);
            return mutex.schemaReady().then(ready).then(Mono.usingWhen(mutex.connections(),
                    c -> (queued ? Statements.update(c, leaveSql, st -> st.bind(0, n).bind(1, owner)) : Mono.just(0L))
                            .zipWith(Statements.update(c, mutex.sql("release"), st -> st.bind(0, n).bind(1, owner))),
                    Connection::close))
                    .map(t -> {
                        if (queued) {
                            inLine.remove(k);
                        }
                        mutex.released(n, owner, t.getT2() > 0);
                        if (t.getT2() > 0 || t.getT1() > 0) {
                            mutex.announce(new LockEvent.Released(name, owner, false));
                        }
                        return t.getT1() + t.getT2() > 0;
                    });
        }).onErrorMap(e -> MariaDbErrors.map(name, "release", e));
    }

    @Override
    public Mono<Void> close() {
        return Mono.empty();
    }

    @Override
    public String toString() {
        return "MariaDbFairLockBackend{" + mutex + "}";
    }
}
