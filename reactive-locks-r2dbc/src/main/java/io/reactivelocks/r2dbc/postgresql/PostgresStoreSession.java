package io.reactivelocks.r2dbc.postgresql;

import io.reactivelocks.Concept;
import io.reactivelocks.LockOptions;
import io.reactivelocks.fencing.FencedValues;
import io.reactivelocks.spi.LockBackend;
import io.reactivelocks.spi.NameScan;
import io.reactivelocks.spi.rwlock.ReadWriteStore;
import io.reactivelocks.spi.semaphore.SemaphoreStore;
import io.reactivelocks.spi.store.AbstractLockStore;
import io.reactivelocks.spi.task.TaskStore;
import io.reactivelocks.spi.window.WindowStore;
import io.reactivelocks.task.TaskQueue;
import java.util.EnumSet;
import java.util.Objects;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The PostgreSQL {@link io.reactivelocks.LockStore}: every concept over one
 * {@link PostgresLockBackend}, whose pool and one {@code LISTEN} connection are the session's
 * connection set; each concept's store is built over it without owning it. The task queue it hands
 * out is a {@link PostgresTaskQueue} (with {@code migrate()}).
 */
final class PostgresStoreSession extends AbstractLockStore implements PostgresLockStore {

    private final PostgresLockBackend backend;

    PostgresStoreSession(PostgresLockBackend backend) {
        super("postgresql", EnumSet.allOf(Concept.class));
        this.backend = Objects.requireNonNull(backend, "backend");
    }

    @Override
    protected LockBackend lockBackend(LockOptions options) {
        return leftOpen(backend);
    }

    @Override
    protected LockBackend fairLockBackend(LockOptions options) {
        return new PostgresFairLockBackend(backend, false);
    }

    @Override
    protected SemaphoreStore semaphoreStore() {
        return new PostgresSemaphoreStore(backend, false);
    }

    @Override
    protected ReadWriteStore readWriteStore() {
        return new PostgresReadWriteStore(backend, false);
    }

    @Override
    protected WindowStore windowStore() {
        return new PostgresWindowStore(backend, false);
    }

    @Override
    protected FencedValues fencedValuesPart() {
        return leftOpen(new PostgresFencedValues(backend));
    }

    @Override
    protected TaskStore taskStore() {
        return new PostgresTaskStore(backend, false);
    }

    @Override
    public PostgresTaskQueue taskQueue(LockOptions options) {
        LockOptions o = forConcept(options, Concept.TASK_QUEUE);
        return track(new DefaultPostgresTaskQueue(new PostgresTaskStore(backend, false), o), TaskQueue::close);
    }

    /** The names with live rows in the lock, permits and read-write tables: see {@link PostgresLockBackend#scanNames}. */
    @Override
    protected Flux<NameScan.Named> names(String prefix) {
        return backend.scanNames(prefix);
    }

    @Override
    protected Mono<Void> closeConnections() {
        return backend.close();
    }
}
