package io.reactivelocks.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.reactivelocks.LockBackendException;
import io.reactivelocks.LockClientClosedException;
import io.reactivelocks.fencing.FencedValue;
import io.reactivelocks.fencing.FencedValues;
import io.reactivelocks.test.FencedWritesContract;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.imps.CuratorFrameworkState;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The fenced-writes contract against a real ZooKeeper (each resource over its own Curator client,
 * as separate processes would be), plus the ZooKeeper specifics: the node layout under
 * {@code <root>/fenced}, the data encoding, tombstones, the ACL of the subtree, and the client left
 * open on close.
 */
class ZooKeeperFencedWritesContractTest extends FencedWritesContract {

    private static ZooKeeperTestSupport zk;
    private final List<CuratorFramework> curators = new ArrayList<>();

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

    @AfterEach
    void closeCurators() {
        curators.forEach(CuratorFramework::close);
        curators.clear();
    }

    /**
     * Fenced values hold no lease, so their clients need no short session: a 2 s session (the lease
     * time of the lock tests) has a read timeout of 1.3 s, and a loaded CI machine that starved a
     * client that long lost its connection in the middle of a write (a {@code SystemError} from
     * Curator's connection reset). 10 s is the test server's largest session (20 ticks).
     */
    private static final Duration SESSION = Duration.ofSeconds(10);

    private CuratorFramework curator() {
        CuratorFramework c = ZooKeeperTestSupport.curator(zk.server.connectString(), SESSION);
        curators.add(c);
        return c;
    }

    @Override
    protected FencedValues newValues() {
        return ZooKeeperFencedValues.create(curator(), zk.options());
    }

    private static String path(String key) {
        return zk.root + "/fenced/" + ZNodeNames.segment(key);
    }

    @Test
    void nodesAreCreatedOnlyUnderTheFencedSubtree() throws Exception {
        String root = zk.root + "-layout"; // a root of its own: nothing else writes there
        FencedValues v = ZooKeeperFencedValues.create(curator(), zk.options().mutate().root(root).build());
        List<String> keys = List.of(key("a"), key("b") + "/../x", key("c") + "/fenced", "fenced", "n-x", "/", "zookeeper");
        v.write(keys.get(0), 1, "not subscribed");
        assertThat(zk.checker().checkExists().forPath(root)).as("nothing is sent before subscribe").isNull();
        long token = 1;
        for (String k : keys) {
            assertThat(v.write(k, token, "v").block(STEP)).isTrue();
            assertThat(v.delete(k, token + 1).block(STEP)).isTrue();
            token += 2;
        }
        String never = key("never-written");
        assertThat(v.delete(never, 3).block(STEP)).as("a delete of a new key leaves a tombstone").isTrue();
        List<String> nodes = new ArrayList<>();
        collect(root, root, nodes);
        assertThat(nodes).hasSize(1 + keys.size() + 1).contains("/fenced", "/fenced/" + ZNodeNames.segment(never));
        assertThat(nodes).allSatisfy(n -> assertThat(n).matches("/fenced(/n-[A-Za-z0-9_-]+)?"));
        for (String k : keys) {
            assertThat(nodes).contains("/fenced/" + ZNodeNames.segment(k));
        }
    }

    private static void collect(String root, String path, List<String> out) throws Exception {
        for (String c : zk.checker().getChildren().forPath(path)) {
            String p = path + "/" + c;
            out.add(p.substring(root.length()));
            collect(root, p, out);
        }
    }

    @Test
    void theNodeHoldsTheFenceThenTheValueAndATombstoneTheFenceAlone() throws Exception {
        FencedValues v = values();
        String k = key("layout");
        assertThat(v.write(k, 7, "x\ny").block(STEP)).isTrue();
        Stat stat = new Stat();
        byte[] data = zk.checker().getData().storingStatIn(stat).forPath(path(k)); // test thread: blocking is fine
        assertThat(new String(data, StandardCharsets.UTF_8)).isEqualTo("7\nx\ny");
        assertThat(stat.getEphemeralOwner()).as("persistent: application data outlives the session").isZero();
        assertThat(v.write(k, 8, "").block(STEP)).isTrue();
        assertThat(zk.data(path(k))).isEqualTo("8\n");
        assertThat(v.delete(k, 9).block(STEP)).isTrue();
        assertThat(zk.data(path(k))).as("a tombstone").isEqualTo("9");
        int version = zk.checker().checkExists().forPath(path(k)).getVersion();
        assertThat(v.delete(k, 9).block(STEP)).isTrue();
        assertThat(zk.checker().checkExists().forPath(path(k)).getVersion()).as("nothing written for the same tombstone").isEqualTo(version);
        assertThat(v.write(k, 8, "stale").block(STEP)).isFalse();
        assertThat(zk.checker().checkExists().forPath(path(k)).getVersion()).as("a refused token writes nothing").isEqualTo(version);
        assertThat(zk.checker().checkExists().forPath(zk.root + "/fenced").getEphemeralOwner()).isZero();
    }

    @Test
    void tokensAreComparedExactlyOverTheWholeLongRange() {
        FencedValues v = values();
        String k = key("long");
        assertThat(v.write(k, Long.MAX_VALUE - 1, "a").block(STEP)).isTrue();
        assertThat(v.write(k, Long.MAX_VALUE - 2, "b").block(STEP)).isFalse();
        assertThat(v.write(k, Long.MAX_VALUE, "c").block(STEP)).isTrue();
        String n = key("negative");
        assertThat(v.write(n, Long.MIN_VALUE, "a").block(STEP)).isTrue();
        assertThat(v.write(n, -10, "b").block(STEP)).isTrue();
        assertThat(v.write(n, -11, "c").block(STEP)).isFalse();
        assertThat(v.write(n, 0, "d").block(STEP)).isTrue();
        assertThat(v.read(n).block(STEP)).isEqualTo(new FencedValue("d", 0));
    }

    @Test
    void aNodeThatIsNotAFencedValueIsAPermanentError() throws Exception {
        FencedValues v = values();
        String k = key("foreign");
        zk.checker().create().creatingParentsIfNeeded().withMode(CreateMode.PERSISTENT).forPath(path(k), "hello".getBytes(StandardCharsets.UTF_8));
        assertThatThrownBy(() -> v.read(k).block(STEP)).isInstanceOf(LockBackendException.class).hasMessageContaining("fenced value")
                .satisfies(e -> assertThat(((LockBackendException) e).isTransient()).isFalse());
        assertThatThrownBy(() -> v.write(k, 1, "x").block(STEP)).isInstanceOf(LockBackendException.class);
        assertThat(zk.data(path(k))).isEqualTo("hello");
    }

    @Test
    void theSubtreeCarriesTheOptionsAclSoOthersCannotRemoveAFence() throws Exception {
        String root = zk.root + "-acl";
        ZooKeeperLockOptions aliceAcl = zk.options().mutate().root(root).digestAcl("alice", "s3cret").build();
        CuratorFramework alice = ZooKeeperTestSupport.curator(CuratorFrameworkFactory.builder().connectString(zk.server.connectString())
                .authorization("digest", "alice:s3cret".getBytes(StandardCharsets.UTF_8)), SESSION);
        curators.add(alice);
        FencedValues v = ZooKeeperFencedValues.create(alice, aliceAcl);
        String k = key("acl");
        assertThat(v.write(k, 5, "a").block(STEP)).isTrue();
        String node = root + "/fenced/" + ZNodeNames.segment(k);
        for (String p : List.of(root, root + "/fenced", node)) {
            assertThat(alice.getACL().forPath(p)).as(p).isEqualTo(aliceAcl.acl());
        }
        CuratorFramework anonymous = curator();
        anonymous.blockUntilConnected(10, TimeUnit.SECONDS);
        assertThatThrownBy(() -> anonymous.delete().forPath(node)).isInstanceOf(KeeperException.NoAuthException.class);
        assertThatThrownBy(() -> anonymous.setData().forPath(node, "0".getBytes(StandardCharsets.UTF_8)))
                .isInstanceOf(KeeperException.NoAuthException.class);
        FencedValues others = ZooKeeperFencedValues.create(anonymous, aliceAcl);
        assertThat(others.read(k).block(STEP)).as("anyone may read").isEqualTo(new FencedValue("a", 5));
        assertThatThrownBy(() -> others.write(k, 6, "b").block(STEP)).isInstanceOf(LockBackendException.class);
        assertThat(v.read(k).block(STEP)).isEqualTo(new FencedValue("a", 5));
    }

    @Test
    void closeLeavesTheClientOpenIsIdempotentAndRefusesLaterCalls() {
        CuratorFramework c = curator();
        ZooKeeperFencedValues v = ZooKeeperFencedValues.create(c, zk.options());
        String k = key("close");
        assertThat(v.write(k, 1, "a").block(STEP)).isTrue();
        v.close().block(STEP);
        v.close().block(STEP);
        assertThat(c.getState()).isEqualTo(CuratorFrameworkState.STARTED);
        assertThatThrownBy(() -> v.read(k).block(STEP)).isInstanceOf(LockClientClosedException.class);
        assertThatThrownBy(() -> v.write(k, 2, "b").block(STEP)).isInstanceOf(LockClientClosedException.class);
        assertThat(ZooKeeperFencedValues.create(c, zk.options()).read(k).block(STEP)).isEqualTo(new FencedValue("a", 1));
    }

    @Test
    void anUnreachableServerFailsTransientlyWithinTheRequestTimeout() {
        CuratorFramework c = ZooKeeperTestSupport.curator(CuratorFrameworkFactory.builder().connectString("127.0.0.1:1"),
                ZooKeeperTestSupport.SESSION);
        curators.add(c);
        ZooKeeperFencedValues v = ZooKeeperFencedValues.create(c, zk.options().mutate().requestTimeout(Duration.ofMillis(300)).build());
        assertThatThrownBy(() -> v.write(key("unreachable"), 1, "a").block(STEP))
                .isInstanceOf(LockBackendException.class)
                .satisfies(e -> assertThat(((LockBackendException) e).isTransient()).isTrue());
        assertThatThrownBy(() -> v.read(key("unreachable")).block(STEP)).isInstanceOf(LockBackendException.class);
    }

    @Test
    void badFactoryArgumentsFailNamingThem() {
        assertThatThrownBy(() -> ZooKeeperFencedValues.create(null, zk.options())).isInstanceOf(NullPointerException.class)
                .hasMessageContaining("client");
        assertThatThrownBy(() -> ZooKeeperFencedValues.create(curator(), null)).isInstanceOf(NullPointerException.class)
                .hasMessageContaining("options");
        CuratorFramework closed = curator();
        closed.close();
        assertThatThrownBy(() -> ZooKeeperFencedValues.create(closed, zk.options())).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("client");
    }
}
