package io.reactivelocks.internal;

import io.reactivelocks.LockListener;
import java.time.Duration;
import reactor.util.Logger;
import reactor.util.Loggers;

/** Calls a user's {@link LockListener}, logging and swallowing what it throws. */
final class SafeListener implements LockListener {

    private static final Logger LOG = Loggers.getLogger(SafeListener.class);

    private final LockListener delegate;

    SafeListener(LockListener delegate) {
        this.delegate = delegate;
    }

    private void safely(Runnable call) {
        try {
            call.run();
        } catch (RuntimeException e) {
            LOG.warn("lock listener " + delegate + " failed", e);
        }
    }

    @Override
    public void onAcquired(String name, long token, Duration waited) {
        safely(() -> delegate.onAcquired(name, token, waited));
    }

    @Override
    public void onContended(String name) {
        safely(() -> delegate.onContended(name));
    }

    @Override
    public void onAcquireFailed(String name, Throwable error, Duration waited) {
        safely(() -> delegate.onAcquireFailed(name, error, waited));
    }

    @Override
    public void onRenewed(String name, long token) {
        safely(() -> delegate.onRenewed(name, token));
    }

    @Override
    public void onRenewalFailed(String name, long token, Throwable error) {
        safely(() -> delegate.onRenewalFailed(name, token, error));
    }

    @Override
    public void onLost(String name, long token, String reason, Duration held) {
        safely(() -> delegate.onLost(name, token, reason, held));
    }

    @Override
    public void onReleased(String name, long token, Duration held) {
        safely(() -> delegate.onReleased(name, token, held));
    }
}
