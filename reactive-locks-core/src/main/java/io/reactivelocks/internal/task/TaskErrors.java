package io.reactivelocks.internal.task;

import io.reactivelocks.LockBackendException;
import io.reactivelocks.LockException;
import java.io.IOException;
import java.util.concurrent.TimeoutException;

/** Maps what a task store signals to the exception family, naming the queue. */
final class TaskErrors {

    private TaskErrors() {
    }

    static LockException map(String store, String queue, String operation, Throwable t) {
        if (t instanceof LockException le) {
            return le;
        }
        if (t instanceof TimeoutException) {
            return new LockBackendException(queue, store + " did not answer " + operation + " of task queue '" + queue
                    + "' within the request timeout", t, true);
        }
        boolean transientFailure = t instanceof IOException || hasCause(t, IOException.class)
                || hasCause(t, TimeoutException.class);
        return new LockBackendException(queue, store + " failed " + operation + " of task queue '" + queue + "': " + t,
                t, transientFailure);
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
