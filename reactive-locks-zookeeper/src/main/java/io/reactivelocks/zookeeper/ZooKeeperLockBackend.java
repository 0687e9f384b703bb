package io.reactivelocks.zookeeper;

import io.reactivelocks.LockBackendException;
import io.reactivelocks.LockClock;
import io.reactivelocks.spi.Attempt;
import io.reactivelocks.spi.GrantRequest;
import io.reactivelocks.spi.HeldLock;
import io.reactivelocks.spi.Holder;
import io.reactivelocks.spi.LockBackend;
import io.reactivelocks.spi.LockEvent;
import io.reactivelocks.spi.RenewOutcome;
import io.reactivelocks.spi.RenewRequest;
import io.reactivelocks.spi.Renewal;
import io.reactivelocks.spi.RenewalMode;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.x.async.AsyncCuratorFramework;
import org.apache.zookeeper.client.ConnectStringParser;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * A {@link LockBackend} on ZooKeeper through Apache Curator's asynchronous API
 * ({@link AsyncCuratorFramework}: every call returns a {@code CompletionStage} completed on
 * ZooKeeper's event thread; nothing here waits for it). The recipe is ZooKeeper's own lock
 * recipe, written without a blocking call.
 *
 * <h2>Recipe</h2>
 * Each lock is a container node {@code <root>/n-<base64url(name)>} (see {@link ZNodeNames});
 * each contender creates under it a <em>protected ephemeral-sequential</em> node
 * {@code _c_<uuid>-lock-<owner>-<sequence>} whose data is the owner id. Every such create is a
 * <em>version-guarded create</em>: one {@code multi} (atomic, one request) of a {@code setData} on
 * the lock's node and the create, so the lock node's data version counts the creates of its
 * children (deletes leave it alone). The backend remembers per lock name what it last learned: the
 * lock node's czxid and data version, and whether at that version its children were none (or only
 * a node of ours whose delete has answered since) — from a listing (the parent's stat comes with
 * the children) or from its own fast grant. To acquire:
 * <ol>
 *   <li>create the node (a retry of the same owner reuses the node it already has: one node
 *       per owner). <b>Fast path</b>, when this backend knows the lock free at version {@code v}:
 *       {@code multi(setData(lock node, v), create)}; if it succeeds on the same lock node (the
 *       answer's stat has the czxid it was learned on), our node is first: granted without a
 *       listing, timed from when the multi was sent, and the backend knows (v+1, only ours).
 *       <b>Slow path</b> (nothing known, BADVERSION, NONODE, a lock node created again):
 *       {@code multi(setData(lock node, any version), create)} — if the lock's node is missing,
 *       create it and the root, then retry — and step 2;</li>
 *   <li>list the children, ordered by sequence; if ours is first, the lock is ours: the fencing
 *       token is our node's {@code czxid}, the TTL is the negotiated session timeout, counted
 *       from when that listing was sent;</li>
 *   <li>otherwise, when the caller waits, answer {@link Attempt.Queued}: its turn sets an
 *       {@code exists} watch on the node just before ours — only that one — and when it fires
 *       lists again: still someone before us (a waiter in the middle gave up) → watch that one
 *       ({@code Queued} again); first → {@link Attempt.Granted}. A release wakes exactly one
 *       waiter: no herd. No listing is needed when the deleted node is known to have been first
 *       (first in the listing that queued us, or granted by this backend): no node can get a
 *       lower sequence later and none was between it and ours, so its deletion makes ours first;
 *       that grant is timed from the send time of the watch's {@code exists} (answered on our
 *       node's session), when younger than a third of the session timeout — else we list;</li>
 *   <li>when the caller does not wait ({@code tryAcquire}): the lock known free → the fast
 *       path's multi alone (refused: it created nothing, go on below); else if anyone is queued
 *       already, answer {@link Attempt.Busy} without writing; else create, list, and if we are
 *       not first delete our node again and answer {@code Busy}.</li>
 * </ol>
 * An uncontended acquire and release is two requests once the lock is known (multi, delete),
 * three on the slow path; a handoff is still the release's delete alone.
 * Release deletes the owner's node (found by its remembered path, or by the owner id in the
 * children's names: never another owner's node); half a second later (once per name, so a
 * lock used in a loop keeps its node) the backend tries to delete the lock's node, which fails
 * harmlessly while someone is in it; close() deletes the ones still pending.
 *
 * <h2>Why it is correct</h2>
 * <b>Exclusion:</b> ZooKeeper totally orders writes; sequence numbers under one parent grow with
 * each create, so the lowest child is the first contender still present, and a child stops
 * existing only by its owner's delete or by its session's end. <b>Session</b>: the lease lives
 * as long as the ZooKeeper session; the server ends a session no earlier than one session
 * timeout after it last heard from the client, and every successful request was heard after
 * it was sent, so "send time of the last successful request on this session + negotiated
 * timeout" is a lower bound of the session's life. The grant is timed from the listing that
 * found our node first, each {@link Renewal} from a confirmation ({@code exists} on our node,
 * every timeout/3) that found it still ours; the engine subtracts the drift allowance, so a
 * hold stream ends before the server can delete the node and wake a successor. A grant is only
 * answered if our node is in the listing and was created by the session of Curator's current
 * handle (a node of a session that Curator gave up on may still be listed until the server
 * expires it: it is never taken for ours). <b>LOST</b> ends every hold stream at once.
 * <b>Fast path:</b> we learned that at data version {@code v} of the lock node with czxid
 * {@code C} the children were none but nodes of ours, deleted since (their deletes answered); a
 * listing's children and stat are one snapshot, so this holds also when a lagging follower
 * served it. The multi's {@code setData(v)} succeeded, so the node's version was still {@code v}
 * right before it; the answer's stat shows czxid {@code C}, so it is the same node (a node
 * deleted and created again starts at version 0 and a few creates bring it back to {@code v}:
 * the version alone proves nothing then, the czxid does — such a grant lists the children).
 * Every create of a child bumps the version, so none happened between our knowledge and our
 * multi: the children are ours alone, and ours is first. The session bound is the same as
 * for a listing: the multi succeeded on our node's session, so it lives until at least its
 * send time + the session timeout. This needs every client of a lock to bump the version:
 * all must run this version of the recipe or later. Nothing else writes the lock node's data:
 * revocation requests ({@link #revoke}) live in a node of their own beside it.
 * <b>Tokens:</b> {@code czxid} is the zxid of the transaction that created the node; zxids are
 * global to the ensemble and strictly increasing, also across restarts (epoch in the high
 * bits), and a successor's node was created after its predecessor's: its token is larger.
 * (The czxid of a node made by the multi is the transaction's zxid, the lock node's new
 * {@code mzxid}.) <b>Connection loss during create:</b> the node name carries Curator's
 * protection prefix with an id, the same for every try of one owner; Curator sends a multi
 * whose answer was lost again, which may make a second node of the same owner (the first try
 * landed; at any version, or after the fast try's BADVERSION, the slow path creates again). The
 * listing of step 2 deletes every node of the owner but the one the multi answered (they stand
 * for the same owner, so keeping the later one's place is safe); a create that failed for good
 * leaves its node to the owner's release (by the owner id in the children's names) or to the
 * next try of the same owner, whose listing deletes it. <b>Cancellation:</b> a waiter that gives up is released by the
 * engine; a release that arrives while the create is still in flight marks the owner, and the
 * node is deleted as soon as the create completes.
 *
 * <p>Caveat for ensembles: reads may be served by a follower that lags; the session bound above
 * holds, but a listing may be slightly stale, as in every ZooKeeper lock recipe.
 *
 * <p>The backend never closes a {@link CuratorFramework} it was given. It registers a
 * connection-state listener on it and removes it on {@link #close()}.
 *
 * <p>This class is the SPI's face; the work is done, one job each, by {@link ZooKeeperLockQueue} (the
 * recipe: owner nodes, decisions, the predecessor wait, release), {@link SessionConfirmations}
 * (renewal by session), {@link LockEventsWatch} (events), {@link LockNodeJanitor} (deletes to
 * finish after a reconnection, pruning of emptied lock nodes), {@link LockNodes} (the single
 * requests they share) and {@link ZooKeeperSession} (the connection's states).
 */
public final class ZooKeeperLockBackend implements LockBackend {

    private static final Logger LOG = Loggers.getLogger(ZooKeeperLockBackend.class);
    /** How long a request that failed transiently waits before it is sent again (watches, clean-up). */
    static final Duration RETRY_DELAY = Duration.ofMillis(250);

    private final CuratorFramework client;
    private final boolean ownsClient;
    private final ZooKeeperLockOptions options;
    private final ZooKeeperSession session;
    private final LockNodes nodes;
    private final LockNodeJanitor janitor;
    private final ZooKeeperLockQueue queue;
    private final SessionConfirmations confirmations;
    private final Set<LockEventsWatch> eventStreams = ConcurrentHashMap.newKeySet();
    private final Disposable sweeper;
    private final Mono<Void> close;
    private volatile boolean closed;

    private ZooKeeperLockBackend(CuratorFramework client, boolean ownsClient, ZooKeeperLockOptions options) {
        this.client = checkConnectString(Objects.requireNonNull(client, "client"));
        this.ownsClient = ownsClient;
        this.options = Objects.requireNonNull(options, "options");
        this.session = new ZooKeeperSession(client);
        this.nodes = new LockNodes(AsyncCuratorFramework.wrap(client), new ZNodeNames(options.root()), options);
        this.janitor = new LockNodeJanitor(nodes, options, () -> closed);
        this.queue = new ZooKeeperLockQueue(client, nodes, options, session, janitor, () -> closed);
        this.confirmations = new SessionConfirmations(queue, nodes, options, session, () -> closed);
        client.getConnectionStateListenable().addListener(session);
        // after a reconnection, finish the clean-up that a lost connection interrupted
        this.sweeper = session.reconnects().subscribe(s -> janitor.sweep(queue::hasNodeIn)
                .timeout(options.requestTimeout(), options.scheduler())
                .subscribe(null, e -> LOG.debug("clean-up after reconnection unfinished: {}", e.toString())));
        this.close = Mono.defer(this::doClose).cache();
    }

    /**
     * Checks the client's connect string: Curator accepts a malformed one ({@code "host:port"} with
     * a port that is not a number or out of range, no host at all, a bad chroot) and every request
     * then fails with a bare {@code SystemError} — transient, so a waiting acquire would retry it
     * forever. A connect string that is not known yet (a dynamic ensemble provider) is not checked.
     *
     * @throws IllegalArgumentException naming the connect string when it is malformed
     */
    static CuratorFramework checkConnectString(CuratorFramework client) {
        String connectString = client.getZookeeperClient().getCurrentConnectionString();
        if (connectString == null || connectString.isEmpty()) {
            return client;
        }
        List<InetSocketAddress> servers;
        try {
            servers = new ConnectStringParser(connectString).getServerAddresses();
        } catch (IllegalArgumentException e) { // a NumberFormatException, a port out of range, a bad chroot
            throw badConnectString(connectString, e.getMessage());
        }
        if (servers.isEmpty()) {
            throw badConnectString(connectString, "no server");
        }
        for (InetSocketAddress server : servers) {
            if (server.getHostString() == null || server.getHostString().isBlank() || server.getPort() < 1) {
                throw badConnectString(connectString, "bad server '" + server.getHostString() + ":" + server.getPort() + "'");
            }
        }
        return client;
    }

    private static IllegalArgumentException badConnectString(String connectString, String why) {
        return new IllegalArgumentException("client connect string must be host:port[,host:port...][/chroot] with ports"
                + " 1-65535, was '" + connectString + "' (" + why + ")");
    }

    /**
     * @param client  the application's Curator client, started (not closed by the backend)
     * @param options root, ACL and confirmation settings
     * @return a backend; nothing is sent to ZooKeeper before the first operation is subscribed
     * @throws IllegalArgumentException when the client's connect string is malformed
     */
    public static ZooKeeperLockBackend create(CuratorFramework client, ZooKeeperLockOptions options) {
        return new ZooKeeperLockBackend(client, false, options);
    }

    /**
     * @param client  a Curator client the backend takes over: {@link #close()} closes it
     * @param options root, ACL and confirmation settings
     * @return a backend owning {@code client}
     */
    static ZooKeeperLockBackend owning(CuratorFramework client, ZooKeeperLockOptions options) {
        return new ZooKeeperLockBackend(client, true, options);
    }

    /** @return the settings of this backend */
    public ZooKeeperLockOptions options() {
        return options;
    }

    @Override
    public String name() {
        return "zookeeper";
    }

    @Override
    public RenewalMode renewalMode() {
        return RenewalMode.SESSION;
    }


    // ---------------------------------------------------------------- grant, renewal, release

    @Override
    public Mono<Attempt> tryGrant(GrantRequest request) {
        return queue.tryGrant(request);
    }

    /**
     * Every confirmation interval (session timeout / 3 unless set), one {@code exists} on the
     * owner's node: while it is there, with our token and our session, each answer is a
     * {@link Renewal} timed from when the request was sent, with the negotiated session timeout.
     * Completes when the node is gone or not ours, and at once on LOST. A confirmation that
     * fails (SUSPENDED) is skipped: the lease runs out on its local deadline unless a later one
     * succeeds first.
     */
    @Override
    public Flux<Renewal> sessionRenewals(HeldLock lease, LockClock clock) {
        return confirmations.sessionRenewals(lease, clock);
    }

    /**
     * Not used by the engine (this backend renews by session); answers whether each owner's node
     * still exists with the lease's token on the current session.
     */
    @Override
    public Mono<List<RenewOutcome>> renew(List<RenewRequest> batch) {
        return confirmations.renew(batch);
    }

    @Override
    public Mono<Boolean> release(String name, String owner) {
        return queue.release(name, owner);
    }

    // ---------------------------------------------------------------- inspect, events

    @Override
    public Mono<Holder> inspect(String name) {
        return inspect(name, 3).onErrorMap(e -> ZooKeeperErrors.map(name, "inspect", e));
    }

    private Mono<Holder> inspect(String name, int tries) {
        return nodes.children(name).flatMap(list -> list.isEmpty() ? Mono.<Holder>empty()
                : lowestStanding(name, list, 0).switchIfEmpty(Mono.defer(() -> tries > 1 ? inspect(name, tries - 1)
                        : Mono.error(new LockBackendException(name, "the holder of lock '" + name
                                + "' kept changing while it was read", null, true)))));
    }

    /**
     * The first node of {@code list} (sorted by sequence) still standing when read: every node before
     * it is gone by then and a new node only gets a larger sequence, so it is the lowest, the holder,
     * at that read. A lock changing hands while it is inspected costs one more read, not a new listing.
     */
    private Mono<Holder> lowestStanding(String name, List<ZNodeNames.Child> list, int i) {
        return nodes.holderOf(name, list.get(i)).switchIfEmpty(Mono.defer(() ->
                i + 1 < list.size() ? lowestStanding(name, list, i + 1) : Mono.empty()));
    }

    /**
     * The lock nodes under the name's node (one {@code getChildren}) less the holder's: ZooKeeper's
     * lock is a queue, every waiter has its node there in line.
     */
    @Override
    public Mono<Integer> waiting(String name) {
        return nodes.children(name).map(list -> Math.max(0, list.size() - 1))
                .onErrorMap(e -> ZooKeeperErrors.map(name, "inspect", e));
    }

    /**
     * Children watches on the lock's node, set again after each firing (and, when the node does
     * not exist, an exists-watch for its creation). {@link LockEvent.Subscribed} once the first
     * watch is set, and again after a reconnection; {@link LockEvent.Released} when the lowest
     * child disappears, {@link LockEvent.Acquired} (token 0: read it with {@link #inspect}) when
     * another child becomes lowest — sent once a data watch on that child is set, and again on
     * each change of its data (a payload update), so a re-read never misses one; {@link LockEvent.Revoked}
     * on each revocation request ({@link #revoke}) found written into the lock's revocation node since
     * the stream last read it (a data watch on that node, or an exists watch until it is created; never
     * the request a stream finds on its first read). Transient failures are retried; a permanent one (no ACL)
     * ends the stream with a {@link LockBackendException}; the stream completes when the backend
     * closes. Cancelling removes the watches.
     */
    @Override
    public Flux<LockEvent> events(String name) {
        return Flux.create(sink -> {
            if (closed) {
                sink.complete();
                return;
            }
            LockEventsWatch w = new LockEventsWatch(name, sink, client, nodes.paths(), session, options, eventStreams);
            eventStreams.add(w);
            sink.onDispose(w::dispose);
            w.start();
        });
    }

    /**
     * A revocation request: owner and reason ({@link LockNodes#revocation}) written into the lock's
     * revocation node {@code <root>/r-<base64url(name)>}, a persistent sibling of the lock's node, in one
     * {@code multi} that also checks that the lock's node exists (a lock whose node is gone has no holder
     * to ask: nothing is written); the first request to a name creates the node (a second {@code multi}),
     * which stays after use: one small node per name ever revoked. The watch of every {@link #events}
     * stream on that node fires and reports it as {@link LockEvent.Revoked}. The lock's node and the lock
     * nodes under it are untouched (the payload stays in the holder's node); the request stays until the
     * next request to the name overwrites it, and a stream that starts later does not report it (only
     * requests written while it watches count; two written before a stream read the first are reported
     * as the last one).
     */
    @Override
    public Mono<Void> revoke(String name, String owner, String reason) {
        Objects.requireNonNull(owner, "owner");
        Objects.requireNonNull(reason, "reason");
        return nodes.writeRevocation(name, LockNodes.revocation(owner, reason)).then()
                .onErrorMap(e -> ZooKeeperErrors.map(name, "revocation request", e));
    }

    // ---------------------------------------------------------------- payload

    /**
     * Rewrites the data of the owner's node (owner id, then the payload) with a version check,
     * only while it is the node granted with {@code lock.token()} (its czxid). The data watch of
     * {@link #events} on the lowest node reports the change.
     *
     * @return {@code true} when written; {@code false} when the node is gone or not one this
     *         backend created for that grant
     */
    @Override
    public Mono<Boolean> updatePayload(HeldLock lock, String payload) {
        Objects.requireNonNull(lock, "lock");
        return Mono.defer(() -> {
            ZooKeeperLockQueue.Created c = queue.granted(lock.name(), lock.owner());
            if (c == null || c.czxid() != lock.token()) {
                return Mono.just(false);
            }
            return nodes.setData(c.path(), lock.token(), LockNodes.data(lock.owner(), payload), 3);
        }).onErrorMap(e -> ZooKeeperErrors.map(lock.name(), "payload update", e));
    }

    // ---------------------------------------------------------------- close

    @Override
    public Mono<Void> close() {
        return close;
    }

    private Mono<Void> doClose() {
        closed = true;
        sweeper.dispose();
        janitor.cancelTimers(); // their names stay pending: the sweep below prunes them
        confirmations.close();
        for (LockEventsWatch w : new ArrayList<>(eventStreams)) {
            w.complete();
        }
        return Mono.when(queue.releaseAll())
                .then(janitor.sweep(queue::hasNodeIn))
                .timeout(options.requestTimeout(), options.scheduler())
                .onErrorResume(e -> {
                    LOG.warn("zookeeper lock backend closed before its clean-up finished (ephemeral nodes end with the session): {}",
                            e.toString());
                    return Mono.empty();
                })
                .then(Mono.fromRunnable(() -> {
                    client.getConnectionStateListenable().removeListener(session);
                    session.close();
                }))
                .then(ownsClient ? Mono.fromRunnable(client::close).subscribeOn(Schedulers.boundedElastic()).then() : Mono.empty());
    }

    @Override
    public String toString() {
        return "ZooKeeperLockBackend{root='" + options.root() + "'}";
    }
}
