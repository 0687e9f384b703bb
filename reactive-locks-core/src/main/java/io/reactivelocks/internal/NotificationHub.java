package io.reactivelocks.internal;

import io.reactivelocks.spi.LockBackend;
import io.reactivelocks.spi.LockEvent;
import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Scheduler;

/**
 * One shared subscription to {@link LockBackend#events} per lock name, ref-counted: the first
 * subscriber (a waiter or an observer) opens it, and it closes {@link #LINGER} after its last one
 * left unless another joined meanwhile. The linger is an economy for names whose line empties and
 * fills again (a contended name between bursts, a chain of handoffs whose last waiter was just
 * granted): a subscriber that joins a lingering subscription sends no subscribe request and, the
 * subscription being live, waits for the next release without polling — where closing at once
 * costs an unsubscribe and a subscribe request per burst.
 */
final class NotificationHub {

    /** How long a name's subscription stays open after its last subscriber left. */
    static final Duration LINGER = Duration.ofSeconds(1);

    private final LockBackend backend;
    private final Scheduler lingerTimer;
    private final ConcurrentHashMap<String, Channel> channels = new ConcurrentHashMap<>();
    private final Sinks.Empty<Void> closed = Sinks.empty();

    /**
     * @param backend     the store
     * @param lingerTimer the scheduler that times a subscription's {@link #LINGER}
     */
    NotificationHub(LockBackend backend, Scheduler lingerTimer) {
        this.backend = backend;
        this.lingerTimer = lingerTimer;
    }

    /** Ends every subscription now, lingering or not (their subscribers see them complete). */
    void close() {
        closed.tryEmitEmpty();
    }

    /**
     * @param name the lock name
     * @return the shared events of {@code name}; a subscriber that joins a live channel does not
     *         see its {@link LockEvent.Subscribed}
     */
    Flux<LockEvent> events(String name) {
        return wakes(name).map(w -> w.event);
    }

    /**
     * @param name the lock name
     * @return the shared events of {@code name} as wake-ups for local waiters: every subscriber
     *         gets the same {@link Wake} for one event, and only one of them can {@link Wake#claim}
     *         a release — so one release wakes one local waiter, not all of them (no herd)
     */
    Flux<Wake> wakes(String name) {
        return Flux.defer(() -> channels.computeIfAbsent(name, Channel::new).shared);
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

    private final class Channel {
        final Flux<Wake> shared;
        volatile boolean live;

        Channel(String name) {
            this.shared = backend.events(name)
                    .takeUntilOther(closed.asMono())
                    .doOnNext(e -> {
                        if (e instanceof LockEvent.Subscribed) {
                            live = true;
                        }
                    })
                    .map(Wake::new)
                    .doFinally(s -> {
                        live = false;
                        channels.remove(name, this);
                    })
                    .publish()
                    .refCount(1, LINGER, lingerTimer);
        }
    }
}
