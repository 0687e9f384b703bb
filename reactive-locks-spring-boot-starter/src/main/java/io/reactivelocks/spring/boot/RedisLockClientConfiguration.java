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
 * One store session on the application's Lettuce {@link RedisClient} bean (unless the application has a
 * {@link LockStore} bean of its own) and the task queue from it; the other concepts come from the session through
 * {@link LockStoreConceptsConfiguration}.
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
    @ConditionalOnMissingBean(TaskQueue.class)
    @ConditionalOnBean(RedisClient.class)
    ClosingFactoryBean.Phased<TaskQueue> reactiveLocksTaskQueue(LockStore store, ReactiveLocksProperties properties, ConceptOptions options) {
        return ClosingFactoryBean.taskQueue(store.taskQueue(options.forStore(store.name())),
                TaskQueue.class, properties.getShutdownTimeout());
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
