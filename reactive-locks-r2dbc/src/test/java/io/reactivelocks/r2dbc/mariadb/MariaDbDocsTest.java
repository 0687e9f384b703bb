package io.reactivelocks.r2dbc.mariadb;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.r2dbc.pool.ConnectionPool;
import io.r2dbc.pool.ConnectionPoolConfiguration;
import io.r2dbc.spi.ConnectionFactories;
import io.r2dbc.spi.ConnectionFactory;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockOptions;
import io.reactivelocks.LockStore;
import io.reactivelocks.r2dbc.SchemaMode;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/** The samples of docs/stores/mariadb.md, run against the shared real MariaDB; and the schema modes. */
class MariaDbDocsTest {

    private static final Duration STEP = Duration.ofSeconds(20);

    @Test
    void quickStart() {
        String r2dbcUrl = MariaDbTestSupport.shared().r2dbcUrl();
        MariaDbTestSupport.options("docs_quick_start"); // creates the database; the sample uses the URL's
        // tag::quick-start[]
        ConnectionFactory db = ConnectionFactories.get(r2dbcUrl);   // e.g. "r2dbc:mariadb://app:secret@localhost:3306/app"
        LockStore store = MariaDbLocks.connect(db);                // one pool + one poller; tables on first use
        LockClient locks = store.locks();                          // ... and every other concept: store.semaphores(...), ...

        Mono<String> receipt = locks.withLock("order:42", lease -> Mono.just("charged order:42 with fence " + lease.token()));
        // end::quick-start[]
        StepVerifier.create(receipt).expectNextMatches(r -> r.startsWith("charged order:42 with fence ")).expectComplete().verify(STEP);
        store.close().block(STEP);
    }

    @Test
    void ownPoolMigrationAndValidation() {
        ConnectionFactory db = MariaDbTestSupport.factory();
        MariaDbTestSupport.options("locks");
        // tag::own-pool[]
        ConnectionPool pool = new ConnectionPool(ConnectionPoolConfiguration.builder(db).maxSize(10).build());
        MariaDbLockBackend backend = MariaDbLocks.backend(pool, MariaDbLockOptions.builder()
                .database("locks").schemaMode(SchemaMode.VALIDATE).pollInterval(Duration.ofMillis(100)).build());
        Mono<Void> migrated = backend.migrate();                   // idempotent, safe from many processes at once
        LockStore store = MariaDbLocks.connect(backend);           // the session closes the backend; the pool stays yours
        LockClient locks = store.locks(LockOptions.defaults());
        // end::own-pool[]
        StepVerifier.create(migrated.then(backend.validateSchema()).then(locks.withLock("order:42", lease -> Mono.just(lease.token()))))
                .expectNextMatches(token -> token > 0)
                .expectComplete()
                .verify(STEP);
        store.close().block(STEP);
        pool.dispose();
    }

    @Test
    void validateModeNamesEveryMissingObjectAndCreatesNothing() {
        MariaDbTestSupport.options("validate_empty");
        MariaDbLockBackend backend = MariaDbLockBackend.create(MariaDbTestSupport.factory(),
                MariaDbLockOptions.builder().database("validate_empty").schemaMode(SchemaMode.VALIDATE).build());
        try {
            assertThatThrownBy(() -> backend.inspect("x").block(STEP)).isInstanceOf(MariaDbSchemaException.class)
                    .hasMessageContaining("reactive_locks").hasMessageContaining("reactive_locks_token_seq")
                    .hasMessageContaining("reactive_locks_revocations")
                    .satisfies(e -> assertThat(((MariaDbSchemaException) e).isTransient()).isFalse());
            assertThat(MariaDbTestSupport.sql("SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'validate_empty'"))
                    .as("nothing created").isEmpty();
        } finally {
            backend.close().block(STEP);
        }
    }
}
