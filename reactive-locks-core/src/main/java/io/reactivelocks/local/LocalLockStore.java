package io.reactivelocks.local;

import io.reactivelocks.LockClock;
import io.reactivelocks.spi.Holder;
import io.reactivelocks.spi.LockEvent;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * The shared state of in-memory locks: what a server would hold. Several
 * {@link LocalLockBackend}s (one per simulated client) may share one store. Expiry is decided by
 * the store's own clock and scheduler — inject a {@code VirtualTimeScheduler} to drive it in tests.
 * All operations are short critical sections on in-memory maps; nothing blocks.
 */
public final class LocalLockStore {

    private final Scheduler scheduler;
    private final LockClock clock;
    private final Map<String, Entry> locks = new HashMap<>();      // guarded by this
    private final Map<String, Long> counters = new HashMap<>();    // guarded by this
    private final Map<String, LinkedHashMap<String, Long>> lines = new HashMap<>(); // fair locks: owner -> deadline, by arrival; guarded by this
    /** The names' change streams; publishing is serialized through their queues (a waiter woken by a release may
     *  be granted on the same thread, inside the release's emission: its grant's event is queued, not emitted re-entrantly). */
    private final LocalChannels channels = new LocalChannels();

    /** A store on Reactor's parallel scheduler and the JVM's monotonic clock. */
    public LocalLockStore() {
        this(Schedulers.parallel(), LockClock.system());
    }

    /**
     * @param scheduler runs expiry timers
     * @param clock     decides expiry (the "server clock")
     */
    public LocalLockStore(Scheduler scheduler, LockClock clock) {
        this.scheduler = Objects.requireNonNull(scheduler, "scheduler");
        this.clock = Objects.requireNonNull(clock, "clock");
    }

    /** What the store holds for one name. */
    private static final class Entry {
        final String owner;
        final long token;
        String payload;
        long expiresAt;
        Disposable expiryTimer;

        Entry(String owner, long token, long expiresAt) {
            this.owner = owner;
            this.token = token;
            this.expiresAt = expiresAt;
        }
    }

    /** Result of {@link #grant}: the token when granted, else the holder. */
    record GrantResult(boolean granted, long token, Holder holder) {
    }

    GrantResult grant(String name, String owner, Duration ttl, String payload) {
        LockEvent event;
        GrantResult result;
        synchronized (this) {
            long now = clock.nanoTime();
            Entry e = liveEntry(name, now);
            if (e != null && !e.owner.equals(owner)) {
                return new GrantResult(false, 0, new Holder(e.owner, e.token, Duration.ofNanos(e.expiresAt - now), e.payload));
            }
            if (e != null) { // the same owner again (a retried request): extend and grant again
                e.expiresAt = now + ttl.toNanos();
                armExpiry(name, e);
                return new GrantResult(true, e.token, null);
            }
            long token = counters.merge(name, 1L, Long::sum);
            Entry fresh = new Entry(owner, token, now + ttl.toNanos());
            fresh.payload = payload;
            locks.put(name, fresh);
            armExpiry(name, fresh);
            result = new GrantResult(true, token, null);
            event = new LockEvent.Acquired(name, owner, token);
        }
        publish(event);
        return result;
    }

    boolean renew(String name, String owner, long token, Duration ttl) {
        synchronized (this) {
            long now = clock.nanoTime();
            Entry e = liveEntry(name, now);
            if (e == null || !e.owner.equals(owner) || e.token != token) {
                return false;
            }
            e.expiresAt = now + ttl.toNanos();
            armExpiry(name, e);
            return true;
        }
    }

    boolean updatePayload(String name, String owner, long token, String payload) {
        synchronized (this) {
            Entry e = liveEntry(name, clock.nanoTime());
            if (e == null || !e.owner.equals(owner) || e.token != token) {
                return false;
            }
            e.payload = payload;
        }
        publish(new LockEvent.Acquired(name, owner, token));
        return true;
    }

    boolean release(String name, String owner) {
        synchronized (this) {
            Entry e = liveEntry(name, clock.nanoTime());
            if (e == null || !e.owner.equals(owner)) {
                return false;
            }
            locks.remove(name);
            e.expiryTimer.dispose();
        }
        publish(new LockEvent.Released(name, owner, false));
        return true;
    }

    Holder inspect(String name) {
        synchronized (this) {
            long now = clock.nanoTime();
            Entry e = liveEntry(name, now);
            return e == null ? null : new Holder(e.owner, e.token, Duration.ofNanos(e.expiresAt - now), e.payload);
        }
    }

    Flux<LockEvent> events(String name) {
        return channels.events(name);
    }

    /** The scheduler the store's timers run on (the fair lock's waits use it too). */
    Scheduler scheduler() {
        return scheduler;
    }

    /**
     * A fair (FIFO) grant: drops expired waiters, grants the head of the line (or a caller when
     * nobody waits) if the lock is free, else queues or refreshes a waiting caller.
     *
     * @return a {@link GrantResult} (granted, or busy for a try) or, for a waiting caller not
     *         granted, a {@link Queued}
     */
    Object fairGrant(String name, String owner, Duration ttl, String payload, boolean waits, Duration waiterDeadline) {
        LockEvent event;
        GrantResult result;
        synchronized (this) {
            long now = clock.nanoTime();
            LinkedHashMap<String, Long> line = liveLine(name, now);
            Entry e = liveEntry(name, now);
            if (e != null && e.owner.equals(owner)) { // a retried request: extend and grant again
                dequeue(name, owner);
                e.expiresAt = now + ttl.toNanos();
                armExpiry(name, e);
                return new GrantResult(true, e.token, null);
            }
            if (e != null) {
                if (!waits) {
                    return new GrantResult(false, 0, new Holder(e.owner, e.token, Duration.ofNanos(e.expiresAt - now), e.payload));
                }
                enqueue(name, owner, now + waiterDeadline.toNanos());
                return new Queued(Math.max(0, (e.expiresAt - now) / 1_000_000), ahead(name, owner));
            }
            String head = line == null ? null : line.keySet().iterator().next();
            if (head != null && !head.equals(owner)) {
                if (!waits) {
                    return new GrantResult(false, 0, null); // free, but waiters are queued: a try never passes them
                }
                enqueue(name, owner, now + waiterDeadline.toNanos());
                return new Queued(Math.max(0, (lines.get(name).get(head) - now) / 1_000_000), ahead(name, owner));
            }
            dequeue(name, owner);
            long token = counters.merge(name, 1L, Long::sum);
            Entry fresh = new Entry(owner, token, now + ttl.toNanos());
            fresh.payload = payload;
            locks.put(name, fresh);
            armExpiry(name, fresh);
            result = new GrantResult(true, token, null);
            event = new LockEvent.Acquired(name, owner, token);
        }
        publish(event);
        return result;
    }

    /**
     * A waiting caller's place: in line, not granted.
     *
     * @param hintMs ms until something may change unannounced (the holder's lease or the head's entry)
     * @param ahead  waiters before it
     */
    record Queued(long hintMs, long ahead) {
    }

    // guarded by this
    private long ahead(String name, String owner) {
        long n = 0;
        for (String o : lines.get(name).keySet()) {
            if (o.equals(owner)) {
                return n;
            }
            n++;
        }
        return n;
    }

    /** Owner-checked release of a fair lock: the owner's hold and its place in the line; announced when either was there. */
    boolean fairRelease(String name, String owner) {
        boolean queued;
        synchronized (this) {
            long now = clock.nanoTime();
            liveLine(name, now); // a waiter past its deadline has no place left to give back, whoever asked last
            queued = dequeue(name, owner);
            Entry e = liveEntry(name, now);
            if (e != null && e.owner.equals(owner)) {
                locks.remove(name);
                e.expiryTimer.dispose();
                queued = true;
            }
        }
        if (queued) {
            publish(new LockEvent.Released(name, owner, false));
        }
        return queued;
    }

    /**
     * @param name a fair lock's name
     * @return how many live waiters are in its line (expired ones are dropped now)
     */
    public synchronized int waiting(String name) {
        LinkedHashMap<String, Long> line = liveLine(name, clock.nanoTime());
        return line == null ? 0 : line.size();
    }

    /**
     * @param name a lock name
     * @return how many live waiters are in its fair line, or {@code -1} when it has none (plain
     *         locks keep no line: their waiters back off and listen)
     */
    synchronized int queued(String name) {
        LinkedHashMap<String, Long> line = liveLine(name, clock.nanoTime());
        return line == null ? -1 : line.size();
    }

    /**
     * @param prefix the start of the names
     * @return the names held now that start with {@code prefix}
     */
    synchronized List<String> heldNames(String prefix) {
        long now = clock.nanoTime();
        List<String> out = new ArrayList<>();
        locks.forEach((n, e) -> {
            if (n.startsWith(prefix) && e.expiresAt > now) {
                out.add(n);
            }
        });
        return out;
    }

    // guarded by this: the line of a name without its expired waiters, or null when empty
    private LinkedHashMap<String, Long> liveLine(String name, long now) {
        LinkedHashMap<String, Long> line = lines.get(name);
        if (line == null) {
            return null;
        }
        for (Iterator<Long> it = line.values().iterator(); it.hasNext(); ) {
            if (it.next() <= now) {
                it.remove();
            }
        }
        if (line.isEmpty()) {
            lines.remove(name);
            return null;
        }
        return line;
    }

    // guarded by this: joins the line at its end, or refreshes the deadline keeping the place
    private void enqueue(String name, String owner, long deadline) {
        lines.computeIfAbsent(name, n -> new LinkedHashMap<>()).put(owner, deadline);
    }

    // guarded by this
    private boolean dequeue(String name, String owner) {
        LinkedHashMap<String, Long> line = lines.get(name);
        if (line == null || line.remove(owner) == null) {
            return false;
        }
        if (line.isEmpty()) {
            lines.remove(name);
        }
        return true;
    }

    /** @return how many locks are held now (expired ones not counted) */
    public synchronized int heldCount() {
        long now = clock.nanoTime();
        int n = 0;
        for (Entry e : locks.values()) {
            if (e.expiresAt > now) {
                n++;
            }
        }
        return n;
    }

    // guarded by this
    private Entry liveEntry(String name, long now) {
        Entry e = locks.get(name);
        if (e != null && e.expiresAt <= now) {
            return null; // expired; its timer removes it and tells the waiters
        }
        return e;
    }

    // guarded by this
    private void armExpiry(String name, Entry e) {
        if (e.expiryTimer != null) {
            e.expiryTimer.dispose();
        }
        long delay = Math.max(0, e.expiresAt - clock.nanoTime());
        e.expiryTimer = scheduler.schedule(() -> expire(name, e), delay, TimeUnit.NANOSECONDS);
    }

    private void expire(String name, Entry e) {
        synchronized (this) {
            if (locks.get(name) != e) {
                return;
            }
            if (e.expiresAt > clock.nanoTime()) {
                armExpiry(name, e);
                return;
            }
            locks.remove(name);
        }
        publish(new LockEvent.Released(name, e.owner, true));
    }

    /** Tells whoever listens to {@code name}'s events that its holder {@code owner} is asked to let go. */
    void revoke(String name, String owner, String reason) {
        publish(new LockEvent.Revoked(name, owner, reason));
    }

    private void publish(LockEvent event) {
        channels.publish(event);
    }
}
