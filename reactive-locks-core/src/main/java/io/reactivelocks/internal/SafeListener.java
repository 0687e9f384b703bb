package io.reactivelocks.internal;

import io.reactivelocks.LockListener;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
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

    // no lambda per call: a call on the hot path allocates nothing
    private final LockListener[] delegates;
    private final boolean active;
    /**
     * The delegates that override {@link LockListener#onRenewalStarted} and {@link LockListener#onRenewed}
     * (called once per lease and renewal): a lease skips the call, and reading its name and token, when
     * no listener would do anything with it.
     */
    private final LockListener[] renewalStartListeners;
    private final LockListener[] renewedListeners;

    /** Per listener class: whether it overrides {@code onRenewalStarted}; looked up once per class. */
    private static final ClassValue<Boolean> OVERRIDES_RENEWAL_STARTED = overrides("onRenewalStarted");
    /** Per listener class: whether it overrides {@code onRenewed}; looked up once per class. */
    private static final ClassValue<Boolean> OVERRIDES_RENEWED = overrides("onRenewed");

    SafeListener(LockListener delegate) {
        this(List.of(delegate));
    }

    /**
     * @param listener a listener (perhaps a composite already)
     * @return it, made safe to call from the engine
     */
    public static SafeListener of(LockListener listener) {
        return listener instanceof SafeListener safe ? safe : new SafeListener(listener);
    }

    /** @param delegates the listeners to call, in order */
    public SafeListener(List<LockListener> delegates) {
        this.delegates = List.copyOf(delegates).stream().filter(l -> l != LockListener.NONE).toArray(LockListener[]::new);
        this.active = this.delegates.length > 0;
        this.renewalStartListeners = java.util.Arrays.stream(this.delegates)
                .filter(l -> OVERRIDES_RENEWAL_STARTED.get(l.getClass())).toArray(LockListener[]::new);
        this.renewedListeners = java.util.Arrays.stream(this.delegates)
                .filter(l -> OVERRIDES_RENEWED.get(l.getClass())).toArray(LockListener[]::new);
    }

    private static ClassValue<Boolean> overrides(String method) {
        return new ClassValue<>() {
            @Override
            protected Boolean computeValue(Class<?> type) {
                try {
                    // a listener that does not override it inherits the interface's no-op
                    return type.getMethod(method, String.class, long.class).getDeclaringClass() != LockListener.class;
                } catch (NoSuchMethodException | RuntimeException e) {
                    return Boolean.TRUE; // when in doubt, call it
                }
            }
        };
    }

    /** @return whether a listener overrides {@link #onRenewalStarted}: callers skip the call (per lease) otherwise */
    public boolean observesRenewalStarts() {
        return renewalStartListeners.length > 0;
    }

    /** @return whether a listener overrides {@link #onRenewed}: callers skip the call (per lease) otherwise */
    public boolean observesRenewals() {
        return renewedListeners.length > 0;
    }

    /** @return whether any listener is called (false for {@link LockListener#NONE} alone): callers skip computing arguments */
    public boolean active() {
        return active;
    }

    private static void failed(LockListener delegate, RuntimeException e) {
        LOG.warn("lock listener " + delegate + " failed", e);
    }

    @Override
    public void onAcquired(String name, long token, Duration waited) {
        for (LockListener l : delegates) { // an array: no iterator
            try {
                l.onAcquired(name, token, waited);
            } catch (RuntimeException e) {
                failed(l, e);
            }
        }
    }

    /**
     * Asks each listener for its listener of this acquire; one that throws keeps getting the
     * events itself.
     */
    @Override
    public SafeListener forAcquire(String name, ContextView context) {
        List<LockListener> scoped = null;
        for (int i = 0; i < delegates.length; i++) {
            LockListener delegate = delegates[i];
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
                scoped = new ArrayList<>(java.util.Arrays.asList(delegates).subList(0, i));
            }
            if (scoped != null) {
                scoped.add(s);
            }
        }
        return scoped == null ? this : new SafeListener(scoped);
    }

    /** Asks each listener for its listener of the concept; one that throws keeps getting the events itself. */
    @Override
    public SafeListener forConcept(io.reactivelocks.Concept concept) {
        List<LockListener> out = new ArrayList<>(delegates.length);
        boolean changed = false;
        for (LockListener delegate : delegates) {
            LockListener s;
            try {
                s = delegate.forConcept(concept);
            } catch (RuntimeException e) {
                LOG.warn("lock listener " + delegate + " failed", e);
                s = delegate;
            }
            if (s == null) {
                s = delegate;
            }
            changed |= s != delegate;
            out.add(s);
        }
        return changed ? new SafeListener(out) : this;
    }

    @Override
    public void onAcquireCancelled(String name, Duration waited) {
        for (LockListener l : delegates) { // an array: no iterator
            try {
                l.onAcquireCancelled(name, waited);
            } catch (RuntimeException e) {
                failed(l, e);
            }
        }
    }

    @Override
    public void onRenewalStarted(String name, long token) {
        for (LockListener l : renewalStartListeners) { // an array: no iterator
            try {
                l.onRenewalStarted(name, token);
            } catch (RuntimeException e) {
                failed(l, e);
            }
        }
    }

    @Override
    public void onContended(String name) {
        for (LockListener l : delegates) { // an array: no iterator
            try {
                l.onContended(name);
            } catch (RuntimeException e) {
                failed(l, e);
            }
        }
    }

    @Override
    public void onAcquireFailed(String name, Throwable error, Duration waited) {
        for (LockListener l : delegates) { // an array: no iterator
            try {
                l.onAcquireFailed(name, error, waited);
            } catch (RuntimeException e) {
                failed(l, e);
            }
        }
    }

    @Override
    public void onRenewed(String name, long token) {
        for (LockListener l : renewedListeners) { // an array: no iterator
            try {
                l.onRenewed(name, token);
            } catch (RuntimeException e) {
                failed(l, e);
            }
        }
    }

    @Override
    public void onRenewalFailed(String name, long token, Throwable error) {
        for (LockListener l : delegates) { // an array: no iterator
            try {
                l.onRenewalFailed(name, token, error);
            } catch (RuntimeException e) {
                failed(l, e);
            }
        }
    }

    @Override
    public void onLost(String name, long token, String reason, Duration held) {
        for (LockListener l : delegates) { // an array: no iterator
            try {
                l.onLost(name, token, reason, held);
            } catch (RuntimeException e) {
                failed(l, e);
            }
        }
    }

    @Override
    public void onReleased(String name, long token, Duration held) {
        for (LockListener l : delegates) { // an array: no iterator
            try {
                l.onReleased(name, token, held);
            } catch (RuntimeException e) {
                failed(l, e);
            }
        }
    }

    @Override
    public void onReleaseUnconfirmed(String name, long token, Throwable error) {
        for (LockListener l : delegates) { // an array: no iterator
            try {
                l.onReleaseUnconfirmed(name, token, error);
            } catch (RuntimeException e) {
                failed(l, e);
            }
        }
    }

    @Override
    public String toString() {
        return "SafeListener" + java.util.Arrays.toString(delegates);
    }
}
