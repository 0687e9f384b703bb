package io.reactivelocks.r2dbc.mariadb;

import io.reactivelocks.spi.LockEvent;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Scheduler;

/**
 * The wake-ups of one MariaDB backend, which has no {@code LISTEN}/{@code NOTIFY}: while anyone
 * subscribes to the events of a name, one timer of the backend reads the state of every such name in
 * one statement per {@code pollInterval} ({@code poll.sql}) and turns each change into
 * {@link LockEvent}s — a holder gone or expired is {@link LockEvent.Released}, a new holder
 * {@link LockEvent.Acquired}. A release made through the same backend is announced at once
 * ({@link #announce}), without waiting for the next read. Nothing is read while nobody subscribes,
 * and the timer stops then.
 *
 * <p>{@link LockEvent.Subscribed} comes first for each subscriber (a release before the first read
 * is seen by that read: an unknown state that reads free is announced as released), and again for
 * every name after a read that succeeded following failed ones (waiters re-check then).
 */
final class NamePoller {

    /** What a read found for one name: the holder, and whether its lease is live. */
    record Seen(String owner, long token, boolean live) {
    }

    /** A revocation request read for a watched name (stored form), asked at {@code atUs} by the server's clock. */
    record Revocation(String stored, String owner, String reason, long atUs) {
    }

    private static final int CHUNK = 200;

    private final Duration interval;
    private final Scheduler scheduler;
    private final Function<List<String>, Flux<Map.Entry<String, Seen>>> read;
    private final @Nullable Function<List<String>, Flux<Revocation>> revocations;
    /** Whether reads find each name's holder (owner and token), as an announced grant names it. */
    private final boolean holders;
    private final Map<String, Watch> watched = new HashMap<>(); // guarded by this, keyed by name
    private @Nullable Disposable ticker; // guarded by this
    private boolean closed; // guarded by this
    private volatile boolean failing; // reads run one at a time, on whichever thread answers

    /**
     * @param interval  how often to read
     * @param scheduler the timer's scheduler
     * @param read      reads the state of the given names (stored form), one entry per row found, keyed by stored name
     */
    NamePoller(Duration interval, Scheduler scheduler, Function<List<String>, Flux<Map.Entry<String, Seen>>> read) {
        this(interval, scheduler, read, null);
    }

    /**
     * @param interval    how often to read
     * @param scheduler   the timer's scheduler
     * @param read        reads the state of the given names (stored form), one entry per row found, keyed by stored name
     * @param revocations reads the revocation requests for the given names (stored form), or {@code null} for none;
     *                    each request is announced once as {@link LockEvent.Revoked} (again when it is renewed)
     */
    NamePoller(Duration interval, Scheduler scheduler, Function<List<String>, Flux<Map.Entry<String, Seen>>> read,
               @Nullable Function<List<String>, Flux<Revocation>> revocations) {
        this(interval, scheduler, read, revocations, false);
    }

    /**
     * @param interval    how often to read
     * @param scheduler   the timer's scheduler
     * @param read        reads the state of the given names (stored form), one entry per row found, keyed by stored name
     * @param revocations reads the revocation requests for the given names (stored form), or {@code null} for none
     * @param holders     whether {@code read} finds each name's holder (its owner and token): then an announced
     *                    grant is taken as read, and the next read that finds it announces nothing again
     */
    NamePoller(Duration interval, Scheduler scheduler, Function<List<String>, Flux<Map.Entry<String, Seen>>> read,
               @Nullable Function<List<String>, Flux<Revocation>> revocations, boolean holders) {
        this.holders = holders;
        this.interval = Objects.requireNonNull(interval, "interval");
        this.scheduler = Objects.requireNonNull(scheduler, "scheduler");
        this.read = Objects.requireNonNull(read, "read");
        this.revocations = revocations;
    }

    /** An event and whether a read found it (rather than an announcement of this backend). */
    private record Emitted(LockEvent event, boolean polled) {
    }

    /** The subscribers of one name and what the last read saw. */
    private static final class Watch {
        final String name;
        final String stored;
        final Sinks.Many<Emitted> sink = Sinks.many().multicast().directBestEffort();
        int subscribers;
        /** null: unknown (nothing read yet); FREE: no live holder. */
        @Nullable Seen last;
        boolean known;
        /** Announcements so far: a read sent before the last one may predate it. */
        long announced;
        /** Whether the last read was set aside as older than an announcement. */
        boolean setAside;
        /** The time of the last revocation request announced, per owner asked. */
        final Map<String, Long> asked = new HashMap<>();

        Watch(String name) {
            this.name = name;
            this.stored = StoredText.encode(name);
        }

        void emit(LockEvent event, boolean polled) {
            synchronized (this) {
                sink.tryEmitNext(new Emitted(event, polled));
            }
        }
    }

    /**
     * @param name the lock name
     * @return {@link LockEvent.Subscribed}, then the changes the reads and this backend's releases
     *         find; completes when the poller closes
     */
    Flux<LockEvent> events(String name) {
        return emitted(name).map(Emitted::event);
    }

    /**
     * The events of a name for a fair lock's waiters, who count their place in line down on each
     * change: a release found by a read (not announced by this backend) may stand for several
     * handoffs folded between two reads, so it comes without its owner ("the store does not say"),
     * which makes every waiter ask again rather than miss its turn. Announced changes keep their
     * owners: each one is one change.
     *
     * @param name the lock name
     * @return as {@link #events(String)}, with the owners of released holders found by reads left out
     */
    Flux<LockEvent> waiterEvents(String name) {
        return emitted(name).map(e -> e.polled() && e.event() instanceof LockEvent.Released r
                ? new LockEvent.Released(r.name(), null, r.expired()) : e.event());
    }

    private Flux<Emitted> emitted(String name) {
        return Flux.defer(() -> {
            Watch w = register(name);
            if (w == null) {
                return Flux.empty();
            }
            return Flux.merge(w.sink.asFlux(), Mono.just(new Emitted(new LockEvent.Subscribed(name), false)))
                    .doFinally(s -> unregister(w));
        });
    }

    /**
     * Announces a change made through this backend to its subscribers at once (a release, a grant).
     *
     * @param event the change
     */
    void announce(LockEvent event) {
        Watch w;
        synchronized (this) {
            w = watched.get(event.name());
            if (w == null) {
                return;
            }
            w.announced++;
            if (event instanceof LockEvent.Released) {
                w.last = null;
                w.known = true;
            } else if (holders && event instanceof LockEvent.Acquired a && a.owner() != null) {
                // the next read finds this grant known: no second Acquired for it
                w.last = new Seen(a.owner(), a.token(), true);
                w.known = true;
            }
        }
        w.emit(event, false);
    }

    /** Stops the timer and completes every subscriber. */
    void close() {
        List<Watch> all;
        synchronized (this) {
            closed = true;
            all = new ArrayList<>(watched.values());
            watched.clear();
            if (ticker != null) {
                ticker.dispose();
                ticker = null;
            }
        }
        for (Watch w : all) {
            synchronized (w) {
                w.sink.tryEmitComplete();
            }
        }
    }

    private synchronized @Nullable Watch register(String name) {
        if (closed) {
            return null;
        }
        Watch w = watched.computeIfAbsent(name, Watch::new);
        w.subscribers++;
        if (ticker == null) {
            ticker = Flux.interval(interval, interval, scheduler)
                    .onBackpressureDrop()
                    .concatMap(tick -> pollOnce(), 1)
                    .subscribe(null, e -> { });
        }
        return w;
    }

    private synchronized void unregister(Watch w) {
        if (--w.subscribers > 0 || watched.get(w.name) != w) {
            return;
        }
        watched.remove(w.name);
        if (watched.isEmpty() && ticker != null) {
            ticker.dispose();
            ticker = null;
        }
    }

    /** One read of every watched name (in chunks); never errors. */
    private Mono<Void> pollOnce() {
        List<Watch> all;
        synchronized (this) {
            all = new ArrayList<>(watched.values());
        }
        if (all.isEmpty()) {
            return Mono.empty();
        }
        List<List<Watch>> chunks = new ArrayList<>();
        for (int i = 0; i < all.size(); i += CHUNK) {
            chunks.add(all.subList(i, Math.min(all.size(), i + CHUNK)));
        }
        boolean recovered = failing; // every watch re-checks after reads failed: a change may have been missed
        return Flux.fromIterable(chunks)
                .concatMap(chunk -> Flux.defer(() -> {
                    long[] announced = new long[chunk.size()];
                    synchronized (this) {
                        for (int i = 0; i < chunk.size(); i++) {
                            announced[i] = chunk.get(i).announced;
                        }
                    }
                    return read.apply(chunk.stream().map(w -> w.stored).toList())
                            .collectMap(Map.Entry::getKey, Map.Entry::getValue)
                            .doOnNext(found -> {
                                for (int i = 0; i < chunk.size(); i++) {
                                    seen(chunk.get(i), found.get(chunk.get(i).stored), recovered, announced[i]);
                                }
                            });
                }).then(revocations == null ? Mono.empty() : revocations.apply(chunk.stream().map(w -> w.stored).toList())
                                .collectList()
                                .doOnNext(requests -> asked(chunk, requests))
                                .onErrorResume(e -> Mono.empty()) // a request is asked again; the state read decides "failing"
                                .then()))
                .then(Mono.fromRunnable(() -> failing = false))
                .onErrorResume(e -> {
                    failing = true;
                    return Mono.empty();
                })
                .then();
    }

    private void asked(List<Watch> chunk, List<Revocation> requests) {
        for (Revocation r : requests) {
            for (Watch w : chunk) {
                if (!w.stored.equals(r.stored())) {
                    continue;
                }
                boolean fresh;
                synchronized (this) {
                    Long before = w.asked.get(r.owner());
                    fresh = before == null || before < r.atUs();
                    if (fresh) {
                        w.asked.put(r.owner(), r.atUs());
                    }
                }
                if (fresh) {
                    w.emit(new LockEvent.Revoked(w.name, r.owner(), r.reason()), true);
                }
            }
        }
    }

    /**
     * What a read found for one name. A read sent before this backend's last announcement for the name
     * may show a state older than the one announced (a handoff announced while the read was on its way
     * would be announced again, backwards): it is set aside, unless the one before was too (changes made
     * elsewhere are seen by the next read even while this backend keeps announcing).
     */
    private void seen(Watch w, @Nullable Seen row, boolean recovered, long announcedAtRead) {
        Seen now = row != null && row.live() ? row : null;
        List<LockEvent> events = new ArrayList<>(2);
        synchronized (this) {
            if (w.announced != announcedAtRead && !w.setAside) {
                w.setAside = true; // nothing from this read
            } else {
                w.setAside = false;
                changes(w, now, row != null, events);
            }
        }
        if (recovered) {
            w.emit(new LockEvent.Subscribed(w.name), true);
        }
        events.forEach(e -> w.emit(e, true));
    }

    /** The events of a change from {@code w.last} to {@code now}, which becomes the last seen; under this poller's lock. */
    private static void changes(Watch w, @Nullable Seen now, boolean rowFound, List<LockEvent> events) {
        Seen before = w.last;
        boolean known = w.known;
        w.last = now;
        w.known = true;
        if (now == null) {
            if (!known || before != null) {
                // the owner is unknown when nothing was read before: "" (no owner id is empty)
                events.add(new LockEvent.Released(w.name, before == null ? "" : before.owner(), rowFound));
            }
        } else if (before == null || !before.owner().equals(now.owner()) || before.token() != now.token()) {
            if (before != null) {
                events.add(new LockEvent.Released(w.name, before.owner(), false));
            }
            events.add(new LockEvent.Acquired(w.name, now.owner(), now.token()));
        }
    }
}
