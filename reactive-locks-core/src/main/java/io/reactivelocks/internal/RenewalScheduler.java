package io.reactivelocks.internal;

import io.reactivelocks.LockClock;
import io.reactivelocks.spi.BackendErrors;
import io.reactivelocks.spi.LockBackend;
import io.reactivelocks.spi.RenewOutcome;
import io.reactivelocks.spi.RenewRequest;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

/**
 * Renews per-lease backends' leases in batches. A lease due at time {@code t} joins a batch
 * already scheduled in {@code [t − slack, t]} (renewing a little early is always safe), else
 * starts a new one; each batch is one renewal call of the store ({@link Renewer}). A batch that runs takes
 * along every pending batch due within its renewal interval, so leases of one client converge
 * onto one tick per interval — one round trip per tick — whatever the span they were acquired
 * over; a lease renewed that way is renewed once early.
 */
final class RenewalScheduler {

    /** A store's renewal of a batch of leases ({@link LockBackend#renew}, {@code GrantStore#renew}). */
    @FunctionalInterface
    interface Renewer {
        /**
         * @param batch the leases to renew
         * @return one outcome per request, in order
         */
        Mono<List<RenewOutcome>> renew(List<RenewRequest> batch);
    }

    private final Renewer renewer;
    private final Scheduler scheduler;
    private final LockClock clock;
    private final String backendName;
    private final RequestDeadlines deadlines;

    // guarded by this
    private final TreeMap<Long, Batch> batches = new TreeMap<>();
    /** The pending batch due last, the one a lease due now usually joins; guarded by this. */
    private Batch latest;
    private boolean closed;

    RenewalScheduler(Renewer renewer, String backendName, Scheduler scheduler, LockClock clock, RequestDeadlines deadlines) {
        this.renewer = renewer;
        this.deadlines = deadlines;
        this.scheduler = scheduler;
        this.clock = clock;
        this.backendName = backendName;
    }

    /**
     * Schedules the next renewal of leases renewed together (sent at {@code sentAt}): one monitor
     * for all of them, and they join the batch the first one joins or starts.
     */
    void scheduleAll(List<LeaseHandle> leases, long sentAt) {
        int i = 0;
        synchronized (this) {
            for (; i < leases.size(); i++) {
                LeaseHandle h = leases.get(i);
                long due = sentAt + h.options.renewalInterval().toNanos();
                if (closed) {
                    return;
                }
                if (!joinLocked(h, due, h.options.renewalInterval().toNanos() / 4)) {
                    break; // needs a new batch and its timer: the slow path below
                }
            }
        }
        for (; i < leases.size(); i++) {
            LeaseHandle h = leases.get(i);
            schedule(h, sentAt + h.options.renewalInterval().toNanos());
        }
    }

    // guarded by this: joins a pending batch if one fits, returns false otherwise
    private boolean joinLocked(LeaseHandle lease, long due, long slack) {
        unlink(lease);
        Batch l = latest;
        if (l != null && l.due <= due && l.due >= due - slack) {
            l.add(lease); // the usual case: the newest batch, no map lookup (no boxed key, no entry copy)
            return true;
        }
        Map.Entry<Long, Batch> e = batches.floorEntry(due);
        if (e != null && e.getKey() >= due - slack) {
            e.getValue().add(lease);
            return true;
        }
        return false;
    }

    void schedule(LeaseHandle lease, long due) {
        long slack = lease.options.renewalInterval().toNanos() / 4;
        Batch start = null;
        synchronized (this) {
            if (closed) {
                return;
            }
            if (joinLocked(lease, due, slack)) {
                return;
            }
            long key = due;
            while (batches.containsKey(key)) {
                key++;
            }
            Batch b = new Batch(key, lease.options.renewalInterval().toNanos());
            b.add(lease);
            batches.put(key, b);
            if (latest == null || key > latest.due) {
                latest = b;
            }
            start = b;
        }
        long delay = Math.max(0, start.due - clock.nanoTime());
        Batch b = start;
        Disposable timer = scheduler.schedule(() -> run(b), delay, TimeUnit.NANOSECONDS);
        boolean orphaned;
        synchronized (this) {
            b.timer = timer;
            orphaned = batches.get(b.due) != b; // emptied by cancel() before its timer was known
        }
        if (orphaned) {
            timer.dispose();
        }
    }

    private void run(Batch batch) {
        List<LeaseHandle> candidates;
        List<Batch> pulled = null;
        long now = clock.nanoTime();
        synchronized (this) {
            batches.remove(batch.due, batch);
            candidates = new ArrayList<>(batch.size);
            batch.takeAll(candidates);
            // Every later batch due within this batch's renewal interval goes with it: leases acquired
            // over a longer span than the slack (a fill of many leases) converge onto one tick per
            // client and one round trip per tick, at the price of renewing each of them once early
            // (renewing early is always safe); from then on they share their send time.
            Map.Entry<Long, Batch> e;
            while ((e = batches.firstEntry()) != null && e.getKey() <= now + batch.interval) {
                Batch b = e.getValue();
                batches.remove(e.getKey());
                b.takeAll(candidates);
                if (pulled == null) {
                    pulled = new ArrayList<>(2);
                }
                pulled.add(b);
            }
            if (latest == batch || (latest != null && batches.get(latest.due) != latest)) {
                Map.Entry<Long, Batch> last = batches.lastEntry();
                latest = last == null ? null : last.getValue();
            }
        }
        if (pulled != null) {
            for (Batch b : pulled) {
                Disposable t;
                synchronized (this) {
                    t = b.timer;
                }
                if (t != null) {
                    t.dispose(); // a timer not known yet is disposed by schedule() (the batch is no longer in the map)
                }
            }
        }
        // outside this monitor: a lease's own monitor is taken before this one (stopTimers -> cancel)
        List<LeaseHandle> leases = new ArrayList<>(candidates.size());
        for (LeaseHandle h : candidates) {
            if (h.isActive()) {
                leases.add(h);
            }
        }
        if (leases.isEmpty()) {
            return;
        }
        List<RenewRequest> requests = new ArrayList<>(leases.size());
        int[] epochs = new int[leases.size()]; // each owner's store outage epoch when sent
        for (LeaseHandle h : leases) {
            epochs[requests.size()] = h.client.outage().epoch();
            requests.add(new RenewRequest(h.lock, h.options.leaseTime()));
            h.listener.onRenewalStarted(h.lock.name(), h.lock.token());
        }
        long sentAt = clock.nanoTime();
        Mono.defer(() -> renewer.renew(requests))
                .switchIfEmpty(Mono.error(() -> new IllegalStateException("store answered nothing to a renewal")))
                .transform(m -> deadlines.within(m, leases.get(0).options.requestTimeout()))
                .subscribe(results -> {
                    List<LeaseHandle> again = new ArrayList<>(leases.size());
                    for (int i = 0; i < leases.size(); i++) {
                        RenewOutcome o = i < results.size() ? results.get(i) : null;
                        LeaseHandle h = leases.get(i);
                        if (h.onRenewOutcome(sentAt, o)) {
                            again.add(h);
                        }
                    }
                    scheduleAll(again, sentAt);
                }, error -> {
                    var mapped = BackendErrors.map(backendName, null, "renewal", error);
                    for (int i = 0; i < leases.size(); i++) {
                        leases.get(i).onRenewFailed(mapped, epochs[i]);
                    }
                });
    }

    /**
     * Takes a released or lost lease out of its pending batch. An emptied batch stays until its
     * tick (its timer then finds nobody): short holds one after another join it instead of each
     * scheduling and cancelling a timer of its own — at most a few timers per renewal interval.
     * {@link #close()} cancels them.
     */
    void cancel(LeaseHandle lease) {
        synchronized (this) {
            unlink(lease);
        }
    }

    // guarded by this
    private static void unlink(LeaseHandle lease) {
        if (lease.renewalBatch instanceof Batch b) {
            b.remove(lease);
        }
    }

    void close() {
        List<Batch> all;
        synchronized (this) {
            closed = true;
            all = new ArrayList<>(batches.values());
            batches.clear();
            latest = null;
        }
        for (Batch b : all) {
            if (b.timer != null) {
                b.timer.dispose();
            }
        }
    }

    /**
     * Leases due at (or joining) one tick: a doubly linked list through the leases' own fields
     * ({@link LeaseHandle#renewalPrev}, {@link LeaseHandle#renewalNext}), so joining and leaving
     * allocate nothing and a held lease costs no set entry. Guarded by the scheduler.
     */
    private static final class Batch {
        final long due;
        /** Its first lease's renewal interval: batches due within it run with this one. */
        final long interval;
        LeaseHandle head;
        LeaseHandle tail;
        int size;
        Disposable timer;

        Batch(long due, long interval) {
            this.due = due;
            this.interval = interval;
        }

        /** Moves every lease out of this batch into {@code into}. */
        void takeAll(List<LeaseHandle> into) {
            LeaseHandle h = head;
            while (h != null) {
                LeaseHandle next = h.renewalNext;
                h.renewalBatch = null;
                h.renewalPrev = null;
                h.renewalNext = null;
                into.add(h);
                h = next;
            }
            head = null;
            tail = null;
            size = 0;
        }

        void add(LeaseHandle h) {
            h.renewalBatch = this;
            h.renewalPrev = tail;
            h.renewalNext = null;
            if (tail == null) {
                head = h;
            } else {
                tail.renewalNext = h;
            }
            tail = h;
            size++;
        }

        void remove(LeaseHandle h) {
            LeaseHandle p = h.renewalPrev;
            LeaseHandle n = h.renewalNext;
            if (p == null) {
                head = n;
            } else {
                p.renewalNext = n;
            }
            if (n == null) {
                tail = p;
            } else {
                n.renewalPrev = p;
            }
            h.renewalBatch = null;
            h.renewalPrev = null;
            h.renewalNext = null;
            size--;
        }
    }
}
