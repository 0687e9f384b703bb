package io.reactivelocks.spring.boot;

import io.lettuce.core.RedisClient;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockListener;
import io.reactivelocks.LockStore;
import io.reactivelocks.redis.RedisLockOptions;
import io.reactivelocks.redis.RedisLocks;
import io.reactivelocks.rwlock.ReadWriteLock;
import io.reactivelocks.rwlock.ReadWriteLockOptions;
import io.reactivelocks.semaphore.Semaphore;
import io.reactivelocks.task.TaskQueue;
import io.reactivelocks.window.WindowLock;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;

/**
 * One store session on the application's Lettuce {@link RedisClient} bean and, from it, the lock client, the fair
 * lock client, the task queue, the window lock, the semaphore and the read-write lock, each unless the application
 * defines its own (a {@link LockStore} bean of the application's is used instead of the session).
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnClass({RedisClient.class, RedisLocks.class})
@Conditional(OnBackendCondition.Redis.class)
class RedisLockClientConfiguration {

    /** The session with Redis every concept below comes from: one command and one pub/sub connection. */
    @Bean
    @ConditionalOnMissingBean(LockStore.class)
    @ConditionalOnBean(RedisClient.class)
    ClosingFactoryBean.Phased<LockStore> reactiveLocksStore(RedisClient redis, ReactiveLocksProperties properties) {
        return ClosingFactoryBean.store(RedisLocks.connect(redis, redisOptions(properties)), properties.getShutdownTimeout());
    }

    @Bean
    @ConditionalOnMissingBean(LockClient.class)
    @ConditionalOnBean(RedisClient.class)
    LockClientFactoryBean reactiveLocksClient(LockStore store, ReactiveLocksProperties properties,
                                              ConceptOptions options) {
        return new LockClientFactoryBean(store, properties, options);
    }

    @Bean
    @ConditionalOnMissingBean(TaskQueue.class)
    @ConditionalOnBean(RedisClient.class)
    ClosingFactoryBean.Phased<TaskQueue> reactiveLocksTaskQueue(LockStore store, ReactiveLocksProperties properties, ConceptOptions options) {
        return ClosingFactoryBean.taskQueue(store.taskQueue(options.forStore(store.name())),
                TaskQueue.class, properties.getShutdownTimeout());
    }

    @Bean
    @ConditionalOnMissingBean(WindowLock.class)
    @ConditionalOnBean(RedisClient.class)
    ClosingFactoryBean<WindowLock> reactiveLocksWindowLock(LockStore store, ReactiveLocksProperties properties, ConceptOptions options) {
        return ClosingFactoryBean.windowLock(store.windowLocks(options.forStore(store.name())),
                properties.getShutdownTimeout());
    }

    @Bean
    @ConditionalOnMissingBean(Semaphore.class)
    @ConditionalOnBean(RedisClient.class)
    ClosingFactoryBean.Phased<Semaphore> reactiveLocksSemaphore(LockStore store, ReactiveLocksProperties properties, ConceptOptions options) {
        return ClosingFactoryBean.semaphore(store.semaphores(options.forStore(store.name())),
                properties.getShutdownTimeout());
    }

    @Bean
    @ConditionalOnMissingBean(ReadWriteLock.class)
    @ConditionalOnBean(RedisClient.class)
    ClosingFactoryBean.Phased<ReadWriteLock> reactiveLocksReadWriteLock(LockStore store, ReactiveLocksProperties properties, ConceptOptions options) {
        return ClosingFactoryBean.readWriteLock(store.readWriteLocks(ReadWriteLockOptions.of(options.forStore(store.name()))),
                properties.getShutdownTimeout());
    }

    /**
     * The fair (FIFO) lock client, named {@value ReactiveLocksAutoConfiguration#FAIR_LOCK_BEAN}: a second
     * {@link LockClient} that is not a default candidate, so injecting a {@code LockClient} by type still gets the
     * mutex client; inject this one with {@code @Qualifier("reactiveLocksFairLock")}.
     */
    @Bean(name = ReactiveLocksAutoConfiguration.FAIR_LOCK_BEAN, defaultCandidate = false)
    @ConditionalOnMissingBean(name = ReactiveLocksAutoConfiguration.FAIR_LOCK_BEAN)
    @ConditionalOnBean(RedisClient.class)
    ClosingFactoryBean.Phased<LockClient> reactiveLocksFairLock(LockStore store, ReactiveLocksProperties properties, ConceptOptions options) {
        return ClosingFactoryBean.fairLock(store.fairLocks(options.forStore(store.name())),
                properties.getShutdownTimeout());
    }

    /** The Redis options from the properties; shared with {@link SpringDataRedisLockClientConfiguration}. */
    static RedisLockOptions redisOptions(ReactiveLocksProperties properties) {
        RedisLockOptions.Builder redisOptions = RedisLockOptions.builder();
        String keyPrefix = properties.getRedis().getKeyPrefix();
        if (keyPrefix != null) {
            InvalidProperty.check("redis.key-prefix", keyPrefix, () -> redisOptions.keyPrefix(keyPrefix));
        }
        return redisOptions.build();
    }
}
