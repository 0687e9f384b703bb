package io.reactivelocks.etcd;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.KV;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.Watch;
import io.etcd.jetcd.options.WatchOption;
import io.etcd.jetcd.watch.WatchEvent;
import io.etcd.jetcd.watch.WatchResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.jspecify.annotations.Nullable;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.core.publisher.MonoSink;
import reactor.core.publisher.Sinks;

/**
 * Tells each held lock when its key is deleted behind the client's back — by an operator, by a
 * forged release, by a revoke seen before the next keep-alive — which the session alone would not
 * notice. One watch of deletions under the backend's whole prefix serves every held key: it is
 * opened by the first held key and stays open while any key is registered (an idle stream, no round
 * trips), so a grant costs no watch request; each deletion is dispatched to the held keys it ends.
 * Once no key has been registered for {@link #IDLE_CLOSE} the watch is closed, so that a backend
 * whose locks are held briefly (the backend registers a held key only after
 * {@link EtcdLockBackend#HELD_KEY_WATCH_DELAY}) is not sent an event for every release; the next
 * registration opens it again from that key's own revision (nothing slips, below).
 *
 * <p><b>Nothing slips through.</b> A held key with token (create revision) {@code t} must see every
 * deletion of it after revision {@code t}. The watch runs from a start revision {@code w} on
 * (jetcd resumes it from the last revision seen after a reconnect). A key registered with
 * {@code t + 1 >= w} is covered by it. A key registered with {@code t + 1 < w} (granted before the
 * watch was opened) is read once: its get is served at a revision {@code g >= w - 1}
 * ({@code w - 1} was a revision of the store before the get was sent), so either the get shows
 * it gone or replaced (the hold ends) or the watch covers every later deletion (from then on the
 * key counts as covered, for {@link #predecessorGone}). When the watch
 * fails for good (history compacted, a permanent error), every held key is read again and
 * re-registered from its read's revision, the first of them opening a new watch.
 *
 * <p><b>A deletion seen before its key registered.</b> The grant's answer and the watch's events
 * come on different streams, so a key deleted right after its grant (by someone else) may be
 * reported before the key is registered here. The watch therefore remembers the latest deletion
 * revision of the last {@value #REMEMBERED} keys it saw deleted: a key registering with token
 * {@code t} whose remembered deletion is after {@code t} ends at once; a key registering from a
 * revision at or below the highest deletion already forgotten is read once, as above.
 *
 * <p><b>A queued key's predecessor, in the same order.</b> A queued owner whose predecessor is known
 * to have been the lowest key may be granted on that key's deletion alone — if its own key was not
 * deleted first. Two watches do not say which came first (each is its own stream; one opened from a
 * past revision is caught up by etcd's 100 ms loop), so the predecessor's deletion is taken from this
 * same watch ({@link #predecessorGone}): its events come in revision order, the events of one answer
 * are applied to the held keys before any predecessor is decided, and a predecessor's deletion
 * reports {@link Gone#IN_ORDER} only when the queued key is still registered here and was covered
 * by the watch from its own create revision on (no read pending for it).
 */
final class HeldKeyWatch {

    private final KV kv;
    private final Watch watch;
    private final EtcdKeys keys;
    private final EtcdLockOptions options;

    /** How many deleted keys the watch remembers (see the class comment). */
    static final int REMEMBERED = 1024;
    /** How long the watch stays open with no key registered before it is closed. */
    static final Duration IDLE_CLOSE = Duration.ofSeconds(10);

    // guarded by this
    private final Map<ByteSequence, List<Held>> held = new HashMap<>();
    // guarded by this: key -> the mod revision of its latest deletion seen, oldest first
    private final java.util.LinkedHashMap<ByteSequence, Long> deleted = new java.util.LinkedHashMap<>();
    // guarded by this: the highest deletion revision no longer remembered
    private long forgottenUpTo;
    private Watch.@Nullable Watcher watcher;
    private long watchFrom;
    private long generation;
    private boolean closed;
    /** The pending close of an idle watch, if any. */
    private @Nullable Disposable idleClose;
    private final Duration idleAfter;
    // guarded by this: predecessor key -> the queued owners waiting for its deletion through this watch
    private final Map<ByteSequence, List<PredecessorWait>> waits = new HashMap<>();
    /**
     * Whether the watch delivers deletions as they commit: it started at a revision after the store's
     * when etcd created it, or has had {@link #LIVE_AFTER} since — etcd catches a watch that starts in
     * the past up every 100 ms. Only a hint for latency (what waits on the watch alone); order never
     * depends on it.
     */
    private volatile boolean live;
    /** Guarded by this: completes when {@link #live} next becomes true. */
    private Sinks.Empty<Void> liveSignal = Sinks.empty();
    /** How long after a watch from a past revision was created it is taken to be caught up. */
    static final Duration LIVE_AFTER = Duration.ofMillis(250);

    HeldKeyWatch(KV kv, Watch watch, EtcdKeys keys, EtcdLockOptions options) {
        this(kv, watch, keys, options, IDLE_CLOSE);
    }

    HeldKeyWatch(KV kv, Watch watch, EtcdKeys keys, EtcdLockOptions options, Duration idleAfter) {
        this.kv = kv;
        this.watch = watch;
        this.keys = keys;
        this.options = options;
        this.idleAfter = idleAfter;
    }

    /** @return whether the watch is open (for tests) */
    synchronized boolean isOpen() {
        return watcher != null;
    }

    /**
     * @param key   a held key
     * @param token the create revision it was granted with
     * @return completes when that generation of the key is deleted (or was already replaced or
     *         gone); cancel to stop watching it
     */
    Mono<Void> keyGone(ByteSequence key, long token) {
        return Mono.create(sink -> {
            Held h = new Held(key, token, sink);
            sink.onDispose(() -> forget(h));
            register(h, token + 1);
        });
    }

    /** Stops the watch; held keys are no longer told of deletions (the backend is closing). */
    void close() {
        Runnable stopped;
        synchronized (this) {
            closed = true;
            stopped = stopWatch();
            generation++;
            held.clear();
            cancelIdleClose();
        }
        stopped.run();
    }

    /**
     * Guarded by this: drops the watch (its events are ignored from now on: the caller moves the
     * generation on, or is its end) and every predecessor wait on it.
     *
     * @return what is left to do outside the lock: close the watch, tell the waits they are not watched
     */
    private Runnable stopWatch() {
        Watch.Watcher w = watcher;
        watcher = null;
        setLive(false);
        List<PredecessorWait> waiting = drainWaits();
        return () -> {
            if (w != null) {
                w.close();
            }
            tell(waiting, Gone.NOT_WATCHED);
        };
    }

    // guarded by this
    private void cancelIdleClose() {
        if (idleClose != null) {
            idleClose.dispose();
            idleClose = null;
        }
    }

    /** Guarded by this: no key is registered any more; the watch closes unless one registers within {@link #idleAfter}. */
    private void closeWhenIdle() {
        if (watcher == null || idleClose != null || !held.isEmpty()) {
            return;
        }
        long gen = generation;
        idleClose = Mono.delay(idleAfter, options.scheduler()).subscribe(x -> {
            Runnable stopped;
            synchronized (this) {
                idleClose = null;
                if (gen != generation || closed || !held.isEmpty()) {
                    return;
                }
                stopped = stopWatch();
                generation++;
            }
            stopped.run();
        });
    }

    private void register(Held h, long fromRevision) {
        boolean check;
        boolean endNow = false;
        synchronized (this) {
            if (closed || h.done) {
                return;
            }
            List<Held> of = held.computeIfAbsent(h.key, k -> new ArrayList<>(1));
            if (!of.contains(h)) {
                of.add(h);
            }
            cancelIdleClose();
            if (watcher == null) {
                open(fromRevision);
                check = false;
                h.covered = true;
            } else {
                Long deletedAt = deleted.get(h.key);
                if (deletedAt != null && h.token < deletedAt) {
                    // its deletion was reported before it registered
                    of.remove(h);
                    if (of.isEmpty()) {
                        held.remove(h.key);
                    }
                    closeWhenIdle();
                    h.done = true;
                    endNow = true;
                    check = false;
                } else {
                    check = fromRevision < watchFrom || fromRevision <= forgottenUpTo;
                    h.covered = !check;
                }
            }
        }
        if (endNow) {
            h.sink.success();
        } else if (check) {
            check(h);
        }
    }

    // guarded by this
    private void open(long fromRevision) {
        long gen = ++generation;
        WatchOption option = WatchOption.builder().isPrefix(true).withRevision(fromRevision).withNoPut(true)
                .withCreateNotify(true).build();
        watchFrom = fromRevision;
        setLive(false);
        watcher = watch.watch(keys.all(), option, Watch.listener(
                response -> {
                    if (response.isCreatedNotify()) {
                        onCreated(gen, response.getHeader().getRevision());
                    } else {
                        onDeletions(response);
                    }
                },
                error -> onWatchEnded(gen),
                () -> onWatchEnded(gen)));
    }

    /**
     * The watch was created (again, after jetcd resumed it) with the store at {@code storeRevision}:
     * live at once when it starts after that revision, else after {@link #LIVE_AFTER}.
     */
    private void onCreated(long gen, long storeRevision) {
        Sinks.Empty<Void> fire;
        synchronized (this) {
            if (gen != generation || closed) {
                return;
            }
            if (storeRevision < watchFrom) {
                fire = setLive(true);
            } else {
                setLive(false);
                fire = null;
            }
        }
        if (fire != null) {
            fire.tryEmitEmpty();
            return;
        }
        Mono.delay(LIVE_AFTER, options.scheduler()).subscribe(x -> {
            Sinks.Empty<Void> later = null;
            synchronized (this) {
                if (gen == generation && !closed) {
                    later = setLive(true);
                }
            }
            if (later != null) {
                later.tryEmitEmpty();
            }
        });
    }

    /** @return whether that generation of the key is registered and covered by the watch (for tests) */
    synchronized boolean covers(ByteSequence key, long token) {
        List<Held> of = held.get(key);
        return of != null && of.stream().anyMatch(h -> h.token == token && h.covered && !h.done);
    }

    /** @return whether the watch is taken to deliver deletions as they commit (see {@link #live}) */
    boolean live() {
        return live;
    }

    /** @return completes when the watch is (taken to be) live; at once when it is */
    synchronized Mono<Void> whenLive() {
        return live ? Mono.empty() : liveSignal.asMono();
    }

    /** Guarded by this: @return the signal to complete, outside the lock, when the watch became live */
    private Sinks.@Nullable Empty<Void> setLive(boolean now) {
        if (now == live) {
            return null;
        }
        live = now;
        if (now) {
            return liveSignal;
        }
        liveSignal = Sinks.empty();
        return null;
    }

    private void onDeletions(WatchResponse response) {
        List<Held> gone = null;
        List<PredecessorWait> decided = null;
        synchronized (this) {
            for (WatchEvent e : response.getEvents()) {
                if (e.getEventType() != WatchEvent.EventType.DELETE) {
                    continue;
                }
                KeyValue kv = e.getKeyValue();
                long revision = kv.getModRevision();
                remember(kv.getKey(), revision);
                List<Held> of = held.get(kv.getKey());
                if (of == null) {
                    continue;
                }
                for (int i = of.size() - 1; i >= 0; i--) {
                    Held h = of.get(i);
                    if (h.token < revision) { // a deletion of this incarnation, not of an earlier key of the same owner
                        of.remove(i);
                        if (gone == null) {
                            gone = new ArrayList<>();
                        }
                        gone.add(h);
                    }
                }
                if (of.isEmpty()) {
                    held.remove(kv.getKey());
                }
            }
            // the predecessors after every held key of this answer: a queued key deleted at the revision of
            // its predecessor's deletion (or before it, in this answer) is gone by then
            if (!waits.isEmpty()) {
                for (WatchEvent e : response.getEvents()) {
                    if (e.getEventType() != WatchEvent.EventType.DELETE) {
                        continue;
                    }
                    List<PredecessorWait> of = waits.get(e.getKeyValue().getKey());
                    if (of == null) {
                        continue;
                    }
                    long revision = e.getKeyValue().getModRevision();
                    for (int i = of.size() - 1; i >= 0; i--) {
                        PredecessorWait w = of.get(i);
                        if (revision > w.after) {
                            of.remove(i);
                            w.gone = ownKeyIntact(w) ? Gone.IN_ORDER : Gone.UNORDERED;
                            if (decided == null) {
                                decided = new ArrayList<>();
                            }
                            decided.add(w);
                        }
                    }
                    if (of.isEmpty()) {
                        waits.remove(e.getKeyValue().getKey());
                    }
                }
            }
            closeWhenIdle();
        }
        if (gone != null) {
            for (Held h : gone) {
                h.sink.success();
            }
        }
        if (decided != null) {
            for (PredecessorWait w : decided) {
                w.outcome.tryEmitValue(w.gone);
            }
        }
    }

    /** What a queued owner's wait through this watch for its predecessor's deletion learnt. */
    enum Gone {
        /**
         * The predecessor was deleted, and the queued key had not been deleted before (nor at the same
         * revision): this watch covered it from its create revision on and reported no deletion of it.
         */
        IN_ORDER,
        /** The predecessor was deleted; whether the queued key still stood then is not known here (read it). */
        UNORDERED,
        /** This watch cannot tell the predecessor's deletion (not open, started too late, ended): watch it otherwise. */
        NOT_WATCHED
    }

    /**
     * Waits, through this watch, for the deletion of a queued owner's predecessor, in order with the
     * deletions of the owner's own key — which must be registered here ({@link #keyGone}) while it waits.
     *
     * @param own          the queued key
     * @param ownToken     its create revision
     * @param predecessor  the key before it
     * @param readRevision the revision of the read that found the predecessor there
     * @return the wait, registered; {@link PredecessorWait#cancel} when no longer needed
     */
    PredecessorWait predecessorGone(ByteSequence own, long ownToken, ByteSequence predecessor, long readRevision) {
        PredecessorWait w = new PredecessorWait(own, ownToken, predecessor, readRevision);
        synchronized (this) {
            if (closed || watcher == null || readRevision + 1 < watchFrom) {
                w.gone = Gone.NOT_WATCHED;
            } else {
                Long deletedAt = deleted.get(predecessor);
                if (deletedAt != null && deletedAt > readRevision) { // reported before the wait was registered
                    w.gone = ownKeyIntact(w) ? Gone.IN_ORDER : Gone.UNORDERED;
                } else if (forgottenUpTo > readRevision) { // may have been reported and forgotten
                    w.gone = Gone.NOT_WATCHED;
                } else {
                    waits.computeIfAbsent(predecessor, k -> new ArrayList<>(1)).add(w);
                }
            }
        }
        if (w.gone != null) {
            w.outcome.tryEmitValue(w.gone);
        }
        return w;
    }

    /** Guarded by this: the queued key of the wait is registered, covered by the watch from its token on. */
    private boolean ownKeyIntact(PredecessorWait w) {
        List<Held> of = held.get(w.own);
        if (of == null) {
            return false;
        }
        for (Held h : of) {
            if (h.token == w.ownToken && h.covered && !h.done) {
                return true;
            }
        }
        return false;
    }

    /** Guarded by this: every predecessor wait, removed. */
    private List<PredecessorWait> drainWaits() {
        if (waits.isEmpty()) {
            return List.of();
        }
        List<PredecessorWait> all = new ArrayList<>();
        waits.values().forEach(all::addAll);
        waits.clear();
        return all;
    }

    private static void tell(List<PredecessorWait> waiting, Gone gone) {
        for (PredecessorWait w : waiting) {
            w.outcome.tryEmitValue(gone);
        }
    }

    /** A queued owner's wait for its predecessor's deletion through this watch. */
    final class PredecessorWait {
        final ByteSequence own;
        final long ownToken;
        final ByteSequence key;
        /** The revision of the read that found the predecessor: a deletion after it counts. */
        final long after;
        final Sinks.One<Gone> outcome = Sinks.one();
        /** Guarded by the watch's lock once registered. */
        @Nullable Gone gone;

        PredecessorWait(ByteSequence own, long ownToken, ByteSequence key, long after) {
            this.own = own;
            this.ownToken = ownToken;
            this.key = key;
            this.after = after;
        }

        /** @return what the wait learnt, once it learnt it (replayed to every subscriber) */
        Mono<Gone> gone() {
            return outcome.asMono();
        }

        /** Stops waiting. */
        void cancel() {
            synchronized (HeldKeyWatch.this) {
                List<PredecessorWait> of = waits.get(key);
                if (of != null && of.remove(this) && of.isEmpty()) {
                    waits.remove(key);
                }
            }
        }
    }

    // guarded by this
    private void remember(ByteSequence key, long revision) {
        deleted.remove(key);
        deleted.put(key, revision);
        if (deleted.size() > REMEMBERED) {
            var eldest = deleted.entrySet().iterator();
            forgottenUpTo = Math.max(forgottenUpTo, eldest.next().getValue());
            eldest.remove();
        }
    }

    /** The watch failed for good or ended: every held key is read and registered again. */
    private void onWatchEnded(long gen) {
        Runnable stopped;
        List<Held> all = new ArrayList<>();
        synchronized (this) {
            if (gen != generation || closed) {
                return;
            }
            stopped = stopWatch();
            for (List<Held> of : held.values()) {
                all.addAll(of);
            }
            held.clear();
        }
        stopped.run();
        for (Held h : all) {
            reread(h);
        }
    }

    /** A key registered from before the watch's start: read once; gone or replaced ends its hold. */
    private void check(Held h) {
        long gen;
        synchronized (this) {
            gen = generation;
        }
        read(h).subscribe(found -> {
            if (found.isEmpty()) {
                reread(h); // etcd unreachable: look again shortly (the session's deadline rules meanwhile)
            } else if (gone(h, found.get())) {
                forget(h);
                h.sink.success();
            } else {
                covered(h, gen, found.get().getHeader().getRevision());
            }
        });
    }

    /**
     * A key registered from before the watch's start was read standing at {@code readRevision}: no
     * deletion of it came before, every later one comes through this watch (one it reported already
     * removed the key), so it is covered from now on — a predecessor's deletion can be in order for it.
     */
    private synchronized void covered(Held h, long gen, long readRevision) {
        List<Held> of = held.get(h.key);
        if (gen == generation && watcher != null && readRevision + 1 >= watchFrom && of != null && of.contains(h)) {
            h.covered = true;
        }
    }

    /** After the watch ended: read the key shortly; gone (complete), still ours (register from the read on). */
    private void reread(Held h) {
        Mono.delay(EtcdLockBackend.WATCH_RETRY, options.scheduler())
                .then(read(h))
                .subscribe(found -> {
                    if (found.isEmpty()) {
                        reread(h);
                    } else if (gone(h, found.get())) {
                        h.sink.success();
                    } else {
                        register(h, found.get().getHeader().getRevision() + 1);
                    }
                });
    }

    private Mono<Optional<io.etcd.jetcd.kv.GetResponse>> read(Held h) {
        return Mono.defer(() -> h.done ? Mono.<Optional<io.etcd.jetcd.kv.GetResponse>>empty()
                : Mono.fromFuture(() -> kv.get(h.key))
                        .timeout(options.requestTimeout(), options.scheduler())
                        .map(Optional::of)
                        .onErrorReturn(Optional.empty()));
    }

    private static boolean gone(Held h, io.etcd.jetcd.kv.GetResponse r) {
        List<KeyValue> kvs = r.getKvs();
        return kvs.isEmpty() || kvs.get(0).getCreateRevision() != h.token;
    }

    private void forget(Held h) {
        synchronized (this) {
            h.done = true;
            List<Held> of = held.get(h.key);
            if (of != null && of.remove(h) && of.isEmpty()) {
                held.remove(h.key);
            }
            closeWhenIdle();
        }
    }

    /** One held key's subscription. */
    private static final class Held {
        final ByteSequence key;
        final long token;
        final MonoSink<Void> sink;
        /** Set under the HeldKeyWatch's lock; read without it to skip reads no one waits for. */
        volatile boolean done;
        /** Guarded by the watch's lock: registered with no read pending, every deletion of it after its token comes through the watch. */
        boolean covered;

        Held(ByteSequence key, long token, MonoSink<Void> sink) {
            this.key = key;
            this.token = token;
            this.sink = sink;
        }
    }
}
