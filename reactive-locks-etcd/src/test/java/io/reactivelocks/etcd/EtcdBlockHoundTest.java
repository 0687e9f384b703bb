package io.reactivelocks.etcd;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.test.StepVerifier;

/**
 * BlockHound is installed in this module's test JVM (by {@code blockhound-junit-platform}), so
 * every test against etcd also proves that nothing blocks on a Reactor or Netty/Vert.x event-loop
 * thread — this test only shows that it would be caught.
 */
class EtcdBlockHoundTest {

    @Test
    void aBlockingCallOnANonBlockingThreadIsCaught() {
        StepVerifier.create(Mono.fromCallable(() -> {
                    Thread.sleep(1); // the very thing BlockHound must catch
                    return "blocked";
                }).subscribeOn(Schedulers.parallel()))
                .expectErrorSatisfies(e -> assertThat(e.getClass().getName()).isEqualTo("reactor.blockhound.BlockingOperationError"))
                .verify(Duration.ofSeconds(5));
    }
}
