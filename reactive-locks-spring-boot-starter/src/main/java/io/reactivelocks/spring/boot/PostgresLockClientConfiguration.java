package io.reactivelocks.spring.boot;

import io.r2dbc.spi.ConnectionFactory;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockListener;
import io.reactivelocks.r2dbc.PostgresLockBackend;
import io.reactivelocks.r2dbc.PostgresLockOptions;
import io.reactivelocks.r2dbc.PostgresLocks;
import io.reactivelocks.r2dbc.PostgresTaskQueue;
import io.reactivelocks.task.TaskQueue;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;

/** The lock client and the task queue on the application's R2DBC {@link ConnectionFactory} bean, which must be PostgreSQL. */
@Configuration(proxyBeanMethods = false)
@ConditionalOnClass({ConnectionFactory.class, PostgresLocks.class})
@Conditional(OnBackendCondition.Postgres.class)
class PostgresLockClientConfiguration {

    @Bean
    @ConditionalOnMissingBean(LockClient.class)
    @ConditionalOnBean(ConnectionFactory.class)
    LockClientFactoryBean reactiveLocksClient(ConnectionFactory factory, ReactiveLocksProperties properties,
                                              ObjectProvider<LockListener> listener,
                                              ObjectProvider<LockListenerFactory> listenerFactory) {
        requirePostgres(factory);
        PostgresLockBackend backend = PostgresLocks.backend(factory, postgresOptions(properties));
        return new LockClientFactoryBean(backend, properties.toLockOptions(),
                LockListenerFactory.choose(backend, listener.getIfUnique(), listenerFactory.getIfAvailable()),
                properties.getShutdownTimeout());
    }

    @Bean
    @ConditionalOnMissingBean(TaskQueue.class)
    @ConditionalOnBean(ConnectionFactory.class)
    TaskQueueFactoryBean<PostgresTaskQueue> reactiveLocksTaskQueue(ConnectionFactory factory,
                                                                  ReactiveLocksProperties properties) {
        requirePostgres(factory);
        return new TaskQueueFactoryBean<>(PostgresLocks.taskQueue(factory, postgresOptions(properties),
                properties.toLockOptions()), PostgresTaskQueue.class, properties.getShutdownTimeout());
    }

    private static PostgresLockOptions postgresOptions(ReactiveLocksProperties properties) {
        return PostgresLockOptions.builder()
                .schema(properties.getPostgres().getSchema())
                .table(properties.getPostgres().getTable())
                .build();
    }

    private static void requirePostgres(ConnectionFactory factory) {
        String database = factory.getMetadata().getName();
        if (database == null || !database.toLowerCase(java.util.Locale.ROOT).contains("postgres")) {
            throw new IllegalStateException("reactive-locks needs PostgreSQL, but the R2DBC ConnectionFactory bean is "
                    + database + ": set " + ReactiveLocksProperties.PREFIX + ".backend=redis (with a RedisClient bean)"
                    + " or define your own LockClient bean");
        }
    }
}
