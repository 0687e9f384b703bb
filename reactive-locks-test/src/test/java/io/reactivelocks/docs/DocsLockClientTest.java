package io.reactivelocks.docs;

import static org.assertj.core.api.Assertions.assertThat;

import io.reactivelocks.Lease;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockClientClosedException;
import io.reactivelocks.LockOptions;
import io.reactivelocks.LockState;
import io.reactivelocks.LockTimeoutException;
import io.reactivelocks.local.LocalLockBackend;
import io.reactivelocks.local.LocalLockStore;
import io.reactivelocks.test.FaultInjectingBackend;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/** The samples of docs/concepts/lock-client.md, run on the in-memory store. */
class DocsLockClientTest {

    static final Duration STEP = Duration.ofSeconds(10);

    // tag::create[]
    LockClient locks = LocalLockBackend.client();   // in memory; on a server: store.locks(), store = RedisLocks.connect(redis), ...
    // end::create[]

    private final List<String> log = new CopyOnWriteArrayList<>();

    @AfterEach
    void close() {
        // tag::close[]
        Mono<Void> closed = locks.close();           // releases what the client holds, fails its pending acquires
        // end::close[]
        closed.block(STEP);
        StepVerifier.create(locks.acquire("order:42")).expectError(LockClientClosedException.class).verify(STEP);
    }

    @Test
    void withLock() {
        // tag::with-lock[]
        Mono<String> receipt = locks.withLock("order:42", lease -> charge("order:42", lease.token()));
        // end::with-lock[]
        StepVerifier.create(receipt).expectNextMatches(r -> r.startsWith("charged order:42 with fence ")).expectComplete().verify(STEP);
        assertThat(locks.inspect("order:42").block(STEP)).isInstanceOf(LockState.Free.class);
    }

    @Test
    void acquireAndRelease() {
        // tag::acquire[]
        Mono<String> done = Mono.usingWhen(locks.acquire("order:42"),   // waits while someone else holds it
                lease -> charge("order:42", lease.token()),
                Lease::release);                                    // yours to release: on complete, error and cancel
        // end::acquire[]
        StepVerifier.create(done).expectNextMatches(r -> r.startsWith("charged")).expectComplete().verify(STEP);
        assertThat(locks.inspect("order:42").block(STEP)).isInstanceOf(LockState.Free.class);
    }

    @Test
    void tryAcquire() {
        // tag::try-acquire[]
        Mono<String> report = Mono.usingWhen(locks.tryAcquire("report"),   // one attempt: empty while someone holds it
                        lease -> buildReport(lease.token()).thenReturn("built"),
                        Lease::release)
                .defaultIfEmpty("skipped: another instance is building it");
        // end::try-acquire[]
        StepVerifier.create(report).expectNext("built").expectComplete().verify(STEP);
        Lease other = locks.acquire("report").block(STEP);
        StepVerifier.create(report).expectNext("skipped: another instance is building it").expectComplete().verify(STEP);
        other.release().block(STEP);
    }

    @Test
    void holdStream() {
        // tag::hold[]
        Disposable leading = locks.hold("scheduler")               // the lease, then again after each renewal
                .doOnNext(lease -> log("holding scheduler with token " + lease.token()))
                .doOnComplete(() -> log("lost scheduler"))          // completes when the lease is lost
                .subscribe();
        // ...
        leading.dispose();                                          // cancelling releases the lock
        // end::hold[]
        locks.awaitRelease("scheduler").block(STEP);
        assertThat(log).singleElement().asString().startsWith("holding scheduler with token ");
    }

    @Test
    void holdStreamCompletesOnLoss() {
        FaultInjectingBackend backend = FaultInjectingBackend.wrap(new LocalLockBackend(new LocalLockStore()));
        LockClient shortLeases = LockClient.create(backend, LockOptions.builder().leaseTime(Duration.ofMillis(300)).build());
        StepVerifier.create(shortLeases.hold("scheduler"))
                .expectNextCount(1)
                .then(() -> backend.failRenewals(true))
                .thenConsumeWhile(lease -> true)
                .expectComplete()
                .verify(STEP);
        shortLeases.close().block(STEP);
    }

    @Test
    void observeInspectAwaitRelease() {
        // tag::observe[]
        Flux<LockState> states = locks.observe("order:42");       // the current state, then each change
        Mono<LockState> now = locks.inspect("order:42");           // Free, or Held(owner, token, validUntilNanos, payload)
        Mono<Void> free = locks.awaitRelease("order:42");          // completes when the lock is next free
        // end::observe[]
        StepVerifier.create(states.take(3))
                .expectNextMatches(s -> s instanceof LockState.Free)
                .then(() -> {
                    Lease lease = locks.acquire("order:42").block(STEP);
                    assertThat(now.block(STEP)).isInstanceOfSatisfying(LockState.Held.class,
                            h -> assertThat(h.token()).isEqualTo(lease.token()));
                    StepVerifier.create(free).expectSubscription().expectNoEvent(Duration.ofMillis(50)).thenCancel().verify(STEP);
                    lease.release().block(STEP);
                })
                .expectNextMatches(s -> s instanceof LockState.Held)
                .expectNextMatches(s -> s instanceof LockState.Free)
                .expectComplete()
                .verify(STEP);
        StepVerifier.create(free).expectComplete().verify(STEP);
    }

    @Test
    void reentrancy() {
        // tag::reentrancy[]
        Mono<String> nested = locks.withLock("account:7", outer ->
                locks.withLock("account:7", inner ->                // same client, same chain: the same lease
                        Mono.just(inner.token() == outer.token() ? "reentered" : "a second lease")));
        // end::reentrancy[]
        StepVerifier.create(nested).expectNext("reentered").expectComplete().verify(STEP);
    }

    @Test
    void withLockMany() {
        // tag::with-lock-many[]
        Flux<String> rows = locks.withLockMany("export", lease -> exportRows(lease.token()));   // held until the stream ends
        // end::with-lock-many[]
        StepVerifier.create(rows).expectNextCount(3).expectComplete().verify(STEP);
        assertThat(locks.inspect("export").block(STEP)).isInstanceOf(LockState.Free.class);
    }

    @Test
    void waitTimeout() {
        Lease holder = locks.acquire("order:42").block(STEP);
        // tag::wait-timeout[]
        LockOptions patient = locks.options().mutate().waitTimeout(Duration.ofMillis(200)).build();
        Mono<String> charged = locks.withLock("order:42", patient, lease -> charge("order:42", lease.token()))
                .onErrorResume(LockTimeoutException.class, e -> Mono.just("busy after " + e.waitTimeout().toMillis() + " ms"));
        // end::wait-timeout[]
        StepVerifier.create(charged).expectNext("busy after 200 ms").expectComplete().verify(STEP);
        holder.release().block(STEP);
    }

    private void log(String line) {
        log.add(line);
    }

    static Mono<String> charge(String order, long token) {
        return Mono.fromSupplier(() -> "charged " + order + " with fence " + token);
    }

    static Mono<Void> buildReport(long token) {
        return Mono.empty();
    }

    static Flux<String> exportRows(long token) {
        return Flux.just("row 1", "row 2", "row 3").map(r -> r + " @" + token);
    }
}
