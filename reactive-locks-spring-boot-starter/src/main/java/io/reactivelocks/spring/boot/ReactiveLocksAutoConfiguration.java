package io.reactivelocks.spring.boot;

import io.reactivelocks.LockClient;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Import;

/**
 * Auto-configures a {@link LockClient} bean, unless the application defines its own:
 * <ol>
 *   <li>on the Lettuce {@code io.lettuce.core.RedisClient} bean, with {@code reactive-locks-redis} on the
 *       classpath and {@code reactive-locks.backend} = {@code auto} or {@code redis};</li>
 *   <li>else on the Lettuce client inside Spring Data Redis's {@code LettuceConnectionFactory} bean (standalone or
 *       Sentinel), under the same conditions;</li>
 *   <li>else on the R2DBC {@code io.r2dbc.spi.ConnectionFactory} bean (PostgreSQL), with
 *       {@code reactive-locks-r2dbc} on the classpath and {@code reactive-locks.backend} = {@code auto} or
 *       {@code postgres};</li>
 *   <li>else on the jetcd {@code io.etcd.jetcd.Client} bean — or one made from {@code reactive-locks.etcd.endpoints}
 *       — with {@code reactive-locks-etcd} on the classpath and {@code reactive-locks.backend} = {@code auto} or
 *       {@code etcd};</li>
 *   <li>else on the Curator {@code org.apache.curator.framework.CuratorFramework} bean — or one made from
 *       {@code reactive-locks.zookeeper.connect-string} — with {@code reactive-locks-zookeeper} on the classpath and
 *       {@code reactive-locks.backend} = {@code auto} or {@code zookeeper};</li>
 *   <li>else no client; the condition evaluation report ({@code --debug}) says which bean was missing.</li>
 * </ol>
 * Every bean comes from one {@link io.reactivelocks.LockStore} session per application (bean {@code reactiveLocksStore},
 * unless the application defines its own {@code LockStore}), so all concepts share one connection set.
 * A {@code io.reactivelocks.window.WindowLock}, a {@code io.reactivelocks.semaphore.Semaphore} and a writer-preferring
 * {@code io.reactivelocks.rwlock.ReadWriteLock} bean come on the same store under the same conditions, unless the application defines its own; next to the client, a
 * {@link io.reactivelocks.election.LeaderElection} and a {@link io.reactivelocks.multi.MultiLock} bean on it (unless
 * the application defines them); a fair (FIFO) lock client named {@value #FAIR_LOCK_BEAN}. Beside the client,
 * on the same store and with the same options, a {@link io.reactivelocks.task.TaskQueue} bean
 * ({@code io.reactivelocks.r2dbc.postgresql.PostgresTaskQueue} on PostgreSQL) unless the application defines its own; it is closed
 * with the context. Options come from {@link ReactiveLocksProperties}. The client reports to the application's single
 * {@code io.reactivelocks.LockListener} bean if it defines one, and to Micrometer when a {@code MeterRegistry} bean
 * and {@code reactive-locks-micrometer} are present (observations too, with an {@code ObservationRegistry} bean). With
 * Spring Boot's actuator, a {@code reactiveLocks} health indicator and a {@code reactivelocks} endpoint
 * ({@link ReactiveLocksEndpoint}). Nothing is sent to a store at startup (a Curator client is started, connecting in
 * the background); the client is closed (its leases
 * released) when the context stops, after a web server's graceful shutdown and before Spring Data Redis's connection
 * factory stops, waiting at most {@code reactive-locks.shutdown-timeout}.
 */
@AutoConfiguration(afterName = {
        "org.springframework.boot.r2dbc.autoconfigure.R2dbcAutoConfiguration",
        "org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration"})
@ConditionalOnClass(LockClient.class)
@EnableConfigurationProperties(ReactiveLocksProperties.class)
@Import({RedisLockClientConfiguration.class, SpringDataRedisLockClientConfiguration.class,
        R2dbcLockClientConfiguration.class, EtcdLockClientConfiguration.class, ZooKeeperLockClientConfiguration.class,
        LockStoreConceptsConfiguration.class, LockMetricsConfiguration.class, LeaderElectionConfiguration.class, MultiLockConfiguration.class,
        LockObservationConfiguration.class, ReactiveLocksActuatorConfiguration.class})
public class ReactiveLocksAutoConfiguration {

    /**
     * The name of the fair (FIFO) lock client bean: on Redis and PostgreSQL a second {@code LockClient}
     * (the session's {@code fairLocks} on Redis / PostgreSQL) that is not a default candidate, so a
     * {@code LockClient} injected by type is still the mutex client; on etcd and ZooKeeper, whose mutex already grants
     * waiters in arrival order, an alias of the lock client bean. Inject it with {@code @Qualifier("reactiveLocksFairLock")}.
     */
    public static final String FAIR_LOCK_BEAN = "reactiveLocksFairLock";

    /** Created by Spring Boot's auto-configuration. */
    public ReactiveLocksAutoConfiguration() {
    }

    /**
     * @param properties        the application's options
     * @param listener          the application's {@code LockListener} bean, used if it is unique
     * @param listenerFactories the starter's listener factories (meters, observations, health counts)
     * @return the options every auto-configured concept is handed out with
     */
    @org.springframework.context.annotation.Bean
    ConceptOptions reactiveLocksConceptOptions(ReactiveLocksProperties properties,
                                               org.springframework.beans.factory.ObjectProvider<io.reactivelocks.LockListener> listener,
                                               org.springframework.beans.factory.ObjectProvider<LockListenerFactory> listenerFactories) {
        return new ConceptOptions(properties, listener, listenerFactories);
    }
}
