package io.reactivelocks.benchmarks.load;

import io.reactivelocks.Lease;
import io.reactivelocks.LockClient;
import java.time.Duration;
import reactor.core.publisher.Mono;

/** reactive-locks with its defaults on one backend: the same contender for every store, over its own driver. */
final class Ours extends Contender {

    private final LockClient locks;
    private final AutoCloseable driver;

    /**
     * @param backend the backend key
     * @param locks   the lock client under test
     * @param driver  closes the client's driver (connection, pool, session) after the lock client
     */
    Ours(String backend, LockClient locks, AutoCloseable driver) {
        super(backend, "ours", "reactive-locks", Role.OURS);
        this.locks = locks;
        this.driver = driver;
    }

    @Override
    Mono<Void> cycle(String name, int worker) {
        return locks.acquire(name).flatMap(Lease::release);
    }

    @Override
    boolean supportsWaiting() {
        return true;
    }

    @Override
    Mono<Held> acquireWaiting(String name, int worker) {
        return locks.acquire(name).map(l -> l::release);
    }

    @Override
    public void close() {
        locks.close().block(Duration.ofSeconds(30));
        try {
            driver.close();
        } catch (Exception e) {
            throw new IllegalStateException("could not close the " + backend + " driver", e);
        }
    }
}
