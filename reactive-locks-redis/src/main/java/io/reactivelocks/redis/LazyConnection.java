package io.reactivelocks.redis;

import io.lettuce.core.RedisConnectionException;
import io.lettuce.core.api.StatefulConnection;
import io.reactivelocks.LockBackendException;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

/**
 * A connection opened on first use and then kept (Lettuce reconnects it by itself). Concurrent
 * first uses share one connect; a failed connect is not remembered, the next use tries again.
 * The connect runs detached from the callers, so a cancelled caller never leaves a half-open
 * connection behind: a connect that completes after {@link #close(Consumer)} is closed at once.
 *
 * @param <C> the connection type
 */
final class LazyConnection<C extends StatefulConnection<?, ?>> {

    private final String what;
    private final Supplier<Mono<C>> connector;
    private final boolean owned;
    private final Consumer<C> onConnect;

    // guarded by this
    private C connection;
    private Sinks.One<C> pending;
    private boolean closed;

    /**
     * @param what      for messages ("command connection")
     * @param connector opens the connection on subscribe
     * @param owned     whether {@link #close(Consumer)} closes the connection (false when the application passed it in)
     * @param onConnect runs once on the new connection before anyone uses it (e.g. adds a listener)
     */
    LazyConnection(String what, Supplier<Mono<C>> connector, boolean owned, Consumer<C> onConnect) {
        this.what = what;
        this.connector = connector;
        this.owned = owned;
        this.onConnect = onConnect;
    }

    /** @return the connection, connecting on subscribe if there is none yet */
    Mono<C> get() {
        return Mono.defer(() -> {
            Sinks.One<C> p;
            boolean start = false;
            synchronized (this) {
                if (closed) {
                    return Mono.error(closedError());
                }
                if (connection != null) {
                    return Mono.just(connection);
                }
                if (pending == null) {
                    pending = Sinks.one();
                    start = true;
                }
                p = pending;
            }
            if (start) {
                Sinks.One<C> sink = p;
                connector.get()
                        .onErrorResume(LazyConnection::closedDuringHandshake, e -> connector.get())
                        .subscribe(c -> connected(sink, c), e -> failed(sink, e),
                        () -> failed(sink, new IllegalStateException("connector completed without a connection")));
            }
            return p.asMono();
        });
    }

    /**
     * Whether a connect failed because the channel closed before Lettuce's handshake finished. Lettuce
     * closes the channel when the handshake fails (a refused {@code HELLO}/{@code AUTH}) and completes the
     * connect with the server's error only once that close is done; when the channel's inactive event
     * runs first (a loaded machine: about 1 connect in 70 with both cores busy) the connect completes
     * with "Connection closed prematurely" instead and the server's answer ({@code WRONGPASS},
     * {@code NOPERM}, a database index out of range) is lost. One immediate second connect brings the
     * real answer back; a server that really closes connections during the handshake costs one more.
     */
    static boolean closedDuringHandshake(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof RedisConnectionException && "Connection closed prematurely".equals(t.getMessage())) {
                return true;
            }
        }
        return false;
    }

    /** @return the connection if it is open now, else {@code null} */
    synchronized @Nullable C current() {
        return connection;
    }

    /**
     * @return what {@link #get()} would give at once — the open connection — or {@code null} when {@code get()}
     *     would connect, wait for a connect under way or fail because this is closed: the caller then uses {@code get()}
     */
    synchronized @Nullable C ready() {
        return closed ? null : connection;
    }

    private void connected(Sinks.One<C> sink, C c) {
        boolean lateClose;
        synchronized (this) {
            pending = null;
            lateClose = closed;
            if (!closed) {
                connection = c;
            }
        }
        if (lateClose) {
            if (owned) {
                c.closeAsync();
            }
            sink.tryEmitError(closedError());
            return;
        }
        onConnect.accept(c);
        sink.tryEmitValue(c);
    }

    private void failed(Sinks.One<C> sink, Throwable e) {
        synchronized (this) {
            pending = null;
        }
        sink.tryEmitError(e);
    }

    /**
     * Marks this closed; closes the connection if it is owned.
     *
     * @param beforeClose runs on the open connection before it is closed (e.g. removes a listener)
     * @return completes when the connection is closed
     */
    Mono<Void> close(Consumer<C> beforeClose) {
        return Mono.defer(() -> {
            C c;
            synchronized (this) {
                if (closed) {
                    return Mono.empty();
                }
                closed = true;
                c = connection;
                connection = null;
            }
            if (c == null) {
                return Mono.empty();
            }
            beforeClose.accept(c);
            return owned ? Mono.fromCompletionStage(c::closeAsync).then() : Mono.empty();
        });
    }

    private LockBackendException closedError() {
        return new LockBackendException(null, "the redis lock backend is closed (" + what + ")", null, false);
    }
}
