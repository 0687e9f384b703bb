package io.reactivelocks.local;

import io.reactivelocks.LockClock;
import io.reactivelocks.rwlock.LockMode;
import io.reactivelocks.spi.Holder;
import io.reactivelocks.spi.LockEvent;
import io.reactivelocks.spi.RenewOutcome;
import io.reactivelocks.spi.RenewRequest;
import io.reactivelocks.spi.rwlock.ReadWriteHolders;
import io.reactivelocks.spi.rwlock.ReadWriteStore;
import io.reactivelocks.spi.semaphore.PermitGrant;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * An in-memory {@link ReadWriteStore}: what a server would hold, for tests and single-JVM use.
 * Several locks may share one store (as clients share a server). Tokens come from one counter per
 * name taken at grant time, so a grant's token exceeds every token before it. Expiry is decided by
 * the store's own clock and scheduler — inject a {@code VirtualTimeScheduler} to drive it in
 * tests. Every operation is a short critical section; nothing blocks. {@link #close()} does
 * nothing, so a shared store outlives the locks over it.
 */
public final class LocalReadWriteStore implements ReadWriteStore {

    private final Scheduler scheduler;
    private final LockClock clock;
    private final Map<String, Entry> locks = new HashMap<>();   // guarded by this
    private final Map<String, Long> counters = new HashMap<>(); // guarded by this
    private final LocalChannels channels = new LocalChannels();

    /** A store on Reactor's parallel scheduler and the JVM's monotonic clock. */
    public LocalReadWriteStore() {
        this(Schedulers.parallel(), LockClock.system());
    }

    /**
     * @param scheduler runs expiry timers
     * @param clock     decides expiry (the "server clock")
     */
    public LocalReadWriteStore(Scheduler scheduler, LockClock clock) {
        this.scheduler = Objects.requireNonNull(scheduler, "scheduler");
        this.clock = Objects.requireNonNull(clock, "clock");
    }

    /** A grant (token &gt; 0) or a waiting writer's intent (token 0). */
    private static final class Grant {
        final String owner;
        final LockMode mode;
        final long token;
        long expiresAt;
        Disposable timer;

        Grant(String owner, LockMode mode, long token, long expiresAt) {
            this.owner = owner;
            this.mode = mode;
            this.token = token;
            this.expiresAt = expiresAt;
        }
    }

    /** The grants and intents of one name. */
    private static final class Entry {
        final Map<String, Grant> grants = new LinkedHashMap<>();
        final Map<String, Grant> intents = new LinkedHashMap<>();

        boolean isEmpty() {
            return grants.isEmpty() && intents.isEmpty();
        }
    }

    @Override
    public String name() {
        return "local";
    }

    @Override
    public Mono<PermitGrant> tryGrant(String name, String owner, LockMode mode, boolean writerPreferring, boolean waiting,
            Duration leaseTime) {
        return Mono.fromSupplier(() -> grant(name, owner, mode, writerPreferring, waiting, leaseTime));
    }

    private PermitGrant grant(String name, String owner, LockMode mode, boolean writerPreferring, boolean waiting, Duration leaseTime) {
        LockEvent event;
        PermitGrant result;
        synchronized (this) {
            long now = clock.nanoTime();
            Entry e = live(name, now);
            long until = now + leaseTime.toNanos();
            Grant mine = e.grants.get(owner);
            if (mine != null) { // a retried request: grant again with the same token
                mine.expiresAt = until;
                arm(name, e.grants, mine);
                return new PermitGrant.Granted(List.of(mine.token), leaseTime);
            }
            boolean writerHolds = e.grants.values().stream().anyMatch(g -> g.mode == LockMode.WRITE);
            boolean busy = mode == LockMode.READ
                    ? writerHolds || writerPreferring && !e.intents.isEmpty()
                    : !e.grants.isEmpty();
            if (busy) {
                if (mode == LockMode.WRITE && writerPreferring && waiting) {
                    Grant intent = e.intents.computeIfAbsent(owner, o -> new Grant(o, LockMode.WRITE, 0, until));
                    intent.expiresAt = until;
                    arm(name, e.intents, intent);
                }
                long earliest = Long.MAX_VALUE;
                for (Grant g : e.grants.values()) {
                    earliest = Math.min(earliest, g.expiresAt);
                }
                if (mode == LockMode.READ && !writerHolds) {
                    for (Grant g : e.intents.values()) {
                        earliest = Math.min(earliest, g.expiresAt);
                    }
                }
                return new PermitGrant.Busy(Duration.ofNanos(Math.max(0, earliest - now)));
            }
            Grant intent = e.intents.remove(owner);
            if (intent != null) {
                intent.timer.dispose();
            }
            long token = counters.merge(name, 1L, Long::sum);
            Grant g = new Grant(owner, mode, token, until);
            e.grants.put(owner, g);
            arm(name, e.grants, g);
            event = new LockEvent.Acquired(name, owner, token);
            result = new PermitGrant.Granted(List.of(token), leaseTime);
        }
        publish(event);
        return result;
    }

    @Override
    public Mono<List<RenewOutcome>> renew(List<RenewRequest> batch) {
        return Mono.fromSupplier(() -> {
            List<RenewOutcome> out = new ArrayList<>(batch.size());
            synchronized (this) {
                long now = clock.nanoTime();
                for (RenewRequest r : batch) {
                    Entry e = live(r.lock().name(), now);
                    Grant g = e.grants.get(r.lock().owner());
                    if (g == null || g.token != r.lock().token()) {
                        out.add(RenewOutcome.notHeld());
                    } else {
                        g.expiresAt = now + r.leaseTime().toNanos();
                        arm(r.lock().name(), e.grants, g);
                        out.add(RenewOutcome.renewed(r.leaseTime()));
                    }
                    tidy(r.lock().name());
                }
            }
            return out;
        });
    }

    @Override
    public Mono<Boolean> release(String name, String owner) {
        return Mono.fromSupplier(() -> {
            synchronized (this) {
                Entry e = live(name, clock.nanoTime());
                Grant g = e.grants.remove(owner);
                if (g == null) {
                    g = e.intents.remove(owner);
                }
                tidy(name);
                if (g == null) {
                    return false;
                }
                g.timer.dispose();
            }
            publish(new LockEvent.Released(name, owner, false));
            return true;
        });
    }

    /**
     * @param prefix the start of the names
     * @return the names with grants held now that start with {@code prefix}
     */
    public synchronized List<String> heldNames(String prefix) {
        long now = clock.nanoTime();
        List<String> out = new ArrayList<>();
        locks.forEach((n, e) -> {
            if (n.startsWith(prefix) && e.grants.values().stream().anyMatch(g -> g.expiresAt > now)) {
                out.add(n);
            }
        });
        return out;
    }

    @Override
    public Mono<ReadWriteHolders> holders(String name) {
        return Mono.fromSupplier(() -> {
            synchronized (this) {
                long now = clock.nanoTime();
                Entry e = live(name, now);
                List<Holder> readers = new ArrayList<>();
                Holder writer = null;
                for (Grant g : e.grants.values()) {
                    Holder h = new Holder(g.owner, g.token, Duration.ofNanos(g.expiresAt - now));
                    if (g.mode == LockMode.READ) {
                        readers.add(h);
                    } else {
                        writer = h;
                    }
                }
                readers.sort(Comparator.comparingLong(Holder::token));
                List<Holder> waiting = new ArrayList<>();
                for (Grant g : e.intents.values()) {
                    waiting.add(new Holder(g.owner, 0, Duration.ofNanos(g.expiresAt - now)));
                }
                tidy(name);
                return new ReadWriteHolders(readers, writer, waiting);
            }
        });
    }

    /** Tells whoever listens to {@code name}'s events that the grant of {@code owner} is asked to let go. */
    @Override
    public Mono<Void> revoke(String name, String owner, String reason) {
        return Mono.fromRunnable(() -> channels.publish(new LockEvent.Revoked(name, owner, reason)));
    }

    @Override
    public Flux<LockEvent> events(String name) {
        return channels.events(name);
    }

    @Override
    public Mono<Void> close() {
        return Mono.empty();
    }

    // guarded by this: the unexpired grants and intents of a name (expired ones are dropped; their timers tell the waiters)
    private Entry live(String name, long now) {
        Entry e = locks.computeIfAbsent(name, n -> new Entry());
        e.grants.values().removeIf(g -> g.expiresAt <= now);
        e.intents.values().removeIf(g -> g.expiresAt <= now);
        return e;
    }

    // guarded by this: forget a name without grants or intents, so names do not accumulate
    private void tidy(String name) {
        Entry e = locks.get(name);
        if (e != null && e.isEmpty()) {
            locks.remove(name);
        }
    }

    // guarded by this
    private void arm(String name, Map<String, Grant> in, Grant g) {
        if (g.timer != null) {
            g.timer.dispose();
        }
        long delay = Math.max(0, g.expiresAt - clock.nanoTime());
        g.timer = scheduler.schedule(() -> expire(name, in, g), delay, TimeUnit.NANOSECONDS);
    }

    private void expire(String name, Map<String, Grant> in, Grant g) {
        synchronized (this) {
            if (in.get(g.owner) == g) {
                if (g.expiresAt > clock.nanoTime()) {
                    arm(name, in, g);
                    return;
                }
                in.remove(g.owner);
                tidy(name);
            }
            // removed already by live() (it drops expired entries) or now: tell the waiters either way
        }
        publish(new LockEvent.Released(name, g.owner, true));
    }

    private void publish(LockEvent event) {
        channels.publish(event);
    }
}
