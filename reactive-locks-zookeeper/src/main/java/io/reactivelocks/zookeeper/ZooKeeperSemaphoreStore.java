package io.reactivelocks.zookeeper;

import io.reactivelocks.spi.Holder;
import io.reactivelocks.spi.LockEvent;
import io.reactivelocks.spi.RenewOutcome;
import io.reactivelocks.spi.RenewRequest;
import io.reactivelocks.spi.semaphore.PermitGrant;
import io.reactivelocks.spi.semaphore.SemaphoreStore;
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
 * Semaphores on ZooKeeper. Each permit is an ephemeral sequential node
 * {@code <root>-semaphore/<segment(name)>/lock-<owner>-<sequence>} of the holder's session (so a dead
 * holder's permit goes when its session expires), under a container node; its data is
 * {@code <N>:<index>}: the N of the call that created it and the permit's index in its unit.
 *
 * <p><b>Units.</b> The k permits of one request are created in <em>one</em> transaction
 * ({@code multi}, after a {@code setData} of the name's node), so their sequences are contiguous and
 * they share one {@code czxid}: the request
 * takes its place in line as one unit, and no other request's node can fall between its nodes.
 * (Created one by one, the nodes of callers asking together interleave — A1 B1 C1 A2 B2 C2 for
 * three callers asking for 2 of 3 — and then every caller's highest node has N nodes below it:
 * nobody is ever let in.) A node holds while it is among the N lowest sequences (its own N), and a
 * unit while its highest node does — granted nodes and waiting ones alike, in sequence order, as
 * Curator's recipes queue. A grant creates the unit; the transaction's answer to its setData is
 * the name's node's stat between the two (ZooKeeper applies a transaction's operations in order,
 * atomically), whose {@code numChildren} counts the nodes there were right before the unit: when
 * those and the unit's k fit in N, the unit's highest node is among the N lowest and it is granted
 * at once, with no listing (an uncontended acquire and release is two requests). Else the grant
 * lists the children: granted when the unit's highest node is among the N lowest. Any node below a
 * granted unit existed when that grant counted or listed, and nodes only leave, so at most N permits
 * are held at once. The name's node's data is written by every such create and means nothing;
 * revocation requests live in a sibling node ({@link GrantRevocations}). Who holds follows from the
 * children alone, so every change of the holders is a change of the children, which observers
 * watch. A unit is never half created; once granted, a permit released alone frees its place at
 * once. A permit lives as long as the session: its TTL is the negotiated session timeout (at most
 * the lease time asked), and renewal checks that the node is still there.
 *
 * <p><b>Tokens.</b> A permit's token is {@code czxid * 65536 + index} (index 0 to k − 1 in its
 * unit; the czxid is the transaction's zxid, the name's node's {@code mzxid} in the setData's
 * answer): zxids are global and strictly increasing across leader elections and restarts, so
 * tokens are distinct and increase with every later grant. The product stays exact while the zxid's epoch
 * (its high 32 bits, one more per leader election) is below 2^15; beyond that the store fails the
 * grant rather than hand out a wrapped token. A request therefore asks for at most
 * {@value ZooKeeperPermitNodes#MAX_COUNT} permits at once (more fails with {@link IllegalArgumentException}).
 *
 * <p><b>Waiting without requests.</b> A waiting caller keeps its nodes (its place in the queue, FIFO).
 * Refused, it waits in its name's {@link PermitLine}: this client's copy of the name's children, seeded
 * by one listing and kept by one persistent recursive watch of the root ({@link PermitLines}), which
 * reports every node created or deleted. The waiter decides from that copy (no listing per attempt),
 * is woken only when its unit's highest node is among the N lowest in it (no watch per wait, no herd:
 * a release wakes the waiters it lets in), and nothing is written for the waiter behind a grant. The
 * copy can be late, never early (nodes below a waiting node only leave); a connection change, or a
 * wake-up by the engine's safety timer, makes the waiter list again. A single attempt
 * ({@code waiting == false}) lists first and creates nothing when the nodes there already take the
 * permits, and deletes what it created when refused.
 */
final class ZooKeeperSemaphoreStore implements SemaphoreStore {

    private final CuratorFramework client;
    private final boolean ownsClient;
    private final AsyncCuratorFramework async;
    private final String root;
    private final List<ACL> acl;
    private final ZNodeNames names;
    /** The node of each owner this store created and has not deleted: grants and waiting places. */
    private final Map<String, Place> places = new ConcurrentHashMap<>();
    /** Of each refused waiting attempt (by its first owner): its place in its name's line. */
    private final Map<String, Wait> before = new ConcurrentHashMap<>();
    /** Of each name with waiters of this store: its children as this client sees them. */
    private final PermitLines lines;

    /**
     * A refused waiter's place: the line it waits in and the sequence of its unit's highest node.
     * {@code byLine} is set when the line let it go, so that its next decision may use the line's copy.
     */
    private static final class Wait {
        final PermitLine line;
        final long highest;
        final int permits;
        volatile boolean byLine;

        Wait(PermitLine line, long highest, int permits) {
            this.line = line;
            this.highest = highest;
            this.permits = permits;
        }
    }

    /** A node this store created: its path, its czxid (0 until known) and its index in its unit. */
    private record Place(String path, long czxid, int index) {
    }

    /**
     * @param client     the started Curator client
     * @param ownsClient whether {@link #close()} closes it
     * @param root       the parent of the semaphore nodes ({@code <lock root>-semaphore})
     * @param acl        the ACL of created nodes
     */
    ZooKeeperSemaphoreStore(CuratorFramework client, boolean ownsClient, String root, List<ACL> acl) {
        this.client = Objects.requireNonNull(client, "client");
        this.ownsClient = ownsClient;
        this.async = AsyncCuratorFramework.wrap(client);
        this.root = Objects.requireNonNull(root, "root");
        this.acl = List.copyOf(acl);
        this.names = new ZNodeNames(root);
        this.lines = new PermitLines(async, root);
    }

    String path(String name) {
        return root + "/" + ZNodeNames.segment(name);
    }

    /** @return the name's revocation node ({@link GrantRevocations}), a sibling of {@link #path} */
    String revocationPath(String name) {
        return names.revocationPath(name);
    }

    @Override
    public int maxCount() {
        return ZooKeeperPermitNodes.MAX_COUNT;
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

    private Mono<List<ZNodeNames.Child>> children(String name) {
        return Mono.fromCompletionStage(() -> async.getChildren().forPath(path(name)))
                .onErrorResume(e -> ZooKeeperErrors.code(e) == KeeperException.Code.NONODE, e -> Mono.just(List.of()))
                .map(names -> {
                    List<ZNodeNames.Child> out = new ArrayList<>();
                    for (String n : names) {
                        ZNodeNames.Child c = ZNodeNames.parse(n);
                        if (c != null) {
                            out.add(c);
                        }
                    }
                    out.sort(ZNodeNames.BY_SEQUENCE);
                    return out;
                });
    }

    private static ZNodeNames.@Nullable Child find(List<ZNodeNames.Child> children, String owner) {
        for (ZNodeNames.Child c : children) {
            if (c.owner().equals(owner)) {
                return c;
            }
        }
        return null;
    }

    private String nodePath(String name, ZNodeNames.Child c) {
        return path(name) + "/" + c.node();
    }

    /** A single attempt: nothing left when refused. */
    @Override
    public Mono<PermitGrant> tryGrant(String name, List<String> owners, int permits, Duration leaseTime) {
        return tryGrant(name, owners, permits, false, leaseTime);
    }

    @Override
    public Mono<PermitGrant> tryGrant(String name, List<String> owners, int permits, boolean waiting, Duration leaseTime) {
        if (owners.size() > ZooKeeperPermitNodes.MAX_COUNT) {
            return Mono.error(ZooKeeperPermitNodes.tooMany(owners.size()));
        }
        return Mono.defer(() -> {
            if (places.containsKey(owners.get(0))) { // a waiting owner asking again (or a retried request)
                Wait w = before.get(owners.get(0));
                if (waiting && w != null && w.byLine && !w.line.isClosed()) {
                    // woken by the line: its copy decides (no request); else (the safety timer, a reset) seeded again
                    w.byLine = false;
                    return decideInLine(name, w.line, owners, permits, leaseTime);
                }
                return waiting ? decideInLine(name, line(name), owners, permits, leaseTime, false)
                        : decide(name, owners, permits, false, leaseTime, children(name));
            }
            if (waiting) { // a waiter queues at once: create (granted when few enough were there before), else list
                return createAndDecide(name, owners, permits, true, leaseTime);
            }
            return children(name).flatMap(children -> {
                if (find(children, owners.get(0)) != null) { // a retried request of another store
                    return decide(name, owners, permits, false, leaseTime, Mono.just(children));
                }
                if (children.size() + owners.size() > permits) {
                    // busy without creating a node: a node created and deleted again changes the children
                    return Mono.just((PermitGrant) new PermitGrant.Busy(null));
                }
                return createAndDecide(name, owners, permits, false, leaseTime);
            });
        }).onErrorMap(e -> ZooKeeperErrors.map(name, "semaphore grant", e));
    }

    /**
     * Creates the owners' unit ({@link #create}); granted at once when the nodes there before it and
     * the unit fit in the N permits (the unit's highest node is then among the N lowest), else decided
     * by a listing.
     */
    private Mono<PermitGrant> createAndDecide(String name, List<String> owners, int permits, boolean waiting, Duration leaseTime) {
        return create(name, owners, permits).flatMap(earlier -> {
            Place head = places.get(owners.get(0));
            if (earlier < 0 || earlier + owners.size() > permits || head == null || head.czxid() == 0) {
                if (!waiting) {
                    return decide(name, owners, permits, false, leaseTime, children(name));
                }
                // the line's copy has the unit's nodes (their events came before the transaction's answer)
                return decideInLine(name, line(name), owners, permits, leaseTime);
            }
            endWait(owners.get(0));
            List<Long> tokens = new ArrayList<>(owners.size());
            for (int i = 0; i < owners.size(); i++) {
                tokens.add(ZooKeeperPermitNodes.token(head.czxid(), i));
            }
            return Mono.just((PermitGrant) new PermitGrant.Granted(tokens, ttl(leaseTime)));
        });
    }

    /**
     * Creates the owners' nodes as one unit, by one transaction: {@code setData} of the name's node,
     * then one create per owner, so their sequences are contiguous and they share one {@code czxid}.
     * ZooKeeper applies a transaction's operations in order, atomically, and answers the setData with
     * the name's node's stat right after it — before the creates: its {@code numChildren} is how many
     * nodes there were before the unit, and its {@code mzxid} the transaction's zxid, the unit's
     * {@code czxid}.
     *
     * @return how many children the name's node had right before the unit (-1 when the answer tells
     *         none: the czxid is then read when granted)
     */
    private Mono<Integer> create(String name, List<String> owners, int permits) {
        return Mono.defer(() -> {
                    List<CuratorOp> ops = new ArrayList<>(owners.size() + 1);
                    ops.add(async.transactionOp().setData().withVersion(-1).forPath(path(name), new byte[0]));
                    for (int i = 0; i < owners.size(); i++) {
                        ops.add(async.transactionOp().create().withOptions(CreateMode.EPHEMERAL_SEQUENTIAL, acl, false)
                                .forPath(path(name) + "/" + ZNodeNames.nodeName(owners.get(i)), ZooKeeperPermitNodes.data(permits, i)));
                    }
                    return Mono.fromCompletionStage(() -> async.transaction().forOperations(ops));
                })
                // a transaction creates no parents: the first unit of a name (or one after its container was
                // pruned) creates the name's container node, then tries again
                .retryWhen(Retry.max(3).filter(e -> ZooKeeperErrors.code(e) == KeeperException.Code.NONODE)
                        .doBeforeRetryAsync(rs -> ensureParent(name)).onRetryExhaustedThrow((spec, rs) -> rs.failure()))
                .map(results -> {
                    Stat parent = results.get(0).getResultStat();
                    long czxid = parent == null ? 0 : parent.getMzxid();
                    for (int i = 0; i < owners.size(); i++) {
                        places.put(owners.get(i), new Place(results.get(i + 1).getResultPath(), czxid, i));
                    }
                    return parent == null ? -1 : parent.getNumChildren();
                });
    }

    /** Creates the name's container node (and its parents as containers) when missing. */
    private Mono<Void> ensureParent(String name) {
        return Mono.fromCompletionStage(() -> async.create()
                        .withOptions(EnumSet.of(CreateOption.createParentsAsContainers), CreateMode.CONTAINER, acl)
                        .forPath(path(name), new byte[0]))
                .then()
                .onErrorResume(e -> ZooKeeperErrors.code(e) == KeeperException.Code.NODEEXISTS, e -> Mono.empty());
    }

    /**
     * Decides by the listing {@code queued}: granted when every owner's (lowest) node is among the N
     * lowest; else keeps the nodes (waiting) and remembers what to watch, or deletes them.
     */
    private Mono<PermitGrant> decide(String name, List<String> owners, int permits, boolean waiting, Duration leaseTime,
            Mono<List<ZNodeNames.Child>> queued) {
        String first = owners.get(0);
        return queued.flatMap(children -> {
            List<String> extras = new ArrayList<>();
            List<ZNodeNames.Child> mine = new ArrayList<>(owners.size());
            int highest = -1;
            boolean missing = false;
            for (String o : owners) {
                ZNodeNames.Child lowest = null;
                for (int i = 0; i < children.size(); i++) {
                    ZNodeNames.Child c = children.get(i);
                    if (!c.owner().equals(o)) {
                        continue;
                    }
                    if (lowest == null) {
                        lowest = c;
                        highest = Math.max(highest, i);
                    } else {
                        extras.add(nodePath(name, c)); // a second node of a retried create
                    }
                }
                if (lowest == null) {
                    missing = true;
                } else {
                    mine.add(lowest);
                }
            }
            Mono<Void> dropExtras = deletePaths(extras);
            if (missing) { // deleted meanwhile (the session went) or only partly created: start again
                return dropExtras.then(forget(name, owners)).thenReturn((PermitGrant) new PermitGrant.Busy(null));
            }
            if (highest < permits) { // the unit's highest node is among the N lowest: every permit holds
                endWait(first);
                // the unit's nodes share one czxid (one create or one transaction)
                ZNodeNames.Child head = mine.get(0);
                Place known = places.get(head.owner());
                Mono<Long> czxid = known != null && known.czxid() != 0 && known.path().equals(nodePath(name, head))
                        ? Mono.just(known.czxid())
                        : Mono.fromCompletionStage(() -> async.checkExists().forPath(nodePath(name, head))).map(st -> st.getCzxid());
                return dropExtras.then(czxid)
                        .map(z -> {
                            List<Long> tokens = new ArrayList<>(mine.size());
                            for (int i = 0; i < mine.size(); i++) {
                                places.put(owners.get(i), new Place(nodePath(name, mine.get(i)), z, i));
                                tokens.add(ZooKeeperPermitNodes.token(z, i));
                            }
                            return (PermitGrant) new PermitGrant.Granted(tokens, ttl(leaseTime));
                        })
                        .defaultIfEmpty(new PermitGrant.Busy(null)); // a node went between the listing and its stat
            }
            if (!waiting) {
                return dropExtras.then(forget(name, owners)).thenReturn((PermitGrant) new PermitGrant.Busy(null));
            }
            startWait(name, first, children.get(highest).sequence(), permits);
            return dropExtras.thenReturn((PermitGrant) new PermitGrant.Busy(null));
        });
    }

    /** @return the name's line: the open one, else a new one (not yet seeded) */
    private PermitLine line(String name) {
        return lines.line(path(name));
    }

    /** A waiting attempt decided by the line's copy when it is seeded (else by a listing that seeds it). */
    private Mono<PermitGrant> decideInLine(String name, PermitLine line, List<String> owners, int permits, Duration leaseTime) {
        return decideInLine(name, line, owners, permits, leaseTime, true);
    }

    /**
     * A waiting attempt decided in the name's line: by its copy when {@code fromCopy} and it is seeded,
     * else by a listing that seeds it. The line is in use while the attempt decides, so that a line
     * whose attempt is granted (no waiter left) goes again.
     */
    private Mono<PermitGrant> decideInLine(String name, PermitLine line, List<String> owners, int permits, Duration leaseTime,
            boolean fromCopy) {
        return Mono.defer(() -> {
            line.use();
            return decide(name, owners, permits, true, leaseTime, fromCopy && line.seeded() ? Mono.fromSupplier(line::children) : line.seed(async))
                    .doFinally(s -> line.leave());
        });
    }

    /** The refused waiting attempt of {@code first} waits in the name's line for its unit's highest node to get in. */
    private void startWait(String name, String first, long highest, int permits) {
        PermitLine line = line(name);
        Wait w = new Wait(line, highest, permits);
        line.use();
        Wait old = before.put(first, w);
        if (old != null) {
            old.line.leave();
        }
    }

    /** The attempt of {@code first} waits no more (granted, given up or released). */
    private void endWait(String first) {
        Wait w = before.remove(first);
        if (w != null) {
            w.line.leave();
        }
    }

    /** Deletes every node of the owners (known or listed) and forgets them. */
    private Mono<Void> forget(String name, List<String> owners) {
        endWait(owners.get(0));
        return Flux.fromIterable(owners).concatMap(o -> release(name, o)).then();
    }

    /**
     * Waits in the name's line ({@link PermitLine}) until the owners' unit gets in by the line's copy
     * of the children (then the next attempt decides from that copy, without a request), or the copy
     * went stale (a connection change: the next attempt lists again); at once when that is so already or
     * no place is known.
     */
    @Override
    public Mono<Void> awaitTurn(String name, List<String> owners) {
        return Mono.defer(() -> {
            Wait wait = before.get(owners.get(0));
            if (wait == null) {
                return Mono.<Void>empty();
            }
            return wait.line.turn(wait.highest, wait.permits, () -> wait.byLine = true);
        }).onErrorMap(e -> ZooKeeperErrors.map(name, "semaphore wait", e));
    }

    private Mono<Void> deletePaths(List<String> paths) {
        return Flux.fromIterable(new ArrayList<>(paths))
                .concatMap(p -> Mono.fromCompletionStage(() -> async.delete().forPath(p)).onErrorResume(e -> Mono.empty()))
                .then();
    }

    /**
     * {@inheritDoc}
     *
     * <p>The permits whose nodes this store made are checked in one request (a read-only {@code multi}
     * of their nodes, {@link MultiRead}): still there with the grant's czxid → renewed; the others, or all
     * when that request fails, one by one as {@link #renewEach}.
     */
    @Override
    public Mono<List<RenewOutcome>> renew(List<RenewRequest> batch) {
        List<Integer> at = new ArrayList<>();
        List<Place> known = new ArrayList<>();
        for (int i = 0; i < batch.size(); i++) {
            RenewRequest r = batch.get(i);
            Place p = places.get(r.lock().owner());
            if (p != null && p.czxid() != 0 && ZooKeeperPermitNodes.token(p.czxid(), p.index()) == r.lock().token()) {
                at.add(i);
                known.add(p);
            }
        }
        if (known.size() < 2) {
            return renewEach(batch);
        }
        return MultiRead.stats(client, known.stream().map(Place::path).toList())
                .flatMap(stats -> {
                    RenewOutcome[] out = new RenewOutcome[batch.size()];
                    for (int j = 0; j < at.size(); j++) {
                        RenewRequest r = batch.get(at.get(j));
                        long czxid = known.get(j).czxid();
                        out[at.get(j)] = stats.get(j).filter(st -> st.getCzxid() == czxid).isPresent()
                                ? RenewOutcome.renewed(ttl(r.leaseTime())) : RenewOutcome.notHeld();
                    }
                    List<RenewRequest> rest = new ArrayList<>();
                    List<Integer> restAt = new ArrayList<>();
                    for (int i = 0; i < batch.size(); i++) {
                        if (out[i] == null) {
                            rest.add(batch.get(i));
                            restAt.add(i);
                        }
                    }
                    return (rest.isEmpty() ? Mono.just(List.<RenewOutcome>of()) : renewEach(rest)).map(more -> {
                        for (int k = 0; k < more.size(); k++) {
                            out[restAt.get(k)] = more.get(k);
                        }
                        return List.of(out);
                    });
                })
                .onErrorResume(e -> renewEach(batch));
    }

    /** One permit after the other: an {@code exists} of the node this store made, else a listing and a read. */
    private Mono<List<RenewOutcome>> renewEach(List<RenewRequest> batch) {
        return Flux.fromIterable(batch).concatMap(r -> {
                    Place known = places.get(r.lock().owner());
                    Mono<RenewOutcome> outcome = known != null && known.czxid() != 0 && ZooKeeperPermitNodes.token(known.czxid(), known.index()) == r.lock().token()
                            // the node this store created for the grant: one exists
                            ? Mono.fromCompletionStage(() -> async.checkExists().forPath(known.path()))
                                    .map(st -> st.getCzxid() == known.czxid() ? RenewOutcome.renewed(ttl(r.leaseTime())) : RenewOutcome.notHeld())
                                    .defaultIfEmpty(RenewOutcome.notHeld())
                            : children(r.lock().name()).flatMap(children -> {
                                ZNodeNames.Child c = find(children, r.lock().owner());
                                if (c == null) {
                                    return Mono.just(RenewOutcome.notHeld());
                                }
                                Stat stat = new Stat();
                                return Mono.fromCompletionStage(() -> async.getData().storingStatIn(stat).forPath(nodePath(r.lock().name(), c)))
                                        .map(data -> ZooKeeperPermitNodes.token(stat.getCzxid(), ZooKeeperPermitNodes.indexOf(data)) == r.lock().token()
                                                ? RenewOutcome.renewed(ttl(r.leaseTime())) : RenewOutcome.notHeld())
                                        .onErrorResume(e -> ZooKeeperErrors.code(e) == KeeperException.Code.NONODE,
                                                e -> Mono.just(RenewOutcome.notHeld()));
                            });
                    return outcome.onErrorMap(e -> ZooKeeperErrors.map(r.lock().name(), "semaphore renewal", e));
                })
                .collectList();
    }

    /** Deletes the owner's node: the path this store created for it if known (one request), else found by listing. */
    @Override
    public Mono<Boolean> release(String name, String owner) {
        return Mono.defer(() -> {
            endWait(owner);
            Place known = places.remove(owner);
            Mono<Boolean> listed = children(name).flatMap(children -> {
                List<String> paths = new ArrayList<>();
                for (ZNodeNames.Child c : children) {
                    if (c.owner().equals(owner)) {
                        paths.add(nodePath(name, c));
                    }
                }
                return deletePaths(paths).thenReturn(!paths.isEmpty());
            });
            if (known == null) {
                return listed;
            }
            return Mono.fromCompletionStage(() -> async.delete().forPath(known.path()))
                    .thenReturn(true)
                    .onErrorResume(e -> ZooKeeperErrors.code(e) == KeeperException.Code.NONODE, e -> listed);
        }).onErrorMap(e -> ZooKeeperErrors.map(name, "semaphore release", e));
    }

    /** The holding nodes ({@link ZooKeeperPermitNodes#holders}), in token order. */
    @Override
    public Mono<List<Holder>> holders(String name) {
        Duration estimate = Duration.ofMillis(Math.max(0, client.getZookeeperClient().getLastNegotiatedSessionTimeoutMs()));
        return Mono.defer(() -> children(name))
                .flatMapMany(children -> Flux.range(0, children.size()).map(i -> Map.entry(i, children.get(i))))
                .concatMap(e -> {
                    ZNodeNames.Child c = e.getValue();
                    Stat stat = new Stat();
                    return Mono.fromCompletionStage(() -> async.getData().storingStatIn(stat).forPath(path(name) + "/" + c.node()))
                            .map(data -> new ZooKeeperPermitNodes.Node(c.owner(), e.getKey(), stat.getCzxid(), data))
                            .onErrorResume(x -> ZooKeeperErrors.code(x) == KeeperException.Code.NONODE, x -> Mono.empty());
                })
                .collectList()
                .map(nodes -> ZooKeeperPermitNodes.holders(nodes, estimate))
                .onErrorMap(e -> ZooKeeperErrors.map(name, "semaphore read", e));
    }

    /**
     * A revocation request to the grant of {@code owner}: an entry added to the list of requests in
     * the data of the name's revocation node {@code <root>-semaphore/r-<base64url(name)>}, a persistent
     * sibling of the name's node ({@link GrantRevocations#request}: a compare-and-set of that data,
     * which nothing else uses), reported as {@link LockEvent.Revoked} by the data watch of every
     * {@link #events} stream of the name. The name's node and the permit nodes are only read (no grant
     * decision, holder read, renewal, release or waiter sees the request); the entries of owners with
     * no node left are dropped by the next request. A name whose node is gone has no grant to ask:
     * nothing is written.
     */
    @Override
    public Mono<Void> revoke(String name, String owner, String reason) {
        return GrantRevocations.request(async, path(name), names.revocationPath(name), acl, ZooKeeperSemaphoreStore::ownerOf, owner, reason)
                .onErrorMap(e -> ZooKeeperErrors.map(name, "semaphore revocation request", e));
    }

    /** @return the owner of a child of a name's node, or {@code null} when it is not a grant node */
    private static @Nullable String ownerOf(String child) {
        ZNodeNames.Child c = ZNodeNames.parse(child);
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
        lines.close();
        return ownsClient ? Mono.<Void>fromRunnable(client::close).subscribeOn(Schedulers.boundedElastic()) : Mono.empty();
    }

    @Override
    public String toString() {
        return "ZooKeeperSemaphoreStore{" + root + "}";
    }
}
