package io.reactivelocks.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;

import io.reactivelocks.Concept;
import io.reactivelocks.LockStore;
import io.reactivelocks.test.LockStoreContract;
import java.time.Duration;
import java.util.Set;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The store-session contract on a real ZooKeeper, and the session's one connection counted by the server ({@code cons}). */
class ZooKeeperLockStoreContractTest extends LockStoreContract {

    private static ZooKeeperTestSupport zk;
    private static CuratorFramework client;

    @BeforeAll
    static void startServer() {
        zk = ZooKeeperTestSupport.startOwn();
        client = ZooKeeperTestSupport.curator(zk.server.connectString(), Duration.ofSeconds(10));
    }

    @AfterAll
    static void stopServer() {
        if (client != null) {
            client.close();
        }
        if (zk != null) {
            zk.close();
        }
    }

    @Override
    protected LockStore connect() {
        return ZooKeeperLocks.connect(client, zk.options());
    }

    @Override
    protected Set<Concept> expectedConcepts() {
        return ZooKeeperStoreSession.CONCEPTS;
    }

    private static long connections() {
        return zk.fourLetterWord("cons").lines().filter(l -> l.contains("sid=")).count();
    }

    @Test
    void everyConceptInUseAtOnceSharesTheClientsOneSession() throws InterruptedException {
        CuratorFramework own = ZooKeeperTestSupport.curator(zk.server.connectString(), Duration.ofSeconds(10));
        try {
            assertThat(own.blockUntilConnected(20, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
            long before = connections(); // the client's own connection is among them
            LockStore store = ZooKeeperLocks.connect(own, zk.options());
            InUse inUse = everyConceptInUse(store, name("conns"));

            long during = connections();
            assertThat(during).as("no concept opens a connection: the client's one session serves them all").isEqualTo(before);
            assertThat(own.getZookeeperClient().isConnected()).isTrue();

            inUse.release();
            store.close().block(STEP);
            assertThat(own.getZookeeperClient().isConnected()).as("closing the session leaves the client's connection").isTrue();
        } finally {
            own.close();
        }
    }
}
