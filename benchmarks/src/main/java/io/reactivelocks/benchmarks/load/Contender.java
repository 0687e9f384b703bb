package io.reactivelocks.benchmarks.load;

import reactor.core.publisher.Mono;

/**
 * One lock implementation under test on one backend. Reactive contenders implement
 * {@link #cycle}; blocking ones (Curator's {@code InterProcessMutex}, ShedLock) implement
 * {@link #cycleBlocking} and are driven by as many platform threads as the concurrency.
 */
abstract class Contender implements AutoCloseable {

    final String backend;
    final String id;
    final String label;
    final Role role;

    /**
     * @param backend the backend key ({@code redis}, {@code postgres}, {@code etcd}, {@code zookeeper})
     * @param id      a short id, used in lock names and result files
     * @param label   the name shown in the report
     * @param role    floor, ours, competitor, simple or raw handoff
     */
    Contender(String backend, String id, String label, Role role) {
        this.backend = backend;
        this.id = id;
        this.label = label;
        this.role = role;
    }

    /**
     * Called before each measured run (B1) or handoff chain (B3); for per-run resources such as
     * an etcd lease.
     *
     * @param concurrency workers (B1) or waiters + 1 (B3)
     */
    void prepare(int concurrency) {
    }

    /**
     * For counting primitives (semaphores, B8): the number of permits N of the names used from now
     * on; called before a run or a chain. Others ignore it.
     *
     * @param permits N
     */
    void permits(int permits) {
    }

    /** Called after each run or chain, once the counters were read. */
    void finish() {
    }

    /** @return true when driven by blocking calls on platform threads */
    boolean blocking() {
        return false;
    }

    /**
     * One uncontended acquire followed by its release (B1).
     *
     * @param name   the lock name (distinct per worker)
     * @param worker the worker index (a thread id for thread-bound clients)
     * @return completes when the release was confirmed
     */
    Mono<Void> cycle(String name, int worker) {
        throw new UnsupportedOperationException(label + " is blocking");
    }

    /**
     * Blocking variant of {@link #cycle}.
     *
     * @param name   the lock name
     * @param worker the worker index
     * @throws Exception on any failure
     */
    void cycleBlocking(String name, int worker) throws Exception {
        throw new UnsupportedOperationException(label + " is reactive");
    }

    /** @return whether this contender runs {@link #cycle} or {@link #cycleBlocking} (B1); false for B3-only ones */
    boolean cycles() {
        return true;
    }

    /** @return whether this contender can wait for a held lock (B3) */
    boolean supportsWaiting() {
        return false;
    }

    /**
     * Waits for the lock (B3), reactive contenders.
     *
     * @param name   the lock name
     * @param worker the waiter index
     * @return the grant
     */
    Mono<Held> acquireWaiting(String name, int worker) {
        throw new UnsupportedOperationException(label + " does not wait");
    }

    /**
     * Waits for the lock (B3), blocking contenders.
     *
     * @param name   the lock name
     * @param worker the waiter index
     * @return the grant
     * @throws Exception on any failure
     */
    Held acquireWaitingBlocking(String name, int worker) throws Exception {
        throw new UnsupportedOperationException(label + " does not wait");
    }

    /** Releases everything the contender opened (connections, pools, clients). */
    @Override
    public abstract void close();

    @Override
    public String toString() {
        return backend + "/" + label;
    }

    /** A granted lock, for B3. */
    interface Held {
        /** @return the release, sent on subscribe (reactive contenders) */
        Mono<Void> release();

        /**
         * Releases on the calling thread (blocking contenders).
         *
         * @throws Exception on any failure
         */
        default void releaseBlocking() throws Exception {
            release().block(java.time.Duration.ofSeconds(30));
        }
    }
}
