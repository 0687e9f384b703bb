package io.reactivelocks.r2dbc.postgresql;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.reactivelocks.Lease;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockOptions;
import io.reactivelocks.LockStore;
import io.reactivelocks.admin.HeldGrant;
import io.reactivelocks.admin.LockAdmin;
import io.reactivelocks.r2dbc.SchemaMode;
import io.reactivelocks.test.LockAdminContract;
import java.time.Duration;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

/** The admin contract on a real PostgreSQL, and what the tables add: fair-line waiters, tables never created, stored names. */
class PostgresLockAdminContractTest extends LockAdminContract {

    private static final PostgresLockOptions PG = PostgresLockOptions.builder().schema("admin_contract").poolMaxSize(3).build();

    @Override
    protected LockStore connect() {
        return PostgresLocks.connect(PostgresTestSupport.factory(PostgresTestSupport.shared()), PG);
    }

    @Test
    void aFairLockIsListedWithTheLiveWaitersOfItsLine() {
        LockOptions longLease = options().mutate().leaseTime(Duration.ofSeconds(60)).build();
        LockClient fair = store().fairLocks(options()); // a short lease: its loss after the eviction shows within a second
        LockClient otherFair = store().fairLocks(longLease);
        LockAdmin admin = store().admin();
        String name = prefix("fair") + "lock";
        Lease held = fair.acquire(name).block(STEP);
        Mono<Lease> waiting = otherFair.acquire(name).cache();
        waiting.subscribe(l -> { }, e -> { });

        await().atMost(STEP).untilAsserted(() -> assertThat(admin.list(name).collectList().block(STEP)).singleElement()
                .satisfies(g -> {
                    assertThat(g.token()).isEqualTo(held.token());
                    assertThat(g.waiters()).as("one waiter in the fair line").isEqualTo(1);
                }));

        assertThat(admin.forceRelease(name).block(STEP)).extracting(HeldGrant::owner).containsExactly(held.owner());
        Lease next = waiting.block(STEP);
        assertThat(next.token()).isGreaterThan(held.token());
        assertThat(admin.list(name).collectList().block(STEP)).singleElement()
                .satisfies(g -> assertThat(g.waiters()).as("nobody waits any more").isEqualTo(-1));
        next.release().block(STEP);
        held.lost().block(STEP);
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
