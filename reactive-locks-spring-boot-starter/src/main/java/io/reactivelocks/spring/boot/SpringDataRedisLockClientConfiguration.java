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
 * One store session on the Lettuce {@code RedisClient} inside Spring Data Redis's {@link LettuceConnectionFactory}
 * bean (what Boot's Redis auto-configuration makes), when there is no {@code RedisClient} bean, and the task queue
 * from it, each unless the application defines its own; the other concepts come from the session through
 * {@link LockStoreConceptsConfiguration}. The factory must be started by then (its
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
    @ConditionalOnMissingBean(TaskQueue.class)
    @ConditionalOnBean(LettuceConnectionFactory.class)
    ClosingFactoryBean.Phased<TaskQueue> reactiveLocksTaskQueue(LockStore store, ReactiveLocksProperties properties, ConceptOptions options) {
        return ClosingFactoryBean.taskQueue(store.taskQueue(options.forStore(store.name())), TaskQueue.class, properties.getShutdownTimeout());
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
