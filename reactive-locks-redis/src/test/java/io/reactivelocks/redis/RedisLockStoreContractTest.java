package io.reactivelocks.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.lettuce.core.api.StatefulRedisConnection;
import io.reactivelocks.Concept;
import io.reactivelocks.Lease;
import io.reactivelocks.LockStore;
import io.reactivelocks.election.Leadership;
import io.reactivelocks.multi.MultiLease;
import io.reactivelocks.task.TaskClaim;
import io.reactivelocks.task.TaskQueue;
import io.reactivelocks.test.LockStoreContract;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;

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
            String n = name("conns");
            List<Disposable> running = new ArrayList<>();
            List<Lease> leases = new ArrayList<>();
            leases.add(store.locks(OPTIONS).acquire(n + "-lock").block(STEP));
            leases.add(store.fairLocks(OPTIONS).acquire(n + "-fair").block(STEP));
            leases.add(store.semaphores(OPTIONS).acquire(n + "-sem", 2).block(STEP));
            leases.add(store.readWriteLocks(OPTIONS).read().acquire(n + "-rw").block(STEP));
            MultiLease multi = store.multiLocks(OPTIONS).acquire(List.of(n + "-m1", n + "-m2")).block(STEP);
            assertThat(store.windowLocks(OPTIONS).tryClaim(n + "-win", Duration.ofMinutes(1)).block(STEP)).isNotNull();
            Leadership term = store.elections(OPTIONS).campaign(n + "-elect", "me").next().block(STEP);
            assertThat(term).isNotNull();
            running.add(store.locks(OPTIONS).observe(n + "-lock").subscribe());
            running.add(store.semaphores(OPTIONS).observe(n + "-sem").subscribe());
            assertThat(store.fencedValues().write(n + "-fenced", 1, "v").block(STEP)).isTrue();
            TaskQueue q = store.taskQueue(OPTIONS);
            assertThat(q.register(n + "-q", "t", 0).block(STEP)).isTrue();
            TaskClaim claim = q.tryCapture(n + "-q", 1).blockFirst(STEP);
            assertThat(claim).isNotNull();
            // a waiter on the held lock: it listens for the release on the shared pub/sub connection
            running.add(store.locks(OPTIONS).acquire(n + "-lock").subscribe());

            // the pub/sub connection opens as the waiter subscribes: wait for it, then count exactly
            await().atMost(STEP).until(() -> clients(admin) - before >= 2);
            assertThat(clients(admin) - before)
                    .as("one command and one pub/sub connection for every concept of the session")
                    .isEqualTo(2);

            running.forEach(Disposable::dispose);
            multi.release().block(STEP);
            leases.forEach(l -> l.release().block(STEP));
            store.close().block(STEP);
            // the server drops a closed connection from CLIENT LIST once it reads the close
            await().atMost(STEP).untilAsserted(() -> assertThat(clients(admin)).as("closing the session closes both").isEqualTo(before));
        }
    }
}
