package io.reactivelocks.r2dbc.postgresql;

import io.netty.handler.codec.DecoderException;
import io.r2dbc.spi.R2dbcException;
import io.reactivelocks.LockBackendException;
import io.reactivelocks.LockException;
import io.reactivelocks.r2dbc.internal.DriverErrors;
import io.reactivelocks.spi.BackendErrors;
import org.jspecify.annotations.Nullable;

/**
 * The one place where driver errors become {@link LockBackendException}s, and where it is
 * decided whether repeating the operation may succeed.
 *
 * <p>The SQLSTATE decides first, when the server sent one: class {@code 08} (connection
 * exception), {@code 57P01}–{@code 57P03} (admin/crash shutdown, cannot connect now),
 * {@code 57014} (query cancelled, e.g. statement timeout), {@code 53} (insufficient resources, e.g.
 * too many connections), {@code 40} (serialization failure, deadlock), {@code 55P03} (lock not
 * available) and {@code 58} (system/I/O error) are transient; everything else — notably {@code 28}
 * (authentication), {@code 42} (syntax, undefined table, permission), {@code 3D}/{@code 3F}
 * (no such database/schema), {@code 22}/{@code 23} (data) — is not; nor is a peer whose bytes the
 * driver cannot decode (a Netty {@code DecoderException}, reported with {@code 08006}: it is not a
 * PostgreSQL server). Without a SQLSTATE the
 * exception type decides: R2DBC transient exceptions, non-transient <em>resource</em> exceptions
 * (the driver's connection-closed and cannot-connect errors: a new connection may well work),
 * I/O errors and timeouts are transient; bad grammar, permission denied, integrity violations and
 * anything unknown are not.
 */
final class PostgresErrors {

    static final String BACKEND = "postgresql";
    private static final BackendErrors ERRORS = BackendErrors.of(BACKEND, PostgresErrors::isTransient)
            .describedBy(PostgresErrors::describe);

    private PostgresErrors() {
    }

    /**
     * @param name      the lock concerned, or {@code null}
     * @param operation what was being done, for the message (e.g. "acquire")
     * @param error     what the driver signalled
     * @return the error to signal: {@code error} itself when it is already a {@link LockException}
     */
    static LockException map(@Nullable String name, String operation, Throwable error) {
        return ERRORS.map(name, operation, error);
    }

    /**
     * Like {@link #map}, for operations of a {@link PostgresTaskQueue}: the message names the queue
     * (and {@link LockException#lockName()} is the queue).
     *
     * @param queue     the task queue concerned
     * @param operation what was being done, e.g. "task capture"
     * @param error     what the driver signalled
     * @return the error to signal: {@code error} itself when it is already a {@link LockException}
     */
    static LockException mapQueue(String queue, String operation, Throwable error) {
        return ERRORS.mapQueue(queue, operation, error);
    }

    /**
     * @param error an error of the driver, the pool or the network
     * @return {@code true} when repeating the operation (on a new connection) may succeed
     */
    static boolean isTransient(Throwable error) {
        if (error instanceof LockBackendException be) {
            return be.isTransient();
        }
        // a peer that does not speak the PostgreSQL protocol: the driver reports a frame it cannot
        // decode as an I/O error (SQLSTATE 08006), but no retry will make it speak PostgreSQL
        for (Throwable t = error; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof DecoderException) {
                return false;
            }
        }
        String state = sqlState(error);
        if (state != null) {
            return transientState(state);
        }
        for (Throwable t = error; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof LockBackendException be) {
                return be.isTransient();
            }
            if (DriverErrors.permanentType(t)) {
                return false;
            }
            if (DriverErrors.transientType(t)) {
                return true;
            }
        }
        return false;
    }

    /**
     * @param state a five-character SQLSTATE
     * @return whether an error with this state may go away on a retry
     */
    static boolean transientState(String state) {
        if (state.length() < 2) {
            return false;
        }
        switch (state) {
            case "57P01", "57P02", "57P03", "57014", "55P03":
                return true;
            default:
                break;
        }
        switch (state.substring(0, 2)) {
            case "08", "40", "53", "58":
                return true;
            default:
                return false;
        }
    }

    /** @return the first non-blank SQLSTATE in the cause chain, or {@code null} */
    static @Nullable String sqlState(Throwable error) {
        for (Throwable t = error; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof R2dbcException r && r.getSqlState() != null && !r.getSqlState().isBlank()) {
                return r.getSqlState();
            }
        }
        return null;
    }

    /** @return the SQLSTATE in brackets, when there is one, then the error's message and its cause's */
    private static String describe(Throwable error) {
        return DriverErrors.describe(error, sqlState(error));
    }
}
