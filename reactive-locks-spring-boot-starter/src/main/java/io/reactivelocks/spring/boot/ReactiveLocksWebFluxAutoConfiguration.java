package io.reactivelocks.spring.boot;

import io.reactivelocks.LockException;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.web.server.WebExceptionHandler;

/**
 * In a WebFlux application, requests that fail because of their lock — the store unreachable, the wait timeout spent,
 * the lease lost, the client closing — are answered 503 Service Unavailable instead of 500, and so are not each logged
 * at ERROR with a stack trace (the lock client logs a store outage once). Off with
 * {@code reactive-locks.web.service-unavailable=false}; an {@code @ExceptionHandler} of the application still comes
 * first.
 */
@AutoConfiguration
@ConditionalOnClass({WebExceptionHandler.class, LockException.class})
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.REACTIVE)
@ConditionalOnBooleanProperty(name = "reactive-locks.web.service-unavailable", matchIfMissing = true)
public class ReactiveLocksWebFluxAutoConfiguration {

    /** Created by Spring Boot's auto-configuration. */
    public ReactiveLocksWebFluxAutoConfiguration() {
    }

    @Bean
    WebExceptionHandler reactiveLocksUnavailableStatus() {
        return new LockUnavailableStatus();
    }
}
