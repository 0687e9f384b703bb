package io.reactivelocks.safety;

import io.reactivelocks.LockListener;

/**
 * A worker's listener that also hears the grant requests of its fair lock ({@link ObservedFairBackend}):
 * when a request is about to be sent and when the store answered that the waiter is in its line. The
 * FIFO check ({@link FifoCheck}) orders waits by these two moments.
 */
interface LineListener extends LockListener {

    /**
     * A grant request of the fair lock on {@code name} is about to be sent (stamped before it leaves).
     *
     * @param name the lock
     */
    void onAsked(String name);

    /**
     * The store answered a grant request on {@code name} with "in the line" (stamped when the answer
     * arrived: the waiter's place was fixed on the store before then).
     *
     * @param name the lock
     */
    void onInLine(String name);
}
