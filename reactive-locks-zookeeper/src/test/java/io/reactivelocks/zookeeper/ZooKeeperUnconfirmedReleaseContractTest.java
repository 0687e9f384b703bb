package io.reactivelocks.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.reactivelocks.spi.LockBackend;
import io.reactivelocks.test.UnconfirmedReleaseContract;
import java.time.Duration;
import java.util.List;
import org.apache.curator.framework.state.ConnectionState;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * The unconfirmed-release contract against a real ZooKeeper of its own, frozen with SIGSTOP. The
 * owner's node is ephemeral: it lives as long as the client's session, which a running client
 * keeps for ever; the session here (8 s) outlives the pause, and {@link #assertSessionKept} checks
 * that it did — so the node must be gone by the client's own delete, not by the session's end.
 * The name's own node (the parent of the owners' nodes) counts as left too until it is pruned.
 */
class ZooKeeperUnconfirmedReleaseContractTest extends UnconfirmedReleaseContract {

    private static final Duration SESSION = Duration.ofSeconds(8);

    private static ZooKeeperTestSupport zk;

    @BeforeAll
    static void startServer() {
        zk = ZooKeeperTestSupport.startOwn(); // its own: this class pauses it
    }

    @AfterAll
    static void stopServer() {
        if (zk != null) {
            zk.close();
        }
    }

    @Override
    protected LockBackend newBackend() {
        return ZooKeeperTestSupport.owning(ZooKeeperTestSupport.curator(zk.server.connectString(), SESSION), zk.options());
    }

    @Override
    protected void pauseServer() {
        zk.server.pause();
    }

    @Override
    protected void resumeServer() {
        zk.server.resume();
    }

    @Override
    protected List<String> storedFor(String name) {
        String lock = new ZNodeNames(zk.root).lockPath(name).substring(zk.root.length());
        return zk.nodes().stream().filter(p -> p.equals(lock) || p.startsWith(lock + "/")).toList();
    }

    @Override
    protected void assertSessionKept(LockBackend backend) {
        CuratorCalls calls = ZooKeeperTestSupport.callsOf(backend);
        assertThat(calls.states()).as("what the holder's client reported").doesNotContain(ConnectionState.LOST);
        long session = calls.sessionId();
        assertThat(session).as("the holder's session").isNotZero();
        // (the server lists a session's connection once the client is reconnected after the pause)
        await().atMost(Duration.ofSeconds(10)).until(() -> zk.serverKnowsSession(session));
        assertThat(calls.sessionId()).as("the holder's session after the server listed it").isEqualTo(session);
        assertThat(calls.states()).as("what the holder's client reported").doesNotContain(ConnectionState.LOST);
    }
}
