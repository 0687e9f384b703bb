package io.reactivelocks.docs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.reactivelocks.LockBackendException;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockLostException;
import io.reactivelocks.LockOptions;
import io.reactivelocks.LockTimeoutException;
import io.reactivelocks.local.LocalLockBackend;
import io.reactivelocks.local.LocalLockStore;
import io.reactivelocks.test.FaultInjectingBackend;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/** The samples of docs/semantics.md, run on the in-memory store (losses through a fault-injecting backend). */
class DocsSemanticsTest {

    static final Duration STEP = Duration.ofSeconds(10);

    private final FaultInjectingBackend backend = FaultInjectingBackend.wrap(new LocalLockBackend(new LocalLockStore()));
    private final LockClient locks = LockClient.create(backend, LockOptions.builder()
            .leaseTime(Duration.ofMillis(600)).waitTimeout(Duration.ofMillis(300)).requestTimeout(Duration.ofMillis(100)).build());

    @AfterEach
    void close() {
        locks.close().block(STEP);
    }

    @Test
    void aLostLeaseCancelsTheBody() {
        // tag::loss[]
        Mono<String> result = locks.withLock("ledger", lease -> postEntries(lease.token()))   // cancelled on loss
                .onErrorResume(LockLostException.class, e ->
                        Mono.just("lost " + e.lockName() + " (token " + e.token() + "): not done under the lock"));
        // end::loss[]
        StepVerifier.create(result)
                .then(() -> backend.failRenewals(true))
                .expectNextMatches(r -> r.startsWith("lost ledger (token "))
                .expectComplete()
                .verify(STEP);
    }

    @Test
    void errors() {
        var holder = locks.acquire("ledger").block(STEP);
        // tag::errors[]
        Mono<String> posted = locks.withLock("ledger", lease -> postEntries(lease.token()))
                .onErrorResume(LockTimeoutException.class, e -> Mono.just("busy: waited " + e.waitTimeout().toMillis() + " ms"))
                .onErrorResume(LockBackendException.class, e -> e.isTransient()
                        ? Mono.just("store unavailable, try again")
                        : Mono.error(e));                          // misconfiguration: no point retrying
        // end::errors[]
        StepVerifier.create(posted).expectNext("busy: waited 300 ms").expectComplete().verify(STEP);
        holder.release().block(STEP);
        backend.silent(true);
        StepVerifier.create(posted).expectNext("store unavailable, try again").expectComplete().verify(STEP);
    }

    @Test
    void badArgumentsFailAtCallTime() {
        assertThatThrownBy(() -> locks.acquire("")).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("name");
        assertThatThrownBy(() -> LockOptions.builder().leaseTime(Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("leaseTime must be positive");
        assertThat(locks.metrics().pendingAcquireCount()).isZero();
    }

    static Mono<String> postEntries(long token) {
        return Mono.<String>never().timeout(Duration.ofSeconds(5), Mono.just("posted with fence " + token));
    }
}
