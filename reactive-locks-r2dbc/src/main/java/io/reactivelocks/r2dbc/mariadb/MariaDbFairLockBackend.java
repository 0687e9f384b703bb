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
import reactor.core.publisher.Mono;
import reactor.util.retry.Retry;

/**
 * Fair locks on MariaDB: the holder is a row of the lock table (renewed, released, inspected and
 * observed as the mutex's), and the waiters wait in line in a table beside it
 * ({@code <lock table>_waiters}), ordered by a number from the lock sequence, each entry with a
 * deadline by the server's clock that its waiter refreshes when it asks again ({@link WaiterLine}).
 * A grant is first one statement that takes the name's row of the lock table when it is free and
 * nobody waits before the caller, or sets the lease again for its holder ({@code fair_acquire.sql});
 * when that does not grant, one more request ({@code fair_join.sql}, a compound statement whose
 * {@code READ COMMITTED} transaction locks the name's row) decides again: the holder is asked again,
 * or the head of the line (or the first caller when nobody waits) is granted, or the caller is put in
 * line. A release wakes the head of the line
 * only: each waiter is told its place and the holder. Uses the pool and poller of its
 * {@link MariaDbLockBackend}, which it does not close.
 */
final class MariaDbFairLockBackend extends FairLockBackend {

    private static final Duration FOREVER = Duration.ofMillis(Long.MAX_VALUE);
    private static final int ROLLED_BACK_RETRIES = 3;

    private final MariaDbLockBackend mutex;
    private final Mono<Void> ready;
    private final String joinSql;
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
        this.joinSql = MariaDbSql.render("fair_join.sql", names);
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
     * A caller not in line: first the one statement that takes the lock when it is free and nobody
     * waits before the caller ({@code fair_acquire.sql}), then, granted, the caller leaves the line if
     * it may be in it; not granted, one statement that decides again and puts the caller in line (or
     * answers busy). A waiter in line: that second statement alone.
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
        Mono<Object> join = Mono.defer(() -> {
            inLine.add(k); // before the statement: a release from now on removes the entry it may leave
            return Mono.usingWhen(mutex.connections(), c -> join(c, n, request, sentAt), Connection::close).doOnNext(a -> {
                if (a instanceof Attempt.Granted) {
                    inLine.remove(k); // the statement removed the entry
                }
            });
        });
        // a waiter in line already asks with the statement that also keeps its place: one request, which
        // grants the head of the line and takes it out of the line at once
        return request.queue() && inLine.contains(k) ? join : fast.switchIfEmpty(join);
    }

    /**
     * The attempt that decides again and puts the caller in line, one statement ({@code fair_join.sql}):
     * granted (a retried request, or the lease expired and nobody waits before the caller), queued with
     * its place (the waiters before it) and the holder, or busy.
     */
    private Mono<Object> join(Connection c, String n, GrantRequest request, long sentAt) {
        String payload = request.payload() == null ? null : StoredText.encode(request.payload());
        long deadline = Micros.of(WaiterLine.waiterDeadline(request.leaseTime()));
        return Statements.first(c, joinSql, st -> {
            st.bind(0, n).bind(1, request.owner()).bind(2, Micros.of(request.leaseTime()));
            Statements.bindText(st, 3, payload);
            st.bind(4, request.queue() ? 1 : 0).bind(5, deadline);
        }, (row, md) -> {
            String answer = String.valueOf(row.get("answer", String.class));
            long token = Statements.number(row, "token");
            if (answer.equals("g")) {
                return (Object) new Attempt.Granted(token, request.leaseTime(), sentAt);
            }
            Duration remaining = Micros.remaining(Statements.number(row, "remaining_us"));
            boolean live = !remaining.isZero();
            Holder holder = live ? new Holder(Statements.text(row, "owner"), token, remaining,
                    row.get("payload") == null ? null : Statements.text(row, "payload")) : null;
            if (answer.equals("b")) {
                return Attempt.busy(holder);
            }
            // queued: the holder's lease left, or (the lock free, others before the caller) the first waiter's deadline
            Duration hint = live ? remaining : row.get("head_remaining_us") == null ? null
                    : Micros.remaining(Statements.number(row, "head_remaining_us"));
            // the place is handed on, so a release wakes only the waiters it may have made head: the
            // waiters' events name the owner only of changes announced one by one (a release a read
            // found may fold several handoffs, and comes without its owner: every waiter asks then)
            return new WaiterLine.StillQueued(hint == null ? -1 : hint.toMillis(), Statements.number(row, "ahead"),
                    holder == null ? null : holder.owner());
        }).switchIfEmpty(Mono.error(() -> new IllegalStateException("the fair-lock join answered no row")));
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
                            .zipWith(Statements.update(c, mutex.releaseSql(), st -> st.bind(0, n).bind(1, owner))),
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
