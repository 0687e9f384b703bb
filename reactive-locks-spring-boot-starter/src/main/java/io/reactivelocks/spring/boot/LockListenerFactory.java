package io.reactivelocks.spring.boot;

import io.reactivelocks.LockListener;
import io.reactivelocks.spi.LockBackend;

/** Makes the listener for the auto-configured client once its backend is known (the Micrometer one, tagged by backend). */
@FunctionalInterface
interface LockListenerFactory {

    /**
     * @param backend the backend the client will use
     * @return its listener; {@link LockListener#NONE} for none
     */
    LockListener create(LockBackend backend);

    /**
     * Picks the listener: the application's single {@link LockListener} bean and this factory's listener (the
     * meters), both when there are both, else whichever exists, else none.
     *
     * @param backend      the backend the client will use
     * @param userListener the application's {@link LockListener} bean, or {@code null}
     * @param factory      the meters' factory, or {@code null}
     * @return the listener to give the client
     */
    static LockListener choose(LockBackend backend, LockListener userListener, LockListenerFactory factory) {
        LockListener made = factory == null ? LockListener.NONE : factory.create(backend);
        if (userListener == null) {
            return made;
        }
        return LockListener.composite(made, userListener);
    }
}
