package io.reactivelocks.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;

import io.reactivelocks.LockClient;
import io.reactivelocks.LockClock;
import io.reactivelocks.LockOptions;
import io.reactivelocks.spi.Attempt;
import io.reactivelocks.spi.GrantRequest;
import io.reactivelocks.test.FairLockContract;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;

/**
 * The fair lock contract against a real ZooKeeper, whose lock queues natively: an ephemeral
 * sequential node per owner, the lowest holds, each waiter watches its predecessor only.
 * The session's {@code locks} are its fair lock on ZooKeeper ({@link ZooKeeperLocks#connect}).
 */
class ZooKeeperFairLockContractTest extends FairLockContract {

    private static ZooKeeperTestSupport zk;
    private final List<ZooKeeperLockBackend> abandoned = new ArrayList<>();

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

    @BeforeEach
    void closeProxiesOfThePreviousTest() {
        zk.closeProxies();
    }

    @AfterEach
    void closeAbandoned() {
        // healed first: its session is gone on the server by now, and a close through a blackhole waits
        abandoned.forEach(b -> zk.proxyOf(b).heal());
        abandoned.forEach(b -> b.close().onErrorResume(e -> reactor.core.publisher.Mono.empty()).block(STEP));
        abandoned.clear();
    }

    @Override
    protected LockOptions options() {
        return super.options().mutate().leaseTime(ZooKeeperTestSupport.SESSION).build();
    }

    @Override
    protected LockClient newClient() {
        return LockClient.create(zk.backend(), options());
    }

    @Override
    protected int waiting(String name) {
        return Math.max(0, zk.children(name).size() - 1);
    }

    /** A queued node of a client whose connection is then blackholed: the server expires its session. */
    @Override
    protected void enqueueAbandonedWaiter(String name) {
        ZooKeeperLockBackend b = zk.proxiedBackend();
        abandoned.add(b);
        Attempt a = b.tryGrant(new GrantRequest(name, GrantRequest.newOwner(), options().leaseTime(), true,
                LockClock.system())).block(STEP);
        assertThat(a).isInstanceOf(Attempt.Queued.class);
        zk.proxyOf(b).blackhole();
    }

    @Override
    protected void assertNothingLeft(String name) {
        assertThat(zk.children(name)).as("nodes of '%s' left", name).isEmpty();
    }
}
