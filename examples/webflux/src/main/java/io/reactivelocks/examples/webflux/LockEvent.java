package io.reactivelocks.examples.webflux;

import io.reactivelocks.LockState;

/**
 * One server-sent event of {@code GET /locks/{name}/events}: a {@link LockState} as JSON.
 *
 * @param name  the lock name
 * @param state {@code free} or {@code held}
 * @param owner the holder's owner id, {@code null} when free
 * @param token the holder's fencing token, {@code null} when free
 */
public record LockEvent(String name, String state, String owner, Long token) {

    /** {@link #state()} of a free lock. */
    public static final String FREE = "free";
    /** {@link #state()} of a held lock. */
    public static final String HELD = "held";

    /**
     * @param state a lock state
     * @return the event for it
     */
    public static LockEvent of(LockState state) {
        if (state instanceof LockState.Held held) {
            return new LockEvent(held.name(), HELD, held.owner(), held.token());
        }
        return new LockEvent(state.name(), FREE, null, null);
    }
}
