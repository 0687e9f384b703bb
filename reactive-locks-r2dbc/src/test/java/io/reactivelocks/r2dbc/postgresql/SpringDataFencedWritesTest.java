package io.reactivelocks.r2dbc.postgresql;

import static io.reactivelocks.r2dbc.postgresql.PostgresTestSupport.TIMEOUT;
import static org.assertj.core.api.Assertions.assertThat;

import io.r2dbc.spi.ConnectionFactory;
import io.reactivelocks.Lease;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockStore;
import io.reactivelocks.fencing.StaleTokenException;
import io.reactivelocks.r2dbc.FencedWrites;
import io.reactivelocks.r2dbc.SpringFencedWrites;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.data.annotation.Id;
import org.springframework.data.domain.Persistable;
import org.springframework.data.r2dbc.core.R2dbcEntityTemplate;
import org.springframework.data.r2dbc.repository.support.R2dbcRepositoryFactory;
import org.springframework.data.relational.core.mapping.Table;
import org.springframework.data.repository.reactive.ReactiveCrudRepository;
import org.springframework.r2dbc.connection.R2dbcTransactionManager;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.transaction.reactive.TransactionalOperator;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/**
 * A fenced write beside a Spring Data R2DBC repository's writes, in one reactive transaction: the
 * repository saves an entry and the fenced write updates the account under a lease's token; a stale
 * token fails the fenced write with {@link StaleTokenException}, which rolls the repository's save
 * back with it, and a failure after a fenced write undoes the write — the pattern a Spring service
 * uses, on a real PostgreSQL server.
 */
class SpringDataFencedWritesTest {

    private static ConnectionFactory factory;
    private static LockStore session;

    /** A journal entry the service saves through its repository; new on every save. */
    @Table(name = "journal", schema = "fenced_data")
    record Entry(@Id String id, String account, long amount) implements Persistable<String> {
        @Override
        public String getId() {
            return id;
        }

        @Override
        public boolean isNew() {
            return true;
        }
    }

    /** The service's repository. */
    interface Journal extends ReactiveCrudRepository<Entry, String> {
    }

    @BeforeAll
    static void createTables() {
        factory = PostgresTestSupport.factory(PostgresTestSupport.shared());
        PostgresTestSupport.exec(factory, "CREATE SCHEMA IF NOT EXISTS fenced_data;"
                + " DROP TABLE IF EXISTS fenced_data.accounts; DROP TABLE IF EXISTS fenced_data.journal;"
                + " CREATE TABLE fenced_data.accounts (id text PRIMARY KEY, balance bigint, fence bigint);"
                + " CREATE TABLE fenced_data.journal (id text PRIMARY KEY, account text, amount bigint);"
                + " INSERT INTO fenced_data.accounts VALUES ('acc-1', 0, NULL)");
        session = PostgresLocks.connect(PostgresTestSupport.factory(PostgresTestSupport.shared()),
                PostgresLockOptions.builder().schema("fenced_data").build());
    }

    @AfterAll
    static void close() {
        session.close().block(TIMEOUT);
    }

    @Test
    void aStaleTokensWriteRollsBackTheRepositorysSaveInTheSameTransaction() {
        Journal journal = new R2dbcRepositoryFactory(new R2dbcEntityTemplate(factory)).getRepository(Journal.class);
        FencedWrites accounts = SpringFencedWrites.of(DatabaseClient.create(factory), "accounts", "id").in("fenced_data");
        TransactionalOperator tx = TransactionalOperator.create(new R2dbcTransactionManager(factory));
        LockClient locks = session.locks();

        // the current holder books 10 under its token
        Lease first = locks.acquire("acc-1").block(TIMEOUT);
        try {
            StepVerifier.create(journal.save(new Entry("e-1", "acc-1", 10))
                            .then(accounts.write("acc-1", "balance", 10L, first.token()))
                            .as(tx::transactional))
                    .expectComplete().verify(TIMEOUT);
        } finally {
            first.release().block(TIMEOUT);
        }
        // the next holder writes; then the first holder's late write (its token lower) fails and takes its save along
        Lease second = locks.acquire("acc-1").block(TIMEOUT);
        try {
            assertThat(second.token()).isGreaterThan(first.token());
            StepVerifier.create(journal.save(new Entry("e-2", "acc-1", 20))
                            .then(accounts.write("acc-1", "balance", 30L, second.token()))
                            .as(tx::transactional))
                    .expectComplete().verify(TIMEOUT);
            Mono<Void> late = journal.save(new Entry("e-late", "acc-1", 5))
                    .then(accounts.write("acc-1", "balance", 15L, first.token()));
            StepVerifier.create(late.as(tx::transactional))
                    .expectErrorSatisfies(e -> assertThat(e).isInstanceOf(StaleTokenException.class))
                    .verify(TIMEOUT);
            // and the fenced write is part of the transaction: a later failure in it undoes the write too
            Mono<Void> failsAfter = accounts.write("acc-1", "balance", 99L, second.token())
                    .then(journal.save(new Entry("e-1", "acc-1", 0)).then()); // a duplicate key: the save fails
            StepVerifier.create(failsAfter.as(tx::transactional)).expectError().verify(TIMEOUT);
        } finally {
            second.release().block(TIMEOUT);
        }

        assertThat(journal.findAll().map(Entry::id).collectList().block(TIMEOUT))
                .as("the refused write rolled the repository's save back").containsExactlyInAnyOrder("e-1", "e-2");
        List<Map<String, Object>> rows = PostgresTestSupport.sql(factory,
                "SELECT balance, fence FROM fenced_data.accounts WHERE id = $1", "acc-1");
        assertThat(rows.get(0)).containsEntry("balance", 30L).containsEntry("fence", second.token());
    }
}
