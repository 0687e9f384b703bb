package io.reactivelocks.spring.boot;

import static io.reactivelocks.spring.boot.RedisLockClientConfiguration.redisOptions;

import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.RedisClient;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockListener;
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
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * The lock client, the task queue, the window lock and the semaphore on the Lettuce {@code RedisClient} inside Spring
 * Data Redis's {@link LettuceConnectionFactory} bean (what Boot's Redis auto-configuration makes), when there is no
 * {@code RedisClient} bean, each unless the application defines its own. The factory must be started by then (its
 * default, early start-up) and standalone or Sentinel: a Redis Cluster client is refused.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnClass({LettuceConnectionFactory.class, RedisClient.class, RedisLocks.class})
@Conditional(OnBackendCondition.Redis.class)
class SpringDataRedisLockClientConfiguration {

    @Bean
    @ConditionalOnMissingBean(LockClient.class)
    @ConditionalOnBean(LettuceConnectionFactory.class)
    LockClientFactoryBean reactiveLocksClient(LettuceConnectionFactory connectionFactory, ReactiveLocksProperties properties,
                                              ObjectProvider<LockListener> listener,
                                              ObjectProvider<LockListenerFactory> listenerFactory) {
        return new LockClientFactoryBean(RedisLocks.backend(redisClient(connectionFactory, LockClient.class),
                redisOptions(properties)), properties, listener, listenerFactory);
    }

    @Bean
    @ConditionalOnMissingBean(TaskQueue.class)
    @ConditionalOnBean(LettuceConnectionFactory.class)
    ClosingFactoryBean.Phased<TaskQueue> reactiveLocksTaskQueue(LettuceConnectionFactory connectionFactory,
                                                                ReactiveLocksProperties properties) {
        return ClosingFactoryBean.taskQueue(RedisLocks.taskQueue(redisClient(connectionFactory, TaskQueue.class),
                redisOptions(properties), properties.toLockOptions()), TaskQueue.class, properties.getShutdownTimeout());
    }

    @Bean
    @ConditionalOnMissingBean(WindowLock.class)
    @ConditionalOnBean(LettuceConnectionFactory.class)
    ClosingFactoryBean<WindowLock> reactiveLocksWindowLock(LettuceConnectionFactory connectionFactory,
                                                           ReactiveLocksProperties properties) {
        return ClosingFactoryBean.windowLock(RedisLocks.windowLock(redisClient(connectionFactory, WindowLock.class),
                redisOptions(properties), properties.toLockOptions()), properties.getShutdownTimeout());
    }

    @Bean
    @ConditionalOnMissingBean(Semaphore.class)
    @ConditionalOnBean(LettuceConnectionFactory.class)
    ClosingFactoryBean.Phased<Semaphore> reactiveLocksSemaphore(LettuceConnectionFactory connectionFactory,
                                                         ReactiveLocksProperties properties) {
        return ClosingFactoryBean.semaphore(RedisLocks.semaphore(redisClient(connectionFactory, Semaphore.class),
                redisOptions(properties), properties.toLockOptions()), properties.getShutdownTimeout());
    }

    @Bean
    @ConditionalOnMissingBean(ReadWriteLock.class)
    @ConditionalOnBean(LettuceConnectionFactory.class)
    ClosingFactoryBean.Phased<ReadWriteLock> reactiveLocksReadWriteLock(LettuceConnectionFactory connectionFactory,
                                                                 ReactiveLocksProperties properties) {
        return ClosingFactoryBean.readWriteLock(RedisLocks.readWriteLock(redisClient(connectionFactory, ReadWriteLock.class),
                redisOptions(properties), ReadWriteLockOptions.of(properties.toLockOptions())), properties.getShutdownTimeout());
    }

    /**
     * The fair (FIFO) lock client, named {@value ReactiveLocksAutoConfiguration#FAIR_LOCK_BEAN}: a second
     * {@link LockClient} that is not a default candidate, so injecting a {@code LockClient} by type still gets the
     * mutex client; inject this one with {@code @Qualifier("reactiveLocksFairLock")}.
     */
    @Bean(name = ReactiveLocksAutoConfiguration.FAIR_LOCK_BEAN, defaultCandidate = false)
    @ConditionalOnMissingBean(name = ReactiveLocksAutoConfiguration.FAIR_LOCK_BEAN)
    @ConditionalOnBean(LettuceConnectionFactory.class)
    ClosingFactoryBean.Phased<LockClient> reactiveLocksFairLock(LettuceConnectionFactory connectionFactory,
                                                                ReactiveLocksProperties properties) {
        return ClosingFactoryBean.fairLock(RedisLocks.fairLock(redisClient(connectionFactory, LockClient.class),
                redisOptions(properties), properties.toLockOptions()), properties.getShutdownTimeout());
    }

    /**
     * The Lettuce client inside the factory, which must be started and standalone or Sentinel.
     *
     * @param bean the type of the bean being made, named in the error so the application knows what to define itself
     */
    private static RedisClient redisClient(LettuceConnectionFactory connectionFactory, Class<?> bean) {
        AbstractRedisClient nativeClient;
        try {
            nativeClient = connectionFactory.getRequiredNativeClient();
        } catch (IllegalStateException e) {
            throw new IllegalStateException("reactive-locks needs the LettuceConnectionFactory started before the "
                    + bean.getSimpleName() + " is made (leave its early start-up on), or a RedisClient bean", e);
        }
        if (!(nativeClient instanceof RedisClient redis)) {
            throw new IllegalStateException("reactive-locks needs a standalone or Sentinel Redis, but the"
                    + " LettuceConnectionFactory's client is a " + nativeClient.getClass().getName()
                    + ": define your own " + bean.getSimpleName() + " bean"
                    + (bean == LockClient.class ? " (for example with RedisQuorumBackend)" : ""));
        }
        return redis;
    }
}
