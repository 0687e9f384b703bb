package io.reactivelocks.zookeeper;

import io.reactivelocks.LockBackendException;
import io.reactivelocks.LockClientClosedException;
import io.reactivelocks.spi.Attempt;
import io.reactivelocks.spi.GrantRequest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.WatcherRemoveCuratorFramework;
import org.apache.curator.x.async.AsyncCuratorFramework;
import org.apache.curator.x.async.AsyncStage;
import org.apache.curator.x.async.WatchMode;
import org.apache.curator.x.async.api.AsyncCuratorFrameworkDsl;
import org.apache.curator.x.async.api.CreateOption;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.data.Stat;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

/**
 * The queue recipe of {@link ZooKeeperLockBackend} (its javadoc states it and why it is correct):
 * each owner's protected ephemeral-sequential node, made once per owner and remembered here; the
 * decision on a listing of the lock's children (granted, queued, busy); the wait of a queued owner
 * on its predecessor only; and leaving the queue (release), deleting the owner's node through the
 * {@link LockNodeJanitor}.
 */
final class ZooKeeperLockQueue {

    private static final int CREATE_TRIES = 5;

    private final CuratorFramework client;
    private final LockNodes nodes;
    private final ZNodeNames paths;
    private final ZooKeeperLockOptions options;
    private final ZooKeeperSession session;
    private final LockNodeJanitor janitor;
    private final BooleanSupplier closed;
    private final ConcurrentHashMap<String, OwnerNode> owners = new ConcurrentHashMap<>();

    /**
     * @param client  the Curator client (its watcher-removing view scopes each wait's watch)
     * @param nodes   the requests on the lock nodes
     * @param options the ACL of the nodes
     * @param session the connection's states, session id and timeout
     * @param janitor deletes the owners' nodes and prunes emptied lock nodes
     * @param closed  whether the backend is closed
     */
    ZooKeeperLockQueue(CuratorFramework client, LockNodes nodes, ZooKeeperLockOptions options, ZooKeeperSession session,
              LockNodeJanitor janitor, BooleanSupplier closed) {
        this.client = client;
        this.nodes = nodes;
        this.paths = nodes.paths();
        this.options = options;
        this.session = session;
        this.janitor = janitor;
        this.closed = closed;
    }

    // ---------------------------------------------------------------- grant

    /** See {@link ZooKeeperLockBackend#tryGrant}. */
    Mono<Attempt> tryGrant(GrantRequest request) {
        return Mono.defer(() -> {
            if (closed.getAsBoolean()) {
                return Mono.error(new LockClientClosedException(request.name()));
            }
            if (!request.queue() && !owners.containsKey(key(request.name(), request.owner()))) {
                // tryAcquire: anyone in line means someone is ahead of us; answer without a write
                return nodes.children(request.name()).flatMap(list -> list.isEmpty()
                        ? enqueueAndDecide(request, true)
                        : nodes.holderOf(request.name(), list.get(0)).map(Attempt::busy).defaultIfEmpty(Attempt.busy(null)));
            }
            return enqueueAndDecide(request, true);
        }).onErrorMap(e -> ZooKeeperErrors.map(request.name(), "acquire", e));
    }

    private Mono<Attempt> enqueueAndDecide(GrantRequest request, boolean mayRenew) {
        String key = key(request.name(), request.owner());
        OwnerNode node = owners.computeIfAbsent(key, k -> new OwnerNode(request.name(), request.owner(), request.payload(), k));
        node.start();
        return node.creation.flatMap(c -> {
            if (c.sessionId() != session.sessionId()) {
                // made by a session Curator has given up on: not a valid place in line any more
                owners.remove(key, node);
                janitor.deleteQuietly(c.path());
                return mayRenew ? enqueueAndDecide(request, false) : Mono.error(new LockBackendException(request.name(),
                        "the zookeeper session changed while enqueueing owner " + request.owner(), null, true));
            }
            return decide(request, node, c);
        });
    }

    /** Lists the children and answers for {@code node}: granted, queued behind its predecessor, or busy. */
    private Mono<Attempt> decide(GrantRequest request, OwnerNode node, Created c) {
        return Mono.defer(() -> {
            long sentAt = request.clock().nanoTime();
            return nodes.children(request.name()).flatMap(list -> {
                int i = indexOf(list, c.node());
                if (i < 0 || c.sessionId() != session.sessionId()) {
                    owners.remove(node.key, node);
                    if (i >= 0) {
                        janitor.deleteQuietly(c.path());
                    }
                    return Mono.error(new LockBackendException(request.name(), "the node of owner " + request.owner()
                            + " is gone or belongs to an ended zookeeper session", null, true));
                }
                if (i == 0) {
                    long ttl = session.negotiatedTimeoutMillis();
                    if (ttl <= 0) {
                        return Mono.error(new LockBackendException(request.name(), "no negotiated session timeout yet", null, true));
                    }
                    node.granted = true;
                    return Mono.just(new Attempt.Granted(c.czxid(), Duration.ofMillis(ttl), sentAt));
                }
                if (request.queue()) {
                    return Mono.just(new Attempt.Queued(turn(request, node, c, list.get(i - 1), i == 1)));
                }
                // tryAcquire leaves no queue entry behind
                node.released = true;
                owners.remove(node.key, node);
                ZNodeNames.Child first = list.get(0);
                return janitor.deleteTracked(c.path()).then(nodes.holderOf(request.name(), first))
                        .map(Attempt::busy).defaultIfEmpty(Attempt.busy(null));
            });
        });
    }

    /**
     * The wait of a queued owner: an exists-watch on its predecessor only; on its deletion (or a
     * reconnection, in case the watch was lost) look again. LOST ends the wait with a transient
     * error: the engine retries, and the retry enqueues anew on the new session.
     *
     * <p>No second look is needed when the predecessor is known to have been first at some point
     * ({@code first}: it was first in the listing that queued us; or this backend granted it):
     * no node can get a lower sequence later and the listing showed none between it and ours, so
     * its deletion makes ours first. The grant is then timed from when the watch's
     * {@code exists} was sent: it succeeded on the session our node belongs to, so that session —
     * and our ephemeral node — lives until at least that send time + the session timeout. Only
     * when that send is recent (a third of the session timeout, like a confirmation) and the
     * session unchanged; otherwise the children are listed again.
     */
    private Mono<Attempt> turn(GrantRequest request, OwnerNode node, Created c, ZNodeNames.Child predecessor, boolean first) {
        return Mono.defer(() -> {
            if (closed.getAsBoolean()) {
                return Mono.error(new LockClientClosedException(request.name()));
            }
            OwnerNode local = owners.get(key(request.name(), predecessor.owner()));
            long sentAt = request.clock().nanoTime();
            long sessionId = session.sessionId();
            AtomicBoolean deleted = new AtomicBoolean();
            WatcherRemoveCuratorFramework watchers = client.newWatcherRemoveCuratorFramework();
            AsyncCuratorFrameworkDsl watching = AsyncCuratorFramework.wrap(watchers).with(WatchMode.successOnly);
            AsyncStage<Stat> exists = watching.watched().checkExists()
                    .forPath(paths.lockPath(request.name()) + "/" + predecessor.node());
            Mono<Void> gone = Mono.fromCompletionStage(exists)
                    .flatMap(stat -> Mono.fromCompletionStage(exists.event())
                            .doOnNext(e -> deleted.set(e.getType() == Watcher.Event.EventType.NodeDeleted)))
                    .then();
            Mono<Void> lost = session.lost().then(Mono.error(() -> new LockBackendException(request.name(),
                    "the zookeeper session was lost while queued for lock '" + request.name() + "'", null, true)));
            Mono<Void> reconnected = session.reconnects().next().then();
            return Mono.firstWithSignal(gone, lost, reconnected)
                    .then(Mono.defer(() -> {
                        if (deleted.get() && (first || grantedHere(local, predecessor))) {
                            Attempt granted = grantOnDeletion(request, node, c, sessionId, sentAt);
                            if (granted != null) {
                                return Mono.just(granted);
                            }
                        }
                        return decide(request, node, c);
                    }))
                    .doFinally(s -> watchers.removeWatchers());
        }).onErrorMap(e -> ZooKeeperErrors.map(request.name(), "acquire", e));
    }

    /** @return whether {@code local} (this backend's owner node, or null) is the node {@code child} and was granted */
    private static boolean grantedHere(@Nullable OwnerNode local, ZNodeNames.Child child) {
        Created made = local == null ? null : local.created;
        return made != null && local.granted && made.node().equals(child.node());
    }

    /**
     * @return the grant on the predecessor's deletion (see {@link #turn}), or null when the
     *         session changed, no timeout is negotiated or the watch was sent too long ago
     */
    private @Nullable Attempt grantOnDeletion(GrantRequest request, OwnerNode node, Created c, long sessionId, long sentAt) {
        long ttl = session.negotiatedTimeoutMillis();
        if (ttl <= 0 || c.sessionId() != sessionId || session.sessionId() != sessionId
                || request.clock().nanoTime() - sentAt > TimeUnit.MILLISECONDS.toNanos(ttl) / 3) {
            return null;
        }
        node.granted = true;
        return new Attempt.Granted(c.czxid(), Duration.ofMillis(ttl), sentAt);
    }

    /** Creates the owner's protected ephemeral-sequential node, creating the lock's node (and the root) when missing. */
    private Mono<Created> createNode(String name, String owner, @Nullable String payload, int tries) {
        return Mono.defer(() -> {
            Stat stat = new Stat();
            return Mono.fromCompletionStage(() -> nodes.async().create()
                    .withOptions(EnumSet.of(CreateOption.doProtected), CreateMode.EPHEMERAL_SEQUENTIAL, options.acl(), stat)
                    .forPath(paths.nodePathPrefix(name, owner), LockNodes.data(owner, payload)))
                    .flatMap(path -> stat.getCzxid() != 0
                            ? Mono.just(new Created(path, ZNodeNames.lastSegment(path), stat.getCzxid(), stat.getEphemeralOwner()))
                            // found by Curator's protected-mode retry: no stat came with it
                            : nodes.exists(path).map(s -> new Created(path, ZNodeNames.lastSegment(path), s.getCzxid(), s.getEphemeralOwner()))
                                    .switchIfEmpty(Mono.error(() -> new LockBackendException(name,
                                            "the node of owner " + owner + " vanished right after its create", null, true))));
        }).onErrorResume(e -> ZooKeeperErrors.code(e) == KeeperException.Code.NONODE && tries < CREATE_TRIES,
                e -> nodes.ensureLockNode(name).then(createNode(name, owner, payload, tries + 1)));
    }

    // ---------------------------------------------------------------- release

    /**
     * Leaves the queue: deletes the owner's node (found by its remembered path, or by the owner id
     * in the children's names), then schedules the prune of the lock's node. The delete and the
     * prune go on whatever the caller does: a caller that gave up (its request timeout passed while
     * ZooKeeper was frozen) cancels only its view, and the node's delete, still queued on the
     * connection, is followed by the prune once ZooKeeper answers — else the emptied lock node would
     * stay until the next reconnection, the close or the server's container sweep.
     */
    Mono<Boolean> release(String name, String owner) {
        return Mono.defer(() -> {
            janitor.prunePending(name);
            OwnerNode node = owners.remove(key(name, owner));
            Mono<Boolean> deleted;
            if (node != null) {
                node.released = true;
                node.start();
                Created c = node.created;
                // a create still in flight: once it lands, its own completion deletes the node
                // (released is set) and so may this; the prune below is sent after both deletes
                deleted = c != null ? janitor.deleteTracked(c.path())
                        : node.creation.flatMap(x -> janitor.deleteTracked(x.path())).thenReturn(true)
                                .onErrorResume(e -> nodes.deleteByOwner(name, owner));
            } else {
                deleted = nodes.deleteByOwner(name, owner);
            }
            return Mono.fromFuture(deleted.doOnSuccess(d -> janitor.schedulePrune(name)).toFuture(), true);
        }).onErrorMap(e -> ZooKeeperErrors.map(name, "release", e));
    }

    /** @return a release of every owner that still has a node (or a create in flight), each answering {@code false} on error */
    List<Mono<Boolean>> releaseAll() {
        List<Mono<Boolean>> releases = new ArrayList<>();
        for (OwnerNode n : new ArrayList<>(owners.values())) {
            releases.add(release(n.name, n.owner).onErrorResume(e -> Mono.just(false)));
        }
        return releases;
    }

    // ---------------------------------------------------------------- owner nodes

    /** @return whether an owner of this backend has a node (or a create in flight) in lock {@code name} */
    boolean hasNodeIn(String name) {
        return owners.values().stream().anyMatch(o -> o.name.equals(name));
    }

    /** @return the node made for {@code owner} in lock {@code name}; null when there is none (yet) */
    @Nullable Created created(String name, String owner) {
        OwnerNode node = owners.get(key(name, owner));
        return node == null ? null : node.created;
    }

    /** @return the node made for {@code owner} in lock {@code name} once it was granted; null otherwise */
    @Nullable Created granted(String name, String owner) {
        OwnerNode node = owners.get(key(name, owner));
        return node == null || !node.granted ? null : node.created;
    }

    private static int indexOf(List<ZNodeNames.Child> list, String node) {
        for (int i = 0; i < list.size(); i++) {
            if (list.get(i).node().equals(node)) {
                return i;
            }
        }
        return -1;
    }

    private static String key(String name, String owner) {
        return owner + '\u0000' + name;
    }

    /** The node this backend made (or is making) in ZooKeeper for one owner of one lock. */
    record Created(String path, String node, long czxid, long sessionId) {
    }

    private final class OwnerNode {
        final String name;
        final String owner;
        final String key;
        final Mono<Created> creation;
        private final AtomicBoolean started = new AtomicBoolean();
        volatile Created created;
        volatile boolean released;
        volatile boolean granted;

        OwnerNode(String name, String owner, @Nullable String payload, String key) {
            this.name = name;
            this.owner = owner;
            this.key = key;
            this.creation = createNode(name, owner, payload, 0)
                    .doOnNext(c -> {
                        created = c;
                        if (released || closed.getAsBoolean()) {
                            // released while the create was in flight: ours to delete, now that it exists
                            owners.remove(key, this);
                            janitor.deleteQuietly(c.path());
                        }
                    })
                    .doOnError(e -> owners.remove(key, this))
                    .cache();
        }

        /** Sends the create once; it completes whether or not anyone still waits for it. */
        void start() {
            if (started.compareAndSet(false, true)) {
                creation.subscribe(null, e -> { });
            }
        }
    }
}
