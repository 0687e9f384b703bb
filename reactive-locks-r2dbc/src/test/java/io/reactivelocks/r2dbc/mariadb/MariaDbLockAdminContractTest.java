package io.reactivelocks.r2dbc.mariadb;

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

/** The admin contract on a real MariaDB, and what the tables add: fair-line waiters, tables never created, names stored escaped. */
class MariaDbLockAdminContractTest extends SqlLockAdminContract {

    private static final MariaDbLockOptions OPTIONS = MariaDbTestSupport.options("admin_contract");

    @Override
    protected LockStore connect() {
        return MariaDbLocks.connect(MariaDbTestSupport.factory(), OPTIONS);
    }

    @Test
    void aDatabaseWhoseTablesWereNeverCreatedListsNothing() {
        String database = "admin_fresh_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
        MariaDbTestSupport.exec("CREATE DATABASE `" + database + "`");
        LockStore fresh = MariaDbLocks.connect(MariaDbTestSupport.factory(),
                OPTIONS.mutate().database(database).schemaMode(SchemaMode.NONE).build());
        try {
            assertThat(fresh.admin().list("").collectList().block(STEP)).isEmpty();
        } finally {
            fresh.close().block(STEP);
            MariaDbTestSupport.exec("DROP DATABASE `" + database + "`");
        }
    }

    @Test
    void namesStoredEscapedAreListedAsTheyWereGiven() {
        LockAdmin admin = store().admin();
        String p = prefix("stored");
        LockClient locks = store().locks(options());
        Lease backslash = locks.acquire(p + "a\\b\u0000c").block(STEP); // stored as a\\b<NUL>c
        Lease emoji = locks.acquire(p + "\uD83D\uDE00-2").block(STEP);
        Lease lone = locks.acquire(p + "\uD800-lone").block(STEP); // stored as \\uD800-lone
        assertThat(admin.list(p + "a\\").collectList().block(STEP)).extracting(HeldGrant::name).containsExactly(p + "a\\b\u0000c");
        assertThat(admin.list(p + "\uD83D").collectList().block(STEP)).as("a prefix ending in a high surrogate")
                .extracting(HeldGrant::name).containsExactly(p + "\uD83D\uDE00-2");
        assertThat(admin.list(p + "\uD800").collectList().block(STEP)).extracting(HeldGrant::name).containsExactly(p + "\uD800-lone");
        backslash.release().block(STEP);
        emoji.release().block(STEP);
        lone.release().block(STEP);
    }
}
