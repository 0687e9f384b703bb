package io.reactivelocks.rwlock;

/** The two kinds of grant of a {@link ReadWriteLock}. */
public enum LockMode {
    /** Shared: any number of readers at once, no writer. */
    READ,
    /** Exclusive: one writer, no reader. */
    WRITE
}
