package io.reactivelocks.examples.webflux;

import io.r2dbc.spi.ConnectionFactory;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockOptions;
import io.reactivelocks.r2dbc.FencedWrites;
import io.reactivelocks.r2dbc.PostgresLockOptions;
import io.reactivelocks.r2dbc.PostgresLocks;
import io.reactivelocks.spring.EnableReactiveLocking;
import io.reactivelocks.window.WindowLock;
import java.time.Duration;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

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
     * The lock client. Its lock table and token sequence are created on first use.
     *
     * @param connectionFactory Spring Boot's connection factory ({@code spring.r2dbc.*})
     * @param leaseTime         lease time of every lock ({@code example.locks.lease-time}, default 10 s)
     * @param waitTimeout       how long a request waits for a lock ({@code example.locks.wait-timeout}, default 10 s)
     * @return the client; closed by {@link #lockClientCloser(LockClient)}, not by Spring's inferred
     *         {@code close()} (which would only build the {@code Mono})
     */
    @Bean(destroyMethod = "")
    public LockClient lockClient(ConnectionFactory connectionFactory,
                                 @Value("${example.locks.lease-time:10s}") Duration leaseTime,
                                 @Value("${example.locks.wait-timeout:10s}") Duration waitTimeout) {
        return PostgresLocks.create(connectionFactory, PostgresLockOptions.defaults(),
                LockOptions.builder().leaseTime(leaseTime).waitTimeout(waitTimeout).build());
    }

    /**
     * Closes the lock client when the context closes (on the thread closing the context, never an
     * event loop): releases held leases and stops the notification listener, before Spring closes
     * the connection pool it depends on.
     *
     * @param lockClient the client to close
     * @return the closer
     */
    @Bean
    public DisposableBean lockClientCloser(LockClient lockClient) {
        return () -> lockClient.close().block(Duration.ofSeconds(10));
    }

    /**
     * The window lock of {@code @ScheduledLock(lockAtLeastFor = ...)}: one claim per name and window, on the
     * same database.
     *
     * @param connectionFactory Spring Boot's connection factory
     * @return the window lock; closed by {@link #windowLockCloser(WindowLock)}
     */
    @Bean(destroyMethod = "")
    public WindowLock windowLock(ConnectionFactory connectionFactory) {
        return PostgresLocks.windowLock(connectionFactory);
    }

    /**
     * Closes the window lock when the context closes.
     *
     * @param windowLock the window lock to close
     * @return the closer
     */
    @Bean
    public DisposableBean windowLockCloser(WindowLock windowLock) {
        return () -> windowLock.close().block(Duration.ofSeconds(10));
    }

    /**
     * Fenced writes to {@code stock}: {@code UPDATE stock SET ... , fence = $token WHERE sku = $k
     * AND (fence IS NULL OR fence <= $token)}: a lower token is refused, the lease's own token may write again.
     *
     * @param connectionFactory Spring Boot's connection factory
     * @return fenced writes on the {@code stock} table keyed by {@code sku}
     */
    @Bean
    public FencedWrites stockWrites(ConnectionFactory connectionFactory) {
        return FencedWrites.of(connectionFactory, "stock", "sku");
    }
}
