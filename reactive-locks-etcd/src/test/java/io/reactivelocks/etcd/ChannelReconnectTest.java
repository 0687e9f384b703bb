package io.reactivelocks.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.reactivelocks.LockOptions;
import io.reactivelocks.LockStore;
import io.reactivelocks.rwlock.ReadWriteLockOptions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A store session follows its client's gRPC channel to reconnect soon after an outage, for the
 * semaphore, read-write lock and window lock it hands out as for the mutex backend: one follower per
 * client, however many sessions and stores share it. A follower arms one timer of the reconnect
 * interval when the channel fails; the sessions' scheduler (a {@link HoldingScheduler}) counts those
 * timers and never runs them. (Reconnecting itself is exercised against a real outage in {@link EtcdOutageTest}.)
 */
class ChannelReconnectTest {

    /** A reconnect interval no other timer of a session uses. */
    private static final Duration INTERVAL = Duration.ofMillis(777);
    private static final Duration STEP = Duration.ofSeconds(10);

    @Test
    void everySessionFollowsItsClientsChannelOncePerClient() {
        Client client = EtcdTestSupport.client("127.0.0.1", 9); // nothing listens there: the channel fails
        HoldingScheduler timers = new HoldingScheduler(INTERVAL);
        HoldingScheduler otherTimers = new HoldingScheduler(INTERVAL);
        List<LockStore> sessions = new ArrayList<>();
        Client other = EtcdTestSupport.client("127.0.0.1", 9);
        try {
            EtcdLockOptions options = EtcdLockOptions.builder().reconnectInterval(INTERVAL).scheduler(timers).build();
            LockStore store = EtcdLocks.connect(client, options);
            sessions.add(store);
            store.semaphores(LockOptions.defaults());
            store.readWriteLocks(ReadWriteLockOptions.defaults());
            store.windowLocks(LockOptions.defaults());
            LockStore second = EtcdLocks.connect(client, options);
            sessions.add(second);
            second.windowLocks(LockOptions.defaults());
            LockStore onOther = EtcdLocks.connect(other, options.mutate().scheduler(otherTimers).build());
            sessions.add(onOther);
            onOther.windowLocks(LockOptions.defaults());
            assertThat(timers.held()).as("reconnect timers before any failure (following sends nothing)").isZero();

            failChannel(client);
            failChannel(other);
            // the jetcd channel was found and followed: its failure arms a reconnect timer, one per client
            await().atMost(STEP).until(() -> timers.held() >= 1 && otherTimers.held() >= 1);
            await().during(Duration.ofMillis(500)).atMost(STEP).until(() -> timers.held() == 1 && otherTimers.held() == 1);
        } finally {
            sessions.forEach(s -> s.close().block(STEP));
            client.close();
            other.close();
            timers.dispose();
            otherTimers.dispose();
        }
    }

    /** Sends a request to the address nothing listens on: the client's channel goes to TRANSIENT_FAILURE. */
    private static void failChannel(Client client) {
        client.getKVClient().get(ByteSequence.from(new byte[] {1}));
    }
}
