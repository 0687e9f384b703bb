package io.reactivelocks.spring.boot;

import io.reactivelocks.LockBackendException;
import io.reactivelocks.LockClientClosedException;
import io.reactivelocks.LockLostException;
import io.reactivelocks.LockTimeoutException;
import org.springframework.core.Ordered;
import org.springframework.http.HttpStatus;
import org.springframework.web.server.ResponseStatusException;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebExceptionHandler;
import reactor.core.publisher.Mono;

/**
 * Answers a WebFlux request that failed because of its lock rather than its handler with 503 Service Unavailable:
 * the store did not answer (a transient {@link LockBackendException}), the lock was not acquired within the wait
 * timeout ({@link LockTimeoutException}), the lease was lost while the handler ran ({@link LockLostException}) or the
 * client is closing ({@link LockClientClosedException}). It passes the error on as a {@link ResponseStatusException}
 * (the lock error as its cause), so the application's error handling (Spring Boot's error page and JSON) writes the
 * answer; left a 500, each such request of an outage would be logged at ERROR with its whole stack trace, while the
 * lock client logs the outage once. Any other error, a non-transient store error included, passes unchanged.
 */
final class LockUnavailableStatus implements WebExceptionHandler, Ordered {

    /** Just before Spring Boot's error handler (-1), so that it writes the 503. */
    static final int ORDER = -2;

    @Override
    public Mono<Void> handle(ServerWebExchange exchange, Throwable error) {
        if (!unavailable(error)) {
            return Mono.error(error);
        }
        return Mono.error(new ResponseStatusException(HttpStatus.SERVICE_UNAVAILABLE, error.getMessage(), error));
    }

    /** @return whether {@code error} says the lock, not the request, failed, and a later request may succeed */
    static boolean unavailable(Throwable error) {
        return error instanceof LockTimeoutException || error instanceof LockLostException
                || error instanceof LockClientClosedException
                || error instanceof LockBackendException backend && backend.isTransient();
    }

    @Override
    public int getOrder() {
        return ORDER;
    }
}
