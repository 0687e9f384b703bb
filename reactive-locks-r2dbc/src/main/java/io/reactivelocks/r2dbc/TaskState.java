package io.reactivelocks.r2dbc;

/** Where a task of a {@link PostgresTaskQueue} is, as {@link PostgresTaskQueue#status} reports it. */
public enum TaskState {
    /**
     * Capturable, no retry used since the last one: registered, released, or its claim expired
     * (the table still says {@code in_progress} until someone captures it again).
     */
    PENDING,
    /** Claimed, and the claim has not expired by the server's clock. */
    IN_PROGRESS,
    /** Completed: never captured again. */
    DONE,
    /** Capturable again after a failure, which used one retry. */
    FAILED,
    /** Failed with no retry left: never captured again, kept visible until removed. */
    DEAD
}
