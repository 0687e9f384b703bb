package io.reactivelocks.etcd;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.KV;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.Watch;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.WatchOption;
import io.etcd.jetcd.watch.WatchEvent;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import reactor.core.Disposable;
import reactor.core.Disposables;
import reactor.core.publisher.Mono;
import reactor.core.publisher.MonoSink;

/**
 * A refused semaphore waiter's wait when N &gt; 1: it counts the keys before its unit down as their
 * deletions arrive, and is let in by the deletion that brings them to N − k or fewer — with no
 * read, no write and no wake-up of anyone else.
 *
 * <p><b>Why it is exact.</b> A unit's place is its create revision; a key put later has a higher
 * one, so the keys before a unit only ever leave. Counted at revision {@code R} (the read that
 * refused the waiter: {@code before} keys), every deletion after {@code R} of a key whose create
 * revision is below the unit's takes one off; once the count plus the unit's k is at most N, the
 * unit holds at that deletion's revision — the same decision a read at that revision would make.
 * Deletions carry the key as it was ({@code prevKV}), whose create revision says whether it stood
 * before the unit, was the unit's own (the unit lost a key: look again) or came after (ignored).
 *
 * <p><b>Every waiter sees every deletion</b> of the name (one watch event each, on the client's one
 * watch stream), and only those a deletion lets in ask etcd anything: before, the head of the line
 * alone watched the deletions and each waiter let in told the next one by a put of its keys, so a
 * line advanced one waiter per write, read and watch — serially.
 *
 * <p><b>The watch starts now</b> (a synced watch: see {@link WaiterWatch}); when it starts later than
 * {@code R}, or the count at {@code R} is not known ({@code before < 0}: a re-check whose read saw
 * only the N + 1 keys before the unit), one keys-only read of the keys up to the unit's counts them
 * again at its revision {@code G}, and only deletions after {@code G} count from then on (those that
 * arrive meanwhile wait for it).
 */
final class LineWatch {

    private LineWatch() {
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
        /** Something the count cannot follow (a key of the unit gone, a deletion without its old key): look again. */
        LOOK_AGAIN,
        /** The watch ended (closed by the client). */
        CLOSED
    }

    /**
     * @return how the wait ended; the watch's error, or the count's read's, as an error; cancel closes the watch
     */
    static Mono<End> await(Watch watch, KV kv, Line line) {
        WatchOption option = WatchOption.builder().isPrefix(true).withNoPut(true).withPrevKV(true).withCreateNotify(true).build();
        return Mono.create(sink -> {
            Disposable.Composite resources = Disposables.composite();
            sink.onDispose(resources);
            Count count = new Count(line, sink);
            Watch.Watcher w = watch.watch(line.range(), option, Watch.listener(
                    response -> {
                        if (response.isCreatedNotify()) {
                            // again after jetcd re-created the watch: it resumes from the revision it reached, no gap
                            if (count.started(response.getHeader().getRevision())) {
                                GetOption upToUnit = GetOption.builder().isPrefix(true).withKeysOnly(true)
                                        .withMaxCreateRevision(line.unit()).build();
                                resources.add(Mono.fromFuture(() -> kv.get(line.range(), upToUnit))
                                        .subscribe(r -> count.counted(r.getKvs(), r.getHeader().getRevision()), sink::error));
                            }
                            return;
                        }
                        for (WatchEvent e : response.getEvents()) {
                            if (e.getEventType() == WatchEvent.EventType.DELETE) {
                                KeyValue prev = e.getPrevKV();
                                count.deleted(e.getKeyValue().getModRevision(),
                                        prev == null || prev.getCreateRevision() == 0 ? -1 : prev.getCreateRevision());
                            }
                        }
                    },
                    sink::error,
                    () -> sink.success(End.CLOSED)));
            resources.add(w::close);
        });
    }

    /** The count of one wait; its methods run on jetcd's listener thread and the read's, one at a time. */
    private static final class Count {
        private final Line line;
        private final MonoSink<End> sink;
        private int before;
        /** Deletions at or below this revision are in the count already. */
        private long counted;
        private boolean reading;
        private boolean started;
        private boolean done;
        /** Deletions that arrived while the read counted: revision, create revision. */
        private final List<long[]> pending = new ArrayList<>();

        Count(Line line, MonoSink<End> sink) {
            this.line = line;
            this.sink = sink;
            this.before = line.before();
            this.counted = line.readRevision();
        }

        /** @return whether a read must count the keys again (first start, later than the refusing read, or no count) */
        synchronized boolean started(long revision) {
            if (started) {
                return false;
            }
            started = true;
            reading = before < 0 || revision > line.readRevision();
            if (!reading) {
                for (long[] d : pending) {
                    apply(d[0], d[1]);
                }
                pending.clear();
                check();
            }
            return reading;
        }

        /** The read's keys up to the unit's, at its revision. */
        synchronized void counted(List<KeyValue> keys, long revision) {
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
                end(End.LOOK_AGAIN);
                return;
            }
            before = earlier;
            counted = revision;
            for (long[] d : pending) {
                apply(d[0], d[1]);
            }
            pending.clear();
            check();
        }

        synchronized void deleted(long revision, long createRevision) {
            if (reading || !started) {
                pending.add(new long[] {revision, createRevision});
                return;
            }
            apply(revision, createRevision);
            check();
        }

        private void apply(long revision, long createRevision) {
            if (done || revision <= counted) {
                return;
            }
            if (createRevision < 0 || createRevision == line.unit()) { // unknown, or the unit's own key gone
                end(End.LOOK_AGAIN);
            } else if (createRevision < line.unit()) {
                before--;
            }
        }

        private void check() {
            if (!done && before >= 0 && before + line.count() <= line.permits()) {
                end(End.LET_IN);
            }
        }

        private void end(End end) {
            if (!done) {
                done = true;
                sink.success(end);
            }
        }
    }
}
