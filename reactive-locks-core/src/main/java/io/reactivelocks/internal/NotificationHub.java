package io.reactivelocks.internal;

import io.reactivelocks.spi.LockBackend;
import io.reactivelocks.spi.LockEvent;
import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jspecify.annotations.Nullable;
import reactor.core.Disposable;
import reactor.core.Disposables;
import reactor.core.publisher.ConnectableFlux;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Scheduler;

/**
 * One shared subscription to the store's events per lock name, ref-counted: the first
 * subscriber (a waiter or an observer) opens it, and it closes {@link #LINGER} after its last one
 * left unless another joined meanwhile. The linger is an economy for names whose line empties and
 * fills again (a contended name between bursts, a chain of handoffs whose last waiter was just
 * granted): a subscriber that joins a lingering subscription sends no subscribe request and, the
 * subscription being live, waits for the next release without polling — where closing at once
 * costs an unsubscribe and a subscribe request per burst.
 *
 * <p>A store whose waiters' stream leaves grants out ({@link LockBackend#wakeUpsOmitGrants()}) gets two
 * subscriptions per name while both kinds listen: the waiters' ({@link LockBackend#wakeUps}) and the
 * observers' ({@link LockBackend#events}), so that the store announces grants only while someone observes.
 */
final class NotificationHub {

    /** How long a name's subscription stays open after its last subscriber left. */
    static final Duration LINGER = Duration.ofSeconds(1);

    private final LockBackend backend;
    private final Scheduler lingerTimer;
    /** The waiters' subscriptions (and the observers', unless the store tells grants apart). */
    private final ConcurrentHashMap<String, Channel> channels = new ConcurrentHashMap<>();
    /** The observers' subscriptions, when the store's waiters' stream leaves grants out; else unused. */
    private final ConcurrentHashMap<String, Channel> observed = new ConcurrentHashMap<>();
    private final boolean apart;
    private final Sinks.Empty<Void> closed = Sinks.empty();

    /**
     * @param backend     the store
     * @param lingerTimer the scheduler that times a subscription's {@link #LINGER}
     */
    NotificationHub(LockBackend backend, Scheduler lingerTimer) {
        this.backend = backend;
        this.lingerTimer = lingerTimer;
        this.apart = backend.wakeUpsOmitGrants();
    }

    /** Ends every subscription now, lingering or not (their subscribers see them complete). */
    void close() {
        closed.tryEmitEmpty();
        for (Channel c : channels.values()) {
            c.end();
        }
        for (Channel c : observed.values()) {
            c.end();
        }
    }

    /**
     * @param name the lock name
     * @return the shared events of {@code name} with its grants, for observers; a subscriber that joins a live
     *         channel does not see its {@link LockEvent.Subscribed}
     */
    Flux<LockEvent> events(String name) {
        return (apart ? channel(observed, name, true) : wakes(name)).map(w -> w.event);
    }

    /**
     * @param name the lock name
     * @return the shared events of {@code name} that a waiter needs (a store may leave grants out); a subscriber
     *         that joins a live channel does not see its {@link LockEvent.Subscribed}
     */
    Flux<LockEvent> wakeUpEvents(String name) {
        return wakes(name).map(w -> w.event);
    }

    /**
     * @param name the lock name
     * @return the shared events of {@code name} as wake-ups for local waiters: every subscriber
     *         gets the same {@link Wake} for one event, and only one of them can {@link Wake#claim}
     *         a release — so one release wakes one local waiter, not all of them (no herd)
     */
    Flux<Wake> wakes(String name) {
        return channel(channels, name, !apart);
    }

    private Flux<Wake> channel(ConcurrentHashMap<String, Channel> map, String name, boolean grants) {
        return Flux.defer(() -> {
            while (true) {
                Channel c = map.computeIfAbsent(name, n -> new Channel(n, map, grants));
                synchronized (c) {
                    if (!c.ended) {
                        return c.shared;
                    }
                }
                map.remove(name, c); // ended meanwhile: take a fresh one
            }
        });
    }

    /**
     * @param name the lock name
     * @return whether the name's shared subscription is open and the store confirmed it
     *         ({@link LockEvent.Subscribed}) since it last connected: a subscriber that joins it now hears
     *         every later event
     */
    boolean live(String name) {
        Channel c = channels.get(name);
        return c != null && c.live;
    }

    /**
     * @param name the lock name
     * @return a mark of the releases notified on the name's live subscription so far, or null when it is not
     *         live ({@link #unchangedSince})
     */
    @Nullable Object releaseMark(String name) {
        Channel c = channels.get(name);
        return c != null && c.live ? new Mark(c, c.releases) : null;
    }

    /**
     * @param name the lock name
     * @param mark a {@link #releaseMark} of the name, or null
     * @return true when the name's subscription has been live since {@code mark} was taken and notified no release
     *         (nor a re-subscription) since: a subscriber joining now misses nothing that came after the mark
     */
    boolean unchangedSince(String name, @Nullable Object mark) {
        Channel c = channels.get(name);
        return mark instanceof Mark m && m.channel == c && c.live && c.releases == m.releases;
    }

    private record Mark(Channel channel, long releases) {
    }

    /** One store event as seen by the local waiters of its lock. */
    static final class Wake {
        final LockEvent event;
        private final AtomicBoolean claimed = new AtomicBoolean();

        Wake(LockEvent event) {
            this.event = event;
        }

        /**
         * @return true for the one caller that may act on a {@link LockEvent.Released} (the first
         *         to ask); always true for other events ({@link LockEvent.Subscribed} concerns each
         *         subscriber that was waiting for the channel to go live)
         */
        boolean claim() {
            return !(event instanceof LockEvent.Released) || claimed.compareAndSet(false, true);
        }
    }

    /**
     * One name's subscription: connected by its first subscriber, disconnected {@link #LINGER} after its last one
     * left (unless another joined meanwhile), at once when the hub closes or the store's events end. A subscriber
     * that joins a channel ended meanwhile connects it again (a second subscription of the name for a while).
     */
    private final class Channel {
        final Flux<Wake> shared;
        private final String name;
        private final ConcurrentHashMap<String, Channel> map;
        private final ConnectableFlux<Wake> source;
        volatile boolean live;
        /** Releases and (re-)subscriptions notified so far: {@link #releaseMark}. */
        volatile long releases;
        private int subscribers;                // guarded by this
        private @Nullable Disposable connection; // guarded by this: null when not connected
        private long connects;                  // guarded by this: connections made so far
        private @Nullable Disposable linger;     // guarded by this
        private boolean ended;                  // guarded by this: wakes() takes a fresh channel

        /**
         * @param name   the lock name
         * @param map    the map this channel is kept in
         * @param grants whether it carries grants ({@link LockBackend#events}) or only what waiters need
         *               ({@link LockBackend#wakeUps})
         */
        Channel(String name, ConcurrentHashMap<String, Channel> map, boolean grants) {
            this.name = name;
            this.map = map;
            this.source = Flux.defer(() -> {
                        long connected;
                        synchronized (this) {
                            connected = connects;
                        }
                        return (grants ? backend.events(name) : backend.wakeUps(name))
                                .takeUntilOther(closed.asMono())
                                .doFinally(s -> end(connected));
                    })
                    .doOnNext(e -> {
                        if (e instanceof LockEvent.Subscribed) {
                            live = true;
                        }
                        if (e instanceof LockEvent.Subscribed || e instanceof LockEvent.Released) {
                            releases++; // one thread at a time: the store's events are serial
                        }
                    })
                    .map(Wake::new)
                    .publish();
            // a subscriber is registered with the source before it connects it: it sees the first Subscribed
            this.shared = source.doOnSubscribe(s -> joined()).doFinally(s -> left());
        }

        private void joined() {
            Disposable placeholder = null;
            Disposable timer;
            synchronized (this) {
                subscribers++;
                timer = linger;
                linger = null;
                if (connection == null) {
                    placeholder = Disposables.single();
                    connection = placeholder;
                    connects++;
                    ended = false;
                }
            }
            if (timer != null) {
                timer.dispose();
            }
            if (placeholder != null) {
                Disposable c = source.connect();
                boolean gone;
                synchronized (this) {
                    gone = connection != placeholder; // ended during connect (the store's events failed at once)
                    if (!gone) {
                        connection = c;
                    }
                }
                if (gone) {
                    c.dispose();
                }
            }
        }

        private void left() {
            long connected;
            synchronized (this) {
                if (--subscribers > 0 || connection == null || linger != null) {
                    return;
                }
                linger = Disposables.single(); // a timer is on its way
                connected = connects;
            }
            Disposable timer;
            try {
                timer = lingerTimer.schedule(() -> lingered(connected), LINGER.toMillis(), TimeUnit.MILLISECONDS);
            } catch (RejectedExecutionException e) {
                timer = null; // the timer is shut down (the client closing): disconnect now
            }
            if (timer == null) {
                lingered(connected);
                return;
            }
            boolean drop;
            synchronized (this) {
                drop = linger == null; // a subscriber joined (or it ended) meanwhile
                if (!drop) {
                    linger = timer;
                }
            }
            if (drop) {
                timer.dispose();
            }
        }

        /** The linger passed: disconnects unless a subscriber joined meanwhile. */
        private void lingered(long connected) {
            synchronized (this) {
                if (subscribers > 0) {
                    return;
                }
            }
            end(connected);
        }

        /** Ends the connection now (the hub closing). */
        void end() {
            long connected;
            synchronized (this) {
                connected = connects;
            }
            end(connected);
        }

        /** Disconnects, if still on connection {@code connected} (the linger passed, the hub closed, the events ended). */
        private void end(long connected) {
            Disposable c;
            Disposable timer;
            synchronized (this) {
                if (connects != connected || connection == null) {
                    return;
                }
                ended = true;
                c = connection;
                timer = linger;
                connection = null;
                linger = null;
            }
            live = false;
            map.remove(name, this);
            if (timer != null) {
                timer.dispose();
            }
            c.dispose();
        }
    }
}
