package io.reactivelocks.zookeeper;

import io.reactivelocks.rwlock.LockMode;
import io.reactivelocks.spi.Holder;
import io.reactivelocks.spi.LockEvent;
import io.reactivelocks.spi.RenewOutcome;
import io.reactivelocks.spi.RenewRequest;
import io.reactivelocks.spi.rwlock.ReadWriteHolders;
import io.reactivelocks.spi.rwlock.ReadWriteStore;
import io.reactivelocks.spi.semaphore.PermitGrant;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.curator.x.async.AsyncCuratorFramework;
import org.apache.curator.x.async.AsyncStage;
import org.apache.curator.x.async.api.CreateOption;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.data.Stat;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.util.retry.Retry;

/**
 * Read-write locks on ZooKeeper, in the order of Curator's {@code InterProcessReadWriteLock}: each
 * request is an ephemeral sequential node {@code <root>-rw/<segment(name)>/read-<owner>-<sequence>}
 * or {@code .../write-<owner>-<sequence>} of the holder's session (so a dead holder's grant goes
 * when its session expires), under a container node. A reader holds when no write node has a lower
 * sequence; a writer holds when its node is the lowest. Decisions depend only on which nodes exist
 * and their sequences, so a reader and a writer never both hold: the one with the higher sequence
 * waits for the other's node to go. Who holds follows from the children alone (no mark is written
 * on a granted node: observers watch the children, and the successor watching the node would wake
 * for nothing); a grant's token is its node's {@code czxid} — a writer's exceeds every node before
 * it (the readers it waited for), and a reader's the writer before it.
 *
 * <p><b>One transaction.</b> An owner's first node is created by one transaction ({@code createFirst})
 * whose first operation is a {@code setData} of a parent: ZooKeeper applies a transaction's operations
 * in order, atomically, and answers that setData with the parent's stat right after it, so its {@code
 * numChildren} counts what was there right before our node, and its {@code mzxid} (the transaction's
 * zxid) is our node's czxid, the token. A writer's transaction is {@code multi(setData(name's node),
 * create(owner's node), create(owner's writer mark))}: no node before it, and it is the lowest — it
 * holds at once. A reader's is {@code multi(setData(name's writer marks), create(owner's node))}: no
 * writer mark, so no write node anywhere below it, and it holds at once — also beside other readers,
 * which Curator's recipe (and our first version, which counted the name's nodes) lists the children
 * for. Either way an acquire and release that need not wait are two requests; otherwise the children
 * are listed and the rule above decides.
 *
 * <p><b>Writer marks.</b> {@code <root>-rw/w-<base64url(name)>} (a container, a sibling of the name's node; not a
 * name's segment, so the admin's listing skips it; made with a child created and deleted at once, so that the
 * server prunes it when empty even if only readers used it) has one ephemeral child per write node, {@code
 * <owner>}, created in the write node's transaction and deleted in its delete's ({@code multi(delete
 * node, delete mark)}), both on the same session, so they end together when it expires. A mark without
 * its write node (the node deleted by hand) only sends readers to the listing; a write node without a
 * mark never exists: only a write node's own delete takes the mark with it, a duplicate of an owner's
 * write node cannot be made (its transaction fails on the existing mark, and the attempt adopts the
 * node it finds), and a mark is dropped alone only when the listing shows its owner has no write node.
 * Write nodes made by an earlier version of this store (no mark) are not seen by readers: do not mix
 * versions on one ensemble. The name's node's and the marks' node's data are written by every such
 * create and mean nothing; revocation requests live in a sibling node ({@link GrantRevocations}).
 *
 * <p>A waiting caller keeps its node between attempts (its place in the queue; a waiting writer's
 * node is its intent, blocking later readers) and deletes it when it gives up. Under the
 * reader-preferring policy a writer looks before it queues: it creates a node only when the name has
 * none (and deletes it at once when refused), so it never blocks readers nor shows as a waiting
 * writer; it is woken by the children changing. A single attempt
 * ({@code waiting == false}) deletes a refused node. A grant lives as
 * long as the session: its TTL is the negotiated session timeout (at most the lease time), and
 * renewal checks that the node is still there.
 *
 * <p>No herd ({@link #awaitTurn}): a refused caller that keeps its node watches only the node whose
 * deletion can let it in, as Curator's recipe does — a writer its predecessor, a reader the nearest
 * write node below it. A release thus wakes the one writer behind it, or the readers behind a
 * leaving writer (all of whom it lets in); a node joining or leaving wakes nobody else.
 */
final class ZooKeeperReadWriteStore implements ReadWriteStore {

    private static final String READ = "read-";
    private static final String WRITE = "write-";
    /** The child created and deleted with a marks' container, so that the server may prune it ({@code +} is in no encoded owner). */
    private static final String PRUNABLE = "+";
    private static final byte[] NO_DATA = new byte[0];

    private final CuratorFramework client;
    private final boolean ownsClient;
    private final AsyncCuratorFramework async;
    private final String root;
    private final List<ACL> acl;
    private final ZNodeNames names;
    /** The node of each owner this store created and has not deleted: grants and waiting places. */
    private final Map<String, String> paths = new ConcurrentHashMap<>();
    /** Of each refused owner that keeps its node: the node whose deletion may let it in. */
    private final Map<String, String> before = new ConcurrentHashMap<>();
    /** The czxid of each node this store created and has not deleted, by path. */
    private final Map<String, Long> czxids = new ConcurrentHashMap<>();

    /**
     * @param client     the started Curator client
     * @param ownsClient whether {@link #close()} closes it
     * @param root       the parent of the lock nodes ({@code <lock root>-rw})
     * @param acl        the ACL of created nodes
     */
    ZooKeeperReadWriteStore(CuratorFramework client, boolean ownsClient, String root, List<ACL> acl) {
        this.client = Objects.requireNonNull(client, "client");
        this.ownsClient = ownsClient;
        this.async = AsyncCuratorFramework.wrap(client);
        this.root = Objects.requireNonNull(root, "root");
        this.acl = List.copyOf(acl);
        this.names = new ZNodeNames(root);
    }

    String path(String name) {
        return root + "/" + ZNodeNames.segment(name);
    }

    /** @return {@code <root>/w-<base64url(name)>}: the container of the name's writer marks, a sibling of {@link #path} */
    String marksPath(String name) {
        return names.writerMarksPath(name);
    }

    /** @return the writer mark of {@code owner}'s write node under the name */
    private String markPath(String name, String owner) {
        return marksPath(name) + "/" + ZNodeNames.encodeOwner(owner);
    }

    /** @return the name's revocation node ({@link GrantRevocations}), a sibling of {@link #path} */
    String revocationPath(String name) {
        return names.revocationPath(name);
    }

    @Override
    public String name() {
        return "zookeeper";
    }

    @Override
    public boolean queues() {
        return true;
    }

    private Duration ttl(Duration leaseTime) {
        long negotiated = client.getZookeeperClient().getLastNegotiatedSessionTimeoutMs();
        return negotiated > 0 && negotiated < leaseTime.toMillis() ? Duration.ofMillis(negotiated) : leaseTime;
    }

    /** One node of the queue. */
    private record Node(ZNodeNames.Child child, LockMode mode) {
        String owner() {
            return child.owner();
        }

        long sequence() {
            return child.sequence();
        }
    }

    private Mono<List<Node>> nodes(String name) {
        return Mono.fromCompletionStage(() -> async.getChildren().forPath(path(name)))
                .onErrorResume(e -> ZooKeeperErrors.code(e) == KeeperException.Code.NONODE, e -> Mono.just(List.of()))
                .map(names -> {
                    List<Node> out = new ArrayList<>();
                    for (String n : names) {
                        ZNodeNames.Child r = ZNodeNames.parse(n, READ);
                        ZNodeNames.Child w = r == null ? ZNodeNames.parse(n, WRITE) : null;
                        if (r != null || w != null) {
                            out.add(r != null ? new Node(r, LockMode.READ) : new Node(w, LockMode.WRITE));
                        }
                    }
                    out.sort((a, b) -> Long.compare(a.sequence(), b.sequence()));
                    return out;
                });
    }

    private static @Nullable Node find(List<Node> nodes, String owner) {
        for (Node n : nodes) {
            if (n.owner().equals(owner)) {
                return n;
            }
        }
        return null;
    }

    /** Curator's order: a reader after no write node, a writer first of all. */
    private static boolean holds(List<Node> nodes, Node mine) {
        for (Node n : nodes) {
            if (n.sequence() >= mine.sequence()) {
                return true;
            }
            if (mine.mode() == LockMode.WRITE || n.mode() == LockMode.WRITE) {
                return false;
            }
        }
        return true;
    }

    /**
     * @return the node whose deletion may let {@code mine} in (Curator's choice): a writer's
     *         predecessor, a reader's nearest write node below it; null when none is below
     */
    private static @Nullable Node blocker(List<Node> nodes, Node mine) {
        Node found = null;
        for (Node n : nodes) {
            if (n.sequence() >= mine.sequence()) {
                break;
            }
            if (mine.mode() == LockMode.WRITE || n.mode() == LockMode.WRITE) {
                found = n;
            }
        }
        return found;
    }

    private String nodePath(String name, Node n) {
        return path(name) + "/" + n.child().node();
    }

    @Override
    public Mono<PermitGrant> tryGrant(String name, String owner, LockMode mode, boolean writerPreferring, boolean waiting,
            Duration leaseTime) {
        boolean keepPlace = waiting && (mode == LockMode.READ || writerPreferring);
        if (mode == LockMode.WRITE && !writerPreferring) {
            return Mono.defer(() -> nodes(name).flatMap(nodes -> {
                // a reader-preferring writer does not queue behind anyone: it looks first, and creates a
                // node only when the name is free (so it never shows as an intent, nor wakes itself)
                if (find(nodes, owner) != null) {
                    return decide(name, owner, leaseTime, keepPlace, Mono.just(nodes));
                }
                if (!nodes.isEmpty()) {
                    return Mono.just((PermitGrant) new PermitGrant.Busy(null));
                }
                return first(name, owner, mode, leaseTime, keepPlace);
            })).onErrorMap(e -> ZooKeeperErrors.map(name, "read-write lock grant", e));
        }
        // the first attempt of an owner creates its node without listing first, by one transaction that
        // tells the children there were before it: none, and it holds without a listing; else it lists
        // and decides (a retry after an unknown outcome may leave a second node of the owner: it is
        // counted among the children before, and the newer node is deleted by the decision); later
        // attempts of a waiting owner find its node in this store's map and only list
        return Mono.defer(() -> paths.containsKey(owner) ? decide(name, owner, leaseTime, keepPlace, nodes(name))
                        : first(name, owner, mode, leaseTime, keepPlace))
                .onErrorMap(e -> ZooKeeperErrors.map(name, "read-write lock grant", e));
    }

    /** An owner's first node: granted by the transaction's answer when nothing can be before it, else by a listing. */
    private Mono<PermitGrant> first(String name, String owner, LockMode mode, Duration leaseTime, boolean keepPlace) {
        return createFirst(name, owner, mode).flatMap(made -> {
            paths.put(owner, made.path());
            if (made.before() == 0) {
                before.remove(owner);
                return Mono.just((PermitGrant) new PermitGrant.Granted(List.of(made.czxid()), ttl(leaseTime)));
            }
            return decide(name, owner, leaseTime, keepPlace, nodes(name));
        });
    }

    /**
     * A node made by {@link #createFirst}.
     *
     * @param path   its path
     * @param czxid  its czxid
     * @param before how many nodes that could be before it there were right before it was created (a
     *               writer: the name's nodes; a reader: the writer marks); -1 when unknown
     */
    private record Made(String path, long czxid, int before) {
    }

    /**
     * Creates the owner's node by one transaction (see the class comment): a writer's {@code
     * multi(setData(name's node), create(node), create(mark))}, a reader's {@code multi(setData(marks'
     * node), create(node))}; the setData's stat tells what was there before, and its {@code mzxid} is
     * the transaction's zxid, our node's {@code czxid}. A transaction creates no parents: when a parent
     * is missing (the first node of a name, or after its container was pruned) it creates the
     * containers, then tries again. A writer whose mark exists already (its transaction went through
     * before and was sent again, or the mark outlived its node) adopts its node from a listing, or drops
     * the orphan mark and tries again.
     */
    private Mono<Made> createFirst(String name, String owner, LockMode mode) {
        boolean write = mode == LockMode.WRITE;
        Mono<Made> once = Mono.defer(() -> {
                    String node = path(name) + "/" + ZNodeNames.nodeName(write ? WRITE : READ, owner);
                    List<CuratorOp> ops = write
                            ? List.of(async.transactionOp().setData().withVersion(-1).forPath(path(name), NO_DATA),
                                    async.transactionOp().create().withOptions(CreateMode.EPHEMERAL_SEQUENTIAL, acl, false).forPath(node, NO_DATA),
                                    async.transactionOp().create().withOptions(CreateMode.EPHEMERAL, acl, false).forPath(markPath(name, owner), NO_DATA))
                            : List.of(async.transactionOp().setData().withVersion(-1).forPath(marksPath(name), NO_DATA),
                                    async.transactionOp().create().withOptions(CreateMode.EPHEMERAL_SEQUENTIAL, acl, false).forPath(node, NO_DATA));
                    return Mono.fromCompletionStage(() -> async.transaction().forOperations(ops));
                })
                .retryWhen(Retry.max(3).filter(e -> ZooKeeperErrors.code(e) == KeeperException.Code.NONODE)
                        .doBeforeRetryAsync(rs -> ensureParent(path(name)).then(ensureMarks(name)))
                        .onRetryExhaustedThrow((spec, rs) -> rs.failure()))
                .map(results -> {
                    Stat parent = results.get(0).getResultStat();
                    String made = results.get(1).getResultPath();
                    if (parent == null) { // no stat in the answer: decide by a listing (the token by an exists)
                        return new Made(made, 0, -1);
                    }
                    czxids.put(made, parent.getMzxid());
                    return new Made(made, parent.getMzxid(), parent.getNumChildren());
                });
        if (!write) {
            return once;
        }
        return once.onErrorResume(e -> ZooKeeperErrors.code(e) == KeeperException.Code.NODEEXISTS, e -> nodes(name).flatMap(nodes -> {
            Node mine = find(nodes, owner);
            if (mine != null) { // an earlier transaction of ours went through: decide by a listing
                return Mono.just(new Made(nodePath(name, mine), 0, -1));
            }
            // a mark whose write node is gone (deleted by hand): drop it and try once more
            return deleteQuietly(markPath(name, owner)).then(once);
        }));
    }

    /**
     * Creates the name's marks' container when missing, in one transaction with a child created and
     * deleted again: ZooKeeper prunes an empty container only once it has had a child (its cversion
     * above 0), and readers alone never give it one — without it, every name ever read-locked would
     * leave an empty node behind for good. Its parent exists ({@link #ensureParent} of the name's node
     * comes first).
     */
    private Mono<Void> ensureMarks(String name) {
        String marks = marksPath(name);
        return Mono.defer(() -> {
                    List<CuratorOp> ops = List.of(
                            async.transactionOp().create().withOptions(CreateMode.CONTAINER, acl, false).forPath(marks, NO_DATA),
                            async.transactionOp().create().withOptions(CreateMode.PERSISTENT, acl, false).forPath(marks + "/" + PRUNABLE, NO_DATA),
                            async.transactionOp().delete().forPath(marks + "/" + PRUNABLE));
                    return Mono.fromCompletionStage(() -> async.transaction().forOperations(ops));
                })
                .then()
                .onErrorResume(e -> ZooKeeperErrors.code(e) == KeeperException.Code.NODEEXISTS, e -> Mono.empty());
    }

    /** Creates a container node (and its parents as containers) when missing. */
    private Mono<Void> ensureParent(String path) {
        return Mono.fromCompletionStage(() -> async.create()
                        .withOptions(EnumSet.of(CreateOption.createParentsAsContainers), CreateMode.CONTAINER, acl)
                        .forPath(path, NO_DATA))
                .then()
                .onErrorResume(e -> ZooKeeperErrors.code(e) == KeeperException.Code.NODEEXISTS, e -> Mono.empty());
    }

    /** Grants, keeps or gives up the owner's node (its lowest one) by the listing {@code queued}. */
    private Mono<PermitGrant> decide(String name, String owner, Duration leaseTime, boolean keepPlace, Mono<List<Node>> queued) {
        return queued.flatMap(now -> {
            List<Node> mine = new ArrayList<>(1);
            for (Node x : now) {
                if (x.owner().equals(owner)) {
                    mine.add(x);
                }
            }
            if (mine.isEmpty()) { // deleted meanwhile (a release raced the attempt, or the session went)
                paths.remove(owner);
                return Mono.just((PermitGrant) new PermitGrant.Busy(null));
            }
            Node n = mine.get(0);
            paths.put(owner, nodePath(name, n));
            Mono<Void> extras = Flux.fromIterable(mine.subList(1, mine.size())).concatMap(x -> delete(nodePath(name, x))).then();
            if (!holds(now, n)) {
                Node blocker = keepPlace ? blocker(now, n) : null;
                if (blocker != null) {
                    before.put(owner, nodePath(name, blocker));
                } else {
                    before.remove(owner);
                }
                return extras.then(keepPlace ? Mono.<Void>empty()
                                : deleteOwn(name, n).doOnSuccess(x -> paths.remove(owner)))
                        .thenReturn((PermitGrant) new PermitGrant.Busy(null));
            }
            before.remove(owner);
            // no mark on the node: who holds follows from the children (a write to the node would
            // wake the successor watching it, and no children watch of an observer would see it);
            // the token is the czxid from the create's answer, else from one exists
            Long known = czxids.get(nodePath(name, n));
            Mono<Long> token = known != null ? Mono.just(known)
                    : Mono.fromCompletionStage(() -> async.checkExists().forPath(nodePath(name, n))).map(st -> st.getCzxid());
            return extras.then(token)
                    .map(z -> (PermitGrant) new PermitGrant.Granted(List.of(z), ttl(leaseTime)))
                    .defaultIfEmpty(new PermitGrant.Busy(null)); // gone between the listing and the exists
        });
    }

    private Mono<Stat> stat(String path) {
        return Mono.fromCompletionStage(() -> async.checkExists().forPath(path));
    }

    /** Deletes a node (not a write node's mark: an owner's extra node goes alone, its first one keeps the mark). */
    private Mono<Void> delete(String path) {
        czxids.remove(path);
        return deleteQuietly(path);
    }

    /** @return deletes the node; a node already gone is no error */
    private Mono<Void> deleteQuietly(String path) {
        return Mono.fromCompletionStage(() -> async.delete().forPath(path))
                .onErrorResume(e -> ZooKeeperErrors.code(e) == KeeperException.Code.NONODE, e -> Mono.empty())
                .then();
    }

    /** Deletes an owner's (first) node, and with a write node its mark, in one transaction. */
    private Mono<Void> deleteOwn(String name, Node n) {
        return deleteOwn(name, n.owner(), nodePath(name, n), n.mode() == LockMode.WRITE).then();
    }

    /**
     * Deletes an owner's node: a read node alone, a write node and its mark in one transaction. When
     * either is gone already the transaction fails as a whole: then the node, and only once it is
     * known gone the mark, each on its own.
     *
     * @return true when this call deleted the node
     */
    private Mono<Boolean> deleteOwn(String name, String owner, String path, boolean write) {
        czxids.remove(path);
        Mono<Boolean> node = Mono.fromCompletionStage(() -> async.delete().forPath(path)).thenReturn(true)
                .onErrorResume(e -> ZooKeeperErrors.code(e) == KeeperException.Code.NONODE, e -> Mono.just(false));
        if (!write) {
            return node;
        }
        List<CuratorOp> ops = List.of(async.transactionOp().delete().forPath(path),
                async.transactionOp().delete().forPath(markPath(name, owner)));
        return Mono.fromCompletionStage(() -> async.transaction().forOperations(ops)).thenReturn(true)
                .onErrorResume(e -> ZooKeeperErrors.code(e) == KeeperException.Code.NONODE,
                        e -> node.flatMap(deleted -> deleteQuietly(markPath(name, owner)).thenReturn(deleted)));
    }

    @Override
    public Mono<List<RenewOutcome>> renew(List<RenewRequest> batch) {
        return Flux.fromIterable(batch).concatMap(r -> {
                    String known = paths.get(r.lock().owner());
                    if (known != null) { // the node this store created for the grant: one exists, no listing
                        return stat(known).filter(s -> s.getCzxid() == r.lock().token())
                                .map(s -> RenewOutcome.renewed(ttl(r.leaseTime())))
                                .onErrorMap(e -> ZooKeeperErrors.map(r.lock().name(), "read-write lock renewal", e))
                                // gone, or another node of the owner's: the listing decides
                                .switchIfEmpty(Mono.defer(() -> renewListed(r)));
                    }
                    return renewListed(r);
                })
                .collectList();
    }

    /** The renewal of a grant whose node this store does not know (an adopted one): a listing, then its stat. */
    private Mono<RenewOutcome> renewListed(RenewRequest r) {
        return nodes(r.lock().name())
                        .flatMap(nodes -> {
                            Node n = find(nodes, r.lock().owner());
                            return n == null ? Mono.just(RenewOutcome.notHeld())
                                    : stat(nodePath(r.lock().name(), n)).map(s -> s.getCzxid() == r.lock().token()
                                            ? RenewOutcome.renewed(ttl(r.leaseTime())) : RenewOutcome.notHeld())
                                    .defaultIfEmpty(RenewOutcome.notHeld());
                        })
                        .onErrorMap(e -> ZooKeeperErrors.map(r.lock().name(), "read-write lock renewal", e));
    }

    /**
     * Watches (one-shot) what can let the owner in: the node noted at its last refusal (exists watch:
     * completes on its deletion or change, or at once when it is gone); for an owner without a node
     * (a reader-preferring writer) the children; completes on a connection state change too.
     */
    @Override
    public Mono<Void> awaitTurn(String name, List<String> owners) {
        return Mono.defer(() -> {
            String owner = owners.get(0);
            String blocker = before.get(owner);
            if (blocker != null) {
                AsyncStage<Stat> exists = async.watched().checkExists().forPath(blocker);
                return Mono.fromCompletionStage(exists)
                        .flatMap(stat -> Mono.fromCompletionStage(exists.event()).then().onErrorResume(e -> Mono.empty()))
                        .then();
            }
            if (paths.containsKey(owner)) {
                return Mono.<Void>empty(); // a place without a known blocker: ask again
            }
            AsyncStage<List<String>> children = async.watched().getChildren().forPath(path(name));
            return Mono.fromCompletionStage(children)
                    .flatMap(list -> list.isEmpty() ? Mono.<Void>empty()
                            : Mono.fromCompletionStage(children.event()).then().onErrorResume(e -> Mono.empty()))
                    .onErrorResume(e -> ZooKeeperErrors.code(e) == KeeperException.Code.NONODE, e -> Mono.empty())
                    .then();
        }).onErrorMap(e -> ZooKeeperErrors.map(name, "read-write lock wait", e));
    }

    /**
     * Deletes the owner's node (a write node with its mark, in one transaction): the path this store
     * created for it if known (one request), else found by listing — an admin's release by another
     * store too. An owner with no node left has no mark left either.
     */
    @Override
    public Mono<Boolean> release(String name, String owner) {
        return Mono.defer(() -> {
            before.remove(owner);
            String known = paths.remove(owner);
            Mono<Boolean> listed = nodes(name).flatMap(nodes -> {
                Node n = find(nodes, owner);
                return n == null ? deleteQuietly(markPath(name, owner)).thenReturn(false) : deleteOwn(name, n).thenReturn(true);
            });
            if (known == null) {
                return listed;
            }
            return deleteOwn(name, owner, known, isWrite(known)).flatMap(deleted -> deleted ? Mono.just(true) : listed);
        }).onErrorMap(e -> ZooKeeperErrors.map(name, "read-write lock release", e));
    }

    /** @return whether a node path (of this store) is a write node's */
    private static boolean isWrite(String path) {
        return ZNodeNames.parse(path.substring(path.lastIndexOf('/') + 1), WRITE) != null;
    }

    @Override
    public Mono<ReadWriteHolders> holders(String name) {
        Duration estimate = Duration.ofMillis(Math.max(0, client.getZookeeperClient().getLastNegotiatedSessionTimeoutMs()));
        return Mono.defer(() -> nodes(name))
                .flatMap(nodes -> Flux.fromIterable(nodes).concatMap(n -> {
                    Stat stat = new Stat();
                    return Mono.fromCompletionStage(() -> async.getData().storingStatIn(stat).forPath(nodePath(name, n)))
                            .map(data -> new Object[] {n, holds(nodes, n), new Holder(n.owner(), stat.getCzxid(), estimate)})
                            .onErrorResume(e -> ZooKeeperErrors.code(e) == KeeperException.Code.NONODE, e -> Mono.empty());
                }).collectList())
                .map(rows -> {
                    List<Holder> readers = new ArrayList<>();
                    List<Holder> waiting = new ArrayList<>();
                    Holder writer = null;
                    for (Object[] row : rows) {
                        Node n = (Node) row[0];
                        Holder h = (Holder) row[2];
                        if ((Boolean) row[1]) {
                            if (n.mode() == LockMode.WRITE) {
                                writer = h;
                            } else {
                                readers.add(h);
                            }
                        } else if (n.mode() == LockMode.WRITE) {
                            waiting.add(new Holder(h.owner(), 0, estimate));
                        }
                    }
                    return new ReadWriteHolders(readers, writer, waiting);
                })
                .onErrorMap(e -> ZooKeeperErrors.map(name, "read-write lock read", e));
    }

    /**
     * A revocation request to the grant of {@code owner}: an entry added to the list of requests in
     * the data of the name's revocation node {@code <root>-rw/r-<base64url(name)>}, a persistent
     * sibling of the name's node ({@link GrantRevocations#request}: a compare-and-set of that data,
     * which nothing else uses), reported as {@link LockEvent.Revoked} by the data watch of every
     * {@link #events} stream of the name. The name's node and the grant nodes are only read (no grant
     * decision, holder read, renewal, release or waiter sees the request); the entries of owners with
     * no node left are dropped by the next request. A name whose node is gone has no grant to ask:
     * nothing is written.
     */
    @Override
    public Mono<Void> revoke(String name, String owner, String reason) {
        return GrantRevocations.request(async, path(name), names.revocationPath(name), acl, ZooKeeperReadWriteStore::ownerOf, owner, reason)
                .onErrorMap(e -> ZooKeeperErrors.map(name, "read-write lock revocation request", e));
    }

    /** @return the owner of a child of a name's node, or {@code null} when it is not a grant node */
    private static @Nullable String ownerOf(String child) {
        ZNodeNames.Child c = ZNodeNames.parse(child, READ);
        if (c == null) {
            c = ZNodeNames.parse(child, WRITE);
        }
        return c == null ? null : c.owner();
    }

    /**
     * The name's change stream ({@link ChildrenEvents}): the changes of its children, and the
     * revocation requests written into its revocation node while it watches.
     */
    @Override
    public Flux<LockEvent> events(String name) {
        return ChildrenEvents.of(async, path(name), names.revocationPath(name), name);
    }

    /** @return a {@code Mono} that closes the Curator client when this store owns it (on a bounded-elastic thread) */
    @Override
    public Mono<Void> close() {
        return ownsClient ? Mono.<Void>fromRunnable(client::close).subscribeOn(Schedulers.boundedElastic()) : Mono.empty();
    }

    @Override
    public String toString() {
        return "ZooKeeperReadWriteStore{" + root + "}";
    }
}
