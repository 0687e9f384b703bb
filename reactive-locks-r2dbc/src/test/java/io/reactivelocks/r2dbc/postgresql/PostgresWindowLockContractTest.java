package io.reactivelocks.r2dbc.postgresql;

import static org.assertj.core.api.Assertions.assertThat;

import io.reactivelocks.LockStore;
import io.reactivelocks.spi.window.WindowStore;
import io.reactivelocks.test.WindowLockContract;
import io.reactivelocks.window.WindowClaim;
import io.reactivelocks.window.WindowLock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The window-lock contract against a real PostgreSQL, plus the PostgreSQL specifics: the row and the server's clock. */
class PostgresWindowLockContractTest extends WindowLockContract {

    private static final PostgresLockOptions OPTIONS = PostgresLockOptions.builder().schema("windows").build();

    @Override
    protected WindowStore newStore() {
        return new PostgresWindowStore(PostgresLockBackend.create(PostgresTestSupport.factory(PostgresTestSupport.shared()), OPTIONS), true);
    }

    @Test
    void theClaimIsOneRowPerNameAndPeriodDecidedByTheServersClock() {
        LockStore session = PostgresLocks.connect(PostgresTestSupport.factory(PostgresTestSupport.shared()), OPTIONS);
        WindowLock w = session.windowLocks(options());
        try {
            String name = name("row");
            Duration hour = Duration.ofHours(1);
            WindowClaim claim = w.tryClaim(name, hour).block(STEP);
            var factory = PostgresTestSupport.factory(PostgresTestSupport.shared());
            List<Map<String, Object>> rows = PostgresTestSupport.sql(factory,
                    "SELECT window_no, token, period_us, floor(extract(epoch FROM now()) * 1000 / 3600000)::bigint AS server_window"
                            + " FROM windows.reactive_lock_windows WHERE name = $1", name);
            assertThat(rows).hasSize(1);
            assertThat(rows.get(0)).containsEntry("window_no", claim.window()).containsEntry("token", claim.token())
                    .containsEntry("period_us", hour.toMillis() * 1000).containsEntry("server_window", claim.window());
        } finally {
            session.close().block(STEP);
        }
    }
}
