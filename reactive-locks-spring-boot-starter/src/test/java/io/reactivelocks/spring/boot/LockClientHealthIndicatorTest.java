package io.reactivelocks.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import io.reactivelocks.LockClient;
import io.reactivelocks.LockOptions;
import io.reactivelocks.local.LocalLockBackend;
import io.reactivelocks.local.LocalLockStore;
import io.reactivelocks.spi.DelegatingLockBackend;
import io.reactivelocks.spi.Holder;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Hooks;
import reactor.core.publisher.Mono;

/**
 * The health check against a store that never answers, with the check's timeout equal to the client's request
 * timeout (the two timers end together on two threads): every check is DOWN and nothing reaches Reactor's
 * dropped-error hook, which would log each late failure with its stack trace at ERROR — a trace per check during an
 * outage. Found by the outage test in CI ({@code QuietOutageTest}, health timeout = request timeout = 1 s).
 */
class LockClientHealthIndicatorTest {

    private static final Duration TIMEOUT = Duration.ofMillis(5);
    private static final int CHECKS = 400;

    @Test
    void checksWhoseTimerEndsWithTheRequestTimeoutDropNoError() {
        DelegatingLockBackend silent = new DelegatingLockBackend(new LocalLockBackend(new LocalLockStore())) {
            @Override
            public Mono<Holder> inspect(String name) {
                return Mono.never();
            }
        };
        List<Throwable> dropped = new CopyOnWriteArrayList<>();
        Hooks.onErrorDropped(dropped::add);
        LockClient client = LockClient.create(silent, LockOptions.builder().requestTimeout(TIMEOUT).build());
        try {
            LockClientHealthIndicator indicator = new LockClientHealthIndicator(client, null, "probe", TIMEOUT);
            List<Health> checks = Flux.range(0, CHECKS)
                    .flatMap(i -> indicator.health(), 8)
                    .collectList()
                    .block(Duration.ofSeconds(60));
            assertThat(checks).hasSize(CHECKS).allSatisfy(h -> {
                assertThat(h.getStatus()).isEqualTo(Status.DOWN);
                assertThat(h.getDetails().get("error")).asString().contains("did not answer within");
            });
            assertThat(dropped).as("errors handed to the dropped-error hook").isEmpty();
        } finally {
            Hooks.resetOnErrorDropped();
            client.close().block(Duration.ofSeconds(10));
        }
    }
}
