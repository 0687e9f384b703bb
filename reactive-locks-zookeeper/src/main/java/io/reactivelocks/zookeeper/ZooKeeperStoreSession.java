package io.reactivelocks.zookeeper;

import io.reactivelocks.Concept;
import io.reactivelocks.LockOptions;
import io.reactivelocks.fencing.FencedValues;
import io.reactivelocks.spi.LockBackend;
import io.reactivelocks.spi.rwlock.ReadWriteStore;
import io.reactivelocks.spi.semaphore.SemaphoreStore;
import io.reactivelocks.spi.store.AbstractLockStore;
import io.reactivelocks.spi.window.WindowStore;
import java.util.EnumSet;
import java.util.Objects;
import java.util.Set;
import org.apache.curator.framework.CuratorFramework;
import reactor.core.publisher.Mono;

/**
 * The ZooKeeper {@link io.reactivelocks.LockStore}: every concept over the application's one Curator
 * client, that is one ZooKeeper session. Locks (plain and fair: the plain lock is FIFO already),
 * multi-locks and elections share one {@link ZooKeeperLockBackend}; semaphore, read-write, window
 * and fenced-value stores work over the same client without owning it.
 */
final class ZooKeeperStoreSession extends AbstractLockStore {

    /** What the ZooKeeper store offers: all but the task queue. */
    static final Set<Concept> CONCEPTS = EnumSet.complementOf(EnumSet.of(Concept.TASK_QUEUE));

    private final CuratorFramework client;
    private final ZooKeeperLockOptions zkOptions;
    private final ZooKeeperLockBackend backend;
    private final FencedValues fenced;

    ZooKeeperStoreSession(CuratorFramework client, ZooKeeperLockOptions zkOptions) {
        super("zookeeper", CONCEPTS);
        this.client = Objects.requireNonNull(client, "client");
        this.zkOptions = Objects.requireNonNull(zkOptions, "zkOptions");
        this.backend = ZooKeeperLocks.backend(client, zkOptions);
        this.fenced = ZooKeeperFencedValues.create(client, zkOptions);
    }

    @Override
    protected LockBackend lockBackend(LockOptions options) {
        return leftOpen(backend);
    }

    @Override
    protected LockBackend fairLockBackend(LockOptions options) {
        return leftOpen(backend);
    }

    @Override
    protected SemaphoreStore semaphoreStore() {
        return new ZooKeeperSemaphoreStore(client, false, zkOptions.root() + "-semaphore", zkOptions.acl());
    }

    @Override
    protected ReadWriteStore readWriteStore() {
        return new ZooKeeperReadWriteStore(client, false, zkOptions.root() + "-rw", zkOptions.acl());
    }

    @Override
    protected WindowStore windowStore() {
        return new ZooKeeperWindowStore(client, false, zkOptions.root() + "-window", zkOptions.acl());
    }

    @Override
    protected FencedValues fencedValuesPart() {
        return leftOpen(fenced);
    }

    @Override
    protected Mono<Void> closeConnections() {
        return backend.close().then(fenced.close());
    }
}
