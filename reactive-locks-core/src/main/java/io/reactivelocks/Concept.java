package io.reactivelocks;

/**
 * The concepts a {@link LockStore} session can hand out. {@link LockStore#concepts()} says which
 * ones a store offers; asking a store for another throws {@link ConceptNotOfferedException}.
 */
public enum Concept {
    /** Mutual exclusion with fencing tokens: {@link LockStore#locks(LockOptions)}. */
    LOCK("lock"),
    /** A lock whose waiters are granted in arrival order: {@link LockStore#fairLocks(LockOptions)}. */
    FAIR_LOCK("fair lock"),
    /** Up to N holders per name: {@link LockStore#semaphores(LockOptions)}. */
    SEMAPHORE("semaphore"),
    /** Shared readers or one writer: {@link LockStore#readWriteLocks(io.reactivelocks.rwlock.ReadWriteLockOptions)}. */
    READ_WRITE_LOCK("read-write lock"),
    /** Several lock names at once, in one canonical order: {@link LockStore#multiLocks(LockOptions)}. */
    MULTI_LOCK("multi-lock"),
    /** At most one run per name and time window: {@link LockStore#windowLocks(LockOptions)}. */
    WINDOW_LOCK("window lock"),
    /** One leader per name at a time: {@link LockStore#elections(LockOptions)}. */
    LEADER_ELECTION("leader election"),
    /** Values written only by the newest fencing token: {@link LockStore#fencedValues()}. */
    FENCED_VALUES("fenced values"),
    /** Tasks claimed by one worker at a time: {@link LockStore#taskQueue(LockOptions)}. */
    TASK_QUEUE("task queue");

    private final String words;

    Concept(String words) {
        this.words = words;
    }

    /** @return the concept's name in words, as error messages and documents spell it */
    @Override
    public String toString() {
        return words;
    }
}
