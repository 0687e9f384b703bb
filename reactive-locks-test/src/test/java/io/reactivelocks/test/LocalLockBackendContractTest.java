package io.reactivelocks.test;

import io.reactivelocks.local.LocalLockBackend;
import io.reactivelocks.local.LocalLockStore;
import io.reactivelocks.spi.LockBackend;

/** The in-memory backend passes the whole contract: every client shares one store. */
class LocalLockBackendContractTest extends LockBackendContract {

    private final LocalLockStore store = new LocalLockStore();

    @Override
    protected LockBackend newBackend() {
        return new LocalLockBackend(store);
    }
}
