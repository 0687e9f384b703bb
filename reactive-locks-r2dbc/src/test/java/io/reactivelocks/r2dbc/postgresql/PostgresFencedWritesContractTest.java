package io.reactivelocks.r2dbc.postgresql;

import static org.assertj.core.api.Assertions.assertThat;

import io.reactivelocks.LockStore;
import io.reactivelocks.fencing.FencedValues;
import io.reactivelocks.test.FencedWritesContract;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The fenced-writes contract against a real PostgreSQL, plus the PostgreSQL specifics: the table and its rows. */
class PostgresFencedWritesContractTest extends FencedWritesContract {

    private static final PostgresLockOptions OPTIONS = PostgresLockOptions.builder().schema("fenced_values").build();

    private final List<LockStore> sessions = new ArrayList<>();

    /** Each resource on a session of its own (its own pool), closed after the test. */
    @Override
    protected FencedValues newValues() {
        LockStore session = PostgresLocks.connect(PostgresTestSupport.factory(PostgresTestSupport.shared()), OPTIONS);
        sessions.add(session);
        return session.fencedValues();
    }

    @AfterEach
    void closeSessions() {
        sessions.forEach(s -> s.close().block(STEP));
        sessions.clear();
    }

    @Test
    void aKeyIsOneRowWithItsFenceAndADeleteKeepsTheFence() {
        FencedValues v = values();
        String k = key("row");
        assertThat(v.write(k, 7, "x").block(STEP)).isTrue();
        assertThat(v.delete(k, 8).block(STEP)).isTrue();
        List<Map<String, Object>> rows = PostgresTestSupport.sql(PostgresTestSupport.factory(PostgresTestSupport.shared()),
                "SELECT value IS NULL AS gone, fence FROM fenced_values.reactive_locks_fenced_values WHERE key = $1", k);
        assertThat(rows).hasSize(1);
        assertThat(rows.get(0)).containsEntry("gone", true).containsEntry("fence", 8L);
    }
}
