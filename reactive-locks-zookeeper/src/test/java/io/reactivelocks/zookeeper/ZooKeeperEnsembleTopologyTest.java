package io.reactivelocks.zookeeper;

import io.reactivelocks.LockClient;
import io.reactivelocks.test.server.ConsensusTopologyContract;
import io.reactivelocks.test.server.Topology;
import io.reactivelocks.test.server.ZooKeeperEnsembleTopology;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.KeeperException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * Locks on a ZooKeeper ensemble of three, every Curator client given the multi-host connect string
 * {@code host:p1,host:p2,host:p3} (what {@link ZooKeeperLocks#connect(CuratorFramework, ZooKeeperLockOptions)}
 * is given), across a killed leader, a clean leader restart, a partitioned leader and
 * a slow leader. The session timeout (2 s) is the lease time.
 */
class ZooKeeperEnsembleTopologyTest extends ConsensusTopologyContract {

    private static final Duration SESSION = Duration.ofSeconds(2);
    private static final String ROOT = "/rltopo-" + UUID.randomUUID().toString().substring(0, 8);

    private static ZooKeeperEnsembleTopology ensemble;
    private static CuratorFramework checker;

    @BeforeAll
    static void startEnsemble() {
        ensemble = ZooKeeperEnsembleTopology.start();
        checker = ZooKeeperTestSupport.curator(ensemble.endpoints(), Duration.ofSeconds(10));
    }

    @AfterAll
    static void stopEnsemble() {
        if (checker != null) {
            checker.close();
        }
        if (ensemble != null) {
            ensemble.close();
        }
    }

    @Override
    protected Topology topology() {
        return ensemble;
    }

    @Override
    protected LockClient newClient() {
        // the backend owns its Curator client (closed with the lock client), as a ZooKeeperLocks.connect session's is the caller's
        CuratorFramework curator = ZooKeeperTestSupport.curator(ensemble.endpoints(), SESSION);
        return LockClient.create(ZooKeeperLockBackend.owning(curator, ZooKeeperLockOptions.builder().root(ROOT).build()),
                options());
    }

    @Override
    protected List<String> keysLeft() {
        List<String> out = new ArrayList<>();
        collect(ROOT, out);
        return out;
    }

    private static void collect(String path, List<String> out) {
        List<String> children;
        try {
            children = checker.getChildren().forPath(path);
        } catch (KeeperException.NoNodeException e) {
            return;
        } catch (Exception e) {
            throw new IllegalStateException("could not list " + path, e);
        }
        for (String c : children) {
            String p = path + "/" + c;
            out.add(p);
            collect(p, out);
        }
    }
}
