package io.reactivelocks.spring.boot;

import io.reactivelocks.LockClient;
import io.reactivelocks.LockStore;
import io.reactivelocks.rwlock.ReadWriteLock;
import io.reactivelocks.rwlock.ReadWriteLockOptions;
import io.reactivelocks.semaphore.Semaphore;
import io.reactivelocks.window.WindowLock;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The concepts every store session hands out, made once for whichever {@link LockStore} bean there is — the one a
 * store configuration made from the application's Redis, PostgreSQL, etcd or ZooKeeper client, or the application's
 * own (an in-memory {@code LocalLocks.open()} for development, a session with options of its own): the lock client,
 * the fair lock client, the window lock, the semaphore and the read-write lock, each unless the application defines
 * its own. Imported after the store configurations, which add only what differs per store: the task queue (Redis and
 * PostgreSQL), and on etcd and ZooKeeper, whose mutex grants waiters in arrival order, a lock client that is also
 * the fair lock bean.
 */
@Configuration(proxyBeanMethods = false)
class LockStoreConceptsConfiguration {

    @Bean
    @ConditionalOnBean(LockStore.class)
    @ConditionalOnMissingBean(LockClient.class)
    LockClientFactoryBean reactiveLocksClient(LockStore store, ReactiveLocksProperties properties, ConceptOptions options) {
        return new LockClientFactoryBean(store, properties, options);
    }

    /**
     * The fair (FIFO) lock client, named {@value ReactiveLocksAutoConfiguration#FAIR_LOCK_BEAN}: a second
     * {@link LockClient} that is not a default candidate, so injecting a {@code LockClient} by type still gets the
     * mutex client; inject this one with {@code @Qualifier("reactiveLocksFairLock")}.
     */
    @Bean(name = ReactiveLocksAutoConfiguration.FAIR_LOCK_BEAN, defaultCandidate = false)
    @ConditionalOnBean(LockStore.class)
    @ConditionalOnMissingBean(name = ReactiveLocksAutoConfiguration.FAIR_LOCK_BEAN)
    ClosingFactoryBean.Phased<LockClient> reactiveLocksFairLock(LockStore store, ReactiveLocksProperties properties, ConceptOptions options) {
        return ClosingFactoryBean.fairLock(store.fairLocks(options.forStore(store.name())), properties.getShutdownTimeout());
    }

    @Bean
    @ConditionalOnBean(LockStore.class)
    @ConditionalOnMissingBean(WindowLock.class)
    ClosingFactoryBean<WindowLock> reactiveLocksWindowLock(LockStore store, ReactiveLocksProperties properties, ConceptOptions options) {
        return ClosingFactoryBean.windowLock(store.windowLocks(options.forStore(store.name())), properties.getShutdownTimeout());
    }

    @Bean
    @ConditionalOnBean(LockStore.class)
    @ConditionalOnMissingBean(Semaphore.class)
    ClosingFactoryBean.Phased<Semaphore> reactiveLocksSemaphore(LockStore store, ReactiveLocksProperties properties, ConceptOptions options) {
        return ClosingFactoryBean.semaphore(store.semaphores(options.forStore(store.name())), properties.getShutdownTimeout());
    }

    @Bean
    @ConditionalOnBean(LockStore.class)
    @ConditionalOnMissingBean(ReadWriteLock.class)
    ClosingFactoryBean.Phased<ReadWriteLock> reactiveLocksReadWriteLock(LockStore store, ReactiveLocksProperties properties,
                                                                         ConceptOptions options) {
        return ClosingFactoryBean.readWriteLock(store.readWriteLocks(ReadWriteLockOptions.of(options.forStore(store.name()))),
                properties.getShutdownTimeout());
    }
}
