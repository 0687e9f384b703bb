package io.reactivelocks.blocking;

import io.reactivelocks.LockException;
import io.reactivelocks.LockLostException;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Runs a body on the calling thread under a held grant: on loss the thread is interrupted, and
 * after the body the call ends with {@link LockLostException} instead of the body's outcome. The
 * grant is released when the body ends (when this scope owns it), whatever happened.
 */
final class LeaseScope {

    private LeaseScope() {
    }

    /**
     * @param lease the held grant
     * @param body  the work
     * @param owned {@code true} for the outermost scope: it watches for loss (interrupting this
     *              thread) and releases the grant at the end; a reentered scope only checks that the
     *              grant is still valid when its body ends
     */
    static <T, E extends Exception> T run(BlockingLease lease, LeaseBody<T, E> body, boolean owned) throws E {
        LossWatch watch = new LossWatch(Thread.currentThread());
        if (owned) {
            lease.whenLost().thenRun(watch::lost);
        }
        T result = null;
        Throwable failure = null;
        try {
            result = body.apply(lease);
        } catch (Exception | Error e) {
            failure = e;
        }
        boolean interruptedForLoss = watch.finish();
        if (interruptedForLoss || (!lease.isValid() && !lease.releaseCalled())) {
            LockLostException lost = new LockLostException(lease.name(), lease.token(),
                    "the lease ended before the blocking body did");
            if (failure != null) {
                lost.addSuppressed(failure);
            }
            if (owned) {
                try {
                    lease.release();
                } catch (LockException e) {
                    lost.addSuppressed(e);
                }
            }
            throw lost;
        }
        if (owned) {
            // the work is done: a release the store does not confirm is reported, not thrown (the lease expires by itself)
            lease.releaseAfterWork();
        }
        if (failure != null) {
            throw LeaseScope.<E>asThrown(failure);
        }
        return result;
    }

    /* The body may only throw E, a RuntimeException or an Error: rethrow it as it was. */
    @SuppressWarnings("unchecked")
    static <E extends Exception> E asThrown(Throwable failure) {
        if (failure instanceof Error) {
            throw (Error) failure;
        }
        if (failure instanceof RuntimeException) {
            throw (RuntimeException) failure;
        }
        return (E) failure;
    }

    /**
     * The hand-over between the engine's loss signal and the body's thread: the thread is
     * interrupted only while the body runs, and the interrupt this causes never outlives the
     * scope (it is cleared once the body has ended, after the interrupt has surely landed).
     */
    private static final class LossWatch {
        private static final int RUNNING = 0;
        private static final int INTERRUPTING = 1;
        private static final int INTERRUPTED = 2;
        private static final int DONE = 3;

        private final Thread thread;
        private final AtomicInteger state = new AtomicInteger(RUNNING);

        LossWatch(Thread thread) {
            this.thread = thread;
        }

        /** Called by the engine when the grant is lost. */
        void lost() {
            if (state.compareAndSet(RUNNING, INTERRUPTING)) {
                try {
                    thread.interrupt();
                } finally {
                    state.set(INTERRUPTED);
                }
            }
        }

        /** @return {@code true} when the body was interrupted for a loss (the interrupt status is then cleared) */
        boolean finish() {
            if (state.compareAndSet(RUNNING, DONE)) {
                return false;
            }
            while (state.get() == INTERRUPTING) {
                Thread.onSpinWait();
            }
            Thread.interrupted();
            return true;
        }
    }
}
