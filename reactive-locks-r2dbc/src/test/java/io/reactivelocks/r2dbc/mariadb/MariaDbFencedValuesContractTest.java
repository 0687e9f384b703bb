package io.reactivelocks.r2dbc.mariadb;

import io.reactivelocks.LockStore;
import io.reactivelocks.fencing.FencedValues;
import io.reactivelocks.test.FencedWritesContract;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;

/** The fenced-values contract against a real MariaDB, each resource on a session of its own. */
class MariaDbFencedValuesContractTest extends FencedWritesContract {

    private static final MariaDbLockOptions OPTIONS = MariaDbTestSupport.options("fenced_values");

    private final List<LockStore> sessions = new ArrayList<>();

    @Override
    protected FencedValues newValues() {
        LockStore session = MariaDbLocks.connect(MariaDbTestSupport.factory(), OPTIONS);
        sessions.add(session);
        return session.fencedValues();
    }

    @AfterEach
    void closeSessions() {
        sessions.forEach(s -> s.close().block(STEP));
        sessions.clear();
    }
}
