package io.reactivelocks.zookeeper;

import io.reactivelocks.Concept;
import io.reactivelocks.LockOptions;
import io.reactivelocks.fencing.FencedValues;
import io.reactivelocks.spi.LockBackend;
import io.reactivelocks.spi.NameScan;
import io.reactivelocks.spi.rwlock.ReadWriteStore;
import io.reactivelocks.spi.semaphore.SemaphoreStore;
import io.reactivelocks.spi.store.AbstractLockStore;
import io.reactivelocks.spi.window.WindowStore;
import java.util.EnumSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.x.async.AsyncCuratorFramework;
import org.apache.zookeeper.KeeperException;
import reactor.core.publisher.Flux;
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
    private final AsyncCuratorFramework async;

    ZooKeeperStoreSession(CuratorFramework client, ZooKeeperLockOptions zkOptions) {
        super("zookeeper", CONCEPTS);
        this.client = Objects.requireNonNull(client, "client");
        this.zkOptions = Objects.requireNonNull(zkOptions, "zkOptions");
        this.backend = ZooKeeperLocks.backend(client, zkOptions);
        this.fenced = ZooKeeperFencedValues.create(client, zkOptions);
        this.async = AsyncCuratorFramework.wrap(client);
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

    /**
     * The names with a node under the lock root, the semaphore root and the read-write root: one
     * {@code getChildren} of each root (a missing root has no names), each segment
     * {@code n-<base64url(name)>} decoded. base64url keeps no order or prefix of the names, and a
     * znode's children cannot be listed by a range, so every child of the roots is listed and the
     * admin matches the prefix literally on the decoded names. A lock node is listed while it has
     * any child, holder or waiter, and an emptied one until it is pruned: the admin reads its holder
     * next and skips it when there is none.
     */
    @Override
    protected Flux<NameScan.Named> names(String prefix) {
        String root = zkOptions.root();
        return Flux.concat(segments(root, Concept.LOCK, prefix), segments(root + "-semaphore", Concept.SEMAPHORE, prefix),
                        segments(root + "-rw", Concept.READ_WRITE_LOCK, prefix))
                .onErrorMap(e -> ZooKeeperErrors.map(null, "admin list", e));
    }

    private Flux<NameScan.Named> segments(String root, Concept concept, String prefix) {
        return Mono.fromCompletionStage(() -> async.getChildren().forPath(root))
                .timeout(zkOptions.requestTimeout(), zkOptions.scheduler())
                .onErrorResume(e -> ZooKeeperErrors.code(e) == KeeperException.Code.NONODE, e -> Mono.just(List.of()))
                .flatMapIterable(children -> children.stream()
                        .map(ZNodeNames::nameOf)
                        .filter(n -> n != null && n.startsWith(prefix))
                        .map(n -> new NameScan.Named(concept, n))
                        .toList());
    }


    @Override
    protected Mono<Void> closeConnections() {
        return backend.close().then(fenced.close());
    }
}
