package io.reactivelocks.zookeeper;

import io.reactivelocks.LockBackendException;
import io.reactivelocks.LockClientClosedException;
import io.reactivelocks.spi.Attempt;
import io.reactivelocks.LockClock;
import io.reactivelocks.spi.GrantRequest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.WatcherRemoveCuratorFramework;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.curator.framework.api.transaction.CuratorTransactionResult;
import org.apache.curator.framework.imps.ProtectedUtils;
import org.apache.curator.x.async.AsyncCuratorFramework;
import org.apache.curator.x.async.AsyncStage;
import org.apache.curator.x.async.WatchMode;
import org.apache.curator.x.async.api.AsyncCuratorFrameworkDsl;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.data.Stat;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

/**
 * The queue recipe of {@link ZooKeeperLockBackend} (its javadoc states it and why it is correct):
 * each owner's protected ephemeral-sequential node, made once per owner and remembered here, always
 * by a version-guarded create (a multi with a {@code setData} on the lock's node); what the backend
 * knows of each lock ({@link Known}: free at a version of its node, so the next create can prove
 * itself first); the decision on a listing of the lock's children (granted, queued, busy); the wait of a queued owner
 * on its predecessor only; and leaving the queue (release), deleting the owner's node through the
 * {@link LockNodeJanitor}.
 */
final class ZooKeeperLockQueue {

    private static final int CREATE_TRIES = 5;
    /** The lock node's data written by each create's version bump: empty (the version is what counts). */
    private static final byte[] BUMP = new byte[0];
    /** Lock names whose state is remembered ({@link Known}); beyond that the memory starts over. */
    private static final int MAX_KNOWN = 4096;

    private final CuratorFramework client;
    private final LockNodes nodes;
    private final ZNodeNames paths;
    private final ZooKeeperLockOptions options;
    private final ZooKeeperSession session;
    private final LockNodeJanitor janitor;
    private final BooleanSupplier closed;
    private final ConcurrentHashMap<String, OwnerNode> owners = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<String, Known> known = new ConcurrentHashMap<>();

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
                Known k = known.get(request.name());
                // tryAcquire: the lock known free → the version-guarded create alone (refused: list first)
                return k != null && k.free() ? enqueueAndDecide(request, true, true) : listFirst(request);
            }
            return enqueueAndDecide(request, true, false);
        }).onErrorMap(e -> ZooKeeperErrors.map(request.name(), "acquire", e));
    }

    /** tryAcquire: anyone in line means someone is ahead of us; answer without a write. */
    private Mono<Attempt> listFirst(GrantRequest request) {
        return nodes.listing(request.name()).flatMap(l -> {
            learn(request.name(), l, null);
            return l.children().isEmpty()
                    ? enqueueAndDecide(request, true, false)
                    : nodes.holderOf(request.name(), l.children().get(0)).map(Attempt::busy).defaultIfEmpty(Attempt.busy(null));
        });
    }

    /**
     * @param fastOnly create only by the fast path (tryAcquire, the lock known free): when it is
     *                 refused, nothing was created and the children are listed first
     */
    private Mono<Attempt> enqueueAndDecide(GrantRequest request, boolean mayRenew, boolean fastOnly) {
        String key = key(request.name(), request.owner());
        OwnerNode node = owners.computeIfAbsent(key, k -> new OwnerNode(request.name(), request.owner(), request.payload(), k,
                request.clock(), fastOnly));
        node.start();
        return node.creation.flatMap(c -> {
            if (c.sessionId() != session.sessionId()) {
                // made by a session Curator has given up on: not a valid place in line any more
                owners.remove(key, node);
                janitor.deleteQuietly(c.path());
                return mayRenew ? enqueueAndDecide(request, false, false) : Mono.error(new LockBackendException(request.name(),
                        "the zookeeper session changed while enqueueing owner " + request.owner(), null, true));
            }
            if (node.proof.compareAndSet(true, false)) {
                // the version-guarded create proved our node first (see createNode): granted without a listing
                long ttl = session.negotiatedTimeoutMillis();
                if (ttl > 0) {
                    node.granted = true;
                    return Mono.just(new Attempt.Granted(c.czxid(), Duration.ofMillis(ttl), node.provenAt));
                }
            }
            return decide(request, node, c);
        }).switchIfEmpty(Mono.defer(() -> {
            // the fast create of a tryAcquire was refused: it created nothing
            owners.remove(key, node);
            return listFirst(request);
        }));
    }

    /** Lists the children and answers for {@code node}: granted, queued behind its predecessor, or busy. */
    private Mono<Attempt> decide(GrantRequest request, OwnerNode node, Created c) {
        return Mono.defer(() -> {
            long sentAt = request.clock().nanoTime();
            return nodes.listing(request.name()).flatMap(l -> {
                List<ZNodeNames.Child> list = withoutStrays(request.name(), request.owner(), l.children(), c);
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
                    learn(request.name(), l, c.node());
                    return Mono.just(new Attempt.Granted(c.czxid(), Duration.ofMillis(ttl), sentAt));
                }
                learn(request.name(), l, c.node());
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

    /**
     * Creates the owner's protected ephemeral-sequential node, always with the version bump of the
     * lock's node in the same transaction (the recipe in {@link ZooKeeperLockBackend}): at the
     * version this backend knows the lock free at, when it knows one (the fast path, which proves
     * the node first when it succeeds on the same lock node); else at any version (the slow path),
     * creating the lock's node (and the root) when missing. All tries of one owner use the same
     * protected id; a node a lost answer left behind is found by {@link #withoutStrays} (same owner).
     *
     * @return the node; empty when {@code fastOnly} and the fast path was refused (nothing created)
     */
    private Mono<Created> createNode(OwnerNode node, boolean fastOnly) {
        return Mono.defer(() -> {
            String path = ProtectedUtils.toProtectedZNodePath(paths.nodePathPrefix(node.name, node.owner), node.protectedId);
            Known k = known.get(node.name);
            if (k == null || !k.free()) {
                return fastOnly ? Mono.empty() : slowCreate(node, path, 0);
            }
            return send(node, path, k).onErrorResume(e -> ZooKeeperErrors.code(e) == KeeperException.Code.BADVERSION
                    || ZooKeeperErrors.code(e) == KeeperException.Code.NONODE, e -> {
                        // a create since, or the lock's node gone (pruned: create it
                        // first): the multi created nothing
                        known.remove(node.name, k);
                        if (fastOnly) {
                            return Mono.empty();
                        }
                        return ZooKeeperErrors.code(e) == KeeperException.Code.NONODE
                                ? nodes.ensureLockNode(node.name).then(slowCreate(node, path, 1)) : slowCreate(node, path, 0);
                    }).doOnError(e -> known.remove(node.name, k));
        });
    }

    private Mono<Created> slowCreate(OwnerNode node, String path, int tries) {
        return send(node, path, null)
                .onErrorResume(e -> ZooKeeperErrors.code(e) == KeeperException.Code.NONODE && tries < CREATE_TRIES,
                        e -> nodes.ensureLockNode(node.name).then(slowCreate(node, path, tries + 1)));
    }

    /**
     * One transaction: {@code setData} on the lock's node at {@code expected}'s version (any version
     * when null), and the create of the owner's node. The node's czxid is the transaction's zxid, the
     * lock node's new {@code mzxid}. When {@code expected} held on the very lock node it was learned on
     * (same czxid: not deleted and created again since), the node is proven first and remembered so.
     */
    private Mono<Created> send(OwnerNode node, String path, @Nullable Known expected) {
        return Mono.defer(() -> {
            String lockPath = paths.lockPath(node.name);
            List<CuratorOp> ops = List.of(
                    nodes.async().transactionOp().setData().withVersion(expected == null ? -1 : expected.version())
                            .forPath(lockPath, BUMP),
                    nodes.async().transactionOp().create().withOptions(CreateMode.EPHEMERAL_SEQUENTIAL, options.acl(), false)
                            .forPath(path, LockNodes.data(node.owner, node.payload)));
            long sessionId = session.sessionId();
            long sentAt = node.clock.nanoTime();
            return Mono.fromCompletionStage(() -> nodes.async().transaction().forOperations(ops)).flatMap(results -> {
                Stat lock = resultStat(results);
                String made = resultPath(results);
                if (made == null) {
                    return Mono.error(new LockBackendException(node.name, "no path in the answer to the create of owner "
                            + node.owner, null, true));
                }
                Mono<Created> created = lock != null && sessionId != 0 && session.sessionId() == sessionId
                        ? Mono.just(new Created(made, ZNodeNames.lastSegment(made), lock.getMzxid(), sessionId))
                        // the session changed meanwhile (Curator sent it again on a new one?): read the node itself
                        : nodes.exists(made).map(s -> new Created(made, ZNodeNames.lastSegment(made), s.getCzxid(), s.getEphemeralOwner()))
                                .switchIfEmpty(Mono.error(() -> new LockBackendException(node.name,
                                        "the node of owner " + node.owner + " vanished right after its create", null, true)));
                return created.doOnNext(c -> {
                    if (expected != null && lock != null && lock.getCzxid() == expected.czxid()) {
                        node.provenAt = sentAt;
                        node.proof.set(true);
                        learn(node.name, new Known(lock.getCzxid(), lock.getVersion(), c.node(), true));
                    }
                });
            });
        });
    }

    private static @Nullable Stat resultStat(List<CuratorTransactionResult> results) {
        for (CuratorTransactionResult r : results) {
            if (r.getResultStat() != null) {
                return r.getResultStat();
            }
        }
        return null;
    }

    private static @Nullable String resultPath(List<CuratorTransactionResult> results) {
        return results.size() < 2 ? null : results.get(1).getResultPath();
    }

    /**
     * @return {@code list} without the other nodes of the same owner, which are deleted: left by a
     *         transaction whose answer was lost (Curator sends it again; at any version it creates a
     *         second node), they stand for the same owner, so the owner's place is its node's
     */
    private List<ZNodeNames.Child> withoutStrays(String name, String owner, List<ZNodeNames.Child> list, Created c) {
        List<ZNodeNames.Child> kept = null;
        for (int i = 0; i < list.size(); i++) {
            ZNodeNames.Child child = list.get(i);
            if (child.owner().equals(owner) && !child.node().equals(c.node())) {
                if (kept == null) {
                    kept = new ArrayList<>(list.subList(0, i));
                }
                janitor.deleteQuietly(paths.lockPath(name) + "/" + child.node());
            } else if (kept != null) {
                kept.add(child);
            }
        }
        return kept == null ? list : kept;
    }

    // ---------------------------------------------------------------- what this backend knows of a lock

    /**
     * Remembers what {@code l} shows: the lock node's version and czxid, and whether its children were
     * none or only {@code ours}.
     */
    private void learn(String name, LockNodes.Listing l, @Nullable String ours) {
        Stat stat = l.stat();
        if (stat == null) {
            return;
        }
        List<ZNodeNames.Child> list = l.children();
        boolean none = list.isEmpty();
        boolean onlyOurs = ours != null && list.size() == 1 && list.get(0).node().equals(ours);
        learn(name, new Known(stat.getCzxid(), stat.getVersion(), onlyOurs ? ours : null, none || onlyOurs));
    }

    /** Keeps the later of two states: a later lock node (czxid), or a later (or equal) version of the same node. */
    private void learn(String name, Known k) {
        if (known.size() >= MAX_KNOWN && !known.containsKey(name)) {
            known.clear(); // many names: start over rather than grow
        }
        known.merge(name, k, (old, nw) -> nw.czxid() > old.czxid() || nw.czxid() == old.czxid() && nw.version() >= old.version()
                ? nw : old);
    }

    /** Our node {@code node} of lock {@code name} is gone (its delete answered): a state that held only it holds nothing now. */
    private void forgetNode(String name, String node) {
        known.computeIfPresent(name, (n, k) -> node.equals(k.ours()) ? new Known(k.czxid(), k.version(), null, k.alone()) : k);
    }

    /** @return whether this backend knows the state of lock {@code name} to be free (for tests) */
    boolean knownFree(String name) {
        Known k = known.get(name);
        return k != null && k.free();
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
                deleted = c != null ? janitor.deleteTracked(c.path()).doOnSuccess(d -> forgetNode(name, c.node()))
                        : node.creation.flatMap(x -> janitor.deleteTracked(x.path()).doOnSuccess(d -> forgetNode(name, x.node())))
                                .thenReturn(true)
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

    /**
     * What this backend learned of a lock's node: at data version {@code version} of the node created
     * by {@code czxid}, the children were none but {@code ours} (one node of this backend, or null)
     * when {@code alone}; nothing is known of them otherwise.
     */
    record Known(long czxid, int version, @Nullable String ours, boolean alone) {
        /** @return whether the lock had no child at that version, or only nodes of ours whose deletes have answered */
        boolean free() {
            return alone && ours == null;
        }
    }

    private final class OwnerNode {
        final String name;
        final String owner;
        final String key;
        final @Nullable String payload;
        final LockClock clock;
        /** Curator's protected id, the same for every try of this owner's create. */
        final String protectedId = UUID.randomUUID().toString();
        final Mono<Created> creation;
        /** Set when the fast create proved the node first; taken by the first decision. */
        final AtomicBoolean proof = new AtomicBoolean();
        volatile long provenAt;
        private final AtomicBoolean started = new AtomicBoolean();
        volatile Created created;
        volatile boolean released;
        volatile boolean granted;

        OwnerNode(String name, String owner, @Nullable String payload, String key, LockClock clock, boolean fastOnly) {
            this.name = name;
            this.owner = owner;
            this.key = key;
            this.payload = payload;
            this.clock = clock;
            this.creation = createNode(this, fastOnly)
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
