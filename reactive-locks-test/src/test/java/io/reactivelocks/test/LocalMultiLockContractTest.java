package io.reactivelocks.test;

import io.reactivelocks.local.LocalLockBackend;
import io.reactivelocks.local.LocalLockStore;
import io.reactivelocks.spi.LockBackend;

/** The multi-lock contract on the in-memory store: every client shares one store, like a server. */
class LocalMultiLockContractTest extends MultiLockContract {

    private final LocalLockStore store = new LocalLockStore();

    @Override
    protected LockBackend newBackend() {
        return new LocalLockBackend(store);
    }
}
