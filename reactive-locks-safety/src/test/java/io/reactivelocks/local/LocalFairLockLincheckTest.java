package io.reactivelocks.local;

import io.reactivelocks.spi.Holder;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import org.jetbrains.lincheck.datastructures.IntGen;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.junit.jupiter.api.Test;

/**
 * Lincheck in model-checking mode against the in-memory fair lock (the waiter line of
 * {@link LocalLockStore} that {@link LocalFairLockBackend} asks): waiting grants, tries, renewals,
 * releases, inspections, line lengths and clock ticks by three threads must be explained by a
 * sequential FIFO lock (one live holder, tokens strictly increasing; a waiting caller that is not
 * granted keeps its place in the line, with a deadline of twice the lease; a free lock goes to the head
 * of the line; a try never passes a waiter). The clock is an operation ({@link #tick()}: half a lease);
 * the store's expiry timers are kept, not run.
 *
 * <p>Bounded for the build (3 × 30 scenarios); {@code -Dreactivelocks.modelcheck.long=true} explores 100 × 2000
 * (minutes).
 */
@Param(name = "owner", gen = IntGen.class, conf = "1:3")
@Param(name = "token", gen = IntGen.class, conf = "1:4")
public class LocalFairLockLincheckTest {

    static final long LEASE = 1_000;
    static final long WAITER_DEADLINE = 2 * LEASE;
    static final String NAME = "f";

    private final LocalLockStoreLincheckTest.ManualClock clock = new LocalLockStoreLincheckTest.ManualClock();
    private final LocalLockStore store = new LocalLockStore(new LocalLockStoreLincheckTest.KeptTimers(), clock);

    /** @return {@code g<token>} when granted, else {@code q<waiters ahead>} (the caller is in the line) */
    @Operation
    public String acquire(@Param(name = "owner") int owner) {
        return ask(owner, true);
    }

    /** @return {@code g<token>} when granted, else {@code b<holder's token>} or {@code b} when the lock is free but others wait */
    @Operation
    public String tryAcquire(@Param(name = "owner") int owner) {
        return ask(owner, false);
    }

    private String ask(int owner, boolean waits) {
        Object r = store.fairGrant(NAME, "o" + owner, Duration.ofNanos(LEASE), null, waits, Duration.ofNanos(WAITER_DEADLINE));
        if (r instanceof LocalLockStore.GrantResult g) {
            return g.granted() ? "g" + g.token() : "b" + (g.holder() == null ? "" : g.holder().token());
        }
        return "q" + ((LocalLockStore.Queued) r).ahead();
    }

    /** @return whether the owner's grant with that token was renewed */
    @Operation
    public boolean renew(@Param(name = "owner") int owner, @Param(name = "token") int token) {
        return store.renew(NAME, "o" + owner, token, Duration.ofNanos(LEASE));
    }

    /** @return whether the owner held the lock or had a place in the line, and now has neither */
    @Operation
    public boolean release(@Param(name = "owner") int owner) {
        return store.fairRelease(NAME, "o" + owner);
    }

    /** @return the live holder's token, or -1 */
    @Operation
    public long holder() {
        Holder h = store.inspect(NAME);
        return h == null ? -1 : h.token();
    }

    /** @return how many live waiters are in the line */
    @Operation
    public int waiting() {
        return store.waiting(NAME);
    }

    /** The store's clock moves half a lease on. */
    @Operation
    public void tick() {
        clock.advance(LEASE / 2);
    }

    @Test
    void modelChecking() {
        boolean longMode = Boolean.getBoolean("reactivelocks.modelcheck.long");
        new ModelCheckingOptions()
                .iterations(longMode ? 100 : 3)
                .invocationsPerIteration(longMode ? 2_000 : 30)
                .threads(3)
                .actorsPerThread(3)
                .actorsBefore(2)
                .actorsAfter(1)
                .sequentialSpecification(FairLockSpec.class)
                .check(LocalFairLockLincheckTest.class);
    }

    /** The sequential FIFO lock the store must behave like. */
    public static final class FairLockSpec {
        private long now;
        private long counter;
        private String owner;
        private long token;
        private long expiresAt;
        private final Map<String, Long> line = new LinkedHashMap<>(); // waiter -> deadline, by arrival

        private boolean live() {
            return owner != null && expiresAt > now;
        }

        private void expire() {
            line.values().removeIf(deadline -> deadline <= now);
        }

        private String queue(String who) {
            line.put(who, now + WAITER_DEADLINE); // a refreshed waiter keeps its place
            int ahead = 0;
            for (String w : line.keySet()) {
                if (w.equals(who)) {
                    break;
                }
                ahead++;
            }
            return "q" + ahead;
        }

        private String ask(int o, boolean waits) {
            expire();
            String who = "o" + o;
            if (live() && owner.equals(who)) { // a retried request: extended, same token
                line.remove(who);
                expiresAt = now + LEASE;
                return "g" + token;
            }
            if (live()) {
                return waits ? queue(who) : "b" + token;
            }
            if (!line.isEmpty() && !line.keySet().iterator().next().equals(who)) {
                return waits ? queue(who) : "b";
            }
            line.remove(who);
            owner = who;
            token = ++counter;
            expiresAt = now + LEASE;
            return "g" + token;
        }

        /** @see LocalFairLockLincheckTest#acquire */
        public String acquire(int o) {
            return ask(o, true);
        }

        /** @see LocalFairLockLincheckTest#tryAcquire */
        public String tryAcquire(int o) {
            return ask(o, false);
        }

        /** @see LocalFairLockLincheckTest#renew */
        public boolean renew(int o, int t) {
            if (!live() || !owner.equals("o" + o) || token != t) {
                return false;
            }
            expiresAt = now + LEASE;
            return true;
        }

        /** @see LocalFairLockLincheckTest#release */
        public boolean release(int o) {
            // a waiter past its deadline has no place left to give back
            expire();
            boolean was = line.remove("o" + o) != null;
            if (live() && owner.equals("o" + o)) {
                owner = null;
                was = true;
            }
            return was;
        }

        /** @see LocalFairLockLincheckTest#holder */
        public long holder() {
            return live() ? token : -1;
        }

        /** @see LocalFairLockLincheckTest#waiting */
        public int waiting() {
            expire();
            return line.size();
        }

        /** @see LocalFairLockLincheckTest#tick */
        public void tick() {
            now += LEASE / 2;
        }
    }
}
