package io.reactivelocks.internal;

import io.reactivelocks.LockListener;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import reactor.util.Logger;
import reactor.util.Loggers;
import reactor.util.context.ContextView;

/**
 * Calls listeners in order, logging and swallowing what each one throws, so that one failing
 * listener neither reaches the engine nor keeps the others from being called. Not API; combine
 * listeners with {@link LockListener#composite}.
 */
public final class SafeListener implements LockListener {

    private static final Logger LOG = Loggers.getLogger(SafeListener.class);

    private final List<LockListener> delegates;

    SafeListener(LockListener delegate) {
        this(List.of(delegate));
    }

    /** @param delegates the listeners to call, in order */
    public SafeListener(List<LockListener> delegates) {
        this.delegates = List.copyOf(delegates);
    }

    private void safely(Consumer<LockListener> call) {
        for (LockListener delegate : delegates) {
            try {
                call.accept(delegate);
            } catch (RuntimeException e) {
                LOG.warn("lock listener " + delegate + " failed", e);
            }
        }
    }

    /**
     * Asks each listener for its listener of this acquire; one that throws keeps getting the
     * events itself.
     */
    @Override
    public LockListener forAcquire(String name, ContextView context) {
        List<LockListener> scoped = null;
        for (int i = 0; i < delegates.size(); i++) {
            LockListener delegate = delegates.get(i);
            LockListener s;
            try {
                s = delegate.forAcquire(name, context);
            } catch (RuntimeException e) {
                LOG.warn("lock listener " + delegate + " failed", e);
                s = delegate;
            }
            if (s == null) {
                s = delegate;
            }
            if (s != delegate && scoped == null) {
                scoped = new ArrayList<>(delegates.subList(0, i));
            }
            if (scoped != null) {
                scoped.add(s);
            }
        }
        return scoped == null ? this : new SafeListener(scoped);
    }

    @Override
    public void onAcquireCancelled(String name, Duration waited) {
        safely(l -> l.onAcquireCancelled(name, waited));
    }

    @Override
    public void onRenewalStarted(String name, long token) {
        safely(l -> l.onRenewalStarted(name, token));
    }

    @Override
    public void onAcquired(String name, long token, Duration waited) {
        safely(l -> l.onAcquired(name, token, waited));
    }

    @Override
    public void onContended(String name) {
        safely(l -> l.onContended(name));
    }

    @Override
    public void onAcquireFailed(String name, Throwable error, Duration waited) {
        safely(l -> l.onAcquireFailed(name, error, waited));
    }

    @Override
    public void onRenewed(String name, long token) {
        safely(l -> l.onRenewed(name, token));
    }

    @Override
    public void onRenewalFailed(String name, long token, Throwable error) {
        safely(l -> l.onRenewalFailed(name, token, error));
    }

    @Override
    public void onLost(String name, long token, String reason, Duration held) {
        safely(l -> l.onLost(name, token, reason, held));
    }

    @Override
    public void onReleased(String name, long token, Duration held) {
        safely(l -> l.onReleased(name, token, held));
    }

    @Override
    public String toString() {
        return "SafeListener" + delegates;
    }
}
