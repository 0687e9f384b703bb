package io.reactivelocks.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.reactivelocks.Lease;
import io.reactivelocks.LockBackendException;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockOptions;
import io.reactivelocks.LockStore;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.zookeeper.KeeperException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import reactor.test.StepVerifier;

/**
 * Digest ACLs: lock nodes made by a client authenticated as {@code alice} can be deleted (and
 * contended for) only by clients with alice's credentials; anyone may read who holds a lock.
 */
class ZooKeeperAclTest {

    private static final Duration STEP = Duration.ofSeconds(15);

    private static ZooKeeperTestSupport zk;
    private static final List<CuratorFramework> curators = new ArrayList<>();

    @BeforeAll
    static void startServer() {
        zk = ZooKeeperTestSupport.start();
    }

    @AfterAll
    static void stopServer() {
        curators.forEach(CuratorFramework::close);
        if (zk != null) {
            zk.close();
        }
    }

    private static CuratorFramework curator(String user, String password) {
        CuratorFrameworkFactory.Builder b = CuratorFrameworkFactory.builder().connectString(zk.server.connectString());
        if (user != null) {
            b.authorization("digest", (user + ":" + password).getBytes(StandardCharsets.UTF_8));
        }
        CuratorFramework c = ZooKeeperTestSupport.curator(b, ZooKeeperTestSupport.SESSION);
        curators.add(c);
        return c;
    }

    @Test
    void otherCredentialsCannotDeleteOrContendForAHeldLockButMayReadIt() throws Exception {
        String root = zk.root + "-acl";
        ZooKeeperLockOptions aliceAcl = zk.options().mutate().root(root).digestAcl("alice", "s3cret").build();
        LockOptions options = LockOptions.builder().requestTimeout(Duration.ofSeconds(3)).build();
        LockStore aliceStore = ZooKeeperLocks.connect(curator("alice", "s3cret"), aliceAcl);
        LockClient alice = aliceStore.locks(options);
        String name = "acl-" + UUID.randomUUID();
        Lease held = alice.acquire(name).block(STEP);
        String lockPath = new ZNodeNames(root).lockPath(name);
        String node = lockPath + "/" + zk.checker().getChildren().forPath(lockPath).get(0);

        CuratorFramework mallory = curator("mallory", "guess");
        mallory.blockUntilConnected(10, java.util.concurrent.TimeUnit.SECONDS);
        assertThatThrownBy(() -> mallory.delete().forPath(node)).isInstanceOf(KeeperException.NoAuthException.class);
        assertThatThrownBy(() -> mallory.delete().forPath(lockPath)).isInstanceOf(KeeperException.class);
        CuratorFramework anonymous = curator(null, null);
        anonymous.blockUntilConnected(10, java.util.concurrent.TimeUnit.SECONDS);
        assertThatThrownBy(() -> anonymous.delete().forPath(node)).isInstanceOf(KeeperException.NoAuthException.class);
        assertThatThrownBy(() -> anonymous.setData().forPath(node, new byte[] {1})).isInstanceOf(KeeperException.NoAuthException.class);
        assertThat(zk.checker().checkExists().forPath(node)).as("alice's node survived").isNotNull();

        // mallory's lock client: may read who holds the lock, may not queue for it
        LockStore malloryStore = ZooKeeperLocks.connect(mallory, aliceAcl.mutate().digestAcl("mallory", "guess").build());
        LockClient malloryLocks = malloryStore.locks(options);
        try {
            StepVerifier.create(malloryLocks.observe(name).take(1))
                    .assertNext(s -> assertThat(s.isHeld()).isTrue())
                    .expectComplete().verify(STEP);
            held.release().block(STEP);
            StepVerifier.create(malloryLocks.tryAcquire(name))
                    .expectErrorSatisfies(e -> assertThat(e).isInstanceOf(LockBackendException.class)
                            .satisfies(x -> assertThat(((LockBackendException) x).isTransient()).isFalse())
                            .hasMessageContaining("NoAuth"))
                    .verify(STEP);
        } finally {
            malloryStore.close().block(STEP);
        }

        // the same credentials on another client: a contender like any other
        LockStore alice2Store = ZooKeeperLocks.connect(curator("alice", "s3cret"), aliceAcl);
        LockClient alice2 = alice2Store.locks(options);
        Lease again = alice2.acquire(name).block(STEP);
        assertThat(again.token()).isGreaterThan(held.token());
        again.release().block(STEP);
        alice2Store.close().block(STEP);
        aliceStore.close().block(STEP);
        await().atMost(STEP).until(() -> zk.checker().checkExists().forPath(lockPath) == null);
        // the root keeps alice's ACL; remove it as alice so the fixture's tree is clean
        CuratorFramework cleaner = curator("alice", "s3cret");
        cleaner.delete().forPath(root);
    }
}
