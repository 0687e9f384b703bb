package io.reactivelocks.test;

import io.reactivelocks.local.LocalLockBackend;
import io.reactivelocks.local.LocalLockStore;
import io.reactivelocks.spi.LockBackend;

class LocalLeaderElectionContractTest extends LeaderElectionContract {

    private final LocalLockStore store = new LocalLockStore();

    @Override
    protected LockBackend newBackend() {
        return new LocalLockBackend(store);
    }
}
