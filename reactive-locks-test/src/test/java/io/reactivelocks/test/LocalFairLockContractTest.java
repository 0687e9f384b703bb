package io.reactivelocks.test;

import static org.assertj.core.api.Assertions.assertThat;

import io.reactivelocks.LockClient;
import io.reactivelocks.LockClock;
import io.reactivelocks.local.LocalFairLockBackend;
import io.reactivelocks.local.LocalLockStore;
import io.reactivelocks.spi.Attempt;
import io.reactivelocks.spi.GrantRequest;

/** The fair lock contract on the in-memory store: every client shares one store, like a server. */
class LocalFairLockContractTest extends FairLockContract {

    private final LocalLockStore store = new LocalLockStore();

    @Override
    protected LockClient newClient() {
        return LocalFairLockBackend.client(store, options());
    }

    @Override
    protected int waiting(String name) {
        return store.waiting(name);
    }

    /** One grant request that queues the owner, whose turn is never subscribed: the entry is never refreshed. */
    @Override
    protected void enqueueAbandonedWaiter(String name) {
        Attempt a = new LocalFairLockBackend(store).tryGrant(new GrantRequest(name, GrantRequest.newOwner(),
                options().leaseTime(), true, LockClock.system())).block(STEP);
        assertThat(a).isInstanceOf(Attempt.Queued.class);
    }

    @Override
    protected void assertNothingLeft(String name) {
        assertThat(store.heldCount()).as("held locks").isZero();
        assertThat(store.waiting(name)).as("waiters of '%s'", name).isZero();
    }
}
