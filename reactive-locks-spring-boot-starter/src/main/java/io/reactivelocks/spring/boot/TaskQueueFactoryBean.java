package io.reactivelocks.spring.boot;

import io.reactivelocks.task.TaskQueue;
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
 * Holds the auto-configured {@link TaskQueue} and closes it with the context, in the same lifecycle phase as the
 * lock client ({@link LockClientFactoryBean#PHASE}: after a web server's graceful shutdown, before Spring Data
 * Redis's connection factory stops), waiting at most the shutdown timeout. Closing the queue completes its running
 * captures and closes the connections it opened; the application's client or connection factory stays open.
 *
 * @param <T> the queue type exposed as the bean ({@link TaskQueue}, or a store's subtype)
 */
final class TaskQueueFactoryBean<T extends TaskQueue> implements FactoryBean<T>, SmartLifecycle, DisposableBean {

    private static final Log LOG = LogFactory.getLog(TaskQueueFactoryBean.class);

    private final T queue;
    private final Class<T> type;
    private final Duration shutdownTimeout;
    private final AtomicBoolean running = new AtomicBoolean();
    private final AtomicBoolean closed = new AtomicBoolean();

    TaskQueueFactoryBean(T queue, Class<T> type, Duration shutdownTimeout) {
        this.queue = Objects.requireNonNull(queue, "queue");
        this.type = Objects.requireNonNull(type, "type");
        this.shutdownTimeout = Objects.requireNonNull(shutdownTimeout, "shutdownTimeout");
    }

    @Override
    public T getObject() {
        return queue;
    }

    @Override
    public Class<?> getObjectType() {
        return type;
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
        return LockClientFactoryBean.PHASE;
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
            queue.close().subscribe(null, e -> LOG.warn("closing the reactive-locks task queue failed", e));
            return;
        }
        try {
            queue.close().block(shutdownTimeout);
        } catch (RuntimeException e) {
            LOG.warn("closing the reactive-locks task queue failed or took longer than " + shutdownTimeout, e);
        }
    }
}
