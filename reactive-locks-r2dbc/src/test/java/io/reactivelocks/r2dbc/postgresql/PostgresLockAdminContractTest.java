package io.reactivelocks.r2dbc.postgresql;

import static org.assertj.core.api.Assertions.assertThat;

import io.reactivelocks.Lease;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockStore;
import io.reactivelocks.admin.HeldGrant;
import io.reactivelocks.admin.LockAdmin;
import io.reactivelocks.r2dbc.SchemaMode;
import io.reactivelocks.r2dbc.SqlLockAdminContract;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** The admin contract on a real PostgreSQL, and what the tables add: fair-line waiters, tables never created, stored names. */
class PostgresLockAdminContractTest extends SqlLockAdminContract {

    private static final PostgresLockOptions PG = PostgresLockOptions.builder().schema("admin_contract").poolMaxSize(3).build();

    @Override
    protected LockStore connect() {
        return PostgresLocks.connect(PostgresTestSupport.factory(PostgresTestSupport.shared()), PG);
    }

    @Test
    void aSchemaWhoseTablesWereNeverCreatedListsNothing() {
        String schema = "admin_fresh_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
        LockStore fresh = PostgresLocks.connect(PostgresTestSupport.factory(PostgresTestSupport.shared()),
                PG.mutate().schema(schema).schemaMode(SchemaMode.NONE).build());
        try {
            assertThat(fresh.admin().list("").collectList().block(STEP)).isEmpty();
        } finally {
            fresh.close().block(STEP);
        }
    }

    @Test
    void namesStoredEscapedAreListedAsTheyWereGiven() {
        LockAdmin admin = store().admin();
        String p = prefix("stored");
        LockClient locks = store().locks(options());
        Lease backslash = locks.acquire(p + "a\\b\u0000c").block(STEP); // stored as a\\b\0c
        Lease emoji = locks.acquire(p + "\uD83D\uDE00-2").block(STEP);
        assertThat(admin.list(p + "a\\").collectList().block(STEP)).extracting(HeldGrant::name).containsExactly(p + "a\\b\u0000c");
        assertThat(admin.list(p + "\uD83D").collectList().block(STEP)).as("a prefix ending in a high surrogate")
                .extracting(HeldGrant::name).containsExactly(p + "\uD83D\uDE00-2");
        backslash.release().block(STEP);
        emoji.release().block(STEP);
    }
}
