package io.reactivelocks.spring.boot;

import io.reactivelocks.LockClient;
import io.reactivelocks.LockListener;
import io.reactivelocks.LockStore;
import io.reactivelocks.rwlock.ReadWriteLock;
import io.reactivelocks.rwlock.ReadWriteLockOptions;
import io.reactivelocks.semaphore.Semaphore;
import io.reactivelocks.window.WindowLock;
import io.reactivelocks.zookeeper.ZooKeeperLockOptions;
import io.reactivelocks.zookeeper.ZooKeeperLocks;
import java.time.Duration;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;

/**
 * One store session on the application's Curator {@link CuratorFramework} bean — or, when it has none and
 * {@code reactive-locks.zookeeper.connect-string} is set, on a client the starter makes from the
 * {@code reactive-locks.zookeeper.*} properties ({@link ClientFromProperties}) — and the lock client, which is also
 * the fair lock bean (ZooKeeper's mutex grants waiters in arrival order), each unless the application defines its
 * own; the other concepts come from the session through {@link LockStoreConceptsConfiguration}. A lease lives as long
 * as the client's ZooKeeper session. ZooKeeper has no task queue.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnClass({CuratorFramework.class, ZooKeeperLocks.class})
@Conditional(OnBackendCondition.ZooKeeper.class)
@Import(ZooKeeperLockClientConfiguration.ClientFromProperties.class)
class ZooKeeperLockClientConfiguration {

    /** The session with ZooKeeper every concept below comes from: the client's ZooKeeper session. */
    @Bean
    @ConditionalOnMissingBean(LockStore.class)
    @ConditionalOnBean(CuratorFramework.class)
    ClosingFactoryBean.Phased<LockStore> reactiveLocksStore(CuratorFramework zookeeper, ReactiveLocksProperties properties) {
        return ClosingFactoryBean.store(ZooKeeperLocks.connect(zookeeper, zooKeeperOptions(properties)),
                properties.getShutdownTimeout());
    }

    // the mutex grants waiters in arrival order on this store: the fair lock bean is the same client, by its alias
    @Bean(name = {"reactiveLocksClient", ReactiveLocksAutoConfiguration.FAIR_LOCK_BEAN})
    @ConditionalOnMissingBean(LockClient.class)
    @ConditionalOnBean(CuratorFramework.class)
    LockClientFactoryBean reactiveLocksClient(LockStore store, ReactiveLocksProperties properties,
                                              ConceptOptions options) {
        return new LockClientFactoryBean(store, properties, options);
    }

    /** The ZooKeeper options from the properties: the root path and the bound on the backend's own requests. */
    static ZooKeeperLockOptions zooKeeperOptions(ReactiveLocksProperties properties) {
        ZooKeeperLockOptions.Builder options = ZooKeeperLockOptions.builder()
                .requestTimeout(properties.getRequestTimeout());
        String root = properties.getZookeeper().getRoot();
        if (root != null) {
            InvalidProperty.check("zookeeper.root", root, () -> options.root(root));
        }
        return options.build();
    }

    /**
     * A Curator client from {@code reactive-locks.zookeeper.connect-string} when the application has none, with a
     * session timeout of {@code reactive-locks.zookeeper.session-timeout} (default: the lease time); it is started
     * (connecting in the background) when the first lock bean is made, and closed when the context is destroyed,
     * after the lock client released its leases.
     */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnProperty(prefix = ReactiveLocksProperties.PREFIX + ".zookeeper", name = "connect-string")
    static class ClientFromProperties {

        @Bean(destroyMethod = "close")
        @ConditionalOnMissingBean(CuratorFramework.class)
        CuratorFramework reactiveLocksCuratorFramework(ReactiveLocksProperties properties) {
            ReactiveLocksProperties.ZooKeeper zk = properties.getZookeeper();
            Duration session = zk.getSessionTimeout() != null ? zk.getSessionTimeout() : properties.getLeaseTime();
            return CuratorFrameworkFactory.builder()
                    .connectString(zk.getConnectString())
                    .sessionTimeoutMs(Math.toIntExact(session.toMillis()))
                    .connectionTimeoutMs(Math.toIntExact(zk.getConnectionTimeout().toMillis()))
                    .retryPolicy(new ExponentialBackoffRetry(100, 3))
                    .build();
        }
    }
}
