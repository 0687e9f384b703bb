package io.reactivelocks.docs;

import io.reactivelocks.Lease;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockClock;
import io.reactivelocks.LockOptions;
import io.reactivelocks.LockTimeoutException;
import io.reactivelocks.local.LocalLockBackend;
import io.reactivelocks.local.LocalLockStore;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import reactor.test.StepVerifier;
import reactor.test.scheduler.VirtualTimeScheduler;

/** The samples of docs/stores/in-memory.md. */
class DocsInMemoryTest {

    static final Duration STEP = Duration.ofSeconds(10);

    @Test
    void clientsOfOneStoreExcludeEachOther() {
        // tag::shared-store[]
        LocalLockStore store = new LocalLockStore();              // what a server would hold
        LockClient a = LocalLockBackend.client(store, LockOptions.defaults());   // one client per simulated process
        LockClient b = LocalLockBackend.client(store, LockOptions.defaults());
        // end::shared-store[]
        Lease held = a.acquire("job").block(STEP);
        StepVerifier.create(b.tryAcquire("job")).expectComplete().verify(STEP);
        held.release().block(STEP);
        StepVerifier.create(b.tryAcquire("job").flatMap(Lease::release)).expectComplete().verify(STEP);
        a.close().block(STEP);
        b.close().block(STEP);
    }

    @Test
    void virtualTime() {
        // tag::virtual-time[]
        VirtualTimeScheduler time = VirtualTimeScheduler.create();
        LocalLockStore store = new LocalLockStore(time, LockClock.of(time));   // expiry on virtual time
        LockOptions options = LockOptions.builder()
                .scheduler(time).clock(LockClock.of(time))        // renewals, deadlines, backoff, timeouts too
                .waitTimeout(Duration.ofMinutes(5))
                .build();
        LockClient a = LocalLockBackend.client(store, options);
        LockClient b = LocalLockBackend.client(store, options);
        // end::virtual-time[]
        Lease held = a.acquire("job").block(STEP);
        StepVerifier.create(b.acquire("job"))
                .expectSubscription()
                .then(() -> time.advanceTimeBy(Duration.ofMinutes(5)))   // an hour of renewals would be as quick
                .expectError(LockTimeoutException.class)
                .verify(STEP);
        held.release().block(STEP);
        a.close().block(STEP);
        b.close().block(STEP);
        time.dispose();
    }
}
