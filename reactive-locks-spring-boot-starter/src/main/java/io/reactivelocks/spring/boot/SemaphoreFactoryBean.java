package io.reactivelocks.spring.boot;

import io.reactivelocks.semaphore.Semaphore;
import java.time.Duration;
import java.util.Objects;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.beans.factory.FactoryBean;
import reactor.core.scheduler.Schedulers;

/**
 * Makes an auto-configured {@link Semaphore} and closes it with the context, waiting at most the
 * shutdown timeout: closing fails pending acquires, releases the permits still held (best effort;
 * the rest expire by their TTL) and closes its connections.
 */
final class SemaphoreFactoryBean implements FactoryBean<Semaphore>, DisposableBean {

    private static final Log LOG = LogFactory.getLog(SemaphoreFactoryBean.class);

    private final Semaphore semaphore;
    private final Duration shutdownTimeout;

    SemaphoreFactoryBean(Semaphore semaphore, Duration shutdownTimeout) {
        this.semaphore = Objects.requireNonNull(semaphore, "semaphore");
        this.shutdownTimeout = Objects.requireNonNull(shutdownTimeout, "shutdownTimeout");
    }

    @Override
    public Semaphore getObject() {
        return semaphore;
    }

    @Override
    public Class<?> getObjectType() {
        return Semaphore.class;
    }

    @Override
    public void destroy() {
        if (Schedulers.isInNonBlockingThread()) {
            semaphore.close().subscribe(null, e -> LOG.warn("closing the reactive-locks semaphore failed", e));
            return;
        }
        try {
            semaphore.close().block(shutdownTimeout);
        } catch (RuntimeException e) {
            LOG.warn("closing the reactive-locks semaphore failed or took longer than " + shutdownTimeout, e);
        }
    }
}
