package io.reactivelocks.local;

import io.reactivelocks.rwlock.LockMode;
import io.reactivelocks.spi.HeldLock;
import io.reactivelocks.spi.Holder;
import io.reactivelocks.spi.RenewRequest;
import io.reactivelocks.spi.rwlock.ReadWriteHolders;
import io.reactivelocks.spi.semaphore.PermitGrant;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jetbrains.lincheck.datastructures.IntGen;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.junit.jupiter.api.Test;

/**
 * Lincheck in model-checking mode against the in-memory read-write store ({@link LocalReadWriteStore}):
 * read and write grants (writer-preferring; a waiting writer leaves an intent that blocks new readers, a
 * single attempt leaves nothing), renewals, releases, holder listings and clock ticks by three threads
 * must be explained by a sequential read-write lock (readers together or one writer, tokens from one
 * counter, a retried grant keeps its token, expiry of grants and intents by the store's clock). The
 * clock is an operation ({@link #tick()}: half a lease); the store's expiry timers are kept, not run.
 *
 * <p>Bounded for the build (5 × 5 scenarios); {@code -Dreactivelocks.modelcheck.long=true} explores 20 × 500 (minutes).
 */
@Param(name = "owner", gen = IntGen.class, conf = "1:3")
@Param(name = "token", gen = IntGen.class, conf = "1:4")
public class LocalReadWriteStoreLincheckTest {

    static final long LEASE = 1_000;
    static final String NAME = "rw";

    private final LocalLockStoreLincheckTest.ManualClock clock = new LocalLockStoreLincheckTest.ManualClock();
    private final LocalReadWriteStore store = new LocalReadWriteStore(new LocalLockStoreLincheckTest.KeptTimers(), clock);

    /** @return the read grant's token, or -1 when a writer holds or waits */
    @Operation
    public long read(@Param(name = "owner") int owner) {
        return grant(owner, LockMode.READ, true);
    }

    /** @return the write grant's token, or -1 (then the owner's intent is recorded or refreshed) */
    @Operation
    public long write(@Param(name = "owner") int owner) {
        return grant(owner, LockMode.WRITE, true);
    }

    /** @return the write grant's token, or -1 (a single attempt: nothing is left) */
    @Operation
    public long tryWrite(@Param(name = "owner") int owner) {
        return grant(owner, LockMode.WRITE, false);
    }

    private long grant(int owner, LockMode mode, boolean waiting) {
        PermitGrant g = LocalSemaphoreStoreLincheckTest.now(
                store.tryGrant(NAME, "o" + owner, mode, true, waiting, Duration.ofNanos(LEASE)));
        return g instanceof PermitGrant.Granted granted ? granted.tokens().get(0) : -1;
    }

    /** @return whether the owner's grant with that token was renewed */
    @Operation
    public boolean renew(@Param(name = "owner") int owner, @Param(name = "token") int token) {
        var out = LocalSemaphoreStoreLincheckTest.now(store.renew(List.of(
                new RenewRequest(new HeldLock(NAME, "o" + owner, token), Duration.ofNanos(LEASE)))));
        return out.get(0).renewed();
    }

    /** @return whether the owner's grant or intent was there and is gone */
    @Operation
    public boolean release(@Param(name = "owner") int owner) {
        return Boolean.TRUE.equals(LocalSemaphoreStoreLincheckTest.now(store.release(NAME, "o" + owner)));
    }

    /** @return the readers, the writer and the waiting writers, each with token and time left */
    @Operation
    public String holders() {
        ReadWriteHolders h = LocalSemaphoreStoreLincheckTest.now(store.holders(NAME));
        List<String> readers = new ArrayList<>();
        for (Holder r : h.readers()) {
            readers.add(r.owner() + "/" + r.token() + "/" + r.remaining().toNanos());
        }
        List<String> waiting = new ArrayList<>();
        for (Holder w : h.waitingWriters()) {
            waiting.add(w.owner() + "/" + w.remaining().toNanos());
        }
        String writer = h.writer() == null ? "-" : h.writer().owner() + "/" + h.writer().token() + "/" + h.writer().remaining().toNanos();
        return "r" + readers + " w " + writer + " i" + waiting;
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
                .iterations(longMode ? 20 : 5)
                .invocationsPerIteration(longMode ? 500 : 5)
                .threads(3)
                .actorsPerThread(2)
                .actorsBefore(3)
                .actorsAfter(1)
                .sequentialSpecification(ReadWriteSpec.class)
                .check(LocalReadWriteStoreLincheckTest.class);
    }

    /** The sequential writer-preferring read-write lock the store must behave like. */
    public static final class ReadWriteSpec {
        private long now;
        private long counter;
        private final Map<String, long[]> grants = new LinkedHashMap<>(); // owner -> token, expiresAt, write (0/1)
        private final Map<String, Long> intents = new LinkedHashMap<>();  // waiting writer -> expiresAt, by arrival

        private void expire() {
            grants.values().removeIf(g -> g[1] <= now);
            intents.values().removeIf(t -> t <= now);
        }

        private long grant(int o, boolean write, boolean waiting) {
            expire();
            String who = "o" + o;
            long[] mine = grants.get(who);
            if (mine != null) { // a retried request, whatever the mode: granted again, same token
                mine[1] = now + LEASE;
                return mine[0];
            }
            boolean writerHolds = grants.values().stream().anyMatch(g -> g[2] == 1);
            boolean busy = write ? !grants.isEmpty() : writerHolds || !intents.isEmpty();
            if (busy) {
                if (write && waiting) {
                    intents.put(who, now + LEASE); // a refreshed intent keeps its place
                }
                return -1;
            }
            intents.remove(who);
            grants.put(who, new long[] {++counter, now + LEASE, write ? 1 : 0});
            return counter;
        }

        /** @see LocalReadWriteStoreLincheckTest#read */
        public long read(int o) {
            return grant(o, false, true);
        }

        /** @see LocalReadWriteStoreLincheckTest#write */
        public long write(int o) {
            return grant(o, true, true);
        }

        /** @see LocalReadWriteStoreLincheckTest#tryWrite */
        public long tryWrite(int o) {
            return grant(o, true, false);
        }

        /** @see LocalReadWriteStoreLincheckTest#renew */
        public boolean renew(int o, int t) {
            expire();
            long[] g = grants.get("o" + o);
            if (g == null || g[0] != t) {
                return false;
            }
            g[1] = now + LEASE;
            return true;
        }

        /** @see LocalReadWriteStoreLincheckTest#release */
        public boolean release(int o) {
            expire();
            return grants.remove("o" + o) != null || intents.remove("o" + o) != null;
        }

        /** @see LocalReadWriteStoreLincheckTest#holders */
        public String holders() {
            expire();
            List<String> readers = new ArrayList<>();
            String writer = "-";
            for (Map.Entry<String, long[]> e : grants.entrySet()) { // by grant order, which is token order
                long[] g = e.getValue();
                String h = e.getKey() + "/" + g[0] + "/" + (g[1] - now);
                if (g[2] == 1) {
                    writer = h;
                } else {
                    readers.add(h);
                }
            }
            List<String> waiting = new ArrayList<>();
            intents.forEach((who, until) -> waiting.add(who + "/" + (until - now)));
            return "r" + readers + " w " + writer + " i" + waiting;
        }

        /** @see LocalReadWriteStoreLincheckTest#tick */
        public void tick() {
            now += LEASE / 2;
        }
    }
}
