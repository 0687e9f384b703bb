package io.reactivelocks.testcontainers;

import static org.assertj.core.api.Assertions.assertThat;

import io.r2dbc.spi.Connection;
import io.reactivelocks.Lease;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockOptions;
import io.reactivelocks.r2dbc.postgresql.PostgresLockBackend;
import io.reactivelocks.r2dbc.postgresql.PostgresLockOptions;
import io.reactivelocks.r2dbc.postgresql.PostgresLocks;
import io.reactivelocks.spi.LockBackend;
import io.reactivelocks.test.LockBackendContract;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/** The backend contract suite against PostgreSQL in a container started by {@link PostgresLockContainer}. */
class PostgresContainerContractTest extends LockBackendContract {

    private static final Duration TIMEOUT = Duration.ofSeconds(10);
    private static final PostgresLockOptions OPTIONS = PostgresLockOptions.builder().schema("contract")
            .channel("contract_locks").createSchemaOnFirstUse(false).poolMaxSize(4).build();
    private static PostgresLockContainer pg;

    @BeforeAll
    static void startContainer() {
        LocalImages.require();
        pg = new PostgresLockContainer(LocalImages.POSTGRES);
        pg.start();
        PostgresLockBackend b = PostgresLocks.backend(pg.connectionFactory(), OPTIONS);
        b.migrate().block(TIMEOUT);
        b.close().block(TIMEOUT);
        // one grant and release before the timed tests: the first one of a cold JVM (driver classes,
        // codecs, the pool's first authenticated connection) can take longer than a 1.2 s lease
        LockClient warm = pg.lockClient(OPTIONS, LockOptions.defaults());
        warm.acquire("warm-up").flatMap(Lease::release).then(warm.close()).block(TIMEOUT);
    }

    @AfterAll
    static void noRowsLeftThenStop() {
        if (pg == null) {
            return;
        }
        try {
            Long rows = Mono.usingWhen(Mono.from(pg.connectionFactory().create()),
                    (Connection c) -> Flux.from(c.createStatement("SELECT count(*) FROM contract." + OPTIONS.table() + " WHERE owner <> ''")
                            .execute()).flatMap(r -> r.map((row, meta) -> row.get(0, Long.class))).next(),
                    Connection::close).block(TIMEOUT);
            // a release frees its row and leaves it for the name's next grant: no row an owner left
            assertThat(rows).as("rows an owner left in the lock table").isZero();
        } finally {
            pg.stop();
        }
    }

    @Override
    protected LockBackend newBackend() {
        return PostgresLocks.backend(pg.connectionFactory(), OPTIONS);
    }
}
