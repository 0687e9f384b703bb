package io.reactivelocks.spring.boot;

import io.reactivelocks.window.WindowLock;
import java.time.Duration;
import java.util.Objects;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.beans.factory.FactoryBean;
import reactor.core.scheduler.Schedulers;

/**
 * Makes an auto-configured {@link WindowLock} and closes it (its connections) with the context,
 * waiting at most the shutdown timeout. A window lock holds nothing to release, so no lifecycle
 * phase matters: closing it on destroy is enough.
 */
final class WindowLockFactoryBean implements FactoryBean<WindowLock>, DisposableBean {

    private static final Log LOG = LogFactory.getLog(WindowLockFactoryBean.class);

    private final WindowLock windowLock;
    private final Duration shutdownTimeout;

    WindowLockFactoryBean(WindowLock windowLock, Duration shutdownTimeout) {
        this.windowLock = Objects.requireNonNull(windowLock, "windowLock");
        this.shutdownTimeout = Objects.requireNonNull(shutdownTimeout, "shutdownTimeout");
    }

    @Override
    public WindowLock getObject() {
        return windowLock;
    }

    @Override
    public Class<?> getObjectType() {
        return WindowLock.class;
    }

    @Override
    public void destroy() {
        if (Schedulers.isInNonBlockingThread()) {
            windowLock.close().subscribe(null, e -> LOG.warn("closing the reactive-locks window lock failed", e));
            return;
        }
        try {
            windowLock.close().block(shutdownTimeout);
        } catch (RuntimeException e) {
            LOG.warn("closing the reactive-locks window lock failed or took longer than " + shutdownTimeout, e);
        }
    }
}
