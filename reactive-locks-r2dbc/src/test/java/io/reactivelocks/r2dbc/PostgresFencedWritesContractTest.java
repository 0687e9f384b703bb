package io.reactivelocks.r2dbc;

import static org.assertj.core.api.Assertions.assertThat;

import io.reactivelocks.fencing.FencedValues;
import io.reactivelocks.test.FencedWritesContract;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The fenced-writes contract against a real PostgreSQL, plus the PostgreSQL specifics: the table and its rows. */
class PostgresFencedWritesContractTest extends FencedWritesContract {

    private static final PostgresLockOptions OPTIONS = PostgresLockOptions.builder().schema("fenced_values").build();

    @Override
    protected FencedValues newValues() {
        return PostgresLocks.fencedValues(PostgresTestSupport.factory(PostgresTestSupport.shared()), OPTIONS);
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
