package io.reactivelocks.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.reactivelocks.Lease;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockOptions;
import io.reactivelocks.LockStore;
import io.reactivelocks.admin.HeldGrant;
import io.reactivelocks.admin.LockAdmin;
import io.reactivelocks.test.LockAdminContract;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

/** The admin contract on a real redis-server, and what the key layout adds: fair-queue waiters, foreign keys. */
class RedisLockAdminContractTest extends LockAdminContract {

    private static RedisTestSupport redis;

    @BeforeAll
    static void startServer() {
        redis = RedisTestSupport.start();
    }

    @AfterAll
    static void stopServer() {
        if (redis != null) {
            redis.close();
        }
    }

    @Override
    protected LockStore connect() {
        return RedisLocks.connect(redis.client, redis.options());
    }

    @Test
    void aFairLockIsListedWithTheLiveWaitersOfItsQueue() {
        LockOptions longLease = options().mutate().leaseTime(Duration.ofSeconds(60)).build();
        LockClient fair = store().fairLocks(longLease);
        LockClient otherFair = store().fairLocks(longLease);
        LockAdmin admin = store().admin();
        String name = prefix("fair") + "lock";
        Lease held = fair.acquire(name).block(STEP);
        Mono<Lease> waiting = otherFair.acquire(name).cache();
        waiting.subscribe(l -> { }, e -> { });

        await().atMost(STEP).untilAsserted(() -> assertThat(admin.list(name).collectList().block(STEP)).singleElement()
                .satisfies(g -> {
                    assertThat(g.token()).isEqualTo(held.token());
                    assertThat(g.waiters()).as("one waiter in the fair queue").isEqualTo(1);
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
    void aPlainLockKeepsNoQueueAndKeysOfOtherLayoutsAreSkipped() {
        LockAdmin admin = store().admin();
        String p = prefix("foreign");
        Lease held = store().locks(options()).acquire(p + "lock").block(STEP);
        try (var c = redis.connect()) {
            // keys an operator or another tool put under the prefix: not a name of this layout
            c.sync().set(redis.prefix + "{" + RedisKeys.tag(p) + "%ZZ}:lock", "x");
            c.sync().set(redis.prefix + "{" + RedisKeys.tag(p) + "other}:unknown", "x");
            c.sync().set(redis.prefix + "{" + RedisKeys.tag(p) + "counter}:fence", "1");
        }
        List<HeldGrant> listed = admin.list(p).collectList().block(STEP);
        assertThat(listed).singleElement().satisfies(g -> {
            assertThat(g.name()).isEqualTo(p + "lock");
            assertThat(g.waiters()).as("a mutex keeps no queue").isEqualTo(-1);
        });
        held.release().block(STEP);
    }

    @Test
    void aPrefixEndingInsideAnEscapedCharacterStillMatches() {
        LockAdmin admin = store().admin();
        String p = prefix("escaped");
        LockClient locks = store().locks(options());
        Lease accent = locks.acquire(p + "é-1").block(STEP); // é is %C3%A9 in the tag
        Lease emoji = locks.acquire(p + "\uD83D\uDE00-2").block(STEP);
        assertThat(admin.list(p + "é").collectList().block(STEP)).extracting(HeldGrant::name).containsExactly(p + "é-1");
        assertThat(admin.list(p + "\uD83D").collectList().block(STEP)).as("a prefix ending in a high surrogate")
                .extracting(HeldGrant::name).containsExactly(p + "\uD83D\uDE00-2");
        accent.release().block(STEP);
        emoji.release().block(STEP);
    }

    @Test
    void matchEscapesTheGlobCharactersOfTheKeyPrefix() {
        assertThat(RedisLockBackend.glob("app*[1]?\\:")).isEqualTo("app\\*\\[1\\]\\?\\\\:");
    }
}
