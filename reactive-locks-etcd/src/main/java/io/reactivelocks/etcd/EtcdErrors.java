package io.reactivelocks.etcd;

import io.etcd.jetcd.common.exception.ClosedClientException;
import io.etcd.jetcd.common.exception.ErrorCode;
import io.etcd.jetcd.common.exception.EtcdException;
import io.grpc.Status;
import io.grpc.StatusException;
import io.grpc.StatusRuntimeException;
import io.reactivelocks.LockBackendException;
import io.reactivelocks.LockException;
import io.reactivelocks.spi.BackendErrors;
import java.io.IOException;
import java.util.concurrent.CancellationException;
import java.util.concurrent.TimeoutException;
import org.jspecify.annotations.Nullable;

/**
 * Maps what jetcd signals to {@link LockBackendException}, deciding {@code isTransient()} from the
 * gRPC status code: {@code UNAVAILABLE} (no connection, no leader, request timed out on the
 * server), {@code DEADLINE_EXCEEDED}, {@code RESOURCE_EXHAUSTED} ("too many requests"),
 * {@code ABORTED}, {@code INTERNAL}, {@code UNKNOWN} and I/O errors or timeouts are transient;
 * {@code UNAUTHENTICATED}, {@code PERMISSION_DENIED}, {@code INVALID_ARGUMENT} (wrong password),
 * {@code FAILED_PRECONDITION}, {@code UNIMPLEMENTED}, a closed jetcd client and everything else
 * are not. jetcd reports a failed authentication as {@code UNAUTHENTICATED} whatever the reason:
 * when the cause is an unreachable server ({@code UNAVAILABLE} below it), that is transient.
 */
final class EtcdErrors {

    private static final BackendErrors ERRORS = BackendErrors.of("etcd", EtcdErrors::isTransient);

    private EtcdErrors() {
    }

    /**
     * @param lockName  the lock concerned, or {@code null}
     * @param operation what was attempted, for the message
     * @param t         what jetcd (or a timeout) signalled
     * @return the exception to signal instead
     */
    static LockException map(@Nullable String lockName, String operation, Throwable t) {
        return ERRORS.map(lockName, operation, t);
    }

    /**
     * A failure of the backend's shared session (its lease grant: wrong password, no answer)
     * names no lock; reported for an operation on one lock, it should.
     *
     * @param lockName  the lock the operation was for
     * @param operation what was attempted, for the message
     * @param e         the mapped failure
     * @return {@code e}, or when it is a {@link LockBackendException} naming no lock, one naming {@code lockName}
     */
    static LockException forLock(String lockName, String operation, LockException e) {
        if (e.lockName() != null || !(e instanceof LockBackendException be)) {
            return e;
        }
        return new LockBackendException(lockName, "etcd failed " + operation + " of lock '" + lockName + "': "
                + e.getMessage(), e, be.isTransient());
    }

    /**
     * @param t a failure
     * @return whether repeating the operation may succeed
     */
    static boolean isTransient(Throwable t) {
        Throwable e = BackendErrors.unwrap(t);
        if (e instanceof LockBackendException be) {
            return be.isTransient();
        }
        if (e instanceof ClosedClientException) {
            return false;
        }
        if (e instanceof TimeoutException || e instanceof IOException || e instanceof CancellationException) {
            return true;
        }
        Status.Code code = code(e);
        if (code == null) {
            return BackendErrors.isIoOrTimeout(e);
        }
        if (code == Status.Code.UNAUTHENTICATED) {
            // jetcd wraps every failed Authenticate call in UNAUTHENTICATED: look at why it failed
            for (Throwable c = e.getCause(); c != null && c != c.getCause(); c = c.getCause()) {
                Status.Code inner = code(c);
                if (inner != null && inner != Status.Code.UNAUTHENTICATED) {
                    return transientCode(inner);
                }
                if (c instanceof IOException) {
                    return true;
                }
            }
            return false;
        }
        return transientCode(code);
    }

    /**
     * @param t a failure
     * @return whether it says the lease does not exist (any more)
     */
    static boolean isLeaseNotFound(Throwable t) {
        Throwable e = BackendErrors.unwrap(t);
        return code(e) == Status.Code.NOT_FOUND;
    }

    private static boolean transientCode(Status.Code code) {
        switch (code) {
            case UNAVAILABLE:
            case DEADLINE_EXCEEDED:
            case RESOURCE_EXHAUSTED:
            case ABORTED:
            case INTERNAL:
            case UNKNOWN:
            case CANCELLED:
                return true;
            default:
                return false;
        }
    }

    private static Status.Code code(Throwable e) {
        if (e instanceof EtcdException ee) {
            ErrorCode c = ee.getErrorCode();
            return Status.Code.valueOf(c.name());
        }
        if (e instanceof StatusRuntimeException sre) {
            return sre.getStatus().getCode();
        }
        if (e instanceof StatusException se) {
            return se.getStatus().getCode();
        }
        return null;
    }
}
