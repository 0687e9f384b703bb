package io.reactivelocks.docs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.reactivelocks.Lease;
import io.reactivelocks.LockClient;
import io.reactivelocks.local.LocalFairLockBackend;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/** The samples of docs/concepts/fair-lock.md, run on the in-memory fair lock. */
class DocsFairLockTest {

    static final Duration STEP = Duration.ofSeconds(10);

    // tag::create[]
    LockClient jobs = LocalFairLockBackend.client();   // store.fairLocks(options) on a session of Redis, PostgreSQL;
                                                       // etcd and ZooKeeper: store.locks(options) queue natively
    // end::create[]

    @AfterEach
    void close() {
        jobs.close().block(STEP);
    }

    @Test
    void waitersTakeTheirTurn() {
        Lease first = jobs.acquire("ledger").block(STEP);
        // tag::use[]
        Mono<String> posted = jobs.withLock("ledger", lease -> post("entry-7", lease.token()));   // waits its turn in line
        Mono<Lease> now = jobs.tryAcquire("ledger");        // empty while held or while anyone waits
        // end::use[]
        StepVerifier.create(posted)
                .then(() -> {
                    await().atMost(STEP).until(() -> jobs.metrics().pendingAcquireCount() == 1);
                    StepVerifier.create(now).expectComplete().verify(STEP);
                    first.release().block(STEP);
                })
                .expectNextMatches(r -> r.startsWith("posted entry-7 with fence "))
                .expectComplete()
                .verify(STEP);
        Lease after = now.block(STEP);
        assertThat(after.token()).isGreaterThan(first.token() + 1);
        after.release().block(STEP);
    }

    static Mono<String> post(String entry, long token) {
        return Mono.fromSupplier(() -> "posted " + entry + " with fence " + token);
    }
}
