package io.reactivelocks.r2dbc.postgresql;

import io.r2dbc.postgresql.api.Notification;
import io.r2dbc.postgresql.api.PostgresqlConnection;
import io.r2dbc.spi.Connection;
import io.r2dbc.spi.ConnectionFactory;
import io.r2dbc.spi.Result;
import io.r2dbc.spi.Wrapped;
import io.reactivelocks.LockBackendException;
import io.reactivelocks.spi.LockEvent;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import reactor.core.Disposable;
import reactor.core.Disposables;
import reactor.core.publisher.Flux;
import reactor.core.publisher.FluxSink;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.util.Logger;
import reactor.util.Loggers;
import reactor.util.retry.Retry;
import io.r2dbc.spi.Statement;

/**
 * The backend's one listening connection: {@code LISTEN} on the fixed channel, notifications
 * dispatched to the subscribers of each lock name.
 *
 * <ul>
 *   <li>The connection comes from a factory of its own (never from the pool: a pooled connection
 *       would carry the LISTEN to other users and lose it on release). It is opened by the first
 *       subscriber and kept until {@link #close()}.</li>
 *   <li>Each subscriber gets {@link LockEvent.Subscribed} once the LISTEN is active — at once if
 *       it already is — and again after every reconnect, so waiters and observers re-read state
 *       that may have changed while no connection listened. Events before that are not passed on.</li>
 *   <li>Loss (the server closes the connection, {@code pg_terminate_backend}, a failed
 *       {@code SELECT 1} health check) reconnects with exponential backoff, for as long as the
 *       errors are transient. A non-transient error (authentication, missing database) ends every
 *       subscriber's stream with a {@link LockBackendException}; the next subscriber tries again.</li>
 * </ul>
 * <p><b>Watchers.</b> The statements notify a name only while some client watches it (a live row
 * of the watchers table, see {@code watchers_schema.sql}): uncontended acquires and releases send no
 * {@code NOTIFY}. A name's first subscriber ({@link #events(String, String, Watch)} with a
 * {@link Watch} other than {@code NONE}) has this listener register the name on its connection, and receives
 * {@link LockEvent.Subscribed} only after that registration committed, so its re-check sees every
 * change that was not notified; the last subscriber leaving deletes the row. Every health check
 * renews the rows of this client (and sweeps expired rows of any); a row found lapsed counts as
 * new: its subscribers get {@code Subscribed} again. A crashed client's rows expire after
 * {@link #watcherTtl(PostgresLockOptions)}. A lock's grants are announced only to observers
 * ({@link Watch#GRANTS}, which registers a second key, {@link NotificationPayload#observerKey}): its
 * waiters need its releases only, and each {@code NOTIFY} costs a serialized commit.
 *
 * <p>Dispatch runs on the driver's event loop and only emits into {@code FluxSink}s.
 */
final class NotificationListener {

    /** What a subscriber needs the statements to announce. */
    enum Watch {
        /** Nothing: the key's statements always notify (task queues). */
        NONE,
        /** The key's releases (and a semaphore's or read-write lock's every change): its dispatch key registered. */
        CHANGES,
        /** A lock's grants as well: its dispatch key and its {@link NotificationPayload#observerKey} registered. */
        GRANTS
    }

    private static final Logger LOG = Loggers.getLogger(NotificationListener.class);

    private final ConnectionFactory factory;
    private final String channel;
    private final String listenSql;
    private final PostgresLockOptions options;
    private final String listenerId;
    private final String watchSql;
    private final String unwatchSql;
    private final long watcherTtlUs;
    private final Mono<Void> schemaReady;
    private final ConcurrentHashMap<String, Set<Sub>> subscribers = new ConcurrentHashMap<>();
    private final Sinks.Empty<Void> stop = Sinks.empty();
    private final Object lock = new Object();

    // guarded by lock
    private Disposable loop;
    private boolean closed;
    private final Set<String> registered = new HashSet<>(); // watcher keys whose row committed in this session
    private boolean everStarted;
    private Sinks.Many<Boolean> kicks;                      // the live session's work queue; null when none

    private volatile boolean live;

    /**
     * @param factory     the listening connection's factory (unpooled)
     * @param options     channel, timings
     * @param listenerId  this client's id in the watchers table
     * @param watchSql    {@code watch.sql}: registers or renews keys ($1 keys, $2 listener id, $3 TTL in µs)
     * @param unwatchSql  {@code unwatch.sql}: deletes keys' rows ($1 keys, $2 listener id)
     * @param schemaReady completes once the watchers table and functions exist (the backend's first-use check)
     */
    NotificationListener(ConnectionFactory factory, PostgresLockOptions options, String listenerId, String watchSql,
                         String unwatchSql, Mono<Void> schemaReady) {
        this.factory = factory;
        this.options = options;
        this.channel = options.channel();
        this.listenSql = "LISTEN " + SqlIdentifiers.quote(options.channel());
        this.listenerId = listenerId;
        this.watchSql = watchSql;
        this.unwatchSql = unwatchSql;
        this.watcherTtlUs = TimeUnit.MICROSECONDS.convert(watcherTtl(options));
        this.schemaReady = schemaReady;
    }

    /**
     * How long a watcher row counts without renewal: three health-check intervals plus one timeout.
     * A renewal comes with every health check, and a failed one reconnects (and registers anew).
     *
     * @param options the health-check settings
     * @return the TTL of this client's watcher rows
     */
    static Duration watcherTtl(PostgresLockOptions options) {
        return options.healthCheckInterval().multipliedBy(3).plus(options.healthCheckTimeout());
    }

    /**
     * @param name  the lock name (in the events)
     * @param key   the dispatch key (the stored name, or a concept's prefixed key)
     * @param watch what the statements must be told someone waits for (watcher rows before
     *              {@link LockEvent.Subscribed})
     * @return the events of one key, as {@link io.reactivelocks.spi.LockBackend#events} describes
     */
    Flux<LockEvent> events(String name, String key, Watch watch) {
        return Flux.create(sink -> {
            Sub sub = new Sub(name, sink, watch);
            boolean start;
            boolean now;
            synchronized (lock) {
                if (closed) {
                    sink.complete();
                    return;
                }
                subscribers.compute(key, (k, set) -> {
                    Set<Sub> s = set != null ? set : ConcurrentHashMap.newKeySet();
                    s.add(sub);
                    return s;
                });
                start = loop == null;
                if (start) {
                    loop = Disposables.swap();
                    everStarted = true;
                }
                now = live && registeredFor(key, watch);
                if (!now) {
                    sub.pending = true; // Subscribed once live and (if watched) registered
                }
            }
            sink.onDispose(() -> remove(key, sub));
            if (start) {
                startLoop();
            }
            if (now) {
                sub.subscribed();
            } else if (watch != Watch.NONE) {
                kick(false);
            }
        });
    }

    /** @return whether a listening session was ever started (so this client may have watcher rows) */
    boolean startedEver() {
        synchronized (lock) {
            return everStarted;
        }
    }

    /** Stops listening: closes the connection and completes every subscriber's stream. Idempotent. */
    Mono<Void> close() {
        return Mono.fromRunnable(() -> {
            Disposable d;
            synchronized (lock) {
                if (closed) {
                    return;
                }
                closed = true;
                d = loop;
                loop = null;
            }
            stop.tryEmitEmpty();
            synchronized (lock) {
                kicks = null;
                registered.clear();
            }
            if (d != null) {
                d.dispose();
            }
            live = false;
            for (Sub s : drainAll()) {
                s.sink.complete();
            }
        });
    }

    private void startLoop() {
        Disposable running = Flux.defer(this::session)
                .retryWhen(Retry.backoff(Long.MAX_VALUE, options.reconnectMinBackoff())
                        .maxBackoff(options.reconnectMaxBackoff())
                        .jitter(0.5)
                        .scheduler(options.scheduler())
                        .transientErrors(true)
                        .filter(PostgresErrors::isTransient)
                        .doBeforeRetry(s -> LOG.debug("listening connection on channel {} lost ({}); reconnecting",
                                channel, s.failure().toString()))
                        .onRetryExhaustedThrow((spec, s) -> s.failure()))
                .takeUntilOther(stop.asMono())
                .subscribe(null, this::onFatal);
        synchronized (lock) {
            if (loop instanceof Disposable.Swap swap && !closed) {
                swap.update(running);
                return;
            }
        }
        running.dispose(); // closed meanwhile
    }

    /** One connection: LISTEN, then notifications and health checks until it fails. Never completes. */
    private Flux<Object> session() {
        Mono<Connection> connect = Mono.<Connection>from(factory.create())
                .timeout(options.connectTimeout(), options.scheduler())
                .onErrorMap(java.util.concurrent.TimeoutException.class, e -> new LockBackendException(null,
                        "postgresql did not accept the listening connection within " + options.connectTimeout(), e, true));
        return Flux.usingWhen(connect, this::listen, Connection::close,
                (c, e) -> c.close(), Connection::close);
    }

    private Flux<Object> listen(Connection connection) {
        PostgresqlConnection pc = unwrap(connection);
        // subscribe to notifications before sending LISTEN, so none can slip in between
        Flux<Object> notifications = pc.getNotifications()
                .doOnNext(this::dispatch)
                .cast(Object.class)
                .concatWith(Mono.error(() -> new LockBackendException(null,
                        "postgresql closed the listening connection", null, true)));
        Sinks.Many<Boolean> work = Sinks.many().unicast().onBackpressureBuffer();
        Mono<Object> listen = Flux.from(pc.createStatement(listenSql).execute())
                .flatMap(Result::getRowsUpdated)
                .then(Mono.fromCallable(() -> onLive(work))); // an element: resets the reconnect backoff
        // the watcher registrations (kicks) and the health checks, which renew them, one at a time on this connection
        Flux<Object> watching = Flux.merge(work.asFlux(),
                        Flux.interval(options.healthCheckInterval(), options.scheduler()).onBackpressureDrop().map(i -> Boolean.TRUE))
                .concatMap(renew -> step(pc, work, renew).timeout(options.healthCheckTimeout(), options.scheduler()))
                .cast(Object.class);
        Flux<Object> listenThenWatch = Flux.concat(listen, watching);
        return Flux.merge(notifications, listenThenWatch).doFinally(s -> {
            live = false;
            synchronized (lock) {
                if (kicks == work) {
                    kicks = null;
                }
            }
        });
    }

    /** Asks the live session to register or drop watcher rows (and, with {@code renew}, renew them all). */
    private void kick(boolean renew) {
        synchronized (lock) {
            if (kicks != null) {
                kicks.tryEmitNext(renew); // serialized by the lock
            }
        }
    }

    /**
     * One round of the watcher rows: deletes the rows of keys nobody here waits for any more, and
     * registers the keys that got a subscriber (or, with {@code renew}, renews all): one statement
     * each. Subscribers of newly registered or lapsed keys then get {@link LockEvent.Subscribed}. A
     * renewal with no key is the plain {@code SELECT 1} health check.
     */
    private Mono<Void> step(PostgresqlConnection pc, Sinks.Many<Boolean> session, boolean renew) {
        return Mono.defer(() -> {
            List<String> drop = new ArrayList<>();
            List<String> add = new ArrayList<>();
            List<String> keep = new ArrayList<>();
            synchronized (lock) {
                for (var it = registered.iterator(); it.hasNext(); ) {
                    String key = it.next();
                    if (!watched(key)) {
                        it.remove();
                        drop.add(key);
                    } else {
                        keep.add(key);
                    }
                }
                for (String key : subscribers.keySet()) {
                    for (String w : List.of(key, NotificationPayload.observerKey(key))) {
                        if (!registered.contains(w) && watched(w)) {
                            add.add(w);
                        }
                    }
                }
            }
            Mono<Void> unwatch = drop.isEmpty() ? Mono.empty() : run(pc, unwatchSql, st -> st
                    .bind(0, drop.toArray(String[]::new)).bind(1, listenerId)).then();
            if (add.isEmpty() && !renew) {
                return unwatch;
            }
            List<String> keys = new ArrayList<>(add);
            if (renew) {
                keys.addAll(keep);
            }
            if (keys.isEmpty()) { // a health check of a client that watches nothing (a task queue's, say)
                return unwatch.then(run(pc, "SELECT 1", st -> { }).then());
            }
            // the watchers table and functions come with the lock schema (checked once, on first use)
            Mono<Void> watch = schemaReady.thenMany(run(pc, watchSql, st -> st.bind(0, keys.toArray(String[]::new)).bind(1, listenerId)
                    .bind(2, watcherTtlUs)))
                    .collectList()
                    .doOnNext(lapsed -> registeredNow(session, add, lapsed))
                    .then();
            return unwatch.then(watch);
        });
    }

    private Flux<String> run(PostgresqlConnection pc, String sql, java.util.function.Consumer<Statement> binder) {
        return Flux.defer(() -> {
            Statement st = pc.createStatement(sql);
            binder.accept(st);
            return Flux.from(st.execute()).concatMap(r -> r.map((row, md) -> String.valueOf(row.get(0))));
        });
    }

    /** After a watch statement committed: Subscribed to the waiting subscribers of {@code added} and all of {@code lapsed}. */
    private void registeredNow(Sinks.Many<Boolean> session, List<String> added, List<String> lapsed) {
        Set<Sub> tell = new java.util.LinkedHashSet<>(); // a subscriber told once per step
        synchronized (lock) {
            if (kicks != session) {
                return; // the next session registers everything again
            }
            registered.addAll(added);
            Set<String> again = new HashSet<>(lapsed);
            added.forEach(again::remove);
            for (String w : added) {
                String key = dispatchKey(w);
                for (Sub s : subscribers.getOrDefault(key, Set.of())) {
                    if (s.pending && needs(s.watch, w, key) && registeredFor(key, s.watch)) {
                        s.pending = false;
                        tell.add(s);
                    }
                }
            }
            for (String w : again) {
                String key = dispatchKey(w);
                for (Sub s : subscribers.getOrDefault(key, Set.of())) {
                    if (needs(s.watch, w, key) && registeredFor(key, s.watch)) {
                        s.pending = false;
                        tell.add(s);
                    }
                }
            }
        }
        tell.forEach(Sub::subscribed);
    }

    /** @return whether a subscriber of {@code key} that needs {@code watch} has all its watcher rows (guarded by lock) */
    private boolean registeredFor(String key, Watch watch) {
        return switch (watch) {
            case NONE -> true;
            case CHANGES -> registered.contains(key);
            case GRANTS -> registered.contains(key) && registered.contains(NotificationPayload.observerKey(key));
        };
    }

    /** @return the dispatch key whose subscribers a watcher key serves */
    private static String dispatchKey(String watchKey) {
        return watchKey.startsWith("\\o") ? watchKey.substring(2) : watchKey;
    }

    /** @return whether a subscriber that needs {@code watch} needs the watcher row {@code watchKey} of {@code key} */
    private static boolean needs(Watch watch, String watchKey, String key) {
        return watchKey.equals(key) ? watch != Watch.NONE : watch == Watch.GRANTS;
    }

    /** @return whether some subscriber needs the watcher row {@code watchKey} (guarded by lock) */
    private boolean watched(String watchKey) {
        String key = dispatchKey(watchKey);
        Set<Sub> set = subscribers.get(key);
        if (set == null) {
            return false;
        }
        for (Sub s : set) {
            if (needs(s.watch, watchKey, key)) {
                return true;
            }
        }
        return false;
    }

    private static PostgresqlConnection unwrap(Connection connection) {
        if (connection instanceof PostgresqlConnection pc) {
            return pc;
        }
        if (connection instanceof Wrapped<?> w) {
            PostgresqlConnection pc = w.unwrap(PostgresqlConnection.class);
            if (pc != null) {
                return pc;
            }
        }
        throw new LockBackendException(null, "the listener connection factory must produce r2dbc-postgresql"
                + " connections, got " + connection.getClass().getName(), null, false);
    }

    private Object onLive(Sinks.Many<Boolean> work) {
        List<Sub> now = new ArrayList<>();
        synchronized (lock) {
            live = true;
            registered.clear(); // rows of an earlier session may have lapsed: register all again
            kicks = work;
            for (Set<Sub> set : subscribers.values()) {
                for (Sub s : set) {
                    if (s.watch != Watch.NONE) {
                        s.pending = true;
                    } else {
                        s.pending = false;
                        now.add(s);
                    }
                }
            }
        }
        LOG.debug("listening on channel {}", channel);
        now.forEach(Sub::subscribed);
        kick(false);
        return Boolean.TRUE;
    }

    private void dispatch(Notification n) {
        if (!channel.equals(n.getName())) {
            return;
        }
        NotificationPayload p = NotificationPayload.parse(n.getParameter());
        if (p == null) {
            return;
        }
        Set<Sub> set = subscribers.get(p.name);
        if (set == null) {
            return;
        }
        for (Sub s : set) {
            String owner = p.owner == null ? null : TextEscapes.decode(p.owner);
            s.event(p.kind == 'V' ? new LockEvent.Revoked(s.name, owner, TextEscapes.decode(java.util.Objects.requireNonNull(p.reason)))
                    : p.kind == 'A' ? new LockEvent.Acquired(s.name, owner, p.token)
                    : new LockEvent.Released(s.name, owner, p.kind == 'E'));
        }
    }

    private void onFatal(Throwable error) {
        live = false;
        io.reactivelocks.LockException mapped = PostgresErrors.map(null, "listen", error);
        LockBackendException e = mapped instanceof LockBackendException be ? be
                : new LockBackendException(null, mapped.getMessage(), mapped, false);
        LOG.debug("listening connection on channel {} failed for good: {}", channel, e.getMessage());
        List<Sub> failed;
        synchronized (lock) {
            loop = null; // the next subscriber starts over
            kicks = null;
            registered.clear();
            failed = drainAll();
        }
        for (Sub s : failed) {
            s.sink.error(e);
        }
    }

    // guarded by lock, or after closed
    private List<Sub> drainAll() {
        List<Sub> all = new ArrayList<>();
        for (String key : new ArrayList<>(subscribers.keySet())) {
            Set<Sub> set = subscribers.remove(key);
            if (set != null) {
                all.addAll(set);
            }
        }
        return all;
    }

    private void remove(String key, Sub sub) {
        boolean drop;
        synchronized (lock) {
            subscribers.computeIfPresent(key, (k, set) -> {
                set.remove(sub);
                return set.isEmpty() ? null : set;
            });
            String observer = NotificationPayload.observerKey(key);
            drop = registered.contains(key) && !watched(key) || registered.contains(observer) && !watched(observer);
        }
        if (drop) {
            kick(false);
        }
    }

    /** One subscriber of one lock name. */
    private static final class Sub {
        final String name;
        final FluxSink<LockEvent> sink;
        final Watch watch;
        volatile boolean ready;
        boolean pending; // guarded by lock: waits for its Subscribed

        Sub(String name, FluxSink<LockEvent> sink, Watch watch) {
            this.name = name;
            this.sink = sink;
            this.watch = watch;
        }

        void subscribed() {
            ready = true;
            sink.next(new LockEvent.Subscribed(name));
        }

        void event(LockEvent e) {
            if (ready) {
                sink.next(e);
            }
        }
    }
}
