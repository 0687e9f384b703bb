package io.reactivelocks.test;

import io.reactivelocks.local.LocalReadWriteStore;
import io.reactivelocks.spi.rwlock.ReadWriteStore;

/** The read-write lock contract on the in-memory store: one store shared by every lock, like a server. */
class LocalReadWriteLockContractTest extends ReadWriteLockContract {

    private final LocalReadWriteStore store = new LocalReadWriteStore();

    @Override
    protected ReadWriteStore newStore() {
        return store;
    }
}
