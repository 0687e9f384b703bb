package io.reactivelocks.test;

import io.reactivelocks.local.LocalSemaphoreStore;
import io.reactivelocks.spi.semaphore.SemaphoreStore;

/** The semaphore contract on the in-memory store: one store shared by every semaphore, like a server. */
class LocalSemaphoreContractTest extends SemaphoreContract {

    private final LocalSemaphoreStore store = new LocalSemaphoreStore();

    @Override
    protected SemaphoreStore newStore() {
        return store;
    }
}
