package io.reactivelocks.zookeeper;

import io.reactivelocks.spi.Holder;
import io.reactivelocks.spi.LockEvent;
import java.util.EnumSet;
import java.util.List;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.curator.x.async.AsyncCuratorFramework;
import org.apache.curator.x.async.api.CreateOption;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The single requests on a lock's nodes that the queue, the janitor, the confirmations and the
 * payload updates share: list the children, read one, write one's data, create the containers,
 * delete. Each is lazy (sent on subscribe), one ZooKeeper request, never blocking; a missing
 * node is an answer (empty, {@code false}), not an error. A node's data is the owner id, then a
 * newline and the payload when the grant has one (owner ids have no newline).
 */
final class LockNodes {

    private final AsyncCuratorFramework async;
    private final ZNodeNames paths;
    private final ZooKeeperLockOptions options;

    LockNodes(AsyncCuratorFramework async, ZNodeNames paths, ZooKeeperLockOptions options) {
        this.async = async;
        this.paths = paths;
        this.options = options;
    }

    AsyncCuratorFramework async() {
        return async;
    }

    ZNodeNames paths() {
        return paths;
    }

    /** @return the lock's children ordered by sequence; empty when the lock's node does not exist */
    Mono<List<ZNodeNames.Child>> children(String name) {
        return Mono.fromCompletionStage(() -> async.getChildren().forPath(paths.lockPath(name)))
                .map(ZNodeNames::sorted)
                .onErrorResume(e -> ZooKeeperErrors.code(e) == KeeperException.Code.NONODE, e -> Mono.just(List.of()));
    }

    /**
     * @return the lock's children ordered by sequence with the lock node's {@link Stat} at that listing
     *         (its data version counts the creates of children, see {@link ZooKeeperLockQueue}); no
     *         children and a null stat when the lock's node does not exist
     */
    Mono<Listing> listing(String name) {
        // Curator's async getChildren ignores storingStatIn (its background answer carries the stat in the
        // event only): a background call with a callback reads the event's stat
        return Mono.create(sink -> {
            try {
                async.unwrap().getChildren().inBackground((client, event) -> {
                    KeeperException.Code code = KeeperException.Code.get(event.getResultCode());
                    if (code == KeeperException.Code.OK) {
                        sink.success(new Listing(ZNodeNames.sorted(event.getChildren()), event.getStat()));
                    } else if (code == KeeperException.Code.NONODE) {
                        sink.success(new Listing(List.of(), null));
                    } else {
                        sink.error(KeeperException.create(code, event.getPath()));
                    }
                }).forPath(paths.lockPath(name));
            } catch (Exception e) {
                sink.error(e);
            }
        });
    }

    /** A listing of a lock's children and its node's stat as of that listing (null: the node does not exist). */
    record Listing(List<ZNodeNames.Child> children, @Nullable Stat stat) {
    }

    Mono<Stat> exists(String path) {
        return Mono.fromCompletionStage(() -> async.checkExists().forPath(path));
    }

    /** @return the holder that {@code child} stands for (its token is the node's czxid); empty when the node is gone */
    Mono<Holder> holderOf(String name, ZNodeNames.Child child) {
        return Mono.defer(() -> {
            Stat stat = new Stat();
            return Mono.fromCompletionStage(() -> async.getData().storingStatIn(stat).forPath(paths.lockPath(name) + "/" + child.node()))
                    .map(data -> new Holder(child.owner(), stat.getCzxid(), null, payloadOf(data)))
                    .onErrorResume(e -> ZooKeeperErrors.code(e) == KeeperException.Code.NONODE, e -> Mono.empty());
        });
    }

    /** Reads the node's version, then sets its data at that version; a concurrent change makes it try again. */
    Mono<Boolean> setData(String path, long czxid, byte[] data, int tries) {
        return exists(path).flatMap(stat -> {
            if (stat.getCzxid() != czxid) {
                return Mono.just(false);
            }
            return Mono.fromCompletionStage(() -> async.setData().withVersion(stat.getVersion()).forPath(path, data))
                    .map(written -> true)
                    .onErrorResume(e -> ZooKeeperErrors.code(e) == KeeperException.Code.BADVERSION && tries > 1,
                            e -> setData(path, czxid, data, tries - 1));
        }).defaultIfEmpty(false)
                .onErrorResume(e -> ZooKeeperErrors.code(e) == KeeperException.Code.NONODE, e -> Mono.just(false));
    }

    /**
     * Writes a revocation request into the lock's revocation node {@code <root>/r-<name>}
     * ({@link ZNodeNames#revocationPath}), whatever its version, provided the lock's node exists: one
     * {@code multi(check(lock node), setData(revocation node))}; when the revocation node is missing,
     * {@code multi(check(lock node), create(revocation node, persistent))} (a concurrent create of it:
     * the first again). The lock's node is only checked, never written: its data version counts the
     * creates of its children alone.
     *
     * @return {@code true} when written; {@code false} when the lock's node does not exist
     */
    Mono<Boolean> writeRevocation(String name, byte[] data) {
        return writeRevocation(name, data, 3);
    }

    private Mono<Boolean> writeRevocation(String name, byte[] data, int tries) {
        return Mono.defer(() -> {
            String lock = paths.lockPath(name);
            String revocation = paths.revocationPath(name);
            List<CuratorOp> set = List.of(async.transactionOp().check().withVersion(-1).forPath(lock),
                    async.transactionOp().setData().forPath(revocation, data));
            List<CuratorOp> create = List.of(async.transactionOp().check().withVersion(-1).forPath(lock),
                    async.transactionOp().create().withOptions(CreateMode.PERSISTENT, options.acl(), false).forPath(revocation, data));
            // NONODE from the first: the lock's node or the revocation node is missing; from the second
            // (the revocation node is a sibling of the lock's node, under the same root): the lock's node
            return Mono.fromCompletionStage(() -> async.transaction().forOperations(set)).thenReturn(true)
                    .onErrorResume(e -> ZooKeeperErrors.code(e) == KeeperException.Code.NONODE,
                            e -> Mono.fromCompletionStage(() -> async.transaction().forOperations(create)).thenReturn(true)
                                    .onErrorResume(x -> ZooKeeperErrors.code(x) == KeeperException.Code.NONODE, x -> Mono.just(false))
                                    .onErrorResume(x -> ZooKeeperErrors.code(x) == KeeperException.Code.NODEEXISTS && tries > 1,
                                            x -> writeRevocation(name, data, tries - 1)));
        });
    }

    /**
     * @param owner  the holder asked
     * @param reason why
     * @return the data of the lock's revocation node that stands for a revocation request: the owner's length, a
     *         colon, the owner, then the reason, UTF-8 (so owner and reason may hold any character)
     */
    static byte[] revocation(String owner, String reason) {
        return ZooKeeperLockOptions.bytes(owner.length() + ":" + owner + reason);
    }

    /**
     * @param name the lock name
     * @param data the data of the lock's revocation node (or an entry of {@link GrantRevocations})
     * @return the revocation request it holds ({@link #revocation}), or {@code null} when it holds none
     */
    static LockEvent.@Nullable Revoked revoked(String name, byte @Nullable [] data) {
        if (data == null || data.length == 0) {
            return null;
        }
        String s = new String(data, java.nio.charset.StandardCharsets.UTF_8);
        int sep = s.indexOf(':');
        try {
            int ownerEnd = sep + 1 + Integer.parseInt(s.substring(0, sep));
            return new LockEvent.Revoked(name, s.substring(sep + 1, ownerEnd), s.substring(ownerEnd));
        } catch (RuntimeException e) { // no separator, not a number, too short: not one of ours
            return null;
        }
    }

    /** Creates the lock's container node, and the root when that is missing too. */
    Mono<Void> ensureLockNode(String name) {
        return createContainer(paths.lockPath(name))
                .onErrorResume(e -> ZooKeeperErrors.code(e) == KeeperException.Code.NONODE,
                        e -> ensureRoot().then(createContainer(paths.lockPath(name))));
    }

    private Mono<Void> ensureRoot() {
        String root = paths.root();
        Mono<Void> chain = Mono.empty();
        int i = 0;
        while ((i = root.indexOf('/', i + 1)) > 0) {
            String ancestor = root.substring(0, i);
            chain = chain.then(createContainer(ancestor));
        }
        return chain.then(createContainer(root));
    }

    private Mono<Void> createContainer(String path) {
        return Mono.fromCompletionStage(() -> async.create().withOptions(EnumSet.noneOf(CreateOption.class), CreateMode.CONTAINER,
                        options.acl()).forPath(path, new byte[0]))
                .then()
                .onErrorResume(e -> ZooKeeperErrors.code(e) == KeeperException.Code.NODEEXISTS, e -> Mono.empty());
    }

    /** @return true when deleted, false when there was no such node */
    Mono<Boolean> delete(String path) {
        return Mono.fromCompletionStage(() -> async.delete().forPath(path))
                .thenReturn(true)
                .onErrorResume(e -> ZooKeeperErrors.code(e) == KeeperException.Code.NONODE, e -> Mono.just(false));
    }

    /** Deletes every node of {@code owner} under the lock (owner-checked by the owner id in the node name). */
    Mono<Boolean> deleteByOwner(String name, String owner) {
        return children(name).flatMapMany(Flux::fromIterable)
                .filter(c -> c.owner().equals(owner))
                .concatMap(c -> delete(paths.lockPath(name) + "/" + c.node()))
                .reduce(false, (a, b) -> a || b);
    }

    /** A node's data: the owner id, then a newline and the payload when the grant has one (owner ids have no newline). */
    static byte[] data(String owner, String payload) {
        return ZooKeeperLockOptions.bytes(payload == null ? owner : owner + '\n' + payload);
    }

    private static String payloadOf(byte[] data) {
        String s = new String(data, java.nio.charset.StandardCharsets.UTF_8);
        int nl = s.indexOf('\n');
        return nl < 0 ? null : s.substring(nl + 1);
    }
}
