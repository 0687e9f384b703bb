package io.reactivelocks.redis;

import io.lettuce.core.RedisBusyException;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisCommandInterruptedException;
import io.lettuce.core.RedisCommandTimeoutException;
import io.lettuce.core.RedisConnectionException;
import io.lettuce.core.RedisException;
import io.lettuce.core.RedisLoadingException;
import io.lettuce.core.protocol.RedisProtocolException;
import io.netty.channel.ChannelException;
import io.netty.handler.codec.DecoderException;
import io.reactivelocks.LockBackendException;
import io.reactivelocks.LockException;
import io.reactivelocks.spi.BackendErrors;
import java.io.IOException;
import java.util.Locale;
import java.util.concurrent.TimeoutException;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * Maps Lettuce's exceptions to {@link LockBackendException}, deciding {@code isTransient()}:
 * timeouts, connection failures and I/O errors, a server busy with a script or loading its
 * dataset, cluster redirections and fail-overs are transient; authentication and permission
 * errors ({@code NOAUTH}, {@code WRONGPASS}, {@code NOPERM}), untrusted TLS certificates, wrong
 * types, script errors and a peer that does not speak RESP (a protocol or decoder error) are not.
 */
final class RedisErrors {

    private static final String[] PERMANENT_PREFIXES = {"NOAUTH", "WRONGPASS", "NOPERM", "WRONGTYPE", "NOSCRIPT", "ERR"};
    private static final String[] TRANSIENT_PREFIXES = {"LOADING", "BUSY", "TRYAGAIN", "CLUSTERDOWN", "MASTERDOWN",
            "READONLY", "MOVED", "ASK", "UNBLOCKED", "NOREPLICAS"};

    private static final BackendErrors ERRORS = BackendErrors.of("redis", RedisErrors::isTransient);

    private RedisErrors() {
    }

    /**
     * A Lettuce command's error, signalled on another thread. Lettuce can fail a command inside its
     * own write (a write from the connection's event loop runs the channel pipeline inline, and a
     * channel closing under it fails the write at once); a follow-up command sent from that error
     * signal (a release, a resubscription, the next attempt) then writes again inside the first
     * write, while that write still counts as a writer of the endpoint's {@code SharedLock}. If a
     * reconnection or a close is waiting for exclusive use of the endpoint at that moment, it holds
     * the lock the nested write waits for and spins until the writers drain, which they never do:
     * the connection is wedged and a core burns (lettuce#3880, open against 6.8 and the same code in
     * 7.7; suspected in two loaded CI runs where Redis Sentinel and Cluster clients never came back
     * after a failover and their close hung). Replies are read in a later pass of the event loop and
     * pay nothing; only errors take the extra hop.
     *
     * @param command a command's reply
     * @param <T>     the reply type
     * @return the same reply, its error signalled on Reactor's parallel scheduler
     */
    static <T> Flux<T> errorsAfterTheWrite(Flux<T> command) {
        return command.onErrorResume(RedisErrors::afterTheWrite);
    }

    /**
     * @param e   a command's error
     * @param <T> the reply type
     * @return {@code e}, signalled on Reactor's parallel scheduler (as {@link #errorsAfterTheWrite(Flux)} does)
     */
    static <T> Flux<T> afterTheWrite(Throwable e) {
        return Flux.<T>error(e).subscribeOn(Schedulers.parallel());
    }

    /**
     * {@link #errorsAfterTheWrite(Flux)} for a one-reply command.
     *
     * @param command a command's reply
     * @param <T>     the reply type
     * @return the same reply, its error signalled on Reactor's parallel scheduler
     */
    static <T> Mono<T> errorsAfterTheWrite(Mono<T> command) {
        return command.onErrorResume(e -> Mono.<T>error(e).subscribeOn(Schedulers.parallel()));
    }

    /**
     * @param lockName  the lock concerned, or {@code null}
     * @param operation what was attempted, for the message ("acquire", "renewal", ...)
     * @param t         what Lettuce signalled
     * @return the exception to signal instead
     */
    static LockException map(@Nullable String lockName, String operation, Throwable t) {
        return ERRORS.map(lockName, operation, t);
    }

    /**
     * @param queue     the task queue concerned
     * @param operation what was attempted, for the message ("task capture", ...)
     * @param t         what Lettuce signalled
     * @return the exception to signal instead (its {@code lockName()} is the queue)
     */
    static LockException mapQueue(String queue, String operation, Throwable t) {
        return ERRORS.mapQueue(queue, operation, t);
    }

    /**
     * @param t a failure
     * @return whether repeating the operation may succeed
     */
    static boolean isTransient(Throwable t) {
        // an authentication or permission error wrapped in a connection error is not transient,
        // nor is a TLS peer whose certificate this client does not trust, nor a peer that answers
        // something that is not RESP (a protocol or decoder error, or the decoder failing on it)
        Throwable root = t;
        for (Throwable c = t; c != null; c = c.getCause() == c ? null : c.getCause()) {
            if (c instanceof RedisCommandExecutionException && hasPrefix(c, PERMANENT_PREFIXES)) {
                return false;
            }
            if (c instanceof java.security.cert.CertificateException || c instanceof RedisProtocolException
                    || c instanceof DecoderException) {
                return false;
            }
            root = c;
        }
        if (t instanceof RedisConnectionException && root != t && isDecoderFailure(root)) {
            return false;
        }
        if (t instanceof RedisCommandTimeoutException || t instanceof RedisConnectionException
                || t instanceof IOException || t instanceof TimeoutException
                || t instanceof RedisBusyException || t instanceof RedisLoadingException
                || t instanceof RedisCommandInterruptedException) {
            return true;
        }
        if (t instanceof RedisCommandExecutionException) {
            return hasPrefix(t, TRANSIENT_PREFIXES);
        }
        for (Throwable c = t.getCause(); c != null && c != c.getCause(); c = c.getCause()) {
            if (c instanceof IOException || c instanceof TimeoutException || c instanceof RedisConnectionException) {
                return true;
            }
        }
        // other client-side RedisExceptions are about the connection: "Connection closed",
        // "Currently not connected. Commands are rejected."
        return t instanceof RedisException;
    }

    /**
     * @param root the innermost cause of a failed connection
     * @return whether it is neither an I/O problem nor one of Lettuce's or Netty's own errors, but a
     *         plain runtime error — what Lettuce's decoder throws on bytes that are not RESP
     */
    private static boolean isDecoderFailure(Throwable root) {
        return root instanceof RuntimeException && !(root instanceof RedisException)
                && !(root instanceof ChannelException) && !(root instanceof java.util.concurrent.CompletionException)
                && !(root instanceof java.util.concurrent.RejectedExecutionException)
                && !(root instanceof java.nio.channels.UnresolvedAddressException); // DNS may answer later
    }

    private static boolean hasPrefix(Throwable t, String[] prefixes) {
        String m = t.getMessage();
        if (m == null) {
            return false;
        }
        String upper = m.toUpperCase(Locale.ROOT);
        for (String p : prefixes) {
            if (upper.startsWith(p)) {
                return true;
            }
        }
        return false;
    }
}
