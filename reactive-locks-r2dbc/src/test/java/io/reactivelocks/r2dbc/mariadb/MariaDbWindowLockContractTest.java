package io.reactivelocks.r2dbc.mariadb;

import static org.assertj.core.api.Assertions.assertThat;

import io.reactivelocks.spi.window.WindowStore;
import io.reactivelocks.test.WindowLockContract;
import io.reactivelocks.window.WindowClaim;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The window-lock contract against a real MariaDB, plus the row decided by the server's clock. */
class MariaDbWindowLockContractTest extends WindowLockContract {

    private static final MariaDbLockOptions OPTIONS = MariaDbTestSupport.options("windows");
    private static final MariaDbLockBackend BACKEND = MariaDbLockBackend.create(MariaDbTestSupport.factory(), OPTIONS);

    /**
     * The tables first (a first operation through the SPI runs the store's first-use step), bounded generously:
     * the first statements on a fresh server may be slow on a loaded machine.
     */
    @BeforeAll
    static void migrate() {
        BACKEND.migrate().then(new MariaDbWindowStore(BACKEND).claim("warm-up", Duration.ofMillis(1))).block(java.time.Duration.ofSeconds(60));
    }

    @AfterAll
    static void closeBackend() {
        BACKEND.close().block(MariaDbTestSupport.TIMEOUT);
    }

    @Override
    protected WindowStore newStore() {
        return new MariaDbWindowStore(BACKEND);
    }

    @Test
    void theClaimIsOneRowPerNameAndPeriodDecidedByTheServersClock() {
        String name = name("row");
        Duration hour = Duration.ofHours(1);
        WindowClaim claim = newWindowLock().tryClaim(name, hour).block(STEP);
        List<Map<String, Object>> rows = MariaDbTestSupport.sql("SELECT window_no, token, period_us,"
                + " FLOOR(TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', UTC_TIMESTAMP(6)) / 3600000000) AS server_window"
                + " FROM windows.reactive_locks_windows WHERE name = ?", name);
        assertThat(rows).hasSize(1);
        assertThat(((Number) rows.get(0).get("window_no")).longValue()).isEqualTo(claim.window());
        assertThat(((Number) rows.get(0).get("token")).longValue()).isEqualTo(claim.token());
        assertThat(((Number) rows.get(0).get("period_us")).longValue()).isEqualTo(hour.toMillis() * 1000);
        assertThat(((Number) rows.get(0).get("server_window")).longValue()).isEqualTo(claim.window());
    }
}
