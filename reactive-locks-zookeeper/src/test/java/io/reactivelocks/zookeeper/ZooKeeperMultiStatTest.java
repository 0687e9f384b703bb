package io.reactivelocks.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.curator.framework.api.transaction.CuratorTransactionResult;
import org.apache.curator.x.async.AsyncCuratorFramework;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * What the one-transaction grant of {@link ZooKeeperReadWriteStore} and {@link ZooKeeperSemaphoreStore}
 * relies on, on the real server: in {@code multi(setData(P), create(P/child))} the stat the setData
 * answers is P's right after the setData and before the create — its {@code numChildren} counts the
 * children P had before ours, and its {@code mzxid} is the transaction's zxid, our child's {@code czxid}.
 */
class ZooKeeperMultiStatTest {

    private static final Duration STEP = Duration.ofSeconds(10);

    private static ZooKeeperTestSupport zk;

    @BeforeAll
    static void startServer() {
        zk = ZooKeeperTestSupport.start();
    }

    @AfterAll
    static void stopServer() throws Exception {
        if (zk != null) {
            zk.checker().delete().deletingChildrenIfNeeded().forPath(zk.root);
            zk.close();
        }
    }

    private static List<CuratorTransactionResult> multi(AsyncCuratorFramework async, String parent) throws Exception {
        List<CuratorOp> ops = List.of(async.transactionOp().setData().withVersion(-1).forPath(parent, new byte[0]),
                async.transactionOp().create().withOptions(CreateMode.EPHEMERAL_SEQUENTIAL, org.apache.zookeeper.ZooDefs.Ids.OPEN_ACL_UNSAFE, false).forPath(parent + "/c-", new byte[0]));
        return async.transaction().forOperations(ops).toCompletableFuture().get(STEP.toSeconds(), TimeUnit.SECONDS);
    }

    @Test
    void theSetDataStatOfAMultiIsTheParentsBeforeTheCreateThatFollows() throws Exception {
        AsyncCuratorFramework async = AsyncCuratorFramework.wrap(zk.checker());
        String parent = zk.root + "/p-" + UUID.randomUUID();
        zk.checker().create().creatingParentContainersIfNeeded().withMode(CreateMode.CONTAINER).forPath(parent);

        List<CuratorTransactionResult> first = multi(async, parent);
        Stat before = first.get(0).getResultStat();
        assertThat(before.getNumChildren()).as("children before the first create").isZero();
        Stat made = zk.checker().checkExists().forPath(first.get(1).getResultPath());
        assertThat(made.getCzxid()).as("the child's czxid is the setData's mzxid").isEqualTo(before.getMzxid());
        assertThat(zk.checker().getChildren().forPath(parent)).hasSize(1);

        List<CuratorTransactionResult> second = multi(async, parent);
        assertThat(second.get(0).getResultStat().getNumChildren()).as("children before the second create").isEqualTo(1);
        Stat secondMade = zk.checker().checkExists().forPath(second.get(1).getResultPath());
        assertThat(secondMade.getCzxid()).isEqualTo(second.get(0).getResultStat().getMzxid()).isGreaterThan(made.getCzxid());

        zk.checker().delete().forPath(first.get(1).getResultPath());
        List<CuratorTransactionResult> third = multi(async, parent);
        assertThat(third.get(0).getResultStat().getNumChildren()).as("after a delete").isEqualTo(1);
        zk.checker().delete().forPath(second.get(1).getResultPath());
        zk.checker().delete().forPath(third.get(1).getResultPath());
        assertThat(multi(async, parent).get(0).getResultStat().getNumChildren()).as("emptied").isZero();
    }
}
