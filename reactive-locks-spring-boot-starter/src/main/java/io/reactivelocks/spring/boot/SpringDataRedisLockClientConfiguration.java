package io.reactivelocks.spring.boot;

import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.RedisClient;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockListener;
import io.reactivelocks.redis.RedisLockBackend;
import io.reactivelocks.redis.RedisLocks;
import io.reactivelocks.task.TaskQueue;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * The lock client and the task queue on the Lettuce {@code RedisClient} inside Spring Data Redis's {@link LettuceConnectionFactory}
 * bean (what Boot's Redis auto-configuration makes), when there is no {@code RedisClient} bean. The factory must be
 * started by then (its default, early start-up) and standalone or Sentinel: a Redis Cluster client is refused.
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
        RedisClient redis = redisClient(connectionFactory);
        RedisLockBackend backend = RedisLocks.backend(redis, RedisLockClientConfiguration.redisOptions(properties));
        return new LockClientFactoryBean(backend, properties.toLockOptions(),
                LockListenerFactory.choose(backend, listener.getIfUnique(), listenerFactory.getIfAvailable()),
                properties.getShutdownTimeout());
    }

    @Bean
    @ConditionalOnMissingBean(TaskQueue.class)
    @ConditionalOnBean(LettuceConnectionFactory.class)
    TaskQueueFactoryBean<TaskQueue> reactiveLocksTaskQueue(LettuceConnectionFactory connectionFactory,
                                                          ReactiveLocksProperties properties) {
        return new TaskQueueFactoryBean<>(RedisLocks.taskQueue(redisClient(connectionFactory),
                RedisLockClientConfiguration.redisOptions(properties), properties.toLockOptions()),
                TaskQueue.class, properties.getShutdownTimeout());
    }

    private static RedisClient redisClient(LettuceConnectionFactory connectionFactory) {
        AbstractRedisClient nativeClient;
        try {
            nativeClient = connectionFactory.getRequiredNativeClient();
        } catch (IllegalStateException e) {
            throw new IllegalStateException("reactive-locks needs the LettuceConnectionFactory started before the"
                    + " LockClient is made (leave its early start-up on), or a RedisClient bean", e);
        }
        if (!(nativeClient instanceof RedisClient redis)) {
            throw new IllegalStateException("reactive-locks needs a standalone or Sentinel Redis, but the"
                    + " LettuceConnectionFactory's client is a " + nativeClient.getClass().getName()
                    + ": define your own LockClient bean (for example with RedisQuorumBackend)");
        }
        return redis;
    }
}
