package io.reactivelocks.test;

import io.reactivelocks.Concept;
import io.reactivelocks.LockStore;
import io.reactivelocks.local.LocalLocks;
import java.util.EnumSet;
import java.util.Set;

class LocalLockStoreContractTest extends LockStoreContract {

    @Override
    protected LockStore connect() {
        return LocalLocks.open();
    }

    @Override
    protected LockStore connectAgain(LockStore first) {
        return LocalLocks.alongside(first);
    }

    @Override
    protected Set<Concept> expectedConcepts() {
        return EnumSet.allOf(Concept.class);
    }
}
