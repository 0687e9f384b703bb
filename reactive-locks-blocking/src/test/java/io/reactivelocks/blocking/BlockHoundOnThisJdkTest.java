package io.reactivelocks.blocking;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import reactor.blockhound.BlockingOperationError;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/** BlockHound is installed in this module's test JVM (a JDK 21+) too: a blocking call on a Reactor thread is caught. */
class BlockHoundOnThisJdkTest {

    @Test
    void aBlockingCallOnANonBlockingThreadIsCaught() {
        Mono<Boolean> blocking = Mono.delay(Duration.ofMillis(1))
                .map(x -> {
                    try {
                        return new CountDownLatch(1).await(10, TimeUnit.MILLISECONDS);
                    } catch (InterruptedException e) {
                        throw new IllegalStateException(e);
                    }
                });
        StepVerifier.create(blocking)
                .expectErrorSatisfies(e -> assertThat(e).isInstanceOf(BlockingOperationError.class))
                .verify(Duration.ofSeconds(5));
        assertThat(Runtime.version().feature()).isGreaterThanOrEqualTo(21);
    }
}
