package io.reactivelocks.redis;

import io.reactivelocks.Concept;
import io.reactivelocks.LockOptions;
import io.reactivelocks.fencing.FencedValues;
import io.reactivelocks.spi.DelegatingLockBackend;
import io.reactivelocks.spi.LockBackend;
import io.reactivelocks.spi.NameScan;
import io.reactivelocks.spi.rwlock.ReadWriteStore;
import io.reactivelocks.spi.semaphore.SemaphoreStore;
import io.reactivelocks.spi.store.AbstractLockStore;
import io.reactivelocks.spi.task.TaskStore;
import io.reactivelocks.spi.window.WindowStore;
import java.util.EnumSet;
import java.util.Objects;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The Redis {@link io.reactivelocks.LockStore}: every concept over one {@link RedisLockBackend},
 * whose command and pub/sub connections (or the cluster client's) are the session's one
 * connection set; each concept's store is built over it without owning it.
 */
final class RedisStoreSession extends AbstractLockStore {

    private final RedisLockBackend backend;

    RedisStoreSession(RedisLockBackend backend) {
        super("redis", EnumSet.allOf(Concept.class));
        this.backend = Objects.requireNonNull(backend, "backend");
    }

    @Override
    protected LockBackend lockBackend(LockOptions options) {
        return new LeftOpen(backend);
    }

    @Override
    protected LockBackend fairLockBackend(LockOptions options) {
        return new RedisFairLockBackend(backend, false);
    }

    @Override
    protected SemaphoreStore semaphoreStore() {
        return new RedisSemaphoreStore(backend, false);
    }

    @Override
    protected ReadWriteStore readWriteStore() {
        return new RedisReadWriteStore(backend, false);
    }

    @Override
    protected WindowStore windowStore() {
        return new RedisWindowStore(backend, false);
    }

    @Override
    protected FencedValues fencedValuesPart() {
        return leftOpen(new RedisFencedValues(backend));
    }

    @Override
    protected TaskStore taskStore() {
        return new RedisTaskStore(backend, false);
    }

    /** A {@code SCAN} of the session's keys (every master of a cluster): see {@link RedisLockBackend#names}. */
    @Override
    protected Flux<NameScan.Named> names(String prefix) {
        return backend.names(prefix);
    }

    @Override
    protected Mono<Void> closeConnections() {
        return backend.close();
    }

    /**
     * The session's backend, not closed by the concepts handed out (the session closes it), with
     * its fair queue's {@link LockBackend#waiting} (which the core's view does not pass on).
     */
    private static final class LeftOpen extends DelegatingLockBackend {
        LeftOpen(RedisLockBackend backend) {
            super(backend);
        }

        @Override
        public Mono<Integer> waiting(String name) {
            return delegate().waiting(name);
        }

        @Override
        public Mono<Void> close() {
            return Mono.empty();
        }

        @Override
        public String toString() {
            return delegate().toString();
        }
    }
}
