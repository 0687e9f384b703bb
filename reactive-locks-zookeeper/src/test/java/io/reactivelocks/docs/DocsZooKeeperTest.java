package io.reactivelocks.docs;

import static java.nio.charset.StandardCharsets.UTF_8;

import io.reactivelocks.Lease;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockStore;
import io.reactivelocks.LockOptions;
import io.reactivelocks.LockState;
import io.reactivelocks.test.server.ZooKeeperServer;
import io.reactivelocks.zookeeper.ZooKeeperLockOptions;
import io.reactivelocks.zookeeper.ZooKeeperLocks;
import java.time.Duration;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/** The samples of docs/stores/zookeeper.md, run against a real ZooKeeper. */
class DocsZooKeeperTest {

    static final Duration STEP = Duration.ofSeconds(10);

    private static ZooKeeperServer server;
    private static String connectString;

    @BeforeAll
    static void start() {
        server = ZooKeeperServer.start();
        connectString = server.connectString();
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    @Test
    void quickStart() {
        // tag::quick-start[]
        CuratorFramework zk = CuratorFrameworkFactory.builder()
                .connectString(connectString)                      // e.g. "zk-1:2181,zk-2:2181,zk-3:2181"
                .sessionTimeoutMs(10_000)                          // the lease time of every lock
                .retryPolicy(new ExponentialBackoffRetry(100, 3))
                .authorization("digest", "app:secret".getBytes(UTF_8))
                .build();
        zk.start();                                                // the client stays yours: close it after the lock client

        LockStore store = ZooKeeperLocks.connect(zk,               // one session: the client's
                ZooKeeperLockOptions.builder().root("/app/locks").digestAcl("app", "secret").build());
        LockClient locks = store.locks();                          // ... and every other concept: store.semaphores(...), ...

        Mono<String> receipt = locks.withLock("order:42", lease -> charge("order:42", lease.token()));
        Flux<LockState> who = locks.observe("order:42");          // watches, no polling
        // end::quick-start[]
        StepVerifier.create(receipt).expectNextMatches(r -> r.startsWith("charged order:42 with fence ")).expectComplete().verify(STEP);
        StepVerifier.create(who.take(1)).expectNextMatches(s -> !s.isHeld()).expectComplete().verify(STEP);
        Lease lease = locks.acquire("order:42").block(STEP);
        lease.release().block(STEP);
        store.close().block(STEP);
        zk.close();
    }

    static Mono<String> charge(String order, long token) {
        return Mono.fromSupplier(() -> "charged " + order + " with fence " + token);
    }
}
