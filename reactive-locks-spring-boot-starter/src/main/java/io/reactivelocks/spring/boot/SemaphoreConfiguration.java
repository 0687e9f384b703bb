package io.reactivelocks.spring.boot;

import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.RedisClient;
import io.r2dbc.spi.ConnectionFactory;
import io.reactivelocks.r2dbc.PostgresLockOptions;
import io.reactivelocks.r2dbc.PostgresLocks;
import io.reactivelocks.redis.RedisLocks;
import io.reactivelocks.semaphore.Semaphore;
import java.util.Locale;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * {@link Semaphore} beans on the same store, the same conditions and the same options as the auto-configured
 * lock client: on the {@code RedisClient} bean, else on Spring Data Redis's Lettuce client, else on the R2DBC
 * (PostgreSQL) {@code ConnectionFactory} bean. Each opens its own connection on first use and is closed with the
 * context.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnClass(Semaphore.class)
class SemaphoreConfiguration {

    /** On the application's Lettuce {@code RedisClient} bean. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass({RedisClient.class, RedisLocks.class})
    @Conditional(OnBackendCondition.Redis.class)
    static class Redis {

        @Bean
        @ConditionalOnMissingBean(Semaphore.class)
        @ConditionalOnBean(RedisClient.class)
        SemaphoreFactoryBean reactiveLocksSemaphore(RedisClient redis, ReactiveLocksProperties properties) {
            return new SemaphoreFactoryBean(RedisLocks.semaphore(redis, RedisLockClientConfiguration.redisOptions(properties),
                    properties.toLockOptions()), properties.getShutdownTimeout());
        }
    }

    /** On the Lettuce client inside Spring Data Redis's {@code LettuceConnectionFactory} bean. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass({LettuceConnectionFactory.class, RedisClient.class, RedisLocks.class})
    @Conditional(OnBackendCondition.Redis.class)
    static class SpringDataRedis {

        @Bean
        @ConditionalOnMissingBean(Semaphore.class)
        @ConditionalOnBean(LettuceConnectionFactory.class)
        SemaphoreFactoryBean reactiveLocksSemaphore(LettuceConnectionFactory connectionFactory, ReactiveLocksProperties properties) {
            AbstractRedisClient nativeClient = connectionFactory.getRequiredNativeClient();
            if (!(nativeClient instanceof RedisClient redis)) {
                throw new IllegalStateException("reactive-locks needs a standalone or Sentinel Redis for the semaphore, but the"
                        + " LettuceConnectionFactory's client is a " + nativeClient.getClass().getName()
                        + ": define your own Semaphore bean");
            }
            return new SemaphoreFactoryBean(RedisLocks.semaphore(redis, RedisLockClientConfiguration.redisOptions(properties),
                    properties.toLockOptions()), properties.getShutdownTimeout());
        }
    }

    /** On the application's R2DBC {@code ConnectionFactory} bean, which must be PostgreSQL. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass({ConnectionFactory.class, PostgresLocks.class})
    @Conditional(OnBackendCondition.Postgres.class)
    static class Postgres {

        @Bean
        @ConditionalOnMissingBean(Semaphore.class)
        @ConditionalOnBean(ConnectionFactory.class)
        SemaphoreFactoryBean reactiveLocksSemaphore(ConnectionFactory factory, ReactiveLocksProperties properties) {
            String database = factory.getMetadata().getName();
            if (database == null || !database.toLowerCase(Locale.ROOT).contains("postgres")) {
                throw new IllegalStateException("reactive-locks needs PostgreSQL for the semaphore, but the R2DBC"
                        + " ConnectionFactory bean is " + database + ": define your own Semaphore bean");
            }
            PostgresLockOptions postgresOptions = PostgresLockOptions.builder()
                    .schema(properties.getPostgres().getSchema())
                    .table(properties.getPostgres().getTable())
                    .build();
            return new SemaphoreFactoryBean(PostgresLocks.semaphore(factory, postgresOptions, properties.toLockOptions()),
                    properties.getShutdownTimeout());
        }
    }
}
