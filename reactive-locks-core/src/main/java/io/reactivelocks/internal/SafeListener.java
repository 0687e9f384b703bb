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

    private void failed(RuntimeException e) {
        LOG.warn("lock listener " + delegate + " failed", e);
    }

    @Override
    public void onAcquired(String name, long token, Duration waited) {
        try {
            delegate.onAcquired(name, token, waited);
        } catch (RuntimeException e) {
            failed(e);
        }
    }

    @Override
    public void onContended(String name) {
        try {
            delegate.onContended(name);
        } catch (RuntimeException e) {
            failed(e);
        }
    }

    @Override
    public void onAcquireFailed(String name, Throwable error, Duration waited) {
        try {
            delegate.onAcquireFailed(name, error, waited);
        } catch (RuntimeException e) {
            failed(e);
        }
    }

    @Override
    public void onRenewed(String name, long token) {
        try {
            delegate.onRenewed(name, token);
        } catch (RuntimeException e) {
            failed(e);
        }
    }

    @Override
    public void onRenewalFailed(String name, long token, Throwable error) {
        try {
            delegate.onRenewalFailed(name, token, error);
        } catch (RuntimeException e) {
            failed(e);
        }
    }

    @Override
    public void onLost(String name, long token, String reason, Duration held) {
        try {
            delegate.onLost(name, token, reason, held);
        } catch (RuntimeException e) {
            failed(e);
        }
    }

    @Override
    public void onReleased(String name, long token, Duration held) {
        try {
            delegate.onReleased(name, token, held);
        } catch (RuntimeException e) {
            failed(e);
        }
    }
}
