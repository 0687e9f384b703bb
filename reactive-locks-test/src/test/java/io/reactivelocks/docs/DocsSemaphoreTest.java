package io.reactivelocks.docs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.reactivelocks.Lease;
import io.reactivelocks.LockOptions;
import io.reactivelocks.local.LocalSemaphoreStore;
import io.reactivelocks.semaphore.Semaphore;
import io.reactivelocks.semaphore.SemaphoreState;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/** The samples of docs/concepts/semaphore.md, run on the in-memory semaphore store. */
class DocsSemaphoreTest {

    static final Duration STEP = Duration.ofSeconds(10);

    // tag::create[]
    Semaphore exports = Semaphore.create(new LocalSemaphoreStore());   // on a server: store.semaphores(options), from the
                                                                     // session RedisLocks.connect(redis), EtcdLocks.connect(etcd), ...
    // end::create[]

    private final AtomicInteger running = new AtomicInteger();
    private final AtomicInteger mostAtOnce = new AtomicInteger();

    @AfterEach
    void close() {
        exports.close().block(STEP);
    }

    @Test
    void atMostFourAtOnce() {
        // tag::with-permit[]
        Flux<String> done = Flux.range(1, 10).flatMap(i ->
                exports.withPermit("exports", 4, permit -> runExport(i, permit.token())));   // waits while 4 are out
        // end::with-permit[]
        StepVerifier.create(done).expectNextCount(10).expectComplete().verify(STEP);
        assertThat(mostAtOnce.get()).as("never more than 4 at once").isBetween(2, 4);
    }

    @Test
    void theOtherVerbs() {
        LockOptions options = exports.options();
        // tag::verbs[]
        Mono<Lease> one = exports.tryAcquire("exports", 4);              // empty when none is free
        Mono<List<Lease>> two = exports.acquire("exports", 4, 2, options);   // two permits at once, all or none
        Flux<Lease> held = exports.hold("exports", 4);                   // the permit, again after each renewal; completes when lost
        Flux<SemaphoreState> holders = exports.observe("exports");       // who holds permits: owner, token, deadline
        Mono<SemaphoreState> now = exports.inspect("exports");          // the same, read once; exports.metrics(): what this client holds
        // end::verbs[]
        List<Lease> pair = two.block(STEP);
        Lease third = one.block(STEP);
        assertThat(pair).hasSize(2);
        assertThat(third.token()).isGreaterThan(pair.get(1).token());
        StepVerifier.create(holders.take(1)).expectNextMatches(s -> s.inUse() == 3).expectComplete().verify(STEP);
        StepVerifier.create(held.take(1)).expectNextCount(1).expectComplete().verify(STEP);
        Lease fourth = await().atMost(STEP).until(() -> one.block(STEP), l -> l != null);   // the hold gave its permit back
        fourth.release().block(STEP);
        for (Lease l : pair) {
            l.release().block(STEP);
        }
        third.release().block(STEP);
    }

    private Mono<String> runExport(int i, long token) {
        return Mono.fromRunnable(() -> mostAtOnce.accumulateAndGet(running.incrementAndGet(), Math::max))
                .then(Mono.delay(Duration.ofMillis(50)))
                .doOnTerminate(running::decrementAndGet)              // before the permit is given back
                .thenReturn("export " + i + " with fence " + token);
    }
}
