package io.reactivelocks.spring.boot;

import io.reactivelocks.LockClient;
import io.reactivelocks.LockListener;
import io.reactivelocks.LockOptions;
import io.reactivelocks.spi.LockBackend;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.beans.factory.FactoryBean;
import org.springframework.context.SmartLifecycle;
import reactor.core.scheduler.Schedulers;

/**
 * Makes the auto-configured {@link LockClient} and closes it with the context. {@code LockClient.close()} returns
 * a {@code Mono}, which Spring's inferred destroy method would call and drop unsubscribed; this bean subscribes and
 * waits (bounded) instead. Waiting is allowed here: context shutdown runs on the application's main or
 * shutdown-hook thread. Should a context ever be closed from a non-blocking (Reactor) thread, the close is started
 * without waiting.
 *
 * <p>The client is closed in the lifecycle stop phase {@link #PHASE}: after a web server's graceful shutdown and
 * stop (so requests still running finish under their locks), and before phase-0 lifecycle beans such as Spring
 * Data Redis's {@code LettuceConnectionFactory} shut their connections down (so the leases can still be released).
 * {@link #destroy()} closes it too if the context was never started.
 */
final class LockClientFactoryBean implements FactoryBean<LockClient>, SmartLifecycle, DisposableBean {

    /** Lifecycle phase: lower than a web server's ({@code DEFAULT_PHASE - 2048}), higher than 0. */
    static final int PHASE = SmartLifecycle.DEFAULT_PHASE - 4096;

    private static final Log LOG = LogFactory.getLog(LockClientFactoryBean.class);

    private final LockClient client;
    private final Duration shutdownTimeout;
    private final AtomicBoolean running = new AtomicBoolean();
    private final AtomicBoolean closed = new AtomicBoolean();

    LockClientFactoryBean(LockBackend backend, LockOptions options, LockListener listener, Duration shutdownTimeout) {
        this.client = LockClient.create(backend, options, listener);
        this.shutdownTimeout = Objects.requireNonNull(shutdownTimeout, "shutdownTimeout");
    }

    @Override
    public LockClient getObject() {
        return client;
    }

    @Override
    public Class<?> getObjectType() {
        return LockClient.class;
    }

    @Override
    public void start() {
        running.set(true);
    }

    @Override
    public void stop() {
        running.set(false);
        close();
    }

    @Override
    public boolean isRunning() {
        return running.get();
    }

    @Override
    public int getPhase() {
        return PHASE;
    }

    @Override
    public void destroy() {
        close();
    }

    private void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        if (Schedulers.isInNonBlockingThread()) {
            client.close().subscribe(null, e -> LOG.warn("closing the reactive-locks client failed", e));
            return;
        }
        try {
            client.close().block(shutdownTimeout);
        } catch (RuntimeException e) {
            LOG.warn("closing the reactive-locks client failed or took longer than " + shutdownTimeout, e);
        }
    }
}
