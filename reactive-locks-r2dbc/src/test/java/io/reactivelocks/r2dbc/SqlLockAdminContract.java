package io.reactivelocks.r2dbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.reactivelocks.Lease;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockOptions;
import io.reactivelocks.admin.HeldGrant;
import io.reactivelocks.admin.LockAdmin;
import io.reactivelocks.test.LockAdminContract;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

/** The admin contract and what every SQL dialect's tables add to it: a fair lock's line of waiters. */
public abstract class SqlLockAdminContract extends LockAdminContract {

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
}
