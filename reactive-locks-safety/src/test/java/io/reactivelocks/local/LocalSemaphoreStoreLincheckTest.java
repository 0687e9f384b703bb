package io.reactivelocks.local;

import io.reactivelocks.spi.semaphore.PermitGrant;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jetbrains.lincheck.datastructures.IntGen;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.junit.jupiter.api.Test;

/**
 * Lincheck in model-checking mode against the in-memory semaphore store ({@link LocalSemaphoreStore},
 * N = 2): grants, releases, counts and clock ticks by three threads must be explained by a sequential
 * semaphore (at most N live permits, tokens strictly increasing, expiry by the store's clock). The clock
 * is an operation ({@link #tick()}: half a lease); the store's expiry timers are kept, not run.
 *
 * <p>Bounded for the build (3 × 60 scenarios); {@code -Dreactivelocks.modelcheck.long=true} explores 20 × 500 (minutes).
 */
@Param(name = "owner", gen = IntGen.class, conf = "1:3")
public class LocalSemaphoreStoreLincheckTest {

    static final long LEASE = 1_000;
    static final int PERMITS = 2;
    static final String NAME = "s";

    private final LocalLockStoreLincheckTest.ManualClock clock = new LocalLockStoreLincheckTest.ManualClock();
    private final LocalSemaphoreStore store = new LocalSemaphoreStore(new LocalLockStoreLincheckTest.KeptTimers(), clock);

    /** @return the permit's token, or -1 when all N are held by others */
    @Operation
    public long grant(@Param(name = "owner") int owner) {
        PermitGrant g = now(store.tryGrant(NAME, List.of("o" + owner), PERMITS, Duration.ofNanos(LEASE)));
        return g instanceof PermitGrant.Granted granted ? granted.tokens().get(0) : -1;
    }

    /** @return whether the owner held a permit and gave it back */
    @Operation
    public boolean release(@Param(name = "owner") int owner) {
        return Boolean.TRUE.equals(now(store.release(NAME, "o" + owner)));
    }

    /**
     * The value of a store's {@code Mono.fromSupplier}, computed on this thread without Reactor's
     * subscription machinery (a {@code MonoSupplier} is a {@link java.util.concurrent.Callable}), so that the model
     * checker explores the store's code, not Reactor's.
     */
    @SuppressWarnings("unchecked")
    static <T> T now(reactor.core.publisher.Mono<T> mono) {
        try {
            return ((java.util.concurrent.Callable<T>) mono).call();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    /** @return how many permits are live */
    @Operation
    public int held() {
        return store.heldCount(NAME);
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
                .iterations(longMode ? 20 : 3)
                .invocationsPerIteration(longMode ? 500 : 60)
                .threads(3)
                .actorsPerThread(2)
                .actorsBefore(3)
                .actorsAfter(1)
                .sequentialSpecification(SemaphoreSpec.class)
                .check(LocalSemaphoreStoreLincheckTest.class);
    }

    /** The sequential semaphore the store must behave like. */
    public static final class SemaphoreSpec {
        private long now;
        private long counter;
        private final Map<String, long[]> permits = new LinkedHashMap<>(); // owner -> token, expiresAt

        private void expire() {
            permits.values().removeIf(p -> p[1] <= now);
        }

        /** @see LocalSemaphoreStoreLincheckTest#grant */
        public long grant(int o) {
            expire();
            long[] mine = permits.get("o" + o);
            if (mine != null) { // the same owner again: granted again, same token
                mine[1] = now + LEASE;
                return mine[0];
            }
            if (permits.size() >= PERMITS) {
                return -1;
            }
            permits.put("o" + o, new long[] {++counter, now + LEASE});
            return counter;
        }

        /** @see LocalSemaphoreStoreLincheckTest#release */
        public boolean release(int o) {
            expire();
            return permits.remove("o" + o) != null;
        }

        /** @see LocalSemaphoreStoreLincheckTest#held */
        public int held() {
            expire();
            return permits.size();
        }

        /** @see LocalSemaphoreStoreLincheckTest#tick */
        public void tick() {
            now += LEASE / 2;
        }
    }
}
