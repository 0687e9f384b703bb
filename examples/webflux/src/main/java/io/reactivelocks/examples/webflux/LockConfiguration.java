package io.reactivelocks.examples.webflux;

import io.r2dbc.spi.ConnectionFactory;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockOptions;
import io.reactivelocks.LockStore;
import io.reactivelocks.r2dbc.FencedWrites;
import io.reactivelocks.r2dbc.SpringFencedWrites;
import io.reactivelocks.r2dbc.postgresql.PostgresLockOptions;
import io.reactivelocks.r2dbc.postgresql.PostgresLocks;
import io.reactivelocks.spring.EnableReactiveLocking;
import io.reactivelocks.window.WindowLock;
import java.time.Duration;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.r2dbc.core.DatabaseClient;

/**
 * Builds the application's one {@link LockClient} from Spring Boot's R2DBC {@link ConnectionFactory}
 * (a pool, when r2dbc-pool is on the classpath; the lock client uses it and leaves it to Spring to
 * close), the {@link WindowLock} of the scheduled audit, and the {@link FencedWrites} for the
 * {@code stock} table; {@link EnableReactiveLocking} switches on {@code @Locked} and
 * {@code @ScheduledLock}. No starter: this is all the wiring there is.
 */
@Configuration(proxyBeanMethods = false)
@EnableReactiveLocking
public class LockConfiguration {

    /**
     * The session with PostgreSQL: one pool and one {@code LISTEN} connection for every concept the
     * application uses. Its tables and token sequence are created on first use.
     *
     * @param connectionFactory Spring Boot's connection factory ({@code spring.r2dbc.*})
     * @return the session; closed by {@link #lockStoreCloser(LockStore)}, not by Spring's inferred
     *         {@code close()} (which would only build the {@code Mono})
     */
    @Bean(destroyMethod = "")
    public LockStore lockStore(ConnectionFactory connectionFactory) {
        return PostgresLocks.connect(connectionFactory, PostgresLockOptions.defaults());
    }

    /**
     * Closes the session when the context closes (on the thread closing the context, never an event
     * loop): releases held leases, stops the notification listener and closes the pool the session
     * made, before Spring closes the connection factory it depends on.
     *
     * @param lockStore the session to close
     * @return the closer
     */
    @Bean
    public DisposableBean lockStoreCloser(LockStore lockStore) {
        return () -> lockStore.close().block(Duration.ofSeconds(10));
    }

    /**
     * The lock client, from the session.
     *
     * @param lockStore   the session
     * @param leaseTime   lease time of every lock ({@code example.locks.lease-time}, default 10 s)
     * @param waitTimeout how long a request waits for a lock ({@code example.locks.wait-timeout}, default 10 s)
     * @return the client; closed with the session
     */
    @Bean(destroyMethod = "")
    public LockClient lockClient(LockStore lockStore,
                                 @Value("${example.locks.lease-time:10s}") Duration leaseTime,
                                 @Value("${example.locks.wait-timeout:10s}") Duration waitTimeout) {
        return lockStore.locks(LockOptions.builder().leaseTime(leaseTime).waitTimeout(waitTimeout).build());
    }

    /**
     * The window lock of {@code @ScheduledLock(lockAtLeastFor = ...)}: one claim per name and window, from
     * the same session.
     *
     * @param lockStore the session
     * @return the window lock; closed with the session
     */
    @Bean(destroyMethod = "")
    public WindowLock windowLock(LockStore lockStore) {
        return lockStore.windowLocks(LockOptions.defaults());
    }

    /**
     * Fenced writes to {@code stock}: {@code UPDATE stock SET ... , fence = $token WHERE sku = $k
     * AND (fence IS NULL OR fence <= $token)}: a lower token is refused, the lease's own token may write again.
     * Through a {@code DatabaseClient}, so a write inside a Spring transaction is part of it.
     *
     * @param connectionFactory Spring Boot's connection factory
     * @return fenced writes on the {@code stock} table keyed by {@code sku}
     */
    @Bean
    public FencedWrites stockWrites(ConnectionFactory connectionFactory) {
        return SpringFencedWrites.of(DatabaseClient.create(connectionFactory), "stock", "sku");
    }
}
