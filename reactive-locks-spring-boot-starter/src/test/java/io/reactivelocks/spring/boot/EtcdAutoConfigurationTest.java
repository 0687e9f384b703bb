package io.reactivelocks.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import io.etcd.jetcd.Client;
import io.reactivelocks.Lease;
import io.reactivelocks.LockClient;
import io.reactivelocks.task.TaskQueue;
import io.reactivelocks.test.server.EtcdServer;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/** The auto-configured beans on etcd — from the application's jetcd client, or from properties — against a real etcd. */
class EtcdAutoConfigurationTest {

    private static EtcdServer server;

    @BeforeAll
    static void start() {
        server = EtcdServer.start();
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    private final String prefix = "rlboot-" + UUID.randomUUID().toString().substring(0, 8);

    private ApplicationContextRunner runner() {
        return new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(ReactiveLocksAutoConfiguration.class))
                .withPropertyValues("reactive-locks.etcd.prefix=" + prefix, "reactive-locks.lease-time=2s",
                        // a first gRPC connection of the JVM can take seconds on a loaded machine
                        "reactive-locks.request-timeout=10s");
    }

    private static Client client() {
        return Client.builder().endpoints(server.url()).connectTimeout(Duration.ofSeconds(2)).build();
    }

    @Test
    void everyConceptWorksOnTheApplicationsJetcdClientAndClosingTheContextReleasesTheLeases() {
        AtomicReference<Lease> kept = new AtomicReference<>();
        runner().withBean(Client.class, EtcdAutoConfigurationTest::client, bd -> bd.setDestroyMethodName("close"))
                .run(context -> {
                    assertThat(context).hasNotFailed().hasSingleBean(LockClient.class).doesNotHaveBean(TaskQueue.class);
                    kept.set(StoreBeanChecks.everyConceptWorks(context, "etcd"));
                });
        runner().withBean(Client.class, EtcdAutoConfigurationTest::client, bd -> bd.setDestroyMethodName("close"))
                .run(context -> StoreBeanChecks.isFree(context.getBean(LockClient.class), kept.get().name()));
    }

    @Test
    void withoutAClientBeanTheEndpointsPropertyMakesOne() {
        runner().withPropertyValues("reactive-locks.etcd.endpoints=" + server.url(), "reactive-locks.backend=etcd")
                .run(context -> {
                    assertThat(context).hasNotFailed().hasSingleBean(Client.class).hasSingleBean(LockClient.class);
                    Lease kept = StoreBeanChecks.everyConceptWorks(context, "etcd");
                    kept.release().block(StoreBeanChecks.TIMEOUT);
                });
    }

    @Test
    void aSessionTtlUnderASecondFailsNamingTheProperty() {
        runner().withPropertyValues("reactive-locks.etcd.session-ttl=500ms").run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).rootCause().isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("reactive-locks.etcd.session-ttl must be at least 1s");
        });
    }

    @Test
    void withNeitherAClientBeanNorEndpointsThereIsNoEtcdClient() {
        runner().withPropertyValues("reactive-locks.backend=etcd").run(context ->
                assertThat(context).hasNotFailed().doesNotHaveBean(Client.class).doesNotHaveBean(LockClient.class));
    }
}
