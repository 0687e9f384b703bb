package io.reactivelocks.r2dbc.mariadb;

import io.reactivelocks.Concept;
import io.reactivelocks.LockStore;
import io.reactivelocks.test.LockStoreContract;
import java.util.Set;

/** The store-session contract on a real MariaDB. */
class MariaDbLockStoreContractTest extends LockStoreContract {

    private static final MariaDbLockOptions OPTIONS = MariaDbTestSupport.options("store_session");

    @Override
    protected LockStore connect() {
        return MariaDbLocks.connect(MariaDbTestSupport.factory(), OPTIONS);
    }

    @Override
    protected Set<Concept> expectedConcepts() {
        return MariaDbStoreSession.OFFERED;
    }
}
