package io.reactivelocks.spi;

import io.reactivelocks.LockBackendException;
import io.reactivelocks.LockException;
import java.io.IOException;
import java.util.Objects;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;
import java.util.function.Predicate;
import org.jspecify.annotations.Nullable;

/**
 * Turns what a store's client signals into the {@link LockException} family. The wrappers of
 * futures ({@link CompletionException}, {@link ExecutionException}) are taken off; an error that
 * is a {@link LockException} already passes unchanged; a {@link TimeoutException} becomes a
 * transient {@link LockBackendException} saying the store did not answer within the request
 * timeout; anything else becomes a {@link LockBackendException} whose message names the store,
 * the operation and the lock (or task queue), and whose {@link LockBackendException#isTransient()}
 * the store's own rule decides.
 *
 * <p>A store makes one instance with {@link #of(String, Predicate)} (its name and its rule) and
 * maps every failure through it; {@link #describedBy} replaces the default detail text.
 */
public final class BackendErrors {

    private final String backend;
    private final Predicate<? super Throwable> isTransient;
    private final Function<? super Throwable, String> describe;

    private BackendErrors(String backend, Predicate<? super Throwable> isTransient,
                          Function<? super Throwable, String> describe) {
        this.backend = Objects.requireNonNull(backend, "backend");
        this.isTransient = Objects.requireNonNull(isTransient, "isTransient");
        this.describe = Objects.requireNonNull(describe, "describe");
    }

    /**
     * @param backend     the store's name, first word of every message (e.g. {@code "redis"})
     * @param isTransient the store's rule: whether repeating the failed operation may succeed; it is
     *                    given the unwrapped error
     * @return the mapper of that store
     */
    public static BackendErrors of(String backend, Predicate<? super Throwable> isTransient) {
        return new BackendErrors(backend, isTransient, BackendErrors::describe);
    }

    /**
     * @param describe the detail text of an unwrapped error, after {@code "<store> failed <operation>: "}
     * @return a mapper like this one with that detail text
     */
    public BackendErrors describedBy(Function<? super Throwable, String> describe) {
        return new BackendErrors(backend, isTransient, describe);
    }

    /**
     * @param name      the lock concerned, or {@code null}
     * @param operation what was attempted, for the message (e.g. {@code "acquire"})
     * @param error     what the store's client signalled
     * @return the error to signal instead; {@code error} itself when it is a {@link LockException}
     */
    public LockException map(@Nullable String name, String operation, Throwable error) {
        return mapFor(name, name == null ? "" : " of lock '" + name + "'", operation, error);
    }

    /**
     * Like {@link #map(String, String, Throwable)}, for an operation of a task queue: the message
     * names the queue, and so does {@link LockException#lockName()}.
     *
     * @param queue     the task queue concerned
     * @param operation what was attempted, for the message (e.g. {@code "task capture"})
     * @param error     what the store's client signalled
     * @return the error to signal instead; {@code error} itself when it is a {@link LockException}
     */
    public LockException mapQueue(String queue, String operation, Throwable error) {
        return mapFor(queue, " of task queue '" + queue + "'", operation, error);
    }

    private LockException mapFor(@Nullable String name, String subject, String operation, Throwable error) {
        Throwable e = unwrap(error);
        if (e instanceof LockException le) {
            return le;
        }
        if (e instanceof TimeoutException) {
            return new LockBackendException(name, backend + " did not answer " + operation + subject
                    + " within the request timeout", e, true);
        }
        return new LockBackendException(name, backend + " failed " + operation + subject + ": " + describe.apply(e), e,
                isTransient.test(e));
    }

    /**
     * Maps with the rule every store shares: I/O errors and timeouts, or errors caused by them, are
     * transient, anything else is not.
     *
     * @param backend   the store's name, for the message
     * @param name      the lock concerned, or {@code null}
     * @param operation what was attempted, for the message
     * @param error     what was signalled
     * @return the error to signal instead; {@code error} itself when it is a {@link LockException}
     */
    public static LockException map(String backend, @Nullable String name, String operation, Throwable error) {
        return of(backend, BackendErrors::isIoOrTimeout).map(name, operation, error);
    }

    /**
     * @param error a failure
     * @return whether it is, or was caused by, an {@link IOException} or a {@link TimeoutException}
     */
    public static boolean isIoOrTimeout(Throwable error) {
        return error instanceof IOException || error instanceof TimeoutException
                || hasCause(error, IOException.class) || hasCause(error, TimeoutException.class);
    }

    /**
     * @param error a mapped failure
     * @return whether it is a {@link LockBackendException} that says repeating the operation may succeed
     */
    public static boolean isTransient(Throwable error) {
        return error instanceof LockBackendException be && be.isTransient();
    }

    /**
     * @param error a failure
     * @param type  the kind of cause looked for
     * @return whether a cause of {@code error} (not {@code error} itself) is of that kind
     */
    public static boolean hasCause(Throwable error, Class<? extends Throwable> type) {
        for (Throwable c = error.getCause(); c != null && c != error; c = c.getCause() == c ? null : c.getCause()) {
            if (type.isInstance(c)) {
                return true;
            }
        }
        return false;
    }

    /**
     * @param error a failure, perhaps signalled through a future
     * @return the first error under the {@link CompletionException} and {@link ExecutionException} wrappers
     */
    public static Throwable unwrap(Throwable error) {
        Throwable e = error;
        while ((e instanceof CompletionException || e instanceof ExecutionException) && e.getCause() != null) {
            e = e.getCause();
        }
        return e;
    }

    /**
     * The default detail text: the error, and its innermost cause when the error's message does not
     * say it already (clients often report "unable to connect" and hide why in a cause).
     *
     * @param error a failure
     * @return {@code error.toString()}, then {@code " (cause: <type>: <message>)"} of its innermost cause
     */
    public static String describe(Throwable error) {
        Throwable root = error;
        for (int i = 0; i < 16 && root.getCause() != null && root.getCause() != root; i++) {
            root = root.getCause();
        }
        String m = root.getMessage();
        if (root == error || m == null || String.valueOf(error.getMessage()).contains(m)) {
            return error.toString();
        }
        return error + " (cause: " + root.getClass().getSimpleName() + ": " + m + ")";
    }
}
