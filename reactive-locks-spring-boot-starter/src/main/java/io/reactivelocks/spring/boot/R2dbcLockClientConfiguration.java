package io.reactivelocks.spring.boot;

import io.r2dbc.spi.ConnectionFactory;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockListener;
import io.reactivelocks.LockStore;
import io.reactivelocks.r2dbc.mariadb.MariaDbLockOptions;
import io.reactivelocks.r2dbc.mariadb.MariaDbLocks;
import io.reactivelocks.r2dbc.postgresql.PostgresLockOptions;
import io.reactivelocks.r2dbc.postgresql.PostgresLocks;
import io.reactivelocks.r2dbc.postgresql.PostgresTaskQueue;
import io.reactivelocks.r2dbc.SchemaMode;
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
 * One store session on the application's R2DBC {@link ConnectionFactory} bean — PostgreSQL or MariaDB/MySQL, as the
 * driver says ({@code reactive-locks.backend=postgres|mariadb} insists on one) — the task queue from it and, on
 * PostgreSQL, the startup schema check, each unless the application defines its own; the other concepts come from
 * the session through {@link LockStoreConceptsConfiguration}.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnClass({ConnectionFactory.class, PostgresLocks.class})
@Conditional(OnBackendCondition.Sql.class)
class R2dbcLockClientConfiguration {

    /**
     * The session every concept comes from: on PostgreSQL one pool and one {@code LISTEN} connection, on MariaDB one
     * pool (and one poller of the names waited for).
     */
    @Bean
    @ConditionalOnMissingBean(LockStore.class)
    @ConditionalOnBean(ConnectionFactory.class)
    ClosingFactoryBean.Phased<LockStore> reactiveLocksStore(ConnectionFactory factory, ReactiveLocksProperties properties) {
        LockStore store = isMariaDb(factory, properties)
                ? MariaDbLocks.connect(factory, mariaDbOptions(properties))
                : PostgresLocks.connect(postgres(factory, LockClient.class, properties), postgresOptions(properties));
        return ClosingFactoryBean.store(store, properties.getShutdownTimeout());
    }

    /** The task queue: on PostgreSQL a {@link PostgresTaskQueue} (which adds {@code migrate()}), else a {@link TaskQueue}. */
    @Bean
    @ConditionalOnMissingBean(TaskQueue.class)
    @ConditionalOnBean(ConnectionFactory.class)
    ClosingFactoryBean.Phased<TaskQueue> reactiveLocksTaskQueue(LockStore store, ReactiveLocksProperties properties, ConceptOptions options) {
        if (!store.offers(io.reactivelocks.Concept.TASK_QUEUE)) {
            throw new IllegalStateException("the LockStore bean is " + store.name() + ", which has no task queue: define your own"
                    + " TaskQueue bean or set " + ReactiveLocksProperties.PREFIX + ".backend to " + store.name());
        }
        TaskQueue queue = store.taskQueue(options.forStore(store.name()));
        @SuppressWarnings({"unchecked", "rawtypes"})
        Class<TaskQueue> type = (Class) (queue instanceof PostgresTaskQueue ? PostgresTaskQueue.class : TaskQueue.class);
        return ClosingFactoryBean.taskQueue(queue, type, properties.getShutdownTimeout());
    }

    /** @return whether the factory is MariaDB or MySQL (the backend property, if it names one, must agree) */
    private static boolean isMariaDb(ConnectionFactory factory, ReactiveLocksProperties properties) {
        String database = String.valueOf(factory.getMetadata().getName()).toLowerCase(Locale.ROOT);
        boolean mariaDb = database.contains("mariadb") || database.contains("mysql");
        if (properties.getBackend() == ReactiveLocksProperties.Backend.MARIADB && !mariaDb) {
            throw InvalidProperty.invalid("backend", "mariadb", "reactive-locks.backend is mariadb, but the R2DBC ConnectionFactory"
                    + " bean is " + factory.getMetadata().getName() + ": set " + ReactiveLocksProperties.PREFIX
                    + ".backend to postgres (or auto), or define your own LockStore bean");
        }
        return mariaDb && properties.getBackend() != ReactiveLocksProperties.Backend.POSTGRES;
    }

    /** The MariaDB options from the properties. */
    static MariaDbLockOptions mariaDbOptions(ReactiveLocksProperties properties) {
        ReactiveLocksProperties.MariaDb mariadb = properties.getMariadb();
        MariaDbLockOptions.Builder options = MariaDbLockOptions.builder()
                .schemaMode(io.reactivelocks.r2dbc.SchemaMode.valueOf(mariadb.getSchemaMode().name()));
        InvalidProperty.check("mariadb.database", mariadb.getDatabase(), () -> options.database(mariadb.getDatabase()));
        return InvalidProperty.check("mariadb.table", mariadb.getTable(), () -> options.table(mariadb.getTable()).build());
    }

    /**
     * With {@code reactive-locks.postgres.schema-mode=validate}: checks the whole schema once at startup, so that a
     * missing object fails the application (reported by {@link IncompleteSchemaFailureAnalyzer}) rather than its first
     * lock.
     */
    @Bean
    @ConditionalOnProperty(prefix = ReactiveLocksProperties.PREFIX + ".postgres", name = "schema-mode", havingValue = "validate")
    @ConditionalOnBean(ConnectionFactory.class)
    @Conditional(OnBackendCondition.Postgres.class)
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
