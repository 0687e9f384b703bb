package io.reactivelocks.local;

import io.reactivelocks.LockClock;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.jetbrains.lincheck.datastructures.IntGen;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.scheduler.Scheduler;

/**
 * Lincheck in model-checking mode against the in-memory lock store ({@link LocalLockStore}): every
 * interleaving Lincheck explores of grants, renewals, releases, inspections and clock ticks by three
 * threads must be explained by a sequential lock (at most one live holder, tokens strictly increasing,
 * expiry when the store's clock passes the deadline). The clock is an operation: {@link #tick()} moves
 * it half a lease on. The store's expiry timers are not run (a scheduler that keeps them): expiry is
 * what the store decides from its clock on each request.
 *
 * <p>Bounded for the build (5 × 80 scenarios, a few seconds); {@code -Dreactivelocks.modelcheck.long=true} explores 100 × 2000
 * (minutes).
 */
@Param(name = "owner", gen = IntGen.class, conf = "1:3")
@Param(name = "token", gen = IntGen.class, conf = "1:4")
public class LocalLockStoreLincheckTest {

    static final long LEASE = 1_000;
    static final String NAME = "n";

    private final ManualClock clock = new ManualClock();
    private final LocalLockStore store = new LocalLockStore(new KeptTimers(), clock);

    /** @return the token granted, or -1 when another owner holds the lock */
    @Operation
    public long grant(@Param(name = "owner") int owner) {
        LocalLockStore.GrantResult r = store.grant(NAME, "o" + owner, Duration.ofNanos(LEASE), null);
        return r.granted() ? r.token() : -1;
    }

    /** @return whether the owner's grant with that token was renewed */
    @Operation
    public boolean renew(@Param(name = "owner") int owner, @Param(name = "token") int token) {
        return store.renew(NAME, "o" + owner, token, Duration.ofNanos(LEASE));
    }

    /** @return whether the owner held the lock and let it go */
    @Operation
    public boolean release(@Param(name = "owner") int owner) {
        return store.release(NAME, "o" + owner);
    }

    /** @return the live holder's token, or -1 */
    @Operation
    public long holder() {
        var h = store.inspect(NAME);
        return h == null ? -1 : h.token();
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
                .iterations(longMode ? 100 : 5)
                .invocationsPerIteration(longMode ? 2_000 : 80)
                .threads(3)
                .actorsPerThread(3)
                .actorsBefore(2)
                .actorsAfter(1)
                .sequentialSpecification(LockSpec.class)
                .check(LocalLockStoreLincheckTest.class);
    }

    /** The sequential lock the store must behave like. */
    public static final class LockSpec {
        private long now;
        private long counter;
        private String owner;
        private long token;
        private long expiresAt;

        private boolean live() {
            return owner != null && expiresAt > now;
        }

        /** @see LocalLockStoreLincheckTest#grant */
        public long grant(int o) {
            String who = "o" + o;
            if (live() && !owner.equals(who)) {
                return -1;
            }
            if (!live()) {
                owner = who;
                token = ++counter;
            }
            expiresAt = now + LEASE;
            return token;
        }

        /** @see LocalLockStoreLincheckTest#renew */
        public boolean renew(int o, int t) {
            if (!live() || !owner.equals("o" + o) || token != t) {
                return false;
            }
            expiresAt = now + LEASE;
            return true;
        }

        /** @see LocalLockStoreLincheckTest#release */
        public boolean release(int o) {
            if (!live() || !owner.equals("o" + o)) {
                return false;
            }
            owner = null;
            return true;
        }

        /** @see LocalLockStoreLincheckTest#holder */
        public long holder() {
            return live() ? token : -1;
        }

        /** @see LocalLockStoreLincheckTest#tick */
        public void tick() {
            now += LEASE / 2;
        }
    }

    /** A clock moved by the test. */
    static final class ManualClock implements LockClock {
        private final java.util.concurrent.atomic.AtomicLong now = new java.util.concurrent.atomic.AtomicLong();

        @Override
        public long nanoTime() {
            return now.get();
        }

        void advance(long nanos) {
            now.addAndGet(nanos);
        }
    }

    /** A scheduler that keeps timers and never runs them: the store decides expiry from its clock. */
    static final class KeptTimers implements Scheduler {
        @Override
        public Disposable schedule(Runnable task) {
            return () -> { };
        }

        @Override
        public Disposable schedule(Runnable task, long delay, TimeUnit unit) {
            return () -> { };
        }

        @Override
        public Worker createWorker() {
            throw new UnsupportedOperationException("the store's timers are scheduled directly");
        }
    }
}
