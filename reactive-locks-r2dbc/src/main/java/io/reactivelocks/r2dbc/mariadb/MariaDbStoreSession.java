package io.reactivelocks.r2dbc.mariadb;

import io.reactivelocks.Concept;
import io.reactivelocks.LockOptions;
import io.reactivelocks.fencing.FencedValues;
import io.reactivelocks.spi.LockBackend;
import io.reactivelocks.spi.NameScan;
import io.reactivelocks.spi.rwlock.ReadWriteStore;
import io.reactivelocks.spi.semaphore.SemaphoreStore;
import io.reactivelocks.spi.task.TaskStore;
import io.reactivelocks.spi.window.WindowStore;
import io.reactivelocks.spi.store.AbstractLockStore;
import java.util.EnumSet;
import java.util.Objects;
import java.util.Set;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The MariaDB {@link io.reactivelocks.LockStore}: every concept it offers over one
 * {@link MariaDbLockBackend}, whose pool and poller are the session's connection set; each concept
 * is built over it without owning it. The others fail with a
 * {@link io.reactivelocks.ConceptNotOfferedException} naming store and concept.
 */
final class MariaDbStoreSession extends AbstractLockStore {

    /** What the MariaDB store offers so far. */
    static final Set<Concept> OFFERED = EnumSet.of(Concept.LOCK, Concept.MULTI_LOCK, Concept.LEADER_ELECTION,
            Concept.SEMAPHORE, Concept.READ_WRITE_LOCK, Concept.WINDOW_LOCK,
            Concept.FENCED_VALUES, Concept.FAIR_LOCK, Concept.TASK_QUEUE);

    private final MariaDbLockBackend backend;

    MariaDbStoreSession(MariaDbLockBackend backend) {
        super("mariadb", OFFERED);
        this.backend = Objects.requireNonNull(backend, "backend");
    }

    @Override
    protected LockBackend lockBackend(LockOptions options) {
        return leftOpen(backend);
    }

    @Override
    protected LockBackend fairLockBackend(LockOptions options) {
        return new MariaDbFairLockBackend(backend);
    }

    @Override
    protected SemaphoreStore semaphoreStore() {
        return new MariaDbSemaphoreStore(backend);
    }

    @Override
    protected ReadWriteStore readWriteStore() {
        return new MariaDbReadWriteStore(backend);
    }

    @Override
    protected WindowStore windowStore() {
        return new MariaDbWindowStore(backend);
    }

    @Override
    protected FencedValues fencedValuesPart() {
        return new MariaDbFencedValues(backend);
    }

    @Override
    protected TaskStore taskStore() {
        return new MariaDbTaskStore(backend);
    }

    /** The names with live rows in the lock table: see {@link MariaDbLockBackend#scanNames}. */
    @Override
    protected Flux<NameScan.Named> names(String prefix) {
        return backend.scanNames(prefix);
    }

    @Override
    protected Mono<Void> closeConnections() {
        return backend.close();
    }
}
