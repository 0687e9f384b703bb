package io.reactivelocks.task;

/** Where a task of a {@link TaskQueue} is, as {@link TaskQueue#status} reports it. */
public enum TaskState {
    /** Capturable, no retry used since the last one: registered, released, or its claim expired. */
    PENDING,
    /** Claimed, and the claim has not expired by the store's clock. */
    IN_PROGRESS,
    /** Completed: never captured again, kept until removed. */
    DONE,
    /** Capturable again after a failure, which used one retry ({@link TaskStatus#retriesLeft()}). */
    FAILED,
    /** Failed with no retry left: never captured again, kept visible until removed. */
    DEAD
}
