package io.reactivelocks.etcd;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.KV;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.Watch;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.WatchOption;
import io.etcd.jetcd.watch.WatchEvent;
import io.etcd.jetcd.watch.WatchResponse;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import org.jspecify.annotations.Nullable;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.core.publisher.MonoSink;
import reactor.core.scheduler.Schedulers;

/**
 * The waits of refused semaphore waiters with N &gt; 1: each counts the keys before its unit down
 * as their deletions arrive, and is let in by the deletion that brings them to N − k or fewer —
 * with no read, no write and no wake-up of anyone else.
 *
 * <p><b>Why it is exact.</b> A unit's place is its create revision; a key put later has a higher
 * one, so the keys before a unit only ever leave. Counted at revision {@code R} (the read that
 * refused the waiter: {@code before} keys), every deletion after {@code R} of a key whose create
 * revision is below the unit's takes one off; once the count plus the unit's k is at most N, the
 * unit holds at that deletion's revision — the same decision a read at that revision would make.
 * Deletions carry the key as it was ({@code prevKV}), whose create revision says whether it stood
 * before the unit, was the unit's own (the unit lost a key: look again) or came after (ignored).
 *
 * <p><b>One watch per name</b>, shared by the store's waiters of that name and closed a linger
 * ({@value #LINGER_MILLIS} ms) after the last of them left, so a wait costs no request: the watch
 * starts now (a synced watch: see {@link WaiterWatch}) and keeps the last {@value #RECENT}
 * deletions it delivered, so a waiter whose refusing read is older than what the watch delivered
 * already counts those from memory. Every waiter sees each deletion, and only those a deletion lets
 * in ask etcd anything: before, the head of the line alone watched the deletions and each waiter let
 * in told the next one by a put of its keys, so a line advanced one waiter per write, read and watch
 * — serially.
 *
 * <p><b>A read counts again</b> — one keys-only read of the keys up to the unit's, at its revision
 * {@code G}, after which only deletions after {@code G} count (those that arrive meanwhile wait for
 * it) — when the count at {@code R} is not known ({@code before < 0}: a re-check whose read saw only
 * the N + 1 keys before the unit) or when the deletions since {@code R} are not all known: the watch
 * started after {@code R}, or more than {@value #RECENT} deletions arrived since.
 */
final class LineWatch {

    static final long LINGER_MILLIS = 1000;
    static final int RECENT = 1024;

    private final Watch watch;
    private final KV kv;
    /** Guarded by this, as is all the state of the names and their counts. */
    private final Map<ByteSequence, Name> names = new HashMap<>();
    private boolean closed;

    LineWatch(Watch watch, KV kv) {
        this.watch = Objects.requireNonNull(watch, "watch");
        this.kv = Objects.requireNonNull(kv, "kv");
    }

    /**
     * A refused waiter's line.
     *
     * @param range        the name's key range (a prefix)
     * @param unit         the create revision of the waiter's unit
     * @param count        the keys of the unit (k)
     * @param permits      N
     * @param readRevision the revision of the read that refused it
     * @param before       the keys before the unit at that revision, or -1 when not known
     */
    record Line(ByteSequence range, long unit, int count, int permits, long readRevision, int before) {
        Line {
            Objects.requireNonNull(range, "range");
        }
    }

    /** Why a wait ended. */
    enum End {
        /** The keys before the unit dropped to N − k: the unit holds, no read needed. */
        LET_IN,
        /** Something the count cannot follow (a key of the unit gone, a deletion without its old key, the watch failed): look again. */
        LOOK_AGAIN,
        /** The watch closed with the store. */
        CLOSED
    }

    /** @return how the wait ended; cancel leaves the name's watch to the other waits (or to its linger) */
    Mono<End> await(Line line) {
        return Mono.create(sink -> {
            Count c = new Count(line, sink);
            Name n;
            List<Count> ended = new ArrayList<>(1);
            boolean read;
            synchronized (this) {
                if (closed) {
                    sink.success(End.CLOSED);
                    return;
                }
                n = names.computeIfAbsent(line.range(), Name::new);
                read = n.add(c, ended);
            }
            sink.onDispose(() -> n.remove(c));
            if (read) {
                count(n, c);
            }
            fire(ended);
        });
    }

    /**
     * @return the highest revision of a deletion the name's watch delivered (its start revision before
     *         the first), or -1 when the name has no created watch; for tests
     */
    synchronized long deliveredUpTo(ByteSequence range) {
        Name n = names.get(range);
        return n == null || n.from < 0 ? -1 : n.upTo;
    }

    /** Ends every wait ({@link End#CLOSED}) and closes every watch. */
    void close() {
        List<Count> ended = new ArrayList<>();
        List<Watch.Watcher> watchers = new ArrayList<>();
        synchronized (this) {
            closed = true;
            for (Name n : names.values()) {
                n.endAll(End.CLOSED, ended);
                if (n.watcher != null) {
                    watchers.add(n.watcher);
                }
            }
            names.clear();
        }
        watchers.forEach(Watch.Watcher::close);
        fire(ended);
    }

    /** The keys up to the unit's, read again: the count starts over at the read's revision. */
    private void count(Name n, Count c) {
        GetOption upToUnit = GetOption.builder().isPrefix(true).withKeysOnly(true).withMaxCreateRevision(c.line.unit()).build();
        Mono.fromFuture(() -> kv.get(c.line.range(), upToUnit)).subscribe(r -> {
            List<Count> ended = new ArrayList<>(1);
            synchronized (this) {
                c.counted(r.getKvs(), r.getHeader().getRevision(), ended);
            }
            fire(ended);
        }, e -> {
            List<Count> ended = new ArrayList<>(1);
            synchronized (this) {
                c.end(End.LOOK_AGAIN, ended);
            }
            fire(ended);
        });
    }

    /** Tells the ended waits, outside the lock (a waiter told may wait again at once). */
    private static void fire(List<Count> ended) {
        for (Count c : ended) {
            c.sink.success(c.result);
        }
    }

    /** A name's shared watch: its waits, and the deletions it delivered lately. */
    private final class Name {
        final ByteSequence range;
        final Set<Count> counts = new LinkedHashSet<>();
        Watch.@Nullable Watcher watcher;
        /** The revision the watch started at; -1 until etcd reported it created. */
        long from = -1;
        /** The highest revision of a deletion delivered (at least {@link #from}). */
        long upTo;
        /** Every deletion delivered with a revision above {@link #recentFrom}: revision, old create revision. */
        final ArrayDeque<long[]> recent = new ArrayDeque<>();
        long recentFrom;
        @Nullable Disposable linger;

        Name(ByteSequence range) {
            this.range = range;
        }

        /** @return whether the count must be read (see {@link #join}) */
        boolean add(Count c, List<Count> ended) {
            if (linger != null) {
                linger.dispose();
                linger = null;
            }
            counts.add(c);
            if (watcher == null) {
                open();
            }
            return from >= 0 && join(c, ended);
        }

        /** @return whether the count must be read: not known at its read, or deletions since it not all known */
        boolean join(Count c, List<Count> ended) {
            Line line = c.line;
            if (line.before() >= 0 && line.readRevision() >= upTo) {
                c.live(ended); // every deletion after its read is still to come
                return false;
            }
            if (line.before() >= 0 && line.readRevision() >= recentFrom) {
                c.live(ended);
                for (long[] d : recent) {
                    c.deleted(d[0], d[1], ended);
                }
                return false;
            }
            c.reading = true;
            return true;
        }

        void remove(Count c) {
            synchronized (LineWatch.this) {
                if (!counts.remove(c) || !counts.isEmpty() || closed || names.get(range) != this) {
                    return;
                }
                linger = Mono.delay(Duration.ofMillis(LINGER_MILLIS), Schedulers.parallel()).subscribe(x -> {
                    Watch.Watcher w = null;
                    synchronized (LineWatch.this) {
                        if (counts.isEmpty() && names.get(range) == this) {
                            names.remove(range);
                            w = watcher;
                        }
                    }
                    if (w != null) {
                        w.close();
                    }
                });
            }
        }

        private void open() {
            WatchOption option = WatchOption.builder().isPrefix(true).withNoPut(true).withPrevKV(true).withCreateNotify(true).build();
            watcher = watch.watch(range, option, Watch.listener(this::onResponse, e -> ended(End.LOOK_AGAIN), () -> ended(End.LOOK_AGAIN)));
        }

        private void onResponse(WatchResponse response) {
            List<Count> ended = new ArrayList<>();
            List<Count> reads = new ArrayList<>();
            synchronized (LineWatch.this) {
                if (names.get(range) != this) {
                    return;
                }
                if (response.isCreatedNotify()) {
                    // again after jetcd re-created the watch: it resumes from the revision it reached, no gap
                    if (from < 0) {
                        from = response.getHeader().getRevision();
                        upTo = from;
                        recentFrom = from;
                        for (Count c : new ArrayList<>(counts)) {
                            if (join(c, ended)) {
                                reads.add(c);
                            }
                        }
                    }
                } else {
                    for (WatchEvent e : response.getEvents()) {
                        if (e.getEventType() != WatchEvent.EventType.DELETE) {
                            continue;
                        }
                        KeyValue prev = e.getPrevKV();
                        long revision = e.getKeyValue().getModRevision();
                        long created = prev == null || prev.getCreateRevision() == 0 ? -1 : prev.getCreateRevision();
                        recent.addLast(new long[] {revision, created});
                        if (recent.size() > RECENT) {
                            recentFrom = recent.removeFirst()[0];
                        }
                        upTo = Math.max(upTo, revision);
                        for (Count c : new ArrayList<>(counts)) {
                            c.deleted(revision, created, ended);
                        }
                    }
                }
            }
            for (Count c : reads) {
                count(this, c);
            }
            fire(ended);
        }

        /** The watch failed or ended: every wait looks again, and the next wait opens a new watch. */
        private void ended(End end) {
            List<Count> ended = new ArrayList<>();
            Watch.Watcher w;
            synchronized (LineWatch.this) {
                if (names.get(range) == this) {
                    names.remove(range);
                }
                endAll(end, ended);
                w = watcher;
            }
            if (w != null) {
                w.close();
            }
            fire(ended);
        }

        void endAll(End end, List<Count> ended) {
            for (Count c : new ArrayList<>(counts)) {
                c.end(end, ended);
            }
            counts.clear();
            if (linger != null) {
                linger.dispose();
            }
        }
    }

    /** One wait's count; guarded by the {@link LineWatch}. */
    private static final class Count {
        final Line line;
        final MonoSink<End> sink;
        int before;
        /** Deletions at or below this revision are in the count already. */
        long counted;
        /** Not joined yet (the watch not created), or a read counting again: deletions wait in {@link #pending}. */
        boolean reading = true;
        boolean done;
        @Nullable End result;
        final List<long[]> pending = new ArrayList<>();

        Count(Line line, MonoSink<End> sink) {
            this.line = line;
            this.sink = sink;
            this.before = line.before();
            this.counted = line.readRevision();
        }

        /** Counts from the refusing read on: what waited meanwhile is counted when it came after that read. */
        void live(List<Count> ended) {
            reading = false;
            drain(ended);
        }

        /** The read's keys up to the unit's, at its revision. */
        void counted(List<KeyValue> keys, long revision, List<Count> ended) {
            int ours = 0;
            int earlier = 0;
            for (KeyValue kv : keys) {
                if (kv.getCreateRevision() == line.unit()) {
                    ours++;
                } else if (kv.getCreateRevision() < line.unit()) {
                    earlier++;
                }
            }
            reading = false;
            if (ours < line.count()) {
                end(End.LOOK_AGAIN, ended);
                return;
            }
            before = earlier;
            counted = revision;
            drain(ended);
        }

        /** Counts the deletions that waited (those at or below {@link #counted} are in the count already). */
        private void drain(List<Count> ended) {
            for (long[] d : pending) {
                apply(d[0], d[1], ended);
            }
            pending.clear();
            check(ended);
        }

        void deleted(long revision, long createRevision, List<Count> ended) {
            if (reading) {
                pending.add(new long[] {revision, createRevision});
                return;
            }
            apply(revision, createRevision, ended);
            check(ended);
        }

        private void apply(long revision, long createRevision, List<Count> ended) {
            if (done || revision <= counted) {
                return;
            }
            if (createRevision < 0 || createRevision == line.unit()) { // unknown, or the unit's own key gone
                end(End.LOOK_AGAIN, ended);
            } else if (createRevision < line.unit()) {
                before--;
            }
        }

        private void check(List<Count> ended) {
            if (!done && before >= 0 && before + line.count() <= line.permits()) {
                end(End.LET_IN, ended);
            }
        }

        void end(End end, List<Count> ended) {
            if (!done) {
                done = true;
                result = end;
                ended.add(this);
            }
        }
    }
}
