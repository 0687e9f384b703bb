package io.reactivelocks.benchmarks.load;

import io.reactivelocks.Lease;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockStore;
import io.reactivelocks.rwlock.ReadWriteLock;
import io.reactivelocks.semaphore.Semaphore;
import java.time.Duration;
import java.util.function.BiFunction;
import java.util.function.Supplier;
import reactor.core.publisher.Mono;

/**
 * reactive-locks' new primitives (B8) on one backend: a semaphore, either side of a read-write
 * lock, or a fair lock — each a lease taken on a name and released, over its own driver.
 */
final class OursPrimitive extends Contender {

    private final BiFunction<String, Integer, Mono<Lease>> acquire;
    private final Supplier<Mono<Void>> close;
    private final AutoCloseable driver;
    private volatile int permits = 1;

    private OursPrimitive(String backend, String id, String label, BiFunction<String, Integer, Mono<Lease>> acquire,
                          Supplier<Mono<Void>> close, AutoCloseable driver) {
        super(backend, id, label, Role.OURS);
        this.acquire = acquire;
        this.close = close;
        this.driver = driver;
    }

    /**
     * @param store  the store session the contender's concept came from
     * @param driver the session's driver (client, pool), or nothing
     * @return what closes the session, then the driver
     */
    static AutoCloseable closing(LockStore store, AutoCloseable driver) {
        return () -> {
            store.close().block(Duration.ofSeconds(30));
            driver.close();
        };
    }

    /** A permit of {@link Semaphore#acquire(String, int)} with N set by {@link #permits(int)}. */
    static OursPrimitive semaphore(String backend, Semaphore s, AutoCloseable driver) {
        return new OursPrimitive(backend, "ours-sem", "reactive-locks Semaphore", s::acquire, s::close, driver);
    }

    /** The read side of a read-write lock. */
    static OursPrimitive read(String backend, ReadWriteLock rw, AutoCloseable driver) {
        return new OursPrimitive(backend, "ours-read", "reactive-locks ReadWriteLock read", (n, p) -> rw.read().acquire(n),
                rw::close, driver);
    }

    /** The write side of a read-write lock. */
    static OursPrimitive write(String backend, ReadWriteLock rw, AutoCloseable driver) {
        return new OursPrimitive(backend, "ours-write", "reactive-locks ReadWriteLock write", (n, p) -> rw.write().acquire(n),
                rw::close, driver);
    }

    /** A fair (FIFO) lock client. */
    static OursPrimitive fair(String backend, LockClient fair, AutoCloseable driver) {
        return new OursPrimitive(backend, "ours-fair", "reactive-locks fair lock", (n, p) -> fair.acquire(n), fair::close, driver);
    }

    @Override
    void permits(int permits) {
        this.permits = permits;
    }

    @Override
    Mono<Void> cycle(String name, int worker) {
        return acquire.apply(name, permits).flatMap(Lease::release);
    }

    @Override
    boolean supportsWaiting() {
        return true;
    }

    @Override
    Mono<Held> acquireWaiting(String name, int worker) {
        return acquire.apply(name, permits).map(l -> l::release);
    }

    @Override
    public void close() {
        close.get().block(Duration.ofSeconds(30));
        try {
            driver.close();
        } catch (Exception e) {
            throw new IllegalStateException("could not close the " + backend + " driver", e);
        }
    }
}
