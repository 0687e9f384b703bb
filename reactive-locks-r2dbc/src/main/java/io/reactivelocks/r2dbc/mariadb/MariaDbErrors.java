package io.reactivelocks.r2dbc.mariadb;

import io.r2dbc.spi.R2dbcException;
import io.reactivelocks.LockBackendException;
import io.reactivelocks.LockException;
import io.reactivelocks.r2dbc.internal.DriverErrors;
import io.reactivelocks.spi.BackendErrors;
import org.jspecify.annotations.Nullable;

/**
 * The one place where driver errors become {@link LockBackendException}s, and where it is decided
 * whether repeating the operation may succeed: SQLSTATE class {@code 08} (connection) and {@code 40}
 * (deadlock, serialization), and the server errors 1205 (lock wait timeout), 1040 (too many
 * connections), 1053 (server shutdown) and 1927 (connection killed) are transient; so are R2DBC transient
 * and non-transient <em>resource</em> exceptions, I/O errors and timeouts. Bad grammar, missing tables,
 * permissions and data errors are not — nor is a refused login or an unknown database (1044, 1045, 1049,
 * 1698, SQLSTATE class {@code 28}), which r2dbc-mariadb reports inside its "[9000] Fail to establish
 * connection" (a connection-class error): looked for first, so that a mistake fails an acquire at once
 * instead of being retried until the wait timeout.
 */
final class MariaDbErrors {

    static final String BACKEND = "mariadb";
    private static final BackendErrors ERRORS = BackendErrors.of(BACKEND, MariaDbErrors::isTransient)
            .describedBy(MariaDbErrors::describe);

    private MariaDbErrors() {
    }

    static LockException map(@Nullable String name, String operation, Throwable error) {
        return ERRORS.map(name, operation, error);
    }

    static boolean isTransient(Throwable error) {
        if (error instanceof LockBackendException be) {
            return be.isTransient();
        }
        if (refusedLogin(error)) {
            return false;
        }
        for (Throwable t = error; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof R2dbcException r) {
                String state = r.getSqlState();
                int code = r.getErrorCode();
                if (code == 1205 || code == 1213 || code == 1040 || code == 1053 || code == 1927) {
                    return true;
                }
                if (state != null && (state.startsWith("08") || state.startsWith("40"))) {
                    return true;
                }
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

    /** The server's errors that no retry can mend: wrong credentials, no such database, no access to it. */
    private static final java.util.Set<Integer> REFUSED = java.util.Set.of(1044, 1045, 1049, 1698);

    /**
     * @return whether the error is a refused login or an unknown database, by its code or SQLSTATE anywhere in the
     *     cause chain, or by the server's words where the driver wrapped them into a connection error of its own
     */
    static boolean refusedLogin(Throwable error) {
        for (Throwable t = error; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof R2dbcException r && (REFUSED.contains(r.getErrorCode())
                    || (r.getSqlState() != null && r.getSqlState().startsWith("28")))) {
                return true;
            }
            String m = t.getMessage();
            if (m != null && (m.contains("Access denied for user") || m.contains("Unknown database '"))) {
                return true;
            }
        }
        return false;
    }

    /** @return whether the error is the server's "no such table" (1146): the concept was never used */
    static boolean noSuchTable(Throwable error) {
        return errorCode(error) == 1146;
    }

    /** @return whether the error is a deadlock (1213) or a lock wait timeout (1205): the transaction was rolled back */
    static boolean rolledBack(Throwable error) {
        int code = errorCode(error);
        return code == 1213 || code == 1205;
    }

    static int errorCode(Throwable error) {
        for (Throwable t = error; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof R2dbcException r && r.getErrorCode() != 0) {
                return r.getErrorCode();
            }
        }
        return 0;
    }

    private static String describe(Throwable error) {
        int code = errorCode(error);
        return DriverErrors.describe(error, code == 0 ? null : String.valueOf(code));
    }
}
