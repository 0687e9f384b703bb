package io.reactivelocks.docs;

import static org.assertj.core.api.Assertions.assertThat;

import io.reactivelocks.LockClient;
import io.reactivelocks.LockOptions;
import io.reactivelocks.local.LocalLockBackend;
import io.reactivelocks.local.LocalLockStore;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;
import reactor.util.retry.Retry;

/** The samples of docs/getting-started.md, run on the in-memory store. */
class DocsGettingStartedTest {

    static final Duration STEP = Duration.ofSeconds(10);

    @Test
    void firstLock() {
        // tag::first-lock[]
        LockClient locks = LocalLockBackend.client();             // in memory: one JVM, no server

        Mono<String> receipt = locks.withLock("order:42",         // nothing happens before subscribe
                lease -> charge("order:42", lease.token()));      // the fencing token goes with every write
        // end::first-lock[]
        StepVerifier.create(receipt).expectNextMatches(r -> r.startsWith("charged order:42 with fence ")).expectComplete().verify(STEP);
        locks.close().block(STEP);
    }

    @Test
    void options() {
        // tag::options[]
        LockOptions options = LockOptions.builder()
                .leaseTime(Duration.ofSeconds(10))                // the TTL asked of the store (default 30 s)
                .renewalInterval(Duration.ofSeconds(3))           // default: lease time / 3
                .waitTimeout(Duration.ofSeconds(5))               // default: wait until cancelled
                .backoff(Retry.backoff(Long.MAX_VALUE, Duration.ofMillis(10))
                        .maxBackoff(Duration.ofSeconds(1)).jitter(1.0))   // the default
                .requestTimeout(Duration.ofSeconds(2))            // one store request (default 5 s)
                .build();
        LockClient locks = LocalLockBackend.client(new LocalLockStore(), options);   // store.locks(options), store = RedisLocks.connect(redis), ...
        LockOptions perCall = options.mutate().waitTimeout(Duration.ofMillis(500)).build();   // for one call
        // end::options[]
        assertThat(locks.options().renewalInterval()).isEqualTo(Duration.ofSeconds(3));
        StepVerifier.create(locks.withLock("order:42", perCall, lease -> Mono.just(lease.remaining())))
                .expectNextMatches(left -> left.compareTo(Duration.ofSeconds(9)) > 0)
                .expectComplete().verify(STEP);
        locks.close().block(STEP);
    }

    static Mono<String> charge(String order, long token) {
        return Mono.fromSupplier(() -> "charged " + order + " with fence " + token);
    }
}
