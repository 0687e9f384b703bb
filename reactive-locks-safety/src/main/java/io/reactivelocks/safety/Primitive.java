package io.reactivelocks.safety;

/**
 * What a worker holds on a name of a safety run: the mutex, a semaphore permit, a side of a
 * read-write lock, or a fair (FIFO) lock. Each name of a run has one primitive; the arbiter fences
 * each name by its primitive's rule (see docs/SAFETY.md).
 */
public enum Primitive {
    /** {@code LockClient.hold} on the store's mutex: I1–I5. */
    MUTEX("mutex"),
    /** {@code Semaphore.hold(name, N)}: N holders at once, I6 instead of I1/I2. */
    SEMAPHORE("semaphore"),
    /** {@code ReadWriteLock.read()/write().hold(name)}, 70 % reads: I7, I2 for the writes. */
    RWLOCK("rwlock"),
    /** a session's {@code fairLocks} on Redis and PostgreSQL, the store's mutex on etcd and ZooKeeper (FIFO natively): I1–I5 and FIFO. */
    FAIR("fair");

    private final String label;

    Primitive(String label) {
        this.label = label;
    }

    /** @return the name used in reports */
    public String label() {
        return label;
    }
}
