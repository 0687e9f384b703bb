package io.reactivelocks.docs;

import static org.assertj.core.api.Assertions.assertThat;

import io.reactivelocks.blocking.BlockingLease;
import io.reactivelocks.blocking.BlockingLocks;
import io.reactivelocks.blocking.BlockingSemaphore;
import io.reactivelocks.local.LocalLockBackend;
import io.reactivelocks.local.LocalSemaphoreStore;
import io.reactivelocks.semaphore.Semaphore;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The samples of docs/blocking.md (and the README's blocking quick start), run on the in-memory stores. */
class DocsBlockingTest {

    static final Duration STEP = Duration.ofSeconds(10);

    private final BlockingLocks locks = BlockingLocks.of(LocalLockBackend.client());

    private final AtomicInteger counter = new AtomicInteger();

    @AfterEach
    void close() {
        locks.client().close().block(STEP);
    }

    @Test
    void quickStart() throws Exception {
        // tag::quick-start[]
        BlockingLocks orders = BlockingLocks.of(LocalLockBackend.client());   // any LockClient: RedisLocks.create(redis), ...
        String receipt = orders.withLock("order:42", lease -> charge("order:42", lease.token()));   // released when the body ends
        // end::quick-start[]
        assertThat(receipt).startsWith("charged order:42 with fence ");
        orders.client().close().block(STEP);
    }

    @Test
    void withLockAndTryWithResources() throws Exception {
        String receipt = locks.withLock("order:42", lease -> charge("order:42", lease.token()));
        // tag::with-lock[]
        try (BlockingLease lease = locks.acquire("order:42")) {    // waits; an interrupt cancels the wait
            charge("order:42", lease.token());
        }                                                          // released here

        Optional<BlockingLease> maybe = locks.tryAcquire("report");   // empty when someone else holds it
        // end::with-lock[]
        assertThat(receipt).startsWith("charged order:42 with fence ");
        assertThat(maybe).isPresent();
        maybe.get().close();
    }

    @Test
    void onVirtualThreads() throws Exception {
        // tag::virtual-threads[]
        try (ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor()) {
            for (int i = 0; i < 500; i++) {
                threads.submit(() -> locks.withLock("counter", lease -> counter.incrementAndGet()));   // parked, not pinned
            }
        }                                                          // close() waits for every task
        // end::virtual-threads[]
        assertThat(counter.get()).isEqualTo(500);
    }

    @Test
    void semaphore() throws Exception {
        // tag::semaphore[]
        BlockingSemaphore exports = BlockingSemaphore.of(Semaphore.create(new LocalSemaphoreStore()));   // RedisLocks.semaphore(redis), ...
        String exported = exports.withPermit("exports", 4, permit -> runExport(permit.token()));   // waits while 4 are out
        // end::semaphore[]
        assertThat(exported).startsWith("export with fence ");
        exports.semaphore().close().block(STEP);
    }

    static String charge(String order, long token) {
        return "charged " + order + " with fence " + token;
    }

    static String runExport(long token) {
        return "export with fence " + token;
    }
}
