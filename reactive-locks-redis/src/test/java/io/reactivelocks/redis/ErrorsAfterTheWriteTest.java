package io.reactivelocks.redis;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/**
 * A command's error reaches the chain on another thread than the one that raised it (a follow-up
 * command is never written inside Lettuce's write: {@link RedisErrors#errorsAfterTheWrite(Mono)}),
 * its replies on the thread that delivered them.
 */
class ErrorsAfterTheWriteTest {

    private static final Duration STEP = Duration.ofSeconds(10);

    @Test
    void anErrorRaisedInsideTheSubscribeIsSignalledOnAnotherThread() {
        Thread caller = Thread.currentThread();
        AtomicReference<Thread> signalledOn = new AtomicReference<>();
        Mono<String> failing = Mono.error(new IllegalStateException("channel closed under the write"));
        StepVerifier.create(RedisErrors.errorsAfterTheWrite(failing).doOnError(e -> signalledOn.set(Thread.currentThread())))
                .expectErrorMessage("channel closed under the write")
                .verify(STEP);
        assertThat(signalledOn.get()).isNotSameAs(caller);
        assertThat(signalledOn.get().getName()).startsWith("parallel-");
    }

    @Test
    void repliesStayOnTheThreadThatDeliversThem() {
        Thread caller = Thread.currentThread();
        AtomicReference<Thread> deliveredOn = new AtomicReference<>();
        StepVerifier.create(RedisErrors.errorsAfterTheWrite(Flux.just("a", "b")).doOnNext(v -> deliveredOn.set(Thread.currentThread())))
                .expectNext("a", "b")
                .expectComplete()
                .verify(STEP);
        assertThat(deliveredOn.get()).isSameAs(caller);
    }
}
