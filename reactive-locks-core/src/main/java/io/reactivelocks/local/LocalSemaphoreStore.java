package io.reactivelocks.local;

import io.reactivelocks.LockClock;
import io.reactivelocks.spi.Holder;
import io.reactivelocks.spi.LockEvent;
import io.reactivelocks.spi.RenewOutcome;
import io.reactivelocks.spi.RenewRequest;
import io.reactivelocks.spi.semaphore.PermitGrant;
import io.reactivelocks.spi.semaphore.SemaphoreStore;
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
 * An in-memory {@link SemaphoreStore}: what a server would hold, for tests and single-JVM use.
 * Several semaphores may share one store (as clients share a server). Expiry is decided by the
 * store's own clock and scheduler — inject a {@code VirtualTimeScheduler} to drive it in tests.
 * Every operation is a short critical section; nothing blocks. {@link #close()} does nothing, so
 * a shared store outlives the semaphores over it.
 */
public final class LocalSemaphoreStore implements SemaphoreStore {

    private final Scheduler scheduler;
    private final LockClock clock;
    private final Map<String, Map<String, Permit>> semaphores = new HashMap<>(); // guarded by this
    private final Map<String, Long> counters = new HashMap<>();                 // guarded by this
    private final LocalChannels channels = new LocalChannels();

    /** A store on Reactor's parallel scheduler and the JVM's monotonic clock. */
    public LocalSemaphoreStore() {
        this(Schedulers.parallel(), LockClock.system());
    }

    /**
     * @param scheduler runs expiry timers
     * @param clock     decides expiry (the "server clock")
     */
    public LocalSemaphoreStore(Scheduler scheduler, LockClock clock) {
        this.scheduler = Objects.requireNonNull(scheduler, "scheduler");
        this.clock = Objects.requireNonNull(clock, "clock");
    }

    private static final class Permit {
        final String owner;
        final long token;
        long expiresAt;
        Disposable timer;

        Permit(String owner, long token, long expiresAt) {
            this.owner = owner;
            this.token = token;
            this.expiresAt = expiresAt;
        }
    }

    @Override
    public String name() {
        return "local";
    }

    @Override
    public Mono<PermitGrant> tryGrant(String name, List<String> owners, int permits, Duration leaseTime) {
        return Mono.fromSupplier(() -> grant(name, owners, permits, leaseTime));
    }

    private PermitGrant grant(String name, List<String> owners, int permits, Duration leaseTime) {
        List<LockEvent> events = new ArrayList<>();
        PermitGrant result;
        synchronized (this) {
            long now = clock.nanoTime();
            Map<String, Permit> held = live(name, now);
            if (held.containsKey(owners.get(0))) { // a retried request: grant again with the same tokens
                List<Long> tokens = new ArrayList<>();
                for (String o : owners) {
                    Permit p = held.get(o);
                    if (p == null) {
                        throw new IllegalStateException("owners of one request were granted together");
                    }
                    p.expiresAt = now + leaseTime.toNanos();
                    arm(name, p);
                    tokens.add(p.token);
                }
                return new PermitGrant.Granted(tokens, leaseTime);
            }
            if (held.size() + owners.size() > permits) {
                tidy(name);
                long earliest = held.values().stream().mapToLong(p -> p.expiresAt).min().orElse(now);
                return new PermitGrant.Busy(Duration.ofNanos(Math.max(0, earliest - now)));
            }
            List<Long> tokens = new ArrayList<>();
            for (String o : owners) {
                long token = counters.merge(name, 1L, Long::sum);
                Permit p = new Permit(o, token, now + leaseTime.toNanos());
                held.put(o, p);
                arm(name, p);
                tokens.add(token);
                events.add(new LockEvent.Acquired(name, o, token));
            }
            result = new PermitGrant.Granted(tokens, leaseTime);
        }
        events.forEach(this::publish);
        return result;
    }

    @Override
    public Mono<List<RenewOutcome>> renew(List<RenewRequest> batch) {
        return Mono.fromSupplier(() -> {
            List<RenewOutcome> out = new ArrayList<>(batch.size());
            synchronized (this) {
                long now = clock.nanoTime();
                for (RenewRequest r : batch) {
                    Permit p = live(r.lock().name(), now).get(r.lock().owner());
                    if (p == null || p.token != r.lock().token()) {
                        tidy(r.lock().name());
                        out.add(RenewOutcome.notHeld());
                    } else {
                        p.expiresAt = now + r.leaseTime().toNanos();
                        arm(r.lock().name(), p);
                        out.add(RenewOutcome.renewed(r.leaseTime()));
                    }
                }
            }
            return out;
        });
    }

    @Override
    public Mono<Boolean> release(String name, String owner) {
        return Mono.fromSupplier(() -> {
            synchronized (this) {
                Permit p = live(name, clock.nanoTime()).remove(owner);
                if (p == null) {
                    return false;
                }
                p.timer.dispose();
                tidy(name);
            }
            publish(new LockEvent.Released(name, owner, false));
            return true;
        });
    }

    @Override
    public Mono<List<Holder>> holders(String name) {
        return Mono.fromSupplier(() -> {
            synchronized (this) {
                long now = clock.nanoTime();
                List<Holder> out = new ArrayList<>();
                for (Permit p : live(name, now).values()) {
                    out.add(new Holder(p.owner, p.token, Duration.ofNanos(p.expiresAt - now)));
                }
                out.sort(Comparator.comparingLong(Holder::token));
                tidy(name);
                return out;
            }
        });
    }

    /**
     * @param prefix the start of the names
     * @return the names with permits held now that start with {@code prefix}
     */
    public synchronized List<String> heldNames(String prefix) {
        long now = clock.nanoTime();
        List<String> out = new ArrayList<>();
        semaphores.forEach((n, held) -> {
            if (n.startsWith(prefix) && held.values().stream().anyMatch(p -> p.expiresAt > now)) {
                out.add(n);
            }
        });
        return out;
    }

    /** @return how many permits of {@code name} are held now (expired ones not counted) */
    public synchronized int heldCount(String name) {
        int n = live(name, clock.nanoTime()).size();
        tidy(name);
        return n;
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

    // guarded by this: the unexpired permits of a name (expired ones are dropped; their timers tell the waiters)
    private Map<String, Permit> live(String name, long now) {
        Map<String, Permit> held = semaphores.computeIfAbsent(name, n -> new LinkedHashMap<>());
        held.values().removeIf(p -> p.expiresAt <= now);
        return held;
    }

    // guarded by this: forget a name without permits, so names do not accumulate
    private void tidy(String name) {
        Map<String, Permit> held = semaphores.get(name);
        if (held != null && held.isEmpty()) {
            semaphores.remove(name);
        }
    }

    // guarded by this
    private void arm(String name, Permit p) {
        if (p.timer != null) {
            p.timer.dispose();
        }
        long delay = Math.max(0, p.expiresAt - clock.nanoTime());
        p.timer = scheduler.schedule(() -> expire(name, p), delay, TimeUnit.NANOSECONDS);
    }

    private void expire(String name, Permit p) {
        synchronized (this) {
            Map<String, Permit> held = semaphores.get(name);
            if (held != null && held.get(p.owner) == p) {
                if (p.expiresAt > clock.nanoTime()) {
                    arm(name, p);
                    return;
                }
                held.remove(p.owner);
                tidy(name);
            }
            // removed already by live() (it drops expired permits) or now: tell the waiters either way
        }
        publish(new LockEvent.Released(name, p.owner, true));
    }

    private void publish(LockEvent event) {
        channels.publish(event);
    }
}
