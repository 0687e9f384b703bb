package io.reactivelocks.test;

import io.reactivelocks.local.LocalWindowStore;
import io.reactivelocks.spi.window.WindowStore;

/** The window-lock contract on the in-memory store: one store shared by every window lock, like a server. */
class LocalWindowLockContractTest extends WindowLockContract {

    private final LocalWindowStore store = new LocalWindowStore();

    @Override
    protected WindowStore newStore() {
        return store;
    }
}
