package io.reactivelocks.r2dbc.internal;

import io.r2dbc.spi.R2dbcBadGrammarException;
import io.r2dbc.spi.R2dbcDataIntegrityViolationException;
import io.r2dbc.spi.R2dbcNonTransientResourceException;
import io.r2dbc.spi.R2dbcPermissionDeniedException;
import io.r2dbc.spi.R2dbcTransientException;
import java.io.IOException;
import java.util.concurrent.TimeoutException;
import org.jspecify.annotations.Nullable;

/**
 * What the SQL dialects' error factories share where the server's own codes do not decide: the
 * R2DBC exception types that a retry cannot mend and those it may, and the message of a driver
 * error. Not API: the dialect packages' code.
 */
public final class DriverErrors {

    private DriverErrors() {
    }

    /**
     * @param t one error of a cause chain
     * @return whether its type says a retry cannot mend it: bad grammar, permission denied, integrity violation
     */
    public static boolean permanentType(Throwable t) {
        return t instanceof R2dbcBadGrammarException || t instanceof R2dbcPermissionDeniedException
                || t instanceof R2dbcDataIntegrityViolationException;
    }

    /**
     * @param t one error of a cause chain
     * @return whether its type says a retry (on a new connection) may succeed: R2DBC transient and
     *         non-transient <em>resource</em> exceptions, I/O errors and timeouts
     */
    public static boolean transientType(Throwable t) {
        return t instanceof R2dbcTransientException || t instanceof R2dbcNonTransientResourceException
                || t instanceof IOException || t instanceof TimeoutException;
    }

    /**
     * @param error a driver error
     * @param code  the server's code or SQLSTATE, or {@code null} when it sent none
     * @return the code in brackets, when there is one, then the error's message and its cause's
     */
    public static String describe(Throwable error, @Nullable String code) {
        String m = error.getMessage();
        String text = m == null || m.isBlank() ? error.getClass().getName() : m;
        Throwable cause = error.getCause();
        if (cause != null && cause != error && cause.getMessage() != null && !text.contains(cause.getMessage())) {
            text += " (" + cause.getClass().getSimpleName() + ": " + cause.getMessage() + ")";
        }
        return (code == null ? "" : "[" + code + "] ") + text;
    }
}
