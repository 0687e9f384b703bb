package io.reactivelocks.internal;

import io.reactivelocks.LockBackendException;
import io.reactivelocks.LockException;
import java.io.IOException;
import java.util.concurrent.TimeoutException;

/** Maps what a backend signals to the exception family. */
final class BackendErrors {

    private BackendErrors() {
    }

    static LockException map(String backend, String name, String operation, Throwable t) {
        if (t instanceof LockException le) {
            return le;
        }
        if (t instanceof TimeoutException) {
            return new LockBackendException(name, backend + " did not answer " + operation
                    + (name == null ? "" : " of lock '" + name + "'") + " within the request timeout", t, true);
        }
        boolean transientFailure = t instanceof IOException || hasCause(t, IOException.class)
                || hasCause(t, TimeoutException.class);
        return new LockBackendException(name, backend + " failed " + operation
                + (name == null ? "" : " of lock '" + name + "'") + ": " + t, t, transientFailure);
    }

    static boolean isTransient(Throwable t) {
        return t instanceof LockBackendException be && be.isTransient();
    }

    private static boolean hasCause(Throwable t, Class<? extends Throwable> type) {
        for (Throwable c = t.getCause(); c != null && c != t; c = c.getCause()) {
            if (type.isInstance(c)) {
                return true;
            }
        }
        return false;
    }
}
