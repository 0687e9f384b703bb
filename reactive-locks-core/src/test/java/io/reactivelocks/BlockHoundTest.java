package io.reactivelocks;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import reactor.blockhound.BlockingOperationError;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.test.StepVerifier;

/** Proves BlockHound is installed in this test JVM: a blocking call on a Reactor thread is caught. */
class BlockHoundTest {

    @Test
    void aBlockingCallOnANonBlockingThreadIsCaught() {
        // subscribeOn, not a short Mono.delay: a delay that ran out before the subscriber's request emits on the
        // requesting thread (the test's), which a loaded machine made happen once
        Mono<Boolean> blocking = Mono.fromCallable(() -> new CountDownLatch(1).await(10, TimeUnit.MILLISECONDS))
                .subscribeOn(Schedulers.parallel());
        StepVerifier.create(blocking)
                .expectErrorSatisfies(e -> assertThat(e).isInstanceOf(BlockingOperationError.class))
                .verify(Duration.ofSeconds(5));
    }
}
