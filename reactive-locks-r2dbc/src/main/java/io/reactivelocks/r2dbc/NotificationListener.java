package io.reactivelocks.r2dbc;

import io.r2dbc.postgresql.api.Notification;
import io.r2dbc.postgresql.api.PostgresqlConnection;
import io.r2dbc.spi.Connection;
import io.r2dbc.spi.ConnectionFactory;
import io.r2dbc.spi.Result;
import io.r2dbc.spi.Wrapped;
import io.reactivelocks.LockBackendException;
import io.reactivelocks.spi.LockEvent;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import reactor.core.Disposable;
import reactor.core.Disposables;
import reactor.core.publisher.Flux;
import reactor.core.publisher.FluxSink;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.util.Logger;
import reactor.util.Loggers;
import reactor.util.retry.Retry;

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
 * Dispatch runs on the driver's event loop and only emits into {@code FluxSink}s.
 */
final class NotificationListener {

    private static final Logger LOG = Loggers.getLogger(NotificationListener.class);

    private final ConnectionFactory factory;
    private final String channel;
    private final String listenSql;
    private final PostgresLockOptions options;
    private final ConcurrentHashMap<String, Set<Sub>> subscribers = new ConcurrentHashMap<>();
    private final Sinks.Empty<Void> stop = Sinks.empty();
    private final Object lock = new Object();

    // guarded by lock
    private Disposable loop;
    private boolean closed;

    private volatile boolean live;
    private volatile long sessions;

    NotificationListener(ConnectionFactory factory, PostgresLockOptions options) {
        this.factory = factory;
        this.options = options;
        this.channel = options.channel();
        this.listenSql = "LISTEN " + SqlIdentifiers.quote(options.channel());
    }

    /** @return the events of one lock (stored name {@code key}), as {@link io.reactivelocks.spi.LockBackend#events} describes */
    Flux<LockEvent> events(String name, String key) {
        return Flux.create(sink -> {
            Sub sub = new Sub(name, sink);
            boolean start;
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
                }
            }
            sink.onDispose(() -> remove(key, sub));
            if (start) {
                startLoop();
            }
            if (live) {
                sub.subscribed();
            }
        });
    }

    /** @return whether the LISTEN is active now (for tests and metrics) */
    boolean isLive() {
        return live;
    }

    /** @return how many listening sessions were established so far (for tests and metrics) */
    long sessions() {
        return sessions;
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
        Mono<Object> listen = Flux.from(pc.createStatement(listenSql).execute())
                .flatMap(Result::getRowsUpdated)
                .then(Mono.fromCallable(this::onLive)); // an element: resets the reconnect backoff
        Flux<Object> healthChecks = Flux.interval(options.healthCheckInterval(), options.scheduler())
                .concatMap(i -> Flux.from(pc.createStatement("SELECT 1").execute())
                        .flatMap(r -> r.map((row, meta) -> 1))
                        .then()
                        .timeout(options.healthCheckTimeout(), options.scheduler()))
                .cast(Object.class);
        Flux<Object> listenThenCheck = Flux.concat(listen, healthChecks);
        return Flux.merge(notifications, listenThenCheck).doFinally(s -> live = false);
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

    private Object onLive() {
        live = true;
        sessions++;
        LOG.debug("listening on channel {}", channel);
        for (Set<Sub> set : subscribers.values()) {
            for (Sub s : set) {
                s.subscribed();
            }
        }
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
            s.event(p.kind == 'A' ? new LockEvent.Acquired(s.name, owner, p.token)
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
        subscribers.computeIfPresent(key, (k, set) -> {
            set.remove(sub);
            return set.isEmpty() ? null : set;
        });
    }

    /** One subscriber of one lock name. */
    private static final class Sub {
        final String name;
        final FluxSink<LockEvent> sink;
        volatile boolean ready;

        Sub(String name, FluxSink<LockEvent> sink) {
            this.name = name;
            this.sink = sink;
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
