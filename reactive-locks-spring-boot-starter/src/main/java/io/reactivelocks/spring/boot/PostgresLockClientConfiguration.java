package io.reactivelocks.spring.boot;

import io.r2dbc.spi.ConnectionFactory;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockListener;
import io.reactivelocks.LockStore;
import io.reactivelocks.r2dbc.postgresql.PostgresLockOptions;
import io.reactivelocks.r2dbc.postgresql.PostgresLocks;
import io.reactivelocks.r2dbc.postgresql.PostgresTaskQueue;
import io.reactivelocks.r2dbc.postgresql.SchemaMode;
import io.reactivelocks.rwlock.ReadWriteLock;
import io.reactivelocks.rwlock.ReadWriteLockOptions;
import io.reactivelocks.semaphore.Semaphore;
import io.reactivelocks.task.TaskQueue;
import io.reactivelocks.window.WindowLock;
import java.util.Locale;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;

/**
 * One store session on the application's R2DBC {@link ConnectionFactory} bean, which must be PostgreSQL, the task
 * queue from it and the startup schema check, each unless the application defines its own; the other concepts come
 * from the session through {@link LockStoreConceptsConfiguration}.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnClass({ConnectionFactory.class, PostgresLocks.class})
@Conditional(OnBackendCondition.Postgres.class)
class PostgresLockClientConfiguration {

    /** The session with PostgreSQL every concept below comes from: one pool and one {@code LISTEN} connection. */
    @Bean
    @ConditionalOnMissingBean(LockStore.class)
    @ConditionalOnBean(ConnectionFactory.class)
    ClosingFactoryBean.Phased<LockStore> reactiveLocksStore(ConnectionFactory factory, ReactiveLocksProperties properties) {
        return ClosingFactoryBean.store(PostgresLocks.connect(postgres(factory, LockClient.class, properties),
                postgresOptions(properties)), properties.getShutdownTimeout());
    }

    @Bean
    @ConditionalOnMissingBean(TaskQueue.class)
    @ConditionalOnBean(ConnectionFactory.class)
    ClosingFactoryBean.Phased<PostgresTaskQueue> reactiveLocksTaskQueue(LockStore store, ReactiveLocksProperties properties, ConceptOptions options) {
        // a PostgreSQL session hands out PostgresTaskQueues; another store's session bean (the application's) cannot
        TaskQueue queue = store.taskQueue(options.forStore(store.name()));
        if (!(queue instanceof PostgresTaskQueue postgresQueue)) {
            queue.close().subscribe();
            throw new IllegalStateException("the LockStore bean is " + store.name() + ", not PostgreSQL: define your own"
                    + " TaskQueue bean or set " + ReactiveLocksProperties.PREFIX + ".backend to " + store.name());
        }
        return ClosingFactoryBean.taskQueue(postgresQueue, PostgresTaskQueue.class, properties.getShutdownTimeout());
    }

    /**
     * With {@code reactive-locks.postgres.schema-mode=validate}: checks the whole schema once at startup, so that a
     * missing object fails the application (reported by {@link IncompleteSchemaFailureAnalyzer}) rather than its first
     * lock.
     */
    @Bean
    @ConditionalOnProperty(prefix = ReactiveLocksProperties.PREFIX + ".postgres", name = "schema-mode", havingValue = "validate")
    @ConditionalOnBean(ConnectionFactory.class)
    PostgresSchemaStartupCheck reactiveLocksPostgresSchemaCheck(ConnectionFactory factory, ReactiveLocksProperties properties) {
        return new PostgresSchemaStartupCheck(postgres(factory, LockClient.class, properties), postgresOptions(properties));
    }

    static PostgresLockOptions postgresOptions(ReactiveLocksProperties properties) {
        String schema = properties.getPostgres().getSchema();
        String table = properties.getPostgres().getTable();
        PostgresLockOptions.Builder options = PostgresLockOptions.builder()
                .schemaMode(SchemaMode.valueOf(properties.getPostgres().getSchemaMode().name()));
        InvalidProperty.check("postgres.schema", schema, () -> options.schema(schema));
        return InvalidProperty.check("postgres.table", table, () -> options.table(table).build());
    }

    /**
     * The factory, checked to be PostgreSQL.
     *
     * @param bean the type of the bean being made, named in the error so the application knows what to define itself
     * @throws org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException naming
     *         {@code reactive-locks.backend} when it is not PostgreSQL
     */
    private static ConnectionFactory postgres(ConnectionFactory factory, Class<?> bean, ReactiveLocksProperties properties) {
        String database = factory.getMetadata().getName();
        if (database == null || !database.toLowerCase(Locale.ROOT).contains("postgres")) {
            throw InvalidProperty.invalid("backend", properties.getBackend().name().toLowerCase(Locale.ROOT),
                    "reactive-locks needs PostgreSQL, but the R2DBC ConnectionFactory bean is " + database + ": set "
                    + ReactiveLocksProperties.PREFIX + ".backend to redis, etcd or zookeeper (with that store's client)"
                    + " or define your own " + bean.getSimpleName() + " bean");
        }
        return factory;
    }
}
