package io.reactivelocks.redis;

import io.lettuce.core.pubsub.RedisPubSubAdapter;
import io.lettuce.core.pubsub.RedisPubSubListener;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import io.reactivelocks.spi.LockEvent;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * The lock events of a backend over one pub/sub connection: one {@code SUBSCRIBE} per channel,
 * shared by every subscriber of that name and ref-counted — the first subscriber subscribes, the
 * last one unsubscribes. No pattern subscriptions.
 *
 * <p>Each channel runs a small state machine with at most one (UN)SUBSCRIBE in flight, so the
 * server always ends in the state the subscriber count asks for, whatever the interleaving:
 * {@code SUBSCRIBING → LIVE → UNSUBSCRIBING → (SUBSCRIBING again if someone joined | gone)}.
 * A subscriber gets {@link LockEvent.Subscribed} once its channel is {@code LIVE} (the server
 * confirmed the {@code SUBSCRIBE}), then every message that arrived after that, in order: its
 * messages are queued until the {@code Subscribed} signal went out. Signals are never emitted
 * while a lock is held.
 *
 * <p><b>Reconnects.</b> When the connection drops, Lettuce reconnects it and subscribes its
 * channels again by itself; messages published meanwhile are lost. Each confirmation the server
 * sends for a channel that is {@code LIVE} here (the listener's {@code subscribed} callback) is
 * passed to the channel's subscribers as another {@link LockEvent.Subscribed}, so waiters and
 * observers re-check what they may have missed — only once the server is delivering again, never
 * before. The listener also hears the confirmation of each {@code SUBSCRIBE} sent here (before
 * or after its command completes); those are counted per channel and not passed on.
 */
final class PubSubChannels {

    private static final Logger LOG = Loggers.getLogger(PubSubChannels.class);
    private static final Sinks.EmitFailureHandler RETRY_BRIEFLY = Sinks.EmitFailureHandler.busyLooping(Duration.ofMillis(100));

    private enum State { SUBSCRIBING, LIVE, UNSUBSCRIBING }

    private final LazyConnection<StatefulRedisPubSubConnection<String, String>> connection;
    private final boolean owned;
    private final Map<String, Channel> channels = new HashMap<>(); // guarded by this
    private boolean closed; // guarded by this
    /** The thread that delivered the last message: the pub/sub connection's event loop. */
    private volatile Thread deliveryThread;

    private final RedisPubSubListener<String, String> listener = new RedisPubSubAdapter<>() {
        @Override
        public void message(String channel, String message) {
            deliveryThread = Thread.currentThread();
            dispatch(channel, message);
        }

        @Override
        public void subscribed(String channel, long count) {
            resubscribed(channel);
        }
    };

    /**
     * @param connector opens the pub/sub connection on subscribe
     * @param owned     whether {@link #close()} closes the connection
     */
    PubSubChannels(Supplier<Mono<StatefulRedisPubSubConnection<String, String>>> connector, boolean owned) {
        this.connection = new LazyConnection<>("pub/sub connection", connector, owned, c -> c.addListener(listener));
        this.owned = owned;
    }

    /**
     * @param name    the lock name (for the events)
     * @param channel the lock's channel
     * @return the events of the lock; see {@link io.reactivelocks.spi.LockBackend#events}
     */
    Flux<LockEvent> events(String name, String channel) {
        return Flux.defer(() -> {
            Member m = new Member(name);
            join(channel, m);
            return Flux.concat(m.ready.asMono(), m.queue.asFlux())
                    .doFinally(s -> leave(m));
        });
    }

    /**
     * The pub/sub connection, when the caller runs on the thread that delivers its messages (a
     * waiter woken by a release, a holder that got its grant there), the connection is this
     * backend's own (opened from the same client and URI as the command connection) and it speaks
     * RESP3, where a subscribed connection also runs ordinary commands. A command written there from
     * that thread goes out at once; on the command connection it would first be handed to that
     * connection's event loop (another thread to wake), and its answer would come back there.
     *
     * @return that connection, or {@code null} (use the command connection)
     */
    @Nullable StatefulRedisPubSubConnection<String, String> inlineConnection() {
        if (!owned || Thread.currentThread() != deliveryThread) {
            return null;
        }
        StatefulRedisPubSubConnection<String, String> c = connection.current();
        return c instanceof io.lettuce.core.StatefulRedisConnectionImpl<?, ?> impl && c.isOpen()
                && impl.getConnectionState().getNegotiatedProtocolVersion() == io.lettuce.core.protocol.ProtocolVersion.RESP3 ? c : null;
    }

    /**
     * Completes every subscriber's stream (later subscribers complete at once), then closes the
     * connection if owned, else removes the listener and unsubscribes what this subscribed.
     *
     * @return completes when the connection is closed
     */
    Mono<Void> close() {
        return Mono.defer(() -> {
            List<String> subscribed = completeAll();
            return connection.close(c -> {
                c.removeListener(listener);
                if (!owned && !subscribed.isEmpty()) {
                    c.reactive().unsubscribe(subscribed.toArray(new String[0]))
                            .subscribe(null, e -> LOG.debug("UNSUBSCRIBE on close failed: {}", e.toString()));
                }
            });
        });
    }

    private List<String> completeAll() {
        List<Member> all = new ArrayList<>();
        List<String> names = new ArrayList<>();
        synchronized (this) {
            closed = true;
            for (Channel c : channels.values()) {
                names.add(c.name);
                all.addAll(c.members);
                c.members.clear();
                c.waiting.clear();
            }
            channels.clear();
        }
        for (Member m : all) {
            m.complete();
        }
        return names;
    }

    // ---- membership

    private void join(String channel, Member m) {
        boolean readyNow = false;
        boolean subscribe = false;
        Channel c;
        synchronized (this) {
            if (closed) {
                c = null;
            } else {
                c = channels.get(channel);
                if (c == null) {
                    c = new Channel(channel, m.name);
                    channels.put(channel, c);
                    c.state = State.SUBSCRIBING;
                    subscribe = true;
                }
                m.channel = c;
                c.members.add(m);
                if (c.state == State.LIVE) {
                    readyNow = true;
                } else {
                    c.waiting.add(m);
                }
            }
        }
        if (c == null) {
            m.complete();
            return;
        }
        if (readyNow) {
            m.ready();
        }
        if (subscribe) {
            sendSubscribe(c);
        }
    }

    private void leave(Member m) {
        Channel c = m.channel;
        if (c == null) {
            return;
        }
        boolean unsubscribe = false;
        synchronized (this) {
            c.members.remove(m);
            c.waiting.remove(m);
            if (c.members.isEmpty() && c.state == State.LIVE && channels.get(c.name) == c) {
                c.state = State.UNSUBSCRIBING;
                unsubscribe = true;
            }
        }
        if (unsubscribe) {
            sendUnsubscribe(c);
        }
    }

    // ---- server round trips (at most one in flight per channel)

    private void sendSubscribe(Channel c) {
        synchronized (this) {
            c.ownConfirmations++; // the listener hears this confirmation too: not a resubscription
        }
        connection.get()
                .flatMap(conn -> RedisErrors.errorsAfterTheWrite(conn.reactive().subscribe(c.name)))
                .subscribe(null, e -> onSubscribeFailed(c, e), () -> onSubscribed(c));
    }

    private void sendUnsubscribe(Channel c) {
        StatefulRedisPubSubConnection<String, String> conn = connection.current();
        if (conn == null) {
            onUnsubscribed(c);
            return;
        }
        RedisErrors.errorsAfterTheWrite(conn.reactive().unsubscribe(c.name)).subscribe(null, e -> {
            LOG.debug("UNSUBSCRIBE of {} failed: {}", c.name, e.toString());
            onUnsubscribed(c);
        }, () -> onUnsubscribed(c));
    }

    private void onSubscribed(Channel c) {
        List<Member> ready = null;
        boolean unsubscribe = false;
        synchronized (this) {
            if (channels.get(c.name) != c) {
                return; // closed meanwhile
            }
            if (c.members.isEmpty()) {
                c.state = State.UNSUBSCRIBING;
                unsubscribe = true;
            } else {
                c.state = State.LIVE;
                ready = new ArrayList<>(c.waiting);
                c.waiting.clear();
            }
        }
        if (unsubscribe) {
            sendUnsubscribe(c);
            return;
        }
        for (Member m : ready) {
            m.ready();
        }
    }

    private void onSubscribeFailed(Channel c, Throwable e) {
        List<Member> failed;
        synchronized (this) {
            if (channels.get(c.name) != c) {
                return;
            }
            channels.remove(c.name);
            failed = new ArrayList<>(c.members);
            c.members.clear();
            c.waiting.clear();
        }
        RuntimeException error = RedisErrors.map(c.lockName, "subscribe to the events", e);
        for (Member m : failed) {
            m.fail(error);
        }
    }

    private void onUnsubscribed(Channel c) {
        boolean resubscribe = false;
        synchronized (this) {
            if (channels.get(c.name) != c) {
                return;
            }
            if (!c.members.isEmpty() && !closed) {
                c.state = State.SUBSCRIBING; // joined while we were leaving: subscribe again
                resubscribe = true;
            } else {
                channels.remove(c.name);
            }
        }
        if (resubscribe) {
            sendSubscribe(c);
        }
    }

    // ---- messages

    private void dispatch(String channel, String message) {
        Channel c;
        synchronized (this) {
            c = channels.get(channel);
            if (c == null || c.state != State.LIVE) {
                return;
            }
        }
        LockEvent event = parse(c.lockName, message);
        if (event == null) {
            LOG.debug("ignoring unknown message on {}: {}", channel, message);
            return;
        }
        for (Member m : c.members) {
            m.queue.emitNext(event, RETRY_BRIEFLY);
        }
    }

    private void resubscribed(String channel) {
        Channel c;
        synchronized (this) {
            c = channels.get(channel);
            if (c == null) {
                return;
            }
            if (c.ownConfirmations > 0) {
                c.ownConfirmations--; // our own SUBSCRIBE (before or after its command completed): onSubscribed signals it
                return;
            }
            if (c.state != State.LIVE) {
                return;
            }
        }
        LockEvent event = new LockEvent.Subscribed(c.lockName);
        for (Member m : c.members) {
            m.queue.emitNext(event, RETRY_BRIEFLY);
        }
    }

    /**
     * @param name    the lock name (or task queue name)
     * @param message {@code acquired:<token>:<owner>}, {@code released:<owner>} or
     *                {@code revoked:<length of owner>:<owner><reason>} ({@link #revocation}); on a task
     *                queue's channel {@code ready} (tasks became capturable), which is a
     *                {@code Released} without an owner
     * @return the event, or {@code null} when the message is not one of ours
     */
    static @Nullable LockEvent parse(String name, String message) {
        return parseMessage(name, message);
    }

    private static final String REVOKED = "revoked:";

    /**
     * @param owner  the holder asked
     * @param reason why
     * @return the message of a revocation request: the owner's length first, so owner and reason may hold any character
     */
    static String revocation(String owner, String reason) {
        return REVOKED + owner.length() + ":" + owner + reason;
    }

    private static @Nullable LockEvent parseMessage(String name, String message) {
        if (message.equals("ready")) {
            return new LockEvent.Released(name, null, false);
        }
        if (message.startsWith("released:")) {
            return new LockEvent.Released(name, message.substring("released:".length()), false);
        }
        if (message.startsWith(REVOKED)) {
            int sep = message.indexOf(':', REVOKED.length());
            try {
                int length = Integer.parseInt(message.substring(REVOKED.length(), sep));
                int ownerEnd = sep + 1 + length;
                return new LockEvent.Revoked(name, message.substring(sep + 1, ownerEnd), message.substring(ownerEnd));
            } catch (RuntimeException e) { // not a number, no separator, too short: not one of ours
                return null;
            }
        }
        if (message.startsWith("acquired:")) {
            int sep = message.indexOf(':', "acquired:".length());
            if (sep < 0) {
                return null;
            }
            try {
                long token = Long.parseLong(message.substring("acquired:".length(), sep));
                return new LockEvent.Acquired(name, message.substring(sep + 1), token);
            } catch (NumberFormatException e) {
                return null;
            }
        }
        return null;
    }

    /** One subscribed channel. */
    private static final class Channel {
        final String name;
        final String lockName;
        final List<Member> members = new CopyOnWriteArrayList<>(); // mutated under PubSubChannels.this
        final List<Member> waiting = new ArrayList<>();            // guarded by PubSubChannels.this
        State state;                                               // guarded by PubSubChannels.this
        int ownConfirmations;                                      // guarded by PubSubChannels.this

        Channel(String name, String lockName) {
            this.name = name;
            this.lockName = lockName;
        }
    }

    /** One subscriber of a channel: its Subscribed signal and its queue of later events. */
    private static final class Member {
        final String name;
        final Sinks.One<LockEvent> ready = Sinks.one();
        final Sinks.Many<LockEvent> queue = Sinks.many().unicast().onBackpressureBuffer();
        volatile Channel channel;

        Member(String name) {
            this.name = name;
        }

        void ready() {
            ready.tryEmitValue(new LockEvent.Subscribed(name));
        }

        void fail(Throwable e) {
            ready.tryEmitError(e);
            queue.tryEmitComplete();
        }

        void complete() {
            ready.tryEmitEmpty();
            queue.emitComplete(RETRY_BRIEFLY);
        }
    }
}
