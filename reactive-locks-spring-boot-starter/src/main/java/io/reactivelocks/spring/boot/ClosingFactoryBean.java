package io.reactivelocks.spring.boot;

import io.reactivelocks.LockClient;
import io.reactivelocks.LockStore;
import io.reactivelocks.rwlock.ReadWriteLock;
import io.reactivelocks.semaphore.Semaphore;
import io.reactivelocks.task.TaskQueue;
import io.reactivelocks.window.WindowLock;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.beans.factory.FactoryBean;
import org.springframework.context.SmartLifecycle;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * Holds an auto-configured object (a lock client, a window lock, ...) and closes it with the context, once, waiting
 * at most the shutdown timeout. Its {@code close()} returns a {@code Mono}, which Spring's inferred destroy method
 * would call and drop unsubscribed; this bean subscribes and waits (bounded) instead. Waiting is allowed here:
 * context shutdown runs on the application's main or shutdown-hook thread. Should a context ever be closed from a
 * non-blocking (Reactor) thread, the close is started without waiting.
 *
 * <p>This class closes on {@link #destroy()}, which is enough for an object that holds nothing to release;
 * {@link Phased} closes in the lock client's lifecycle stop phase.
 *
 * @param <T> the type exposed as the bean
 */
class ClosingFactoryBean<T> implements FactoryBean<T>, DisposableBean {

    private static final Log LOG = LogFactory.getLog(ClosingFactoryBean.class);

    private final T object;
    private final Class<? extends T> type;
    private final Function<? super T, Mono<Void>> close;
    private final String name;
    private final Duration shutdownTimeout;
    private final AtomicBoolean closed = new AtomicBoolean();

    /**
     * @param object          the bean
     * @param type            the bean's type, as the application asks for it
     * @param close           closes the object
     * @param name            what the object is, for log messages ("window lock")
     * @param shutdownTimeout how long closing may take
     */
    ClosingFactoryBean(T object, Class<? extends T> type, Function<? super T, Mono<Void>> close, String name,
                       Duration shutdownTimeout) {
        this.object = Objects.requireNonNull(object, "object");
        this.type = Objects.requireNonNull(type, "type");
        this.close = Objects.requireNonNull(close, "close");
        this.name = Objects.requireNonNull(name, "name");
        this.shutdownTimeout = Objects.requireNonNull(shutdownTimeout, "shutdownTimeout");
    }

    /**
     * A window lock: it holds nothing to release, so no lifecycle phase matters and closing it on destroy is enough.
     */
    /**
     * The store session every auto-configured concept comes from: closing it closes what it handed out (after the
     * concepts' own closes, which depend on it) and then its connections — in the lock client's stop phase, while
     * the store's client is still running.
     */
    static Phased<LockStore> store(LockStore store, Duration shutdownTimeout) {
        return new Phased<>(store, LockStore.class, LockStore::close, "lock store", shutdownTimeout);
    }

    static ClosingFactoryBean<WindowLock> windowLock(WindowLock windowLock, Duration shutdownTimeout) {
        return new ClosingFactoryBean<>(windowLock, WindowLock.class, WindowLock::close, "window lock", shutdownTimeout);
    }

    /**
     * A semaphore: closing fails pending acquires, releases the permits still held (best effort; the rest expire by
     * their TTL) and closes its connections — in the lock client's stop phase, while the store's connection factory
     * still runs, so that the releases can reach the store.
     */
    static Phased<Semaphore> semaphore(Semaphore semaphore, Duration shutdownTimeout) {
        return new Phased<>(semaphore, Semaphore.class, Semaphore::close, "semaphore", shutdownTimeout);
    }

    /**
     * A read-write lock: closing fails pending acquires, releases the grants and intents still held (best effort; the
     * rest expire by their TTL) and closes its connections — in the lock client's stop phase, like a semaphore.
     */
    static Phased<ReadWriteLock> readWriteLock(ReadWriteLock readWriteLock, Duration shutdownTimeout) {
        return new Phased<>(readWriteLock, ReadWriteLock.class, ReadWriteLock::close, "read-write lock", shutdownTimeout);
    }

    /**
     * A fair (FIFO) lock client: closing fails pending acquires, releases the leases and the places in line still
     * held (best effort; the rest expire by their TTL and waiter deadline) and closes its connections — in the lock
     * client's stop phase, like the client.
     */
    static Phased<LockClient> fairLock(LockClient fairLock, Duration shutdownTimeout) {
        return new Phased<>(fairLock, LockClient.class, LockClient::close, "fair lock", shutdownTimeout);
    }

    /**
     * A task queue, closed in the lock client's phase: closing completes its running captures and closes the
     * connections it opened; the application's client or connection factory stays open.
     *
     * @param <Q> the queue type exposed as the bean ({@link TaskQueue}, or a store's subtype)
     */
    static <Q extends TaskQueue> Phased<Q> taskQueue(Q queue, Class<Q> type, Duration shutdownTimeout) {
        return new Phased<>(queue, type, TaskQueue::close, "task queue", shutdownTimeout);
    }

    @Override
    public T getObject() {
        return object;
    }

    @Override
    public Class<?> getObjectType() {
        return type;
    }

    @Override
    public void destroy() {
        close();
    }

    /** Closes the object the first time only. */
    final void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        if (Schedulers.isInNonBlockingThread()) {
            close.apply(object).subscribe(null, e -> LOG.warn("closing the reactive-locks " + name + " failed", e));
            return;
        }
        try {
            close.apply(object).block(shutdownTimeout);
        } catch (RuntimeException e) {
            LOG.warn("closing the reactive-locks " + name + " failed or took longer than " + shutdownTimeout, e);
        }
    }

    /**
     * Closes the object in the lifecycle stop phase {@link #PHASE}: after a web server's graceful shutdown and stop
     * (so requests still running finish under their locks), and before phase-0 lifecycle beans such as Spring Data
     * Redis's {@code LettuceConnectionFactory} shut their connections down (so leases can still be released).
     * {@link #destroy()} closes it too if the context was never started.
     *
     * @param <T> the type exposed as the bean
     */
    static class Phased<T> extends ClosingFactoryBean<T> implements SmartLifecycle {

        /** Lifecycle phase: lower than a web server's ({@code DEFAULT_PHASE - 2048}), higher than 0. */
        static final int PHASE = SmartLifecycle.DEFAULT_PHASE - 4096;

        private final AtomicBoolean running = new AtomicBoolean();

        Phased(T object, Class<? extends T> type, Function<? super T, Mono<Void>> close, String name,
               Duration shutdownTimeout) {
            super(object, type, close, name, shutdownTimeout);
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
    }
}
