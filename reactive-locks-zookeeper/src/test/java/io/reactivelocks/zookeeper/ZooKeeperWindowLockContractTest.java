package io.reactivelocks.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;

import io.reactivelocks.LockStore;
import io.reactivelocks.spi.window.WindowStore;
import io.reactivelocks.test.WindowLockContract;
import io.reactivelocks.window.WindowClaim;
import io.reactivelocks.window.WindowLock;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The window-lock contract against a real ZooKeeper, plus the ZooKeeper specifics: the node, the
 * window from the write's {@code mtime}, the {@code mzxid} token, and the stored highest window.
 */
class ZooKeeperWindowLockContractTest extends WindowLockContract {

    private static ZooKeeperTestSupport zk;

    @BeforeAll
    static void startServer() {
        zk = ZooKeeperTestSupport.start();
    }

    @AfterAll
    static void stopServer() {
        if (zk != null) {
            zk.close();
        }
    }

    @Override
    protected WindowStore newStore() {
        return new ZooKeeperWindowStore(ZooKeeperTestSupport.curator(zk.server.connectString(), ZooKeeperTestSupport.STEADY_SESSION),
                true, zk.root + "-window", zk.options().acl());
    }

    @Test
    void theWindowIsTheWritesMtimeAndTheTokenItsMzxid() throws Exception {
        CuratorFramework c = ZooKeeperTestSupport.curator(zk.server.connectString(), ZooKeeperTestSupport.STEADY_SESSION);
        LockStore store = ZooKeeperLocks.connect(c, zk.options());
        WindowLock w = store.windowLocks(options());
        try {
            String name = name("node");
            Duration hour = Duration.ofHours(1);
            WindowClaim first = w.tryClaim(name, hour).block(STEP);
            String path = new ZooKeeperWindowStore(c, false, zk.root + "-window", zk.options().acl()).path(name, hour);
            Stat stat = new Stat();
            byte[] data = c.getData().storingStatIn(stat).forPath(path); // test thread: blocking is fine here
            assertThat(first.window()).isEqualTo(stat.getMtime() / hour.toMillis());
            assertThat(first.token()).isEqualTo(stat.getMzxid());
            assertThat(new String(data, StandardCharsets.US_ASCII)).as("nothing was claimed before the first claim").isEqualTo("-1");
            assertThat(w.tryClaim(name, hour).blockOptional(STEP)).isEmpty();
            c.getData().storingStatIn(stat).forPath(path);
            assertThat(new String(c.getData().forPath(path), StandardCharsets.US_ASCII))
                    .as("a losing write records the claimed window").isEqualTo(Long.toString(first.window()));
        } finally {
            store.close().block(STEP);
            c.close();
        }
    }
}
