package io.reactivelocks.internal;

import io.reactivelocks.LockClock;
import io.reactivelocks.LockException;
import io.reactivelocks.spi.LockBackend;
import io.reactivelocks.spi.RenewOutcome;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

/**
 * Renews held grants in batches: lock leases of per-lease backends ({@link LeaseHandle}) and held
 * task claims alike ({@link Member}). A member due at time {@code t} joins a batch already
 * scheduled in {@code [t − slack, t]} (renewing a little early is always safe), else starts a new
 * one; each batch is one renewal call of the store ({@link Renewer}), or several of at most
 * {@code maxBatch} members. A batch that runs takes along every pending batch due within its
 * renewal interval, so members of one scheduler converge onto one tick per interval — one round
 * trip per tick — whatever the span they were acquired over; a member renewed that way is renewed
 * once early. Made and closed by {@link EngineTimers}. Not API.
 *
 * @param <Q> what the store renews one member by (a {@code RenewRequest}, a task's {@code ClaimRef})
 */
public final class RenewalScheduler<Q> {

    /**
     * A store's renewal of a batch ({@link LockBackend#renew}, {@code GrantStore#renew}, {@code TaskStore#renew}).
     *
     * @param <Q> what the store renews one member by
     */
    @FunctionalInterface
    public interface Renewer<Q> {
        /**
         * @param batch the renew requests, never empty
         * @return one outcome per request, in order (a missing one counts as not renewed)
         */
        Mono<List<RenewOutcome>> renew(List<Q> batch);
    }

    /**
     * Something renewed in batches and watched by a deadline: a lock lease, a held task claim. What
     * a batch needs of it: its renew request, its renewal interval and request timeout, and to be told
     * of the outcome, its send time or the error. Its link fields belong to the scheduler; it calls
     * nothing of its member while holding its own monitor, and a member may hold its own monitor when
     * it calls the scheduler (lock order: member, then scheduler).
     *
     * @param <Q> what the store renews it by
     */
    public abstract static class Member<Q> extends DeadlineHeap.Node {
        /** Its renewal batches. */
        final RenewalScheduler<Q> renewals;
        /** Its deadline's heap. */
        final DeadlineHeap deadlines;
        // guarded by the scheduler: the batch it waits in and its neighbours there
        @Nullable Batch<Q> renewalBatch;
        @Nullable Member<Q> renewalPrev;
        @Nullable Member<Q> renewalNext;

        Member(RenewalScheduler<Q> renewals, DeadlineHeap deadlines) {
            this.renewals = renewals;
            this.deadlines = deadlines;
        }

        /**
         * @param timers   the engine's timers: the deadline is watched on their own scheduler
         * @param renewals its renewal batches, from {@link EngineTimers#renewals(Renewer, int, Function)} of the same timers
         */
        protected Member(EngineTimers timers, RenewalScheduler<Q> renewals) {
            this(renewals, timers.ownLeaseDeadlines());
        }

        /** @return what the store renews it by; asked once per renewal */
        protected abstract Q renewRequest();

        /** @return its renewal interval, in nanoseconds */
        protected abstract long renewalIntervalNanos();

        /** @return the timeout of a renewal call (the first member's counts for its batch) */
        protected abstract Duration requestTimeout();

        /** @return whether it is still held: a member no longer held is left out of its batch's call */
        public abstract boolean isActive();

        /**
         * Its renewal is about to be sent.
         *
         * @return a number given back to {@link #onRenewFailed} should the call fail (a store outage's epoch)
         */
        protected abstract int onRenewalSent();

        /**
         * @param sentAt  when the call was sent (its clock's reading)
         * @param outcome the store's answer, {@code null} when it gave none for this member (not renewed)
         * @return true when it is still held and must be renewed again one interval after {@code sentAt}
         */
        protected abstract boolean onRenewOutcome(long sentAt, @Nullable RenewOutcome outcome);

        /**
         * The renewal call failed; the member schedules a retry itself ({@link #renewAt}) if it wants one.
         *
         * @param error what the call failed with, mapped
         * @param sent  what {@link #onRenewalSent()} returned
         */
        protected abstract void onRenewFailed(LockException error, int sent);

        @Override
        protected abstract void onDeadline();

        @Override
        protected abstract void onUnwatched();

        /** Schedules its next renewal, at {@code due} at the latest (a reading of its clock). */
        protected final void renewAt(long due) {
            renewals.schedule(this, due);
        }

        /** Takes it out of its pending batch, if it is in one. */
        protected final void stopRenewals() {
            renewals.cancel(this);
        }

        /** Sets (or moves) its deadline: {@link #onDeadline()} is called once it has come. */
        protected final void deadlineAt(long until) {
            deadlines.set(this, until);
        }

        /** Removes its deadline. */
        protected final void removeDeadline() {
            deadlines.remove(this);
        }
    }

    private final Renewer<Q> renewer;
    private final Scheduler scheduler;
    private final LockClock clock;
    private final Function<Throwable, LockException> errors;
    private final RequestDeadlines deadlines;
    private final int maxBatch;

    // guarded by this
    private final TreeMap<Long, Batch<Q>> batches = new TreeMap<>();
    /** The pending batch due last, the one a member due now usually joins; guarded by this. */
    private @Nullable Batch<Q> latest;
    private boolean closed;

    /**
     * @param renewer   the store's batch renewal
     * @param errors    maps what a renewal call failed with
     * @param maxBatch  the most members one call may carry
     * @param scheduler runs the timers
     * @param clock     the members' clock
     * @param deadlines the request timeouts
     */
    RenewalScheduler(Renewer<Q> renewer, Function<Throwable, LockException> errors, int maxBatch, Scheduler scheduler,
                     LockClock clock, RequestDeadlines deadlines) {
        this.renewer = renewer;
        this.errors = errors;
        this.maxBatch = Math.max(1, maxBatch);
        this.deadlines = deadlines;
        this.scheduler = scheduler;
        this.clock = clock;
    }

    /**
     * Schedules the next renewal of members renewed together (sent at {@code sentAt}): one monitor
     * for all of them, and they join the batch the first one joins or starts.
     */
    void scheduleAll(List<? extends Member<Q>> members, long sentAt) {
        int i = 0;
        synchronized (this) {
            for (; i < members.size(); i++) {
                Member<Q> m = members.get(i);
                long interval = m.renewalIntervalNanos();
                if (closed) {
                    return;
                }
                if (!joinLocked(m, sentAt + interval, interval / 4)) {
                    break; // needs a new batch and its timer: the slow path below
                }
            }
        }
        for (; i < members.size(); i++) {
            Member<Q> m = members.get(i);
            schedule(m, sentAt + m.renewalIntervalNanos());
        }
    }

    // guarded by this: joins a pending batch if one fits, returns false otherwise
    private boolean joinLocked(Member<Q> member, long due, long slack) {
        unlink(member);
        Batch<Q> l = latest;
        if (l != null && l.due <= due && l.due >= due - slack) {
            l.add(member); // the usual case: the newest batch, no map lookup (no boxed key, no entry copy)
            return true;
        }
        Map.Entry<Long, Batch<Q>> e = batches.floorEntry(due);
        if (e != null && e.getKey() >= due - slack) {
            e.getValue().add(member);
            return true;
        }
        return false;
    }

    /** Schedules the renewal of {@code member} at {@code due} at the latest (a reading of the clock). */
    void schedule(Member<Q> member, long due) {
        long interval = member.renewalIntervalNanos();
        Batch<Q> start;
        synchronized (this) {
            if (closed) {
                return;
            }
            if (joinLocked(member, due, interval / 4)) {
                return;
            }
            long key = due;
            while (batches.containsKey(key)) {
                key++;
            }
            start = new Batch<>(key, interval);
            start.add(member);
            batches.put(key, start);
            if (latest == null || key > latest.due) {
                latest = start;
            }
        }
        long delay = Math.max(0, start.due - clock.nanoTime());
        Batch<Q> b = start;
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

    private void run(Batch<Q> batch) {
        List<Member<Q>> candidates;
        List<Batch<Q>> pulled = null;
        long now = clock.nanoTime();
        synchronized (this) {
            batches.remove(batch.due, batch);
            candidates = new ArrayList<>(batch.size);
            batch.takeAll(candidates);
            // Every later batch due within this batch's renewal interval goes with it: members acquired
            // over a longer span than the slack (a fill of many leases) converge onto one tick per
            // scheduler and one round trip per tick, at the price of renewing each of them once early
            // (renewing early is always safe); from then on they share their send time.
            Map.Entry<Long, Batch<Q>> e;
            while ((e = batches.firstEntry()) != null && e.getKey() <= now + batch.interval) {
                Batch<Q> b = e.getValue();
                batches.remove(e.getKey());
                b.takeAll(candidates);
                if (pulled == null) {
                    pulled = new ArrayList<>(2);
                }
                pulled.add(b);
            }
            if (latest == batch || (latest != null && batches.get(latest.due) != latest)) {
                Map.Entry<Long, Batch<Q>> last = batches.lastEntry();
                latest = last == null ? null : last.getValue();
            }
        }
        if (pulled != null) {
            for (Batch<Q> b : pulled) {
                Disposable t;
                synchronized (this) {
                    t = b.timer;
                }
                if (t != null) {
                    t.dispose(); // a timer not known yet is disposed by schedule() (the batch is no longer in the map)
                }
            }
        }
        // outside this monitor: a member's own monitor is taken before this one (stopRenewals -> cancel).
        // One pass over the members (each one is a cold object at 100k leases): the ones still held are kept
        // in place, told their renewal is sent and asked for their request.
        int size = 0;
        int[] sent = new int[candidates.size()]; // what each member asked to be given back should the call fail
        List<Q> requests = new ArrayList<>(candidates.size());
        for (int i = 0; i < candidates.size(); i++) {
            Member<Q> m = candidates.get(i);
            if (m.isActive()) {
                candidates.set(size, m);
                sent[size] = m.onRenewalSent();
                requests.add(m.renewRequest());
                size++;
            }
        }
        List<Member<Q>> members = candidates.subList(0, size);
        for (int from = 0; from < size; from += maxBatch) {
            int to = Math.min(size, from + maxBatch);
            if (size <= maxBatch) {
                send(members, requests, sent);
            } else {
                send(members.subList(from, to), requests.subList(from, to), Arrays.copyOfRange(sent, from, to));
            }
        }
    }

    /** One renewal call for {@code members}, by their {@code requests}; {@code sent} is what they asked to be given back. */
    private void send(List<Member<Q>> members, List<Q> requests, int[] sent) {
        long sentAt = clock.nanoTime();
        Mono.defer(() -> renewer.renew(requests))
                .switchIfEmpty(Mono.error(() -> new IllegalStateException("store answered nothing to a renewal")))
                .transform(m -> deadlines.within(m, members.get(0).requestTimeout()))
                .subscribe(results -> {
                    List<Member<Q>> again = new ArrayList<>(members.size());
                    for (int i = 0; i < members.size(); i++) {
                        RenewOutcome o = i < results.size() ? results.get(i) : null;
                        Member<Q> m = members.get(i);
                        if (m.onRenewOutcome(sentAt, o)) {
                            again.add(m);
                        }
                    }
                    scheduleAll(again, sentAt);
                }, error -> {
                    LockException mapped = errors.apply(error);
                    for (int i = 0; i < members.size(); i++) {
                        members.get(i).onRenewFailed(mapped, sent[i]);
                    }
                });
    }

    /**
     * Takes a released or lost member out of its pending batch. An emptied batch stays until its
     * tick (its timer then finds nobody): short holds one after another join it instead of each
     * scheduling and cancelling a timer of its own — at most a few timers per renewal interval.
     * {@link #close()} cancels them.
     */
    void cancel(Member<Q> member) {
        synchronized (this) {
            unlink(member);
        }
    }

    // guarded by this
    private void unlink(Member<Q> member) {
        Batch<Q> b = member.renewalBatch;
        if (b != null) {
            b.remove(member);
        }
    }

    /** Cancels every timer; nothing is scheduled from now on. */
    void close() {
        List<Batch<Q>> all;
        synchronized (this) {
            closed = true;
            all = new ArrayList<>(batches.values());
            batches.clear();
            latest = null;
        }
        for (Batch<Q> b : all) {
            Disposable t;
            synchronized (this) {
                t = b.timer;
            }
            if (t != null) {
                t.dispose(); // a timer not known yet is disposed by schedule() (the batch is no longer in the map)
            }
        }
    }

    /**
     * Members due at (or joining) one tick: a doubly linked list through the members' own fields
     * ({@link Member#renewalPrev}, {@link Member#renewalNext}), so joining and leaving allocate
     * nothing and a held member costs no set entry. Guarded by the scheduler.
     */
    private static final class Batch<Q> {
        final long due;
        /** Its first member's renewal interval: batches due within it run with this one. */
        final long interval;
        @Nullable Member<Q> head;
        @Nullable Member<Q> tail;
        int size;
        @Nullable Disposable timer;

        Batch(long due, long interval) {
            this.due = due;
            this.interval = interval;
        }

        /** Moves every member out of this batch into {@code into}. */
        void takeAll(List<Member<Q>> into) {
            Member<Q> m = head;
            while (m != null) {
                Member<Q> next = m.renewalNext;
                m.renewalBatch = null;
                m.renewalPrev = null;
                m.renewalNext = null;
                into.add(m);
                m = next;
            }
            head = null;
            tail = null;
            size = 0;
        }

        void add(Member<Q> m) {
            m.renewalBatch = this;
            m.renewalPrev = tail;
            m.renewalNext = null;
            if (tail == null) {
                head = m;
            } else {
                tail.renewalNext = m;
            }
            tail = m;
            size++;
        }

        void remove(Member<Q> m) {
            Member<Q> p = m.renewalPrev;
            Member<Q> n = m.renewalNext;
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
            m.renewalBatch = null;
            m.renewalPrev = null;
            m.renewalNext = null;
            size--;
        }
    }
}
