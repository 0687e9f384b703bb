package io.reactivelocks.redis;

/** The states of a task in a {@link RedisTaskQueue}. */
public enum TaskState {
    /** Capturable, never failed: registered, released, or its claim expired. */
    PENDING,
    /** Claimed, and the claim has not expired. */
    IN_PROGRESS,
    /** Completed: never captured again. */
    DONE,
    /** Capturable again after a failure, with retries left ({@link TaskStatus#retriesLeft()}). */
    FAILED,
    /** Failed with no retry left: never captured again, kept for inspection until removed. */
    DEAD
}
