package io.reactivelocks.zookeeper;

import io.reactivelocks.LockStore;
import io.reactivelocks.test.LockAdminContract;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * The admin contract on a real ZooKeeper: every session has its own Curator client (its own
 * ZooKeeper session), as separate processes would, so a force-release deletes another session's
 * ephemeral node. The clients ask for 10 s sessions, as the store contract's: a lock's lease is
 * the session (the options' 3 s lease time applies to permits and read-write grants only), and
 * the evicted holder hears of its loss at its next confirmation, a third of that later.
 */
class ZooKeeperLockAdminContractTest extends LockAdminContract {

    private static final Duration SESSION = Duration.ofSeconds(10);

    private static ZooKeeperTestSupport zk;
    private static final List<CuratorFramework> CLIENTS = new CopyOnWriteArrayList<>();

    @BeforeAll
    static void startServer() {
        zk = ZooKeeperTestSupport.start();
    }

    @AfterAll
    static void stopServer() {
        CLIENTS.forEach(CuratorFramework::close);
        CLIENTS.clear();
        if (zk != null) {
            zk.close();
        }
    }

    @Override
    protected LockStore connect() {
        CuratorFramework client = ZooKeeperTestSupport.curator(zk.server.connectString(), SESSION);
        CLIENTS.add(client);
        return ZooKeeperLocks.connect(client, zk.options());
    }
}
