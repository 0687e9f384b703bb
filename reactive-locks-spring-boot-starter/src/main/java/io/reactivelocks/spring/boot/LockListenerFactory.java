package io.reactivelocks.spring.boot;

import io.reactivelocks.LockListener;
import java.util.ArrayList;
import java.util.List;

/**
 * Makes a listener for the auto-configured client once its store is known (the Micrometer meters tagged by store,
 * the observations, the health indicator's counts).
 */
@FunctionalInterface
interface LockListenerFactory {

    /**
     * @param store the name of the store the client will use ({@code "redis"}, ...)
     * @return its listener; {@link LockListener#NONE} for none
     */
    LockListener create(String store);

    /**
     * Combines the listeners: every factory's (meters, observations, health counts) and the application's single
     * {@link LockListener} bean, each event going to each of them.
     *
     * @param store        the name of the store the client will use
     * @param userListener the application's {@link LockListener} bean, or {@code null}
     * @param factories    the starter's listener factories, possibly none
     * @return the listener to give the client; {@link LockListener#NONE} for none
     */
    static LockListener choose(String store, LockListener userListener, List<LockListenerFactory> factories) {
        List<LockListener> listeners = new ArrayList<>();
        for (LockListenerFactory factory : factories) {
            listeners.add(factory.create(store));
        }
        if (userListener != null) {
            listeners.add(userListener);
        }
        return LockListener.composite(listeners.toArray(new LockListener[0]));
    }
}
