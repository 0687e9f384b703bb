package io.reactivelocks.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import io.reactivelocks.Lease;
import io.reactivelocks.LockClient;
import io.reactivelocks.task.TaskQueue;
import io.reactivelocks.test.server.ZooKeeperServer;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.imps.CuratorFrameworkState;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/** The auto-configured beans on ZooKeeper — from the application's Curator client, or from properties — against a real ZooKeeper. */
class ZooKeeperAutoConfigurationTest {

    private static ZooKeeperServer server;

    @BeforeAll
    static void start() {
        server = ZooKeeperServer.start();
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    private final String root = "/rlboot-" + UUID.randomUUID().toString().substring(0, 8);

    private ApplicationContextRunner runner() {
        return new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(ReactiveLocksAutoConfiguration.class))
                .withPropertyValues("reactive-locks.zookeeper.root=" + root, "reactive-locks.lease-time=2s");
    }

    private static CuratorFramework curator() {
        CuratorFramework c = CuratorFrameworkFactory.builder().connectString(server.connectString())
                .sessionTimeoutMs(2_000).connectionTimeoutMs(5_000).retryPolicy(new ExponentialBackoffRetry(50, 3)).build();
        c.start();
        return c;
    }

    @Test
    void everyConceptWorksOnTheApplicationsCuratorClientAndClosingTheContextReleasesTheLeases() {
        AtomicReference<Lease> kept = new AtomicReference<>();
        runner().withBean(CuratorFramework.class, ZooKeeperAutoConfigurationTest::curator, bd -> bd.setDestroyMethodName("close"))
                .run(context -> {
                    assertThat(context).hasNotFailed().hasSingleBean(LockClient.class).doesNotHaveBean(TaskQueue.class);
                    kept.set(StoreBeanChecks.everyConceptWorks(context, "zookeeper"));
                });
        runner().withBean(CuratorFramework.class, ZooKeeperAutoConfigurationTest::curator, bd -> bd.setDestroyMethodName("close"))
                .run(context -> StoreBeanChecks.isFree(context.getBean(LockClient.class), kept.get().name()));
    }

    @Test
    void withoutACuratorBeanTheConnectStringPropertyMakesOneClosedWithTheContext() {
        AtomicReference<CuratorFramework> made = new AtomicReference<>();
        runner().withPropertyValues("reactive-locks.zookeeper.connect-string=" + server.connectString(),
                        "reactive-locks.backend=zookeeper")
                .run(context -> {
                    assertThat(context).hasNotFailed().hasSingleBean(CuratorFramework.class).hasSingleBean(LockClient.class);
                    made.set(context.getBean(CuratorFramework.class));
                    assertThat(made.get().getZookeeperClient().getConnectionTimeoutMs()).isEqualTo(5_000);
                    Lease kept = StoreBeanChecks.everyConceptWorks(context, "zookeeper");
                    kept.release().block(StoreBeanChecks.TIMEOUT);
                });
        assertThat(made.get().getState()).isEqualTo(CuratorFrameworkState.STOPPED);
    }
}
