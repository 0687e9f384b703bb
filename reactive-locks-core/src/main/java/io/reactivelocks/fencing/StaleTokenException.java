package io.reactivelocks.fencing;

import io.reactivelocks.LockException;
import java.util.Objects;
import java.util.OptionalLong;

/**
 * A fenced write was refused: the resource has accepted a higher token than the writer's, so the
 * writer's grant has been superseded (a paused process, a lease that expired while the write was in
 * flight) and, by {@link Fencing#admits}, its write changed nothing. Signalled as {@code onError} by
 * the fenced-write helpers of the stores (an SQL row, a Redis key); the writer must treat its work
 * as not done under the lock.
 */
public final class StaleTokenException extends LockException {

    private static final long serialVersionUID = 1L;

    private final String resource;
    private final long token;
    private final long fence;
    private final boolean fenceKnown;

    /**
     * @param resource what was written, in words (a table and key, a Redis key)
     * @param token    the writer's token, refused
     * @param fence    the resource's fence when it was read with the refusal: greater than {@code token};
     *                 empty when it was not read
     * @throws NullPointerException when an argument is null
     */
    public StaleTokenException(String resource, long token, OptionalLong fence) {
        super(null, "fenced write to " + Objects.requireNonNull(resource, "resource") + " refused: token " + token
                + (Objects.requireNonNull(fence, "fence").isPresent()
                        ? " is below the fence " + fence.getAsLong() : " is below the resource's fence"), null);
        this.resource = resource;
        this.token = token;
        this.fence = fence.orElse(0L);
        this.fenceKnown = fence.isPresent();
    }

    /** @return what was written, in words (a table and key, a Redis key) */
    public String resource() {
        return resource;
    }

    /** @return the writer's token, refused */
    public long token() {
        return token;
    }

    /**
     * @return the highest token the resource had accepted when it refused this write (greater than
     *         {@link #token()}), or empty when the helper did not read it
     */
    public OptionalLong fence() {
        return fenceKnown ? OptionalLong.of(fence) : OptionalLong.empty();
    }
}
