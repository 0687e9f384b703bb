package io.reactivelocks.etcd;

import static org.assertj.core.api.Assertions.assertThat;

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
 * client, however many sessions and stores share it. (Reconnecting itself is exercised against a real outage in {@link EtcdOutageTest}.)
 */
class ChannelReconnectTest {

    @Test
    void everySessionFollowsItsClientsChannelOncePerClient() {
        Client client = EtcdTestSupport.client("127.0.0.1", 9); // never contacted: following sends nothing
        List<LockStore> sessions = new ArrayList<>();
        try {
            EtcdLockOptions options = EtcdLockOptions.defaults();
            LockStore store = EtcdLocks.connect(client, options);
            sessions.add(store);
            store.semaphores(LockOptions.defaults());
            ChannelReconnect follower = ChannelReconnect.followerOf(client);
            assertThat(follower).isNotNull();
            assertThat(follower.isActive()).as("the jetcd channel was found").isTrue();
            store.readWriteLocks(ReadWriteLockOptions.defaults());
            store.windowLocks(LockOptions.defaults());
            LockStore second = EtcdLocks.connect(client, options);
            sessions.add(second);
            second.windowLocks(LockOptions.defaults());
            assertThat(ChannelReconnect.followerOf(client)).isSameAs(follower);

            Client other = EtcdTestSupport.client("127.0.0.1", 9);
            try {
                LockStore onOther = EtcdLocks.connect(other, options);
                sessions.add(onOther);
                onOther.windowLocks(LockOptions.defaults());
                assertThat(ChannelReconnect.followerOf(other)).isNotNull().isNotSameAs(follower);
            } finally {
                sessions.remove(sessions.size() - 1).close().block(Duration.ofSeconds(10));
                other.close();
            }
        } finally {
            sessions.forEach(s -> s.close().block(Duration.ofSeconds(10)));
            client.close();
        }
    }
}
