package io.reactivelocks.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.lettuce.core.api.StatefulRedisConnection;
import io.reactivelocks.Concept;
import io.reactivelocks.LockStore;
import io.reactivelocks.test.LockStoreContract;
import java.util.EnumSet;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The store-session contract on a real redis-server, and the session's one connection set counted by the server. */
class RedisLockStoreContractTest extends LockStoreContract {

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

    @Override
    protected Set<Concept> expectedConcepts() {
        return EnumSet.allOf(Concept.class);
    }

    private static long clients(StatefulRedisConnection<String, String> admin) {
        return admin.sync().clientList().lines().filter(l -> !l.isBlank()).count();
    }

    @Test
    void everyConceptInUseAtOnceSharesOneCommandAndOnePubSubConnection() {
        try (StatefulRedisConnection<String, String> admin = redis.connect()) {
            long before = clients(admin);
            LockStore store = store();
            InUse inUse = everyConceptInUse(store, name("conns"));

            // the pub/sub connection opens as the waiter subscribes: wait for it, then count exactly
            await().atMost(STEP).until(() -> clients(admin) - before >= 2);
            assertThat(clients(admin) - before)
                    .as("one command and one pub/sub connection for every concept of the session")
                    .isEqualTo(2);

            inUse.release();
            store.close().block(STEP);
            // the server drops a closed connection from CLIENT LIST once it reads the close
            await().atMost(STEP).untilAsserted(() -> assertThat(clients(admin)).as("closing the session closes both").isEqualTo(before));
        }
    }
}
