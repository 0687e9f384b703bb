package io.reactivelocks.r2dbc.postgresql;

import static org.assertj.core.api.Assertions.assertThat;

import io.r2dbc.spi.ConnectionFactory;
import io.reactivelocks.spi.task.TaskStore;
import io.reactivelocks.test.TaskQueueContract;
import io.reactivelocks.test.server.PostgresServer;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * The task-queue contract against a real PostgreSQL: every queue over a backend of its own (its own
 * pool and listening connection). After each test no row is left for the test's queues, and after
 * the suite the task table is empty.
 */
class PostgresTaskQueueContractTest extends TaskQueueContract {

    private static final String SCHEMA = "task_contract";

    private static PostgresServer pg;
    private static ConnectionFactory factory;
    private static PostgresLockOptions options;

    @BeforeAll
    static void startServer() {
        pg = PostgresTestSupport.shared();
        factory = PostgresTestSupport.factory(pg);
        options = PostgresLockOptions.builder().schema(SCHEMA).channel("task_contract_locks")
                .createSchemaOnFirstUse(false).poolMaxSize(4).build();
        PostgresTaskStore s = new PostgresTaskStore(PostgresLockBackend.create(factory, options), true);
        s.migrate().block(PostgresTestSupport.TIMEOUT);
        s.close().block(PostgresTestSupport.TIMEOUT);
    }

    @AfterAll
    static void noRowsLeftAfterTheSuite() {
        assertThat(PostgresTestSupport.count(factory, SCHEMA, options.taskTable())).as("rows left in the task table").isZero();
    }

    @Override
    protected TaskStore newStore() {
        return new PostgresTaskStore(PostgresLockBackend.create(factory, options), true);
    }

    @Override
    protected void assertNothingLeft(TaskStore store, Map<String, Set<String>> queues) {
        super.assertNothingLeft(store, queues);
        String[] stored = queues.keySet().stream().map(TextEscapes::encode).toArray(String[]::new);
        List<?> rows = PostgresTestSupport.sql(factory, "SELECT queue, task_id FROM "
                + SqlIdentifiers.qualified(SCHEMA, options.taskTable()) + " WHERE queue = ANY($1::text[])", (Object) stored);
        assertThat(rows).as("rows left in the task table for the test's queues").isEmpty();
    }
}
