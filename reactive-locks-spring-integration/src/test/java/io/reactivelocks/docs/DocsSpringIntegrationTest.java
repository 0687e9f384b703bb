package io.reactivelocks.docs;

import static org.assertj.core.api.Assertions.assertThat;

import io.reactivelocks.LockClient;
import io.reactivelocks.spring.integration.ReactiveLocksLock;
import io.reactivelocks.spring.integration.ReactiveLocksLockRegistry;
import io.reactivelocks.local.LocalLockBackend;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The Spring Integration sample of docs/spring.md, on the in-memory store. */
class DocsSpringIntegrationTest {

    static final Duration STEP = Duration.ofSeconds(10);

    private final LockClient locks = LocalLockBackend.client();
    private final List<Long> fences = new ArrayList<>();

    @AfterEach
    void close() {
        locks.close().block(STEP);
    }

    @Test
    void registryLocks() throws InterruptedException {
        // tag::registry[]
        ReactiveLocksLockRegistry registry = new ReactiveLocksLockRegistry(locks);   // any LockClient, any store
        ReactiveLocksLock lock = registry.obtain("order-42");
        if (lock.tryLock(2, TimeUnit.SECONDS)) {
            try {
                updateFenced(42, lock.token());                    // the store refuses a smaller token
            } finally {
                lock.unlock();
            }
        }
        // end::registry[]
        assertThat(fences).singleElement().isNotNull();
        assertThat(lock.isHeld()).isFalse();
    }

    private void updateFenced(int order, long token) {
        fences.add(token);
    }
}
