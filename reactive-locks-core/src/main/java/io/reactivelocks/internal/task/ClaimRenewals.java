package io.reactivelocks.internal.task;

import io.reactivelocks.LockBackendException;
import io.reactivelocks.spi.task.ClaimRef;
import io.reactivelocks.task.TaskClaim;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import reactor.core.publisher.Mono;
import reactor.core.publisher.MonoSink;

/**
 * Renews held claims in batches: a claim due at time {@code t} joins a batch of the same queue and
 * claim time already scheduled in {@code [t − slack, t]} (renewing a little early is always safe),
 * else starts a new one; each batch is one {@code TaskStore.renew} call (split at the store's
 * batch size). Claims captured and held together therefore share their renewals. A claim whose
 * renewal is cancelled before its batch is sent leaves the batch.
 */
final class ClaimRenewals {

    private final DefaultTaskQueue tasks;

    // guarded by this
    private final Map<Key, TreeMap<Long, Batch>> batches = new HashMap<>();

    ClaimRenewals(DefaultTaskQueue tasks) {
        this.tasks = tasks;
    }

    private record Key(String queue, Duration claimTime) {
    }

    private static final class Batch {
        final Key key;
        final long due;
        final List<Entry> entries = new ArrayList<>();

        Batch(Key key, long due) {
            this.key = key;
            this.due = due;
        }
    }

    private record Entry(ClaimRef ref, MonoSink<Long> sink) {
    }

    /**
     * @param claim the claim to renew
     * @param due   when, on the queue's clock, at the latest
     * @param slack how much earlier it may be renewed to share a batch
     * @return the send time of the batch when renewed; empty when the store says the claim is not
     *         held any more; an error when the call failed
     */
    Mono<Long> renewAt(TaskClaim claim, long due, long slack) {
        return Mono.create(sink -> {
            Key key = new Key(claim.queue(), claim.claimTime());
            Entry entry = new Entry(new ClaimRef(claim.taskId(), claim.owner(), claim.token()), sink);
            Batch start = null;
            Batch joined;
            synchronized (this) {
                TreeMap<Long, Batch> byDue = batches.computeIfAbsent(key, k -> new TreeMap<>());
                Map.Entry<Long, Batch> e = byDue.floorEntry(due);
                if (e != null && e.getKey() >= due - slack) {
                    joined = e.getValue();
                } else {
                    long k = due;
                    while (byDue.containsKey(k)) {
                        k++;
                    }
                    joined = start = new Batch(key, k);
                    byDue.put(k, start);
                }
                joined.entries.add(entry);
            }
            sink.onCancel(() -> leave(joined, entry));
            if (start != null) {
                Batch b = start;
                long delay = Math.max(0, b.due - tasks.options().clock().nanoTime());
                try {
                    tasks.scheduler().schedule(() -> flush(b), delay, TimeUnit.NANOSECONDS);
                } catch (RuntimeException rejected) {
                    remove(b);
                    b.entries.forEach(x -> x.sink().error(new LockBackendException(b.key.queue(),
                            "the scheduler of task queue '" + b.key.queue() + "' rejected a renewal timer", rejected, false)));
                }
            }
        });
    }

    private synchronized void leave(Batch batch, Entry entry) {
        batch.entries.remove(entry);
    }

    private synchronized void remove(Batch batch) {
        TreeMap<Long, Batch> byDue = batches.get(batch.key);
        if (byDue != null && byDue.get(batch.due) == batch) {
            byDue.remove(batch.due);
            if (byDue.isEmpty()) {
                batches.remove(batch.key);
            }
        }
    }

    private void flush(Batch batch) {
        List<Entry> entries;
        synchronized (this) {
            remove(batch);
            entries = List.copyOf(batch.entries);
        }
        int size = Math.max(1, tasks.storeMaxBatch());
        for (int from = 0; from < entries.size(); from += size) {
            List<Entry> chunk = entries.subList(from, Math.min(entries.size(), from + size));
            List<ClaimRef> refs = new ArrayList<>(chunk.size());
            chunk.forEach(x -> refs.add(x.ref()));
            long sentAt = tasks.options().clock().nanoTime();
            tasks.renewCall(batch.key.queue(), refs, batch.key.claimTime()).subscribe(results -> {
                for (int i = 0; i < chunk.size(); i++) {
                    if (i < results.size() && Boolean.TRUE.equals(results.get(i))) {
                        chunk.get(i).sink().success(sentAt);
                    } else {
                        chunk.get(i).sink().success();
                    }
                }
            }, error -> chunk.forEach(x -> x.sink().error(error)));
        }
    }
}
