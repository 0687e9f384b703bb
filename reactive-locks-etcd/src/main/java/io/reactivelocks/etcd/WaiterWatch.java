package io.reactivelocks.etcd;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.KV;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.Watch;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.WatchOption;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;
import reactor.core.Disposable;
import reactor.core.Disposables;
import reactor.core.publisher.Mono;

/**
 * A refused waiter's watch for the change it waits for (a key before it deleted, or put again), set
 * up <em>from the store's current revision</em>, with a read that covers the gap since the read that
 * refused the waiter.
 *
 * <p>Why not from the revision after that read: etcd serves a watch that starts in the past from an
 * "unsynced" set that a background loop catches up every 100 ms, so under load (a write between the
 * read and the watch: nearly always, with 16 waiters on a semaphore) each wait began with up to
 * 100 ms during which the change it waits for was not delivered — the etcd semaphore's median at 16
 * and 64 in flight was about 100 ms. A watch from now is "synced": events reach it as they commit.
 *
 * <p>What it may have missed is what changed between the refusing read (revision {@code R}) and the
 * watch's start (revision {@code W}, in the answer that reports the watch created). When {@code W ==
 * R} nothing changed in between and nothing is asked; else one read checks what the waiter saw
 * ({@link Seen}) against what is there now — a deletion or put after {@code W} the watch delivers
 * anyway, so a change is never lost, and a change reported twice only wakes the waiter twice (its next
 * attempt decides).
 */
final class WaiterWatch {

    private WaiterWatch() {
    }

    /**
     * A refused waiter's wait: the revision of the read that refused it, and what that read saw — which
     * also says what to watch (a key, for its deletion and, where its mod revision counts, its put; or a
     * prefix, for deletions).
     */
    record Wait(long readRevision, Seen seen) {
        Wait {
            Objects.requireNonNull(seen, "seen");
        }
    }

    /** What a refused waiter saw at its read: what the gap check compares with the store now. */
    sealed interface Seen {

        /**
         * A key with this create revision (etcd never gives a new key the create revision of a deleted
         * one, so a key put again in the same place differs) and, when a put counts as a change,
         * this mod revision ({@code 0}: only its deletion counts).
         */
        record Key(ByteSequence key, long createRevision, long modRevision) implements Seen {
        }

        /** {@code count} keys under the prefix whose create revision is at most {@code maxCreateRevision}: one gone counts. */
        record Keys(ByteSequence prefix, long maxCreateRevision, int count) implements Seen {
        }

        /** A key that was there when read: its deletion counts, and with {@code puts} its change too. */
        static Seen key(KeyValue kv, boolean puts) {
            return new Key(kv.getKey(), kv.getCreateRevision(), puts ? kv.getModRevision() : 0);
        }
    }

    /** @return one read: whether what the waiter saw changed (a key gone or replaced, or put again where puts count; fewer keys) */
    static Mono<Boolean> changed(KV kv, Seen seen) {
        if (seen instanceof Seen.Key k) {
            return Mono.fromFuture(() -> kv.get(k.key(), GetOption.builder().withKeysOnly(true).build()))
                    .map(r -> {
                        if (r.getKvs().isEmpty()) {
                            return true;
                        }
                        KeyValue now = r.getKvs().get(0);
                        return now.getCreateRevision() != k.createRevision()
                                || (k.modRevision() != 0 && now.getModRevision() != k.modRevision());
                    });
        }
        Seen.Keys s = (Seen.Keys) seen;
        // the keys themselves, not a count: etcd counts a range before its create-revision filter
        return Mono.fromFuture(() -> kv.get(s.prefix(), GetOption.builder().isPrefix(true).withKeysOnly(true)
                        .withMaxCreateRevision(s.maxCreateRevision()).build()))
                .map(r -> r.getKvs().size() < s.count());
    }

    /**
     * @param wait what to watch, from which read (what it saw is checked again when the watch starts later than it)
     * @return true on a change (an event, or the gap check finding one); false when the watch ended (closed
     *         by the client); the watch's error, or the check's, as an error; cancel closes the watch
     */
    static Mono<Boolean> await(Watch watch, KV kv, Wait wait) {
        Seen seen = wait.seen();
        ByteSequence key = seen instanceof Seen.Key k ? k.key() : ((Seen.Keys) seen).prefix();
        boolean puts = seen instanceof Seen.Key k && k.modRevision() != 0;
        WatchOption option = WatchOption.builder().isPrefix(seen instanceof Seen.Keys).withNoPut(!puts).withCreateNotify(true).build();
        return Mono.create(sink -> {
            Disposable.Composite resources = Disposables.composite();
            sink.onDispose(resources);
            AtomicBoolean checked = new AtomicBoolean();
            Watch.Watcher w = watch.watch(key, option, Watch.listener(
                    response -> {
                        if (!response.getEvents().isEmpty()) {
                            sink.success(true);
                            return;
                        }
                        if (!response.isCreatedNotify()) {
                            return;
                        }
                        // again after jetcd re-created the watch: it resumes from the revision it reached, no gap
                        if (checked.compareAndSet(false, true) && response.getHeader().getRevision() > wait.readRevision()) {
                            resources.add(changed(kv, seen).subscribe(
                                    changed -> {
                                        if (changed) {
                                            sink.success(true);
                                        }
                                    },
                                    sink::error));
                        }
                    },
                    sink::error,
                    () -> sink.success(false)));
            resources.add(w::close);
        });
    }
}
