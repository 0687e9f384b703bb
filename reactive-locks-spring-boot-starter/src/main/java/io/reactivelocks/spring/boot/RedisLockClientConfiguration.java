package io.reactivelocks.spring.boot;

import io.lettuce.core.RedisClient;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockListener;
import io.reactivelocks.redis.RedisLockBackend;
import io.reactivelocks.redis.RedisLockOptions;
import io.reactivelocks.redis.RedisLocks;
import io.reactivelocks.task.TaskQueue;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;

/** The lock client and the task queue on the application's Lettuce {@link RedisClient} bean. */
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
        RedisLockBackend backend = RedisLocks.backend(redis, redisOptions(properties));
        return new LockClientFactoryBean(backend, properties.toLockOptions(),
                LockListenerFactory.choose(backend, listener.getIfUnique(), listenerFactory.getIfAvailable()),
                properties.getShutdownTimeout());
    }

    @Bean
    @ConditionalOnMissingBean(TaskQueue.class)
    @ConditionalOnBean(RedisClient.class)
    TaskQueueFactoryBean<TaskQueue> reactiveLocksTaskQueue(RedisClient redis, ReactiveLocksProperties properties) {
        return new TaskQueueFactoryBean<>(RedisLocks.taskQueue(redis, redisOptions(properties), properties.toLockOptions()),
                TaskQueue.class, properties.getShutdownTimeout());
    }

    static RedisLockOptions redisOptions(ReactiveLocksProperties properties) {
        RedisLockOptions.Builder redisOptions = RedisLockOptions.builder();
        if (properties.getRedis().getKeyPrefix() != null) {
            redisOptions.keyPrefix(properties.getRedis().getKeyPrefix());
        }
        return redisOptions.build();
    }
}
