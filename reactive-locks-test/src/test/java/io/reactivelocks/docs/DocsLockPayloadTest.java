package io.reactivelocks.docs;

import static org.assertj.core.api.Assertions.assertThat;

import io.reactivelocks.LockClient;
import io.reactivelocks.LockState;
import io.reactivelocks.local.LocalLockBackend;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/** The samples of docs/concepts/lock-payload.md, run on the in-memory store. */
class DocsLockPayloadTest {

    static final Duration STEP = Duration.ofSeconds(10);

    LockClient locks = LocalLockBackend.client();

    @AfterEach
    void close() {
        locks.close().block(STEP);
    }

    @Test
    void payloadTravelsWithTheGrant() {
        // tag::use[]
        Mono<String> done = locks.withLock("importer", locks.options().withPayload("node-1: starting"),
                lease -> importFile()                                       // others see "node-1: starting"
                        .flatMap(rows -> lease.updatePayload("node-1: " + rows + " rows")   // owner- and token-checked
                                .then(locks.inspect("importer"))
                                .map(state -> ((LockState.Held) state).payload())));
        // end::use[]
        StepVerifier.create(done).expectNext("node-1: 1200 rows").expectComplete().verify(STEP);
        assertThat(seenWhileImporting).containsExactly("node-1: starting");
    }

    @Test
    void inspectShowsThePayload() {
        // tag::inspect[]
        Mono<String> who = locks.inspect("importer")                 // or observe(...) for every change
                .map(state -> state instanceof LockState.Held held ? held.owner() + " says " + held.payload() : "free");
        // end::inspect[]
        StepVerifier.create(who).expectNext("free").expectComplete().verify(STEP);
        var lease = locks.acquire("importer", locks.options().withPayload("busy")).block(STEP);
        StepVerifier.create(who).expectNext(lease.owner() + " says busy").expectComplete().verify(STEP);
        lease.release().block(STEP);
    }

    private final List<String> seenWhileImporting = new CopyOnWriteArrayList<>();

    private Mono<Integer> importFile() {
        return locks.inspect("importer")
                .doOnNext(state -> seenWhileImporting.add(((LockState.Held) state).payload()))
                .thenReturn(1200);
    }
}
