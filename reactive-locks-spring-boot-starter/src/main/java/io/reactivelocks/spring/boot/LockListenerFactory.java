package io.reactivelocks.spring.boot;

import io.reactivelocks.LockListener;
import io.reactivelocks.spi.LockBackend;
import java.time.Duration;

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
        return made == LockListener.NONE ? userListener : new Both(made, userListener);
    }

    /** Calls two listeners in order; an exception from the first does not keep the second from being called. */
    final class Both implements LockListener {
        private final LockListener first;
        private final LockListener second;

        Both(LockListener first, LockListener second) {
            this.first = first;
            this.second = second;
        }

        private static void both(Runnable a, Runnable b) {
            try {
                a.run();
            } finally {
                b.run();
            }
        }

        @Override
        public void onAcquired(String name, long token, Duration waited) {
            both(() -> first.onAcquired(name, token, waited), () -> second.onAcquired(name, token, waited));
        }

        @Override
        public void onContended(String name) {
            both(() -> first.onContended(name), () -> second.onContended(name));
        }

        @Override
        public void onAcquireFailed(String name, Throwable error, Duration waited) {
            both(() -> first.onAcquireFailed(name, error, waited), () -> second.onAcquireFailed(name, error, waited));
        }

        @Override
        public void onRenewed(String name, long token) {
            both(() -> first.onRenewed(name, token), () -> second.onRenewed(name, token));
        }

        @Override
        public void onRenewalFailed(String name, long token, Throwable error) {
            both(() -> first.onRenewalFailed(name, token, error), () -> second.onRenewalFailed(name, token, error));
        }

        @Override
        public void onLost(String name, long token, String reason, Duration held) {
            both(() -> first.onLost(name, token, reason, held), () -> second.onLost(name, token, reason, held));
        }

        @Override
        public void onReleased(String name, long token, Duration held) {
            both(() -> first.onReleased(name, token, held), () -> second.onReleased(name, token, held));
        }
    }
}
