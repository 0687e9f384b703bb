package io.reactivelocks.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisConnectionException;
import io.lettuce.core.api.StatefulRedisConnection;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.CompletionException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/**
 * The connect of {@link LazyConnection}: a handshake whose refusal Lettuce reports as "Connection closed
 * prematurely" (it lost the race against the channel's close) is tried once more at once, so that the
 * server's own answer reaches the caller; any other failure is the caller's at once.
 */
class LazyConnectionTest {

    private static final Duration STEP = Duration.ofSeconds(5);

    @SuppressWarnings("unchecked")
    private static final StatefulRedisConnection<String, String> CONNECTION = (StatefulRedisConnection<String, String>)
            Proxy.newProxyInstance(LazyConnectionTest.class.getClassLoader(),
                    new Class<?>[] {StatefulRedisConnection.class}, (proxy, method, args) -> null);

    /** As Lettuce completes a connect whose channel closed before the handshake's answer. */
    private static RedisConnectionException closedPrematurely() {
        return new RedisConnectionException("Unable to connect to 127.0.0.1/<unresolved>:6379",
                new CompletionException(new RedisConnectionException("Connection closed prematurely")));
    }

    private static RedisConnectionException refused(String answer) {
        return new RedisConnectionException("Unable to connect to 127.0.0.1/<unresolved>:6379",
                new RedisCommandExecutionException(answer));
    }

    private record Connector(Queue<Mono<StatefulRedisConnection<String, String>>> answers, AtomicInteger connects) {
        static Connector of(List<Mono<StatefulRedisConnection<String, String>>> answers) {
            return new Connector(new ArrayDeque<>(answers), new AtomicInteger());
        }

        LazyConnection<StatefulRedisConnection<String, String>> lazy() {
            return new LazyConnection<>("command connection", () -> Mono.defer(() -> {
                connects.incrementAndGet();
                return answers.remove();
            }), true, c -> { });
        }
    }

    @Test
    void aHandshakeClosedPrematurelyIsTriedOnceMoreAndTheServersAnswerComesThrough() {
        Connector connector = Connector.of(List.of(Mono.error(closedPrematurely()),
                Mono.error(refused("WRONGPASS invalid username-password pair or user is disabled."))));
        StepVerifier.create(connector.lazy().get())
                .expectErrorSatisfies(e -> assertThat(e).hasRootCauseMessage(
                        "WRONGPASS invalid username-password pair or user is disabled."))
                .verify(STEP);
        assertThat(connector.connects()).hasValue(2);
    }

    @Test
    void aSecondConnectThatSucceedsIsTheConnection() {
        Connector connector = Connector.of(List.of(Mono.error(closedPrematurely()), Mono.just(CONNECTION)));
        LazyConnection<StatefulRedisConnection<String, String>> lazy = connector.lazy();
        StepVerifier.create(lazy.get()).expectNext(CONNECTION).expectComplete().verify(STEP);
        assertThat(lazy.current()).isSameAs(CONNECTION);
        assertThat(connector.connects()).hasValue(2);
    }

    @Test
    void onlyOnceMore() {
        Connector connector = Connector.of(List.of(Mono.error(closedPrematurely()), Mono.error(closedPrematurely())));
        StepVerifier.create(connector.lazy().get())
                .expectErrorSatisfies(e -> assertThat(e).hasRootCauseMessage("Connection closed prematurely"))
                .verify(STEP);
        assertThat(connector.connects()).hasValue(2);
    }

    @Test
    void anyOtherFailureIsTheCallersAtOnce() {
        Connector connector = Connector.of(List.of(Mono.error(refused("NOPERM this user has no permissions")),
                Mono.just(CONNECTION)));
        StepVerifier.create(connector.lazy().get())
                .expectErrorSatisfies(e -> assertThat(e).hasRootCauseMessage("NOPERM this user has no permissions"))
                .verify(STEP);
        assertThat(connector.connects()).hasValue(1);
        assertThat(LazyConnection.closedDuringHandshake(new RedisConnectionException("Connection refused"))).isFalse();
    }
}
