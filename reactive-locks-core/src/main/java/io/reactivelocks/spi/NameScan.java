package io.reactivelocks.spi;

import io.reactivelocks.Concept;
import java.util.Objects;
import reactor.core.publisher.Flux;

/**
 * What a store implements for {@link io.reactivelocks.admin.LockAdmin}: the names it keeps grants
 * on, by concept. The admin then asks each concept's part who holds the name ({@link LockBackend#inspect},
 * {@link io.reactivelocks.spi.semaphore.SemaphoreStore#holders}, {@link io.reactivelocks.spi.rwlock.ReadWriteStore#holders}).
 */
@FunctionalInterface
public interface NameScan {

    /**
     * The names that have state of a lock, a semaphore or a read-write lock, or a task queue with
     * claims, and start with
     * {@code prefix} (compared literally: a name is data). A name may be reported whose grant has
     * just expired or been released: the admin reads its holders next and skips it. Each
     * (concept, name) at most once; in any order.
     *
     * @param prefix the start of the names; {@code ""} for all
     * @return the names with their concept: {@link Concept#LOCK} (also fair locks, leaders and
     *         multi-lock parts), {@link Concept#SEMAPHORE}, {@link Concept#READ_WRITE_LOCK}, or
     *         {@link Concept#TASK_QUEUE} for a queue with claimed tasks
     */
    Flux<Named> names(String prefix);

    /**
     * A name and the concept whose state the store keeps under it.
     *
     * @param concept {@link Concept#LOCK}, {@link Concept#SEMAPHORE} or {@link Concept#READ_WRITE_LOCK}
     * @param name    the name
     */
    record Named(Concept concept, String name) {
        /** Checks the fields. */
        public Named {
            Objects.requireNonNull(concept, "concept");
            Objects.requireNonNull(name, "name");
        }
    }
}
