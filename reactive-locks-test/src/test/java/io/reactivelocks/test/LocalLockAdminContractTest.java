package io.reactivelocks.test;

import io.reactivelocks.LockStore;
import io.reactivelocks.local.LocalLocks;

/** The admin contract on the in-memory store: every session after the first shares the first one's state. */
class LocalLockAdminContractTest extends LockAdminContract {

    private LockStore first;

    @Override
    protected LockStore connect() {
        if (first == null) {
            first = LocalLocks.open();
            return first;
        }
        return LocalLocks.alongside(first);
    }
}
