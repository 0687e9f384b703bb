package io.reactivelocks.docs;

import static org.assertj.core.api.Assertions.assertThat;

import io.reactivelocks.Lease;
import io.reactivelocks.LockClient;
import io.reactivelocks.local.LocalLockBackend;
import io.reactivelocks.multi.MultiLease;
import io.reactivelocks.multi.MultiLock;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/** The samples of docs/concepts/multi-lock.md, run on the in-memory store. */
class DocsMultiLockTest {

    static final Duration STEP = Duration.ofSeconds(10);

    LockClient locks = LocalLockBackend.client();

    @AfterEach
    void close() {
        locks.close().block(STEP);
    }

    @Test
    void allOrNothing() {
        // tag::use[]
        MultiLock multi = MultiLock.create(locks);                 // any LockClient, on any store
        Mono<String> moved = multi.withLocks(List.of("account:7", "account:3"), set ->   // any order: taken in canonical order
                transfer(7, 3, set.token("account:7"), set.token("account:3")));
        Mono<MultiLease> both = multi.tryAcquire(List.of("account:7", "account:3"));     // no waiting: empty when one is held
        Flux<MultiLease> held = multi.hold(List.of("account:7", "account:3"));           // the set once; completes when a lease is lost
        // end::use[]
        StepVerifier.create(Flux.merge(moved, multi.withLocks(List.of("account:3", "account:7"), set -> transfer(3, 7,
                        set.token("account:3"), set.token("account:7")))))
                .expectNextCount(2).expectComplete().verify(STEP);
        Lease seven = locks.acquire("account:7").block(STEP);
        StepVerifier.create(both).expectComplete().verify(STEP);
        assertThat(locks.inspect("account:3").block(STEP).isHeld()).as("nothing half taken").isFalse();
        seven.release().block(STEP);
        StepVerifier.create(held.take(1)).expectNextMatches(s -> s.names().size() == 2).expectComplete().verify(STEP);
        assertThat(MultiLock.canonicalOrder(List.of("account:7", "account:3"))).containsExactly("account:3", "account:7");
    }

    static Mono<String> transfer(int from, int to, long fenceFrom, long fenceTo) {
        return Mono.fromSupplier(() -> "moved " + from + " -> " + to + " with fences " + fenceFrom + ", " + fenceTo);
    }
}
