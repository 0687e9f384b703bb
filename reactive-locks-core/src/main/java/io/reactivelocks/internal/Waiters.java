package io.reactivelocks.internal;

import io.reactivelocks.spi.LockEvent;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;
import reactor.core.Disposable;
import reactor.core.Disposables;
import reactor.core.publisher.Flux;
import reactor.core.scheduler.Scheduler;

/**
 * The local waiters of each name and one shared store subscription per name while any waits. For
 * a semaphore a release wakes <em>one</em> waiter (the longest waiting, which then goes to the back
 * of the line), not all of them: a freed permit serves one caller, so waking every local waiter
 * would be a herd. Where one release may let many in (a writer leaving lets every waiting reader
 * in), a release wakes all while at least one waiter that asked for that waits (a reader); with
 * only writers waiting it wakes one, like the semaphore. A caller joins after its first busy answer (an uncontended
 * acquire never subscribes); so that no release between that answer and the join is missed, a
 * (re-)established subscription wakes all of them to re-check, and a waiter joining a name whose
 * subscription already exists starts woken (it re-checks once).
 *
 * <p>Each waiter is also told whether its name's subscription is <em>live</em> — the store confirmed
 * it ({@link LockEvent.Subscribed}) and it has not ended since: a waiter told {@code true} has been
 * woken to re-check after that point, so every later release reaches it and its timer is only a
 * safety net ({@link AcquireOperation}).
 *
 * <p>A name's subscription closes {@link NotificationHub#LINGER} after its last waiter left, unless
 * one joined meanwhile (the same economy as the lock client's {@link NotificationHub}).
 */
final class Waiters {

    private final Function<String, Flux<LockEvent>> events;
    private final Scheduler lingerTimer;
    private final Map<String, Channel> channels = new ConcurrentHashMap<>();

    /**
     * @param events      a name's store events
     * @param lingerTimer the scheduler that times a subscription's linger
     */
    Waiters(Function<String, Flux<LockEvent>> events, Scheduler lingerTimer) {
        this.events = events;
        this.lingerTimer = lingerTimer;
    }

    /**
     * @param name     the name
     * @param wakesAll whether a release wakes every waiter of the name while this one waits (else one)
     * @param mark     a {@link #releaseMark} taken before the waiter's last request was sent, or null: when the
     *                 subscription has been live since and notified no release, joining it does not wake the
     *                 waiter to re-check
     * @param onWake   called at each wake-up (on the thread of the store's event, or at once from here when the
     *                 name's subscription is live already: the waiter re-checks once)
     * @param onLive   told {@code true} (before the wake-up it comes with) when the name's subscription is live,
     *                 {@code false} when it ended
     * @return a new waiter, registered until {@link Waiter#leave()}
     */
    Waiter join(String name, boolean wakesAll, @Nullable Object mark, Runnable onWake, Consumer<Boolean> onLive) {
        while (true) {
            Channel c = channels.computeIfAbsent(name, Channel::new);
            Waiter w = c.add(wakesAll, mark, onWake, onLive);
            if (w != null) {
                return w;
            }
            channels.remove(name, c); // closed by its last waiter meanwhile: take a fresh one
        }
    }

    /**
     * @param name the name
     * @return a mark of the releases notified on the name's live subscription so far, or null when none is live
     */
    @Nullable Object releaseMark(String name) {
        Channel c = channels.get(name);
        return c == null ? null : c.mark();
    }

    void closeAll() {
        for (Channel c : new ArrayList<>(channels.values())) {
            c.close();
        }
    }

    /** One caller waiting for a grant of one name: woken by a call of its {@code onWake}. */
    final class Waiter {
        private final Channel channel;
        private final boolean wakesAll;
        private final Runnable onWake;
        private final Consumer<Boolean> onLive;

        Waiter(Channel channel, boolean wakesAll, Runnable onWake, Consumer<Boolean> onLive) {
            this.channel = channel;
            this.wakesAll = wakesAll;
            this.onWake = onWake;
            this.onLive = onLive;
        }

        void wake() {
            onWake.run();
        }

        void leave() {
            channel.remove(this);
        }
    }

    private final class Channel {
        private final String name;
        private final ArrayDeque<Waiter> waiting = new ArrayDeque<>(); // guarded by this
        private int wakingAll;                                          // waiters with wakesAll, guarded by this
        private Disposable.Composite subscription;                     // guarded by this
        private boolean closed;                                         // guarded by this
        private boolean live;                                           // guarded by this: Subscribed seen, not ended
        private long joins;                                             // guarded by this: waiters added so far
        private long releases;                                          // guarded by this: Released, Subscribed seen

        Channel(String name) {
            this.name = name;
        }

        synchronized @Nullable Object mark() {
            return live && !closed ? new Mark(this, releases) : null;
        }

        Waiter add(boolean wakesAll, @Nullable Object mark, Runnable onWake, Consumer<Boolean> onLive) {
            Waiter w = new Waiter(this, wakesAll, onWake, onLive);
            boolean subscribe;
            boolean liveNow;
            boolean unchanged;
            synchronized (this) {
                if (closed) {
                    return null;
                }
                waiting.addLast(w);
                joins++;
                if (wakesAll) {
                    wakingAll++;
                }
                subscribe = subscription == null;
                if (subscribe) {
                    subscription = Disposables.composite();
                }
                liveNow = live;
                unchanged = liveNow && mark instanceof Mark m && m.channel == this && m.releases == releases;
            }
            if (!subscribe) {
                if (liveNow) {
                    w.onLive.accept(true); // the wake below re-checks after the subscription went live
                }
                if (!unchanged) {
                    w.wake(); // the subscription may be live already: no Subscribed will come for this one
                }
                return w;
            }
            Disposable d = events.apply(name).subscribe(this::on, e -> ended(), this::ended);
            boolean dispose;
            synchronized (this) {
                dispose = closed;
                if (!closed) {
                    subscription.add(d);
                }
            }
            if (dispose) {
                d.dispose();
            }
            return w;
        }

        void remove(Waiter w) {
            long idleSince = -1;
            synchronized (this) {
                if (waiting.remove(w) && w.wakesAll) {
                    wakingAll--;
                }
                if (waiting.isEmpty() && !closed) {
                    idleSince = joins;
                }
            }
            if (idleSince >= 0) {
                long joinsThen = idleSince;
                try {
                    lingerTimer.schedule(() -> closeIfIdleSince(joinsThen), NotificationHub.LINGER.toMillis(),
                            TimeUnit.MILLISECONDS);
                } catch (RejectedExecutionException e) {
                    closeIfIdleSince(joinsThen); // the timer is shut down (its engine closed): close now
                }
            }
        }

        /** Closes the subscription if no waiter joined since the last one left ({@code joinsThen} joins). */
        private void closeIfIdleSince(long joinsThen) {
            Disposable d = null;
            synchronized (this) {
                if (waiting.isEmpty() && !closed && joins == joinsThen) {
                    closed = true;
                    d = subscription;
                }
            }
            if (d != null) {
                channels.remove(name, this);
                d.dispose();
            }
        }

        void close() {
            Disposable d;
            synchronized (this) {
                closed = true;
                d = subscription;
            }
            channels.remove(name, this);
            if (d != null) {
                d.dispose();
            }
            wakeAll();
        }

        private void on(LockEvent event) {
            if (event instanceof LockEvent.Released) {
                Waiter first;
                boolean all;
                synchronized (this) {
                    releases++;
                    all = wakingAll > 0;
                    first = all ? null : waiting.pollFirst();
                    if (first != null) {
                        waiting.addLast(first);
                    }
                }
                if (all) {
                    wakeAll();
                } else if (first != null) {
                    first.wake();
                }
            } else if (event instanceof LockEvent.Subscribed) {
                liveThenWakeAll(true);
            }
        }

        /** The store's events ended (an error, or completion): no longer live; every waiter re-checks. */
        private void ended() {
            boolean idle;
            synchronized (this) {
                idle = waiting.isEmpty() && !closed;
                if (idle) {
                    closed = true; // lingering with no waiter: nothing to keep
                }
            }
            if (idle) {
                channels.remove(name, this);
            }
            liveThenWakeAll(false);
        }

        /** Tells every waiter whether the subscription is live now, then wakes them all to re-check. */
        private void liveThenWakeAll(boolean now) {
            List<Waiter> all;
            synchronized (this) {
                live = now;
                releases++;
                all = new ArrayList<>(waiting);
            }
            all.forEach(w -> w.onLive.accept(now));
            all.forEach(Waiter::wake);
        }

        private void wakeAll() {
            List<Waiter> all;
            synchronized (this) {
                all = new ArrayList<>(waiting);
            }
            all.forEach(Waiter::wake);
        }
    }

    private record Mark(Channel channel, long releases) {
    }
}
