package io.reactivelocks.admin;

import io.reactivelocks.Concept;
import java.time.Duration;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * One grant held on the store, as {@link LockAdmin#list} sees it: a lock's holder, one semaphore
 * permit, one reader or the writer of a read-write lock, one claim of a task queue's task.
 *
 * <p>The concept is the store's layout, not the API a client used: a fair lock, a leader and a
 * multi-lock's parts hold lock grants and are listed as {@link Concept#LOCK}.
 *
 * @param concept   {@link Concept#LOCK}, {@link Concept#SEMAPHORE}, {@link Concept#READ_WRITE_LOCK} or
 *                  {@link Concept#TASK_QUEUE}
 * @param name      the name the grant is held on
 * @param role      what the grant is: the holder of a lock, a permit, a reader or the writer
 * @param owner     the holder's owner id (one per lease)
 * @param token     the grant's fencing token
 * @param remaining what is left of the lease by the store's clock, or {@code null} when the store
 *                  keeps no per-grant expiry (etcd and ZooKeeper: the session's)
 * @param payload   the value stored with a lock grant, or {@code null}
 * @param waiters   how many clients wait in the store's queue of the name (a fair lock's line, the
 *                  lock queue of etcd and ZooKeeper, a read-write lock's waiting writers), or
 *                  {@code -1} when the store keeps no queue for it (waiters back off and listen)
 * @param task      the claimed task's id for a {@link Role#CLAIM} (the name is the queue's), else {@code null}
 */
public record HeldGrant(Concept concept, String name, Role role, String owner, long token, @Nullable Duration remaining,
                        @Nullable String payload, int waiters, @Nullable String task) {

    /** Checks the fields. */
    public HeldGrant {
        Objects.requireNonNull(concept, "concept");
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(role, "role");
        Objects.requireNonNull(owner, "owner");
    }

    /**
     * A grant that is not a task claim.
     *
     * @param concept   the concept
     * @param name      the name
     * @param role      what the grant is
     * @param owner     the owner id
     * @param token     the fencing token
     * @param remaining what is left of the lease, or {@code null}
     * @param payload   the payload, or {@code null}
     * @param waiters   the store's waiters, or {@code -1}
     */
    public HeldGrant(Concept concept, String name, Role role, String owner, long token, @Nullable Duration remaining,
                     @Nullable String payload, int waiters) {
        this(concept, name, role, owner, token, remaining, payload, waiters, null);
    }

    /** What a grant is. */
    public enum Role {
        /** The holder of a lock (mutex, fair lock, leader, multi-lock part). */
        HOLDER,
        /** One permit of a semaphore. */
        PERMIT,
        /** A reader of a read-write lock. */
        READER,
        /** The writer of a read-write lock. */
        WRITER,
        /** A claim of a task queue's task (the grant's name is the queue's, {@link #task()} the task's id). */
        CLAIM
    }
}
