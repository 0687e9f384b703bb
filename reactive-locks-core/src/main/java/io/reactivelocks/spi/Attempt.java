package io.reactivelocks.spi;

import java.time.Duration;
import java.util.Objects;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

/** The answer of {@link LockBackend#tryGrant}. */
public sealed interface Attempt permits Attempt.Granted, Attempt.Busy, Attempt.Queued {

    /** Marks a {@link Granted} whose validity starts at the send time the engine measured. */
    long SENT_TIME = Long.MIN_VALUE;

    /**
     * @param token fencing token
     * @param ttl   granted TTL
     * @return a grant timed from the engine's send time of the request
     */
    static Granted granted(long token, Duration ttl) {
        return new Granted(token, ttl, SENT_TIME);
    }

    /**
     * @param holder the current holder, or {@code null} when unknown
     * @return a busy answer
     */
    static Busy busy(@Nullable Holder holder) {
        return new Busy(holder);
    }

    /**
     * The lock is ours.
     *
     * @param token          the fencing token: greater than every token granted before for the name
     * @param ttl            the TTL the store granted, counted by the store from when it received the request
     * @param validFromNanos on the engine's clock, a time no later than when the store started
     *                       counting the TTL; {@link #SENT_TIME} for the send time of the request
     *                       (queueing stores set it from their last session confirmation)
     */
    record Granted(long token, Duration ttl, long validFromNanos) implements Attempt {
        /** Checks the fields. */
        public Granted {
            Objects.requireNonNull(ttl, "ttl");
        }
    }

    /**
     * Someone else holds the lock.
     *
     * @param holder who, when the store told us in the same round trip; may be {@code null}
     */
    record Busy(@Nullable Holder holder) implements Attempt {
    }

    /**
     * The owner was enqueued (queueing stores only, and only when {@link GrantRequest#queue()}).
     *
     * @param turn resolves with the next answer once the predecessor is gone: usually
     *             {@link Granted}, possibly another {@code Queued}; subscribing waits on the
     *             predecessor only; cancelling stops the wait (the engine then releases the entry)
     */
    record Queued(Mono<Attempt> turn) implements Attempt {
        /** Checks the fields. */
        public Queued {
            Objects.requireNonNull(turn, "turn");
        }
    }
}
