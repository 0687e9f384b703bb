package io.reactivelocks.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import io.reactivelocks.LockBackendException;
import io.reactivelocks.LockClientClosedException;
import io.reactivelocks.LockLostException;
import io.reactivelocks.LockTimeoutException;
import java.time.Duration;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.context.runner.ReactiveWebApplicationContextRunner;
import org.springframework.http.HttpStatus;
import org.springframework.mock.http.server.reactive.MockServerHttpRequest;
import org.springframework.mock.web.server.MockServerWebExchange;
import org.springframework.web.server.ResponseStatusException;
import org.springframework.web.server.WebExceptionHandler;
import reactor.test.StepVerifier;

/** Requests that fail because of their lock are answered 503 in a WebFlux application, other errors pass unchanged. */
class ReactiveLocksWebFluxAutoConfigurationTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(5);

    private final MockServerWebExchange exchange = MockServerWebExchange.from(MockServerHttpRequest.get("/work"));

    @Test
    void lockFailuresBecomeServiceUnavailableWithTheLockErrorAsCause() {
        WebExceptionHandler handler = new LockUnavailableStatus();
        for (Throwable e : new Throwable[] {
                new LockBackendException("a", "redis did not answer acquire of lock 'a' within the request timeout",
                        new TimeoutException(), true),
                new LockTimeoutException("a", Duration.ofSeconds(2)),
                new LockLostException("a", 7, "lost while the locked method ran"),
                new LockClientClosedException("a")}) {
            StepVerifier.create(handler.handle(exchange, e))
                    .expectErrorSatisfies(error -> {
                        assertThat(error).isInstanceOf(ResponseStatusException.class).hasCause(e);
                        assertThat(((ResponseStatusException) error).getStatusCode()).isEqualTo(HttpStatus.SERVICE_UNAVAILABLE);
                    })
                    .verify(TIMEOUT);
        }
    }

    @Test
    void otherErrorsPassUnchanged() {
        WebExceptionHandler handler = new LockUnavailableStatus();
        Throwable misconfigured = new LockBackendException("a", "redis failed acquire of lock 'a': NOAUTH", null, false);
        Throwable handlers = new IllegalStateException("the handler's own");
        StepVerifier.create(handler.handle(exchange, misconfigured)).expectErrorSatisfies(e -> assertThat(e).isSameAs(misconfigured))
                .verify(TIMEOUT);
        StepVerifier.create(handler.handle(exchange, handlers)).expectErrorSatisfies(e -> assertThat(e).isSameAs(handlers))
                .verify(TIMEOUT);
    }

    @Test
    void onInReactiveWebApplicationsUnlessSwitchedOff() {
        AutoConfigurations config = AutoConfigurations.of(ReactiveLocksWebFluxAutoConfiguration.class);
        new ReactiveWebApplicationContextRunner().withConfiguration(config)
                .run(context -> assertThat(context).hasSingleBean(LockUnavailableStatus.class));
        new ReactiveWebApplicationContextRunner().withConfiguration(config)
                .withPropertyValues("reactive-locks.web.service-unavailable=false")
                .run(context -> assertThat(context).doesNotHaveBean(LockUnavailableStatus.class));
        new ApplicationContextRunner().withConfiguration(config)
                .run(context -> assertThat(context).doesNotHaveBean(LockUnavailableStatus.class));
    }
}
