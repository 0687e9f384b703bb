package io.reactivelocks.etcd;

import static org.assertj.core.api.Assertions.assertThat;

import io.etcd.jetcd.Client;
import io.reactivelocks.LockOptions;
import io.reactivelocks.rwlock.ReadWriteLockOptions;
import org.junit.jupiter.api.Test;

/**
 * The semaphore, read-write lock and window lock factories follow their client's gRPC channel to
 * reconnect soon after an outage, as the mutex backend does: one follower per client, however many
 * stores share it. (Reconnecting itself is exercised against a real outage in {@link EtcdOutageTest}.)
 */
class ChannelReconnectTest {

    @Test
    void everyStoreFactoryFollowsItsClientsChannelOncePerClient() {
        Client client = EtcdTestSupport.client("127.0.0.1", 9); // never contacted: following sends nothing
        try {
            EtcdLockOptions options = EtcdLockOptions.defaults();
            EtcdLocks.semaphore(client, options, LockOptions.defaults());
            ChannelReconnect follower = ChannelReconnect.followerOf(client);
            assertThat(follower).isNotNull();
            assertThat(follower.isActive()).as("the jetcd channel was found").isTrue();
            EtcdLocks.readWriteLock(client, options, ReadWriteLockOptions.defaults());
            EtcdLocks.windowLock(client, options, LockOptions.defaults());
            assertThat(ChannelReconnect.followerOf(client)).isSameAs(follower);

            Client other = EtcdTestSupport.client("127.0.0.1", 9);
            try {
                EtcdLocks.windowLock(other, options, LockOptions.defaults());
                assertThat(ChannelReconnect.followerOf(other)).isNotNull().isNotSameAs(follower);
            } finally {
                other.close();
            }
        } finally {
            client.close();
        }
    }
}
