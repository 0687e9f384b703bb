package io.reactivelocks.spring.boot;

import io.lettuce.core.RedisClient;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockListener;
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
 * The lock client, the fair lock client, the task queue, the window lock, the semaphore and the read-write lock on the application's Lettuce
 * {@link RedisClient} bean, each unless the application defines its own.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnClass({RedisClient.class, RedisLocks.class})
@Conditional(OnBackendCondition.Redis.class)
class RedisLockClientConfiguration {

    @Bean
    @ConditionalOnMissingBean(LockClient.class)
    @ConditionalOnBean(RedisClient.class)
    LockClientFactoryBean reactiveLocksClient(RedisClient redis, ReactiveLocksProperties properties,
                                              ObjectProvider<LockListener> listener,
                                              ObjectProvider<LockListenerFactory> listenerFactory) {
        return new LockClientFactoryBean(RedisLocks.backend(redis, redisOptions(properties)), properties, listener,
                listenerFactory);
    }

    @Bean
    @ConditionalOnMissingBean(TaskQueue.class)
    @ConditionalOnBean(RedisClient.class)
    ClosingFactoryBean.Phased<TaskQueue> reactiveLocksTaskQueue(RedisClient redis, ReactiveLocksProperties properties) {
        return ClosingFactoryBean.taskQueue(RedisLocks.taskQueue(redis, redisOptions(properties), properties.toLockOptions()),
                TaskQueue.class, properties.getShutdownTimeout());
    }

    @Bean
    @ConditionalOnMissingBean(WindowLock.class)
    @ConditionalOnBean(RedisClient.class)
    ClosingFactoryBean<WindowLock> reactiveLocksWindowLock(RedisClient redis, ReactiveLocksProperties properties) {
        return ClosingFactoryBean.windowLock(RedisLocks.windowLock(redis, redisOptions(properties), properties.toLockOptions()),
                properties.getShutdownTimeout());
    }

    @Bean
    @ConditionalOnMissingBean(Semaphore.class)
    @ConditionalOnBean(RedisClient.class)
    ClosingFactoryBean.Phased<Semaphore> reactiveLocksSemaphore(RedisClient redis, ReactiveLocksProperties properties) {
        return ClosingFactoryBean.semaphore(RedisLocks.semaphore(redis, redisOptions(properties), properties.toLockOptions()),
                properties.getShutdownTimeout());
    }

    @Bean
    @ConditionalOnMissingBean(ReadWriteLock.class)
    @ConditionalOnBean(RedisClient.class)
    ClosingFactoryBean.Phased<ReadWriteLock> reactiveLocksReadWriteLock(RedisClient redis, ReactiveLocksProperties properties) {
        return ClosingFactoryBean.readWriteLock(RedisLocks.readWriteLock(redis, redisOptions(properties),
                ReadWriteLockOptions.of(properties.toLockOptions())), properties.getShutdownTimeout());
    }

    /**
     * The fair (FIFO) lock client, named {@value ReactiveLocksAutoConfiguration#FAIR_LOCK_BEAN}: a second
     * {@link LockClient} that is not a default candidate, so injecting a {@code LockClient} by type still gets the
     * mutex client; inject this one with {@code @Qualifier("reactiveLocksFairLock")}.
     */
    @Bean(name = ReactiveLocksAutoConfiguration.FAIR_LOCK_BEAN, defaultCandidate = false)
    @ConditionalOnMissingBean(name = ReactiveLocksAutoConfiguration.FAIR_LOCK_BEAN)
    @ConditionalOnBean(RedisClient.class)
    ClosingFactoryBean.Phased<LockClient> reactiveLocksFairLock(RedisClient redis, ReactiveLocksProperties properties) {
        return ClosingFactoryBean.fairLock(RedisLocks.fairLock(redis, redisOptions(properties), properties.toLockOptions()),
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
