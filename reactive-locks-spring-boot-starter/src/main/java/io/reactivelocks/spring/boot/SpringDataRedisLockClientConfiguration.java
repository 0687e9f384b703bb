package io.reactivelocks.spring.boot;

import static io.reactivelocks.spring.boot.RedisLockClientConfiguration.redisOptions;

import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.RedisClient;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockListener;
import io.reactivelocks.LockStore;
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

    /** The session with Redis every concept below comes from: one command and one pub/sub connection. */
    @Bean
    @ConditionalOnMissingBean(LockStore.class)
    @ConditionalOnBean(LettuceConnectionFactory.class)
    ClosingFactoryBean.Phased<LockStore> reactiveLocksStore(LettuceConnectionFactory connectionFactory,
                                                            ReactiveLocksProperties properties) {
        return ClosingFactoryBean.store(RedisLocks.connect(redisClient(connectionFactory, LockClient.class),
                redisOptions(properties)), properties.getShutdownTimeout());
    }

    @Bean
    @ConditionalOnMissingBean(LockClient.class)
    @ConditionalOnBean(LettuceConnectionFactory.class)
    LockClientFactoryBean reactiveLocksClient(LockStore store, ReactiveLocksProperties properties,
                                              ConceptOptions options) {
        return new LockClientFactoryBean(store, properties, options);
    }

    @Bean
    @ConditionalOnMissingBean(TaskQueue.class)
    @ConditionalOnBean(LettuceConnectionFactory.class)
    ClosingFactoryBean.Phased<TaskQueue> reactiveLocksTaskQueue(LockStore store, ReactiveLocksProperties properties, ConceptOptions options) {
        return ClosingFactoryBean.taskQueue(store.taskQueue(options.forStore(store.name())), TaskQueue.class, properties.getShutdownTimeout());
    }

    @Bean
    @ConditionalOnMissingBean(WindowLock.class)
    @ConditionalOnBean(LettuceConnectionFactory.class)
    ClosingFactoryBean<WindowLock> reactiveLocksWindowLock(LockStore store, ReactiveLocksProperties properties, ConceptOptions options) {
        return ClosingFactoryBean.windowLock(store.windowLocks(options.forStore(store.name())), properties.getShutdownTimeout());
    }

    @Bean
    @ConditionalOnMissingBean(Semaphore.class)
    @ConditionalOnBean(LettuceConnectionFactory.class)
    ClosingFactoryBean.Phased<Semaphore> reactiveLocksSemaphore(LockStore store, ReactiveLocksProperties properties, ConceptOptions options) {
        return ClosingFactoryBean.semaphore(store.semaphores(options.forStore(store.name())), properties.getShutdownTimeout());
    }

    @Bean
    @ConditionalOnMissingBean(ReadWriteLock.class)
    @ConditionalOnBean(LettuceConnectionFactory.class)
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
    @ConditionalOnBean(LettuceConnectionFactory.class)
    ClosingFactoryBean.Phased<LockClient> reactiveLocksFairLock(LockStore store, ReactiveLocksProperties properties, ConceptOptions options) {
        return ClosingFactoryBean.fairLock(store.fairLocks(options.forStore(store.name())), properties.getShutdownTimeout());
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
