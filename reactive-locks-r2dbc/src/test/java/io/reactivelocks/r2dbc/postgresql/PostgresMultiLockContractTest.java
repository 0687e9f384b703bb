package io.reactivelocks.r2dbc.postgresql;

import static org.assertj.core.api.Assertions.assertThat;

import io.r2dbc.spi.ConnectionFactory;
import io.reactivelocks.spi.LockBackend;
import io.reactivelocks.test.MultiLockContract;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.BeforeAll;

/** The multi-lock contract against a real PostgreSQL; after each test no row is left for the test's names. */
class PostgresMultiLockContractTest extends MultiLockContract {

    private static final String SCHEMA = "multi";

    private static ConnectionFactory factory;
    private static PostgresLockOptions options;

    @BeforeAll
    static void migrate() {
        factory = PostgresTestSupport.factory(PostgresTestSupport.shared());
        options = PostgresLockOptions.builder().schema(SCHEMA).channel("multi_locks")
                .createSchemaOnFirstUse(false).poolMaxSize(4).build();
        PostgresLockBackend b = PostgresLockBackend.create(factory, options);
        b.migrate().block(PostgresTestSupport.TIMEOUT);
        b.close().block(PostgresTestSupport.TIMEOUT);
    }

    @Override
    protected LockBackend newBackend() {
        return PostgresLockBackend.create(factory, options);
    }

    @Override
    protected void assertNothingLeft(LockBackend backend, Set<String> names) {
        super.assertNothingLeft(backend, names);
        String[] stored = names.stream().map(TextEscapes::encode).toArray(String[]::new);
        List<?> rows = PostgresTestSupport.sql(factory, "SELECT name FROM "
                + SqlIdentifiers.qualified(SCHEMA, options.table()) + " WHERE name = ANY($1::text[]) AND owner <> ''", (Object) stored);
        assertThat(rows).as("rows an owner left in the lock table for the test's names (a released row stays, freed)").isEmpty();
    }
}
