package io.reactivelocks.zookeeper;

import io.reactivelocks.LockBackendException;
import io.reactivelocks.LockClientClosedException;
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
import java.util.EnumSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.WatcherRemoveCuratorFramework;
import org.apache.curator.x.async.AsyncCuratorFramework;
import org.apache.curator.x.async.AsyncStage;
import org.apache.curator.x.async.WatchMode;
import org.apache.curator.x.async.api.AsyncCuratorFrameworkDsl;
import org.apache.curator.x.async.api.CreateOption;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.client.ConnectStringParser;
import org.apache.zookeeper.data.Stat;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.FluxSink;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.util.Logger;
import reactor.util.Loggers;
import reactor.util.retry.Retry;

/**
 * A {@link LockBackend} on ZooKeeper through Apache Curator's asynchronous API
 * ({@link AsyncCuratorFramework}: every call returns a {@code CompletionStage} completed on
 * ZooKeeper's event thread; nothing here waits for it). The recipe is ZooKeeper's own lock
 * recipe, written without a blocking call.
 *
 * <h2>Recipe</h2>
 * Each lock is a container node {@code <root>/n-<base64url(name)>} (see {@link ZNodeNames});
 * each contender creates under it a <em>protected ephemeral-sequential</em> node
 * {@code _c_<uuid>-lock-<owner>-<sequence>} whose data is the owner id. To acquire:
 * <ol>
 *   <li>create the node (a retry of the same owner reuses the node it already has: one node
 *       per owner); if the lock's node is missing, create it and the root, then retry;</li>
 *   <li>list the children, ordered by sequence; if ours is first, the lock is ours: the fencing
 *       token is our node's {@code czxid}, the TTL is the negotiated session timeout, counted
 *       from when that listing was sent;</li>
 *   <li>otherwise, when the caller waits, answer {@link Attempt.Queued}: its turn sets an
 *       {@code exists} watch on the node just before ours — only that one — and when it fires
 *       lists again: still someone before us (a waiter in the middle gave up) → watch that one
 *       ({@code Queued} again); first → {@link Attempt.Granted}. A release wakes exactly one
 *       waiter: no herd;</li>
 *   <li>when the caller does not wait ({@code tryAcquire}): if anyone is queued already, answer
 *       {@link Attempt.Busy} without writing; else create, list, and if we are not first delete
 *       our node again and answer {@code Busy}.</li>
 * </ol>
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
 * <b>Tokens:</b> {@code czxid} is the zxid of the transaction that created the node; zxids are
 * global to the ensemble and strictly increasing, also across restarts (epoch in the high
 * bits), and a successor's node was created after its predecessor's: its token is larger.
 * <b>Connection loss during create:</b> Curator's protection mode puts a unique id into the
 * node name; its retry looks for that id among the children before creating again, so a
 * create whose answer was lost does not leave a second node behind (and Curator deletes the
 * node if every retry failed). <b>Cancellation:</b> a waiter that gives up is released by the
 * engine; a release that arrives while the create is still in flight marks the owner, and the
 * node is deleted as soon as the create completes.
 *
 * <p>Caveat for ensembles: reads may be served by a follower that lags; the session bound above
 * holds, but a listing may be slightly stale, as in every ZooKeeper lock recipe.
 *
 * <p>The backend never closes a {@link CuratorFramework} it was given. It registers a
 * connection-state listener on it and removes it on {@link #close()}.
 */
public final class ZooKeeperLockBackend implements LockBackend {

    private static final Logger LOG = Loggers.getLogger(ZooKeeperLockBackend.class);
    private static final int CREATE_TRIES = 5;
    private static final Duration WATCH_RETRY = Duration.ofMillis(250);

    private final CuratorFramework client;
    private final boolean ownsClient;
    private final ZooKeeperLockOptions options;
    private final ZNodeNames paths;
    private final AsyncCuratorFramework async;
    private final ZooKeeperSession session;
    private final ConcurrentHashMap<String, OwnerNode> owners = new ConcurrentHashMap<>();
    private final Set<EventsWatch> eventStreams = ConcurrentHashMap.newKeySet();
    private final Set<String> prunePending = ConcurrentHashMap.newKeySet();
    private final Set<String> pruneScheduled = ConcurrentHashMap.newKeySet();
    /** The prune timers not fired yet, by lock name: close() cancels them (and prunes their names itself). */
    private final ConcurrentHashMap<String, Disposable> pruneTimers = new ConcurrentHashMap<>();
    /** How long after a release the lock's empty node is pruned (see {@link #schedulePrune}). */
    static final Duration PRUNE_DELAY = Duration.ofMillis(500);
    private final Set<String> deletePending = ConcurrentHashMap.newKeySet();
    private final AtomicLong predecessorWatches = new AtomicLong();
    private final AtomicLong predecessorWatchEvents = new AtomicLong();
    private final AtomicLong queueChecks = new AtomicLong();
    private final Disposable sweeper;
    private final Mono<Void> close;
    private volatile boolean closed;

    private ZooKeeperLockBackend(CuratorFramework client, boolean ownsClient, ZooKeeperLockOptions options) {
        this.client = checkConnectString(Objects.requireNonNull(client, "client"));
        this.ownsClient = ownsClient;
        this.options = Objects.requireNonNull(options, "options");
        this.paths = new ZNodeNames(options.root());
        this.async = AsyncCuratorFramework.wrap(client);
        this.session = new ZooKeeperSession(client);
        client.getConnectionStateListenable().addListener(session);
        // after a reconnection, finish the clean-up that a lost connection interrupted
        this.sweeper = session.reconnects().subscribe(s -> sweepCleanUp()
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


    // ---------------------------------------------------------------- grant

    @Override
    public Mono<Attempt> tryGrant(GrantRequest request) {
        return Mono.defer(() -> {
            if (closed) {
                return Mono.error(new LockClientClosedException(request.name()));
            }
            if (!request.queue() && !owners.containsKey(key(request.name(), request.owner()))) {
                // tryAcquire: anyone in line means someone is ahead of us; answer without a write
                return children(request.name()).flatMap(list -> list.isEmpty()
                        ? enqueueAndDecide(request, true)
                        : holderOf(request.name(), list.get(0)).map(Attempt::busy).defaultIfEmpty(Attempt.busy(null)));
            }
            return enqueueAndDecide(request, true);
        }).onErrorMap(e -> ZooKeeperErrors.map(request.name(), "acquire", e));
    }

    private Mono<Attempt> enqueueAndDecide(GrantRequest request, boolean mayRenew) {
        String key = key(request.name(), request.owner());
        OwnerNode node = owners.computeIfAbsent(key, k -> new OwnerNode(request.name(), request.owner(), k));
        node.start();
        return node.creation.flatMap(c -> {
            if (c.sessionId() != session.sessionId()) {
                // made by a session Curator has given up on: not a valid place in line any more
                owners.remove(key, node);
                deleteQuietly(c.path());
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
            return children(request.name()).flatMap(list -> {
                int i = indexOf(list, c.node());
                if (i < 0 || c.sessionId() != session.sessionId()) {
                    owners.remove(node.key, node);
                    if (i >= 0) {
                        deleteQuietly(c.path());
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
                    return Mono.just(new Attempt.Queued(turn(request, node, c, list.get(i - 1).node())));
                }
                // tryAcquire leaves no queue entry behind
                node.released = true;
                owners.remove(node.key, node);
                ZNodeNames.Child first = list.get(0);
                return deleteTracked(c.path()).then(holderOf(request.name(), first))
                        .map(Attempt::busy).defaultIfEmpty(Attempt.busy(null));
            });
        });
    }

    /**
     * The wait of a queued owner: an exists-watch on its predecessor only; on its deletion (or a
     * reconnection, in case the watch was lost) look again. LOST ends the wait with a transient
     * error: the engine retries, and the retry enqueues anew on the new session.
     */
    private Mono<Attempt> turn(GrantRequest request, OwnerNode node, Created c, String predecessor) {
        return Mono.defer(() -> {
            if (closed) {
                return Mono.error(new LockClientClosedException(request.name()));
            }
            WatcherRemoveCuratorFramework watchers = client.newWatcherRemoveCuratorFramework();
            AsyncCuratorFrameworkDsl watching = AsyncCuratorFramework.wrap(watchers).with(WatchMode.successOnly);
            AsyncStage<Stat> exists = watching.watched().checkExists().forPath(paths.lockPath(request.name()) + "/" + predecessor);
            Mono<Void> gone = Mono.fromCompletionStage(exists)
                    .flatMap(stat -> {
                        predecessorWatches.incrementAndGet();
                        return Mono.fromCompletionStage(exists.event()).doOnNext(e -> predecessorWatchEvents.incrementAndGet());
                    })
                    .then();
            Mono<Void> lost = session.lost().then(Mono.error(() -> new LockBackendException(request.name(),
                    "the zookeeper session was lost while queued for lock '" + request.name() + "'", null, true)));
            Mono<Void> reconnected = session.reconnects().next().then();
            return Mono.firstWithSignal(gone, lost, reconnected)
                    .then(Mono.defer(() -> {
                        queueChecks.incrementAndGet();
                        return decide(request, node, c);
                    }))
                    .doFinally(s -> watchers.removeWatchers());
        }).onErrorMap(e -> ZooKeeperErrors.map(request.name(), "acquire", e));
    }

    /** Creates the owner's protected ephemeral-sequential node, creating the lock's node (and the root) when missing. */
    private Mono<Created> createNode(String name, String owner, int tries) {
        return Mono.defer(() -> {
            Stat stat = new Stat();
            return Mono.fromCompletionStage(() -> async.create()
                    .withOptions(EnumSet.of(CreateOption.doProtected), CreateMode.EPHEMERAL_SEQUENTIAL, options.acl(), stat)
                    .forPath(paths.nodePathPrefix(name, owner), ZooKeeperLockOptions.bytes(owner)))
                    .flatMap(path -> stat.getCzxid() != 0
                            ? Mono.just(new Created(path, ZNodeNames.lastSegment(path), stat.getCzxid(), stat.getEphemeralOwner()))
                            // found by Curator's protected-mode retry: no stat came with it
                            : exists(path).map(s -> new Created(path, ZNodeNames.lastSegment(path), s.getCzxid(), s.getEphemeralOwner()))
                                    .switchIfEmpty(Mono.error(() -> new LockBackendException(name,
                                            "the node of owner " + owner + " vanished right after its create", null, true))));
        }).onErrorResume(e -> ZooKeeperErrors.code(e) == KeeperException.Code.NONODE && tries < CREATE_TRIES,
                e -> ensureLockNode(name).then(createNode(name, owner, tries + 1)));
    }

    /** Creates the lock's container node, and the root when that is missing too. */
    private Mono<Void> ensureLockNode(String name) {
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

    // ---------------------------------------------------------------- renewal

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
        return Flux.defer(() -> {
            OwnerNode node = owners.get(key(lease.name(), lease.owner()));
            Created c = node == null ? null : node.created;
            if (c == null || c.czxid() != lease.token() || closed) {
                return Flux.empty();
            }
            Duration every = confirmationInterval();
            Flux<Confirmation> confirmations = Flux.defer(() -> c.sessionId() != session.sessionId()
                    ? Flux.<Confirmation>empty()
                    : Flux.interval(every, every, options.scheduler())
                            .onBackpressureDrop()
                            .concatMap(t -> confirm(c, clock), 1));
            return confirmations
                    .takeWhile(x -> x.renewal != null)
                    .map(x -> x.renewal)
                    .takeUntilOther(session.lost());
        });
    }

    private record Confirmation(Renewal renewal) {
        static final Confirmation GONE = new Confirmation(null);
    }

    private Mono<Confirmation> confirm(Created c, LockClock clock) {
        return Mono.defer(() -> {
            long sentAt = clock.nanoTime();
            return exists(c.path())
                    .timeout(options.requestTimeout(), options.scheduler())
                    .map(s -> {
                        long ttl = session.negotiatedTimeoutMillis();
                        boolean ours = s.getCzxid() == c.czxid() && s.getEphemeralOwner() == c.sessionId()
                                && c.sessionId() == session.sessionId() && ttl > 0;
                        return ours ? new Confirmation(new Renewal(sentAt, Duration.ofMillis(ttl))) : Confirmation.GONE;
                    })
                    .defaultIfEmpty(Confirmation.GONE)
                    .onErrorResume(e -> {
                        LOG.debug("confirmation of {} failed (skipped): {}", c.path(), e.toString());
                        return Mono.empty();
                    });
        });
    }

    private Duration confirmationInterval() {
        if (options.confirmationInterval() != null) {
            return options.confirmationInterval();
        }
        long t = session.negotiatedTimeoutMillis();
        return Duration.ofMillis(Math.max(50, (t > 0 ? t : 3000) / 3));
    }

    /**
     * Not used by the engine (this backend renews by session); answers whether each owner's node
     * still exists with the lease's token on the current session.
     */
    @Override
    public Mono<List<RenewOutcome>> renew(List<RenewRequest> batch) {
        return Flux.fromIterable(batch)
                .concatMap(r -> {
                    OwnerNode node = owners.get(key(r.lock().name(), r.lock().owner()));
                    Created c = node == null ? null : node.created;
                    if (c == null || c.czxid() != r.lock().token()) {
                        return Mono.just(RenewOutcome.notHeld());
                    }
                    return exists(c.path()).map(s -> {
                        long ttl = session.negotiatedTimeoutMillis();
                        return s.getCzxid() == c.czxid() && s.getEphemeralOwner() == session.sessionId() && ttl > 0
                                ? RenewOutcome.renewed(Duration.ofMillis(ttl)) : RenewOutcome.notHeld();
                    }).defaultIfEmpty(RenewOutcome.notHeld());
                })
                .collectList()
                .onErrorMap(e -> ZooKeeperErrors.map(null, "renewal", e));
    }

    // ---------------------------------------------------------------- release, inspect, events

    @Override
    public Mono<Boolean> release(String name, String owner) {
        return Mono.defer(() -> {
            prunePending.add(name);
            OwnerNode node = owners.remove(key(name, owner));
            Mono<Boolean> deleted;
            if (node != null) {
                node.released = true;
                node.start();
                Created c = node.created;
                // a create still in flight: once it lands, its own completion deletes the node
                // (released is set) and so may this; the prune below is sent after both deletes
                deleted = c != null ? deleteTracked(c.path())
                        : node.creation.flatMap(x -> deleteTracked(x.path())).thenReturn(true)
                                .onErrorResume(e -> deleteByOwner(name, owner));
            } else {
                deleted = deleteByOwner(name, owner);
            }
            return deleted.doOnSuccess(d -> schedulePrune(name));
        }).onErrorMap(e -> ZooKeeperErrors.map(name, "release", e));
    }

    @Override
    public Mono<Holder> inspect(String name) {
        return inspect(name, 3).onErrorMap(e -> ZooKeeperErrors.map(name, "inspect", e));
    }

    private Mono<Holder> inspect(String name, int tries) {
        return children(name).flatMap(list -> list.isEmpty() ? Mono.<Holder>empty()
                : holderOf(name, list.get(0)).switchIfEmpty(Mono.defer(() -> tries > 1 ? inspect(name, tries - 1)
                        : Mono.error(new LockBackendException(name, "the holder of lock '" + name
                                + "' kept changing while it was read", null, true)))));
    }

    /**
     * Children watches on the lock's node, set again after each firing (and, when the node does
     * not exist, an exists-watch for its creation). {@link LockEvent.Subscribed} once the first
     * watch is set, and again after a reconnection; {@link LockEvent.Released} when the lowest
     * child disappears, {@link LockEvent.Acquired} (token 0: read it with {@link #inspect}) when
     * another child becomes lowest. Transient failures are retried; a permanent one (no ACL)
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
            EventsWatch w = new EventsWatch(name, sink);
            eventStreams.add(w);
            sink.onDispose(w::dispose);
            w.start();
        });
    }

    // ---------------------------------------------------------------- leader election support

    /**
     * Writes {@code value} into the node of {@code owner} (leader election's proclamation), only
     * while that node is still the one granted with {@code token}.
     *
     * @return completes when written; a {@link io.reactivelocks.LockLostException} when the node is gone
     */
    Mono<Void> proclaim(String name, String owner, long token, String value) {
        return Mono.defer(() -> {
            OwnerNode node = owners.get(key(name, owner));
            Created c = node == null ? null : node.created;
            if (c == null || c.czxid() != token) {
                return Mono.error(new io.reactivelocks.LockLostException(name, token, "the node is gone"));
            }
            return Mono.fromCompletionStage(() -> async.setData().forPath(c.path(), ZooKeeperLockOptions.bytes(value)))
                    .flatMap(stat -> stat.getCzxid() == token ? Mono.<Void>empty()
                            : Mono.error(new io.reactivelocks.LockLostException(name, token, "the node was replaced")))
                    .onErrorMap(e -> ZooKeeperErrors.code(e) == KeeperException.Code.NONODE,
                            e -> new io.reactivelocks.LockLostException(name, token, "the node is gone"))
                    .onErrorMap(e -> ZooKeeperErrors.map(name, "proclamation", e));
        });
    }

    /** What one read of an election's leader found, and what signals its next change. */
    record LeaderRead(java.util.Optional<Leader> leader, Mono<Void> changed) {
    }

    /**
     * @return the current leader (empty when nobody leads or the leader has not published its
     *         value yet), with a data watch on the leader's node when {@code watching} is given
     */
    Mono<LeaderRead> readLeader(String election, AsyncCuratorFrameworkDsl watching) {
        return children(election).flatMap(list -> {
            if (list.isEmpty()) {
                return Mono.just(new LeaderRead(java.util.Optional.empty(), null));
            }
            ZNodeNames.Child first = list.get(0);
            String path = paths.lockPath(election) + "/" + first.node();
            Stat stat = new Stat();
            AsyncStage<byte[]> stage = watching == null
                    ? async.getData().storingStatIn(stat).forPath(path)
                    : watching.watched().getData().storingStatIn(stat).forPath(path);
            return Mono.fromCompletionStage(stage)
                    .map(data -> {
                        // version 0: the owner id written at creation, no value published yet
                        java.util.Optional<Leader> leader = stat.getVersion() == 0 ? java.util.Optional.empty()
                                : java.util.Optional.of(new Leader(election,
                                        new String(data, java.nio.charset.StandardCharsets.UTF_8), stat.getCzxid()));
                        Mono<Void> changed = watching == null ? null : Mono.fromCompletionStage(stage.event()).then();
                        return new LeaderRead(leader, changed);
                    })
                    // the first child left between the two reads: the children watch reports it
                    .onErrorResume(e -> ZooKeeperErrors.code(e) == KeeperException.Code.NONODE,
                            e -> Mono.just(new LeaderRead(java.util.Optional.empty(), null)));
        }).onErrorMap(e -> ZooKeeperErrors.map(election, "leader read", e));
    }

    /**
     * @return the leader now, then again after each change of its node's data (its proclamation);
     *         changes of who leads come from {@link #events}
     */
    Flux<java.util.Optional<Leader>> leaderUpdates(String election) {
        return Flux.defer(() -> {
            WatcherRemoveCuratorFramework watchers = client.newWatcherRemoveCuratorFramework();
            AsyncCuratorFrameworkDsl watching = AsyncCuratorFramework.wrap(watchers).with(WatchMode.successOnly);
            return readLeader(election, watching)
                    .expand(r -> r.changed() == null ? Mono.empty() : r.changed().then(readLeader(election, watching)))
                    .map(LeaderRead::leader)
                    .doFinally(s -> watchers.removeWatchers());
        });
    }

    // ---------------------------------------------------------------- close

    @Override
    public Mono<Void> close() {
        return close;
    }

    private Mono<Void> doClose() {
        closed = true;
        sweeper.dispose();
        for (Disposable timer : new ArrayList<>(pruneTimers.values())) {
            timer.dispose(); // their names stay pending: the sweep below prunes them
        }
        pruneTimers.clear();
        for (EventsWatch w : new ArrayList<>(eventStreams)) {
            w.complete();
        }
        List<Mono<Boolean>> releases = new ArrayList<>();
        for (OwnerNode n : new ArrayList<>(owners.values())) {
            releases.add(release(n.name, n.owner).onErrorResume(e -> Mono.just(false)));
        }
        return Mono.when(releases)
                .then(sweepCleanUp())
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

    // ---------------------------------------------------------------- helpers

    private Mono<List<ZNodeNames.Child>> children(String name) {
        return Mono.fromCompletionStage(() -> async.getChildren().forPath(paths.lockPath(name)))
                .map(ZNodeNames::sorted)
                .onErrorResume(e -> ZooKeeperErrors.code(e) == KeeperException.Code.NONODE, e -> Mono.just(List.of()));
    }

    private Mono<Stat> exists(String path) {
        return Mono.fromCompletionStage(() -> async.checkExists().forPath(path));
    }

    private Mono<Holder> holderOf(String name, ZNodeNames.Child child) {
        return exists(paths.lockPath(name) + "/" + child.node()).map(s -> new Holder(child.owner(), s.getCzxid(), null));
    }

    /** @return true when deleted, false when there was no such node */
    private Mono<Boolean> delete(String path) {
        return Mono.fromCompletionStage(() -> async.delete().forPath(path))
                .thenReturn(true)
                .onErrorResume(e -> ZooKeeperErrors.code(e) == KeeperException.Code.NONODE, e -> Mono.just(false));
    }

    private void deleteQuietly(String path) {
        deleteTracked(path).timeout(options.requestTimeout(), options.scheduler())
                .subscribe(null, e -> LOG.debug("could not delete {} yet (retried after reconnection): {}", path, e.toString()));
    }

    /**
     * Deletes a node of ours, remembering it until ZooKeeper confirmed: a delete that a lost
     * connection interrupted (or whose caller gave up) is sent again after the reconnection, so a
     * node whose session survived does not keep the lock from its successors.
     */
    private Mono<Boolean> deleteTracked(String path) {
        return Mono.defer(() -> {
            deletePending.add(path);
            return delete(path).doOnSuccess(d -> deletePending.remove(path));
        });
    }

    /** Deletes every node of {@code owner} under the lock (owner-checked by the owner id in the node name). */
    private Mono<Boolean> deleteByOwner(String name, String owner) {
        return children(name).flatMapMany(Flux::fromIterable)
                .filter(c -> c.owner().equals(owner))
                .concatMap(c -> delete(paths.lockPath(name) + "/" + c.node()))
                .reduce(false, (a, b) -> a || b);
    }

    /**
     * Prunes the lock's node a moment after a release rather than at once: a name taken again
     * soon (the common case: a lock used in a loop) keeps its node, so its next acquire is one
     * create instead of a failed create, a container create and a create again (B1 measured 6
     * requests per acquire+release against the raw floor's 3). At most one prune per name is
     * scheduled at a time; close() prunes whatever is still pending.
     */
    private void schedulePrune(String name) {
        if (closed || !pruneScheduled.add(name)) {
            return;
        }
        Runnable run = () -> {
            pruneTimers.remove(name);
            pruneScheduled.remove(name);
            if (closed) {
                return; // close() prunes what is pending
            }
            prune(name).subscribe(null, e -> LOG.debug("prune of lock '{}' failed: {}", name, e.toString()));
        };
        try {
            Disposable timer = options.scheduler().schedule(run, PRUNE_DELAY.toMillis(), TimeUnit.MILLISECONDS);
            if (pruneScheduled.contains(name)) {
                pruneTimers.put(name, timer);
            }
            if (closed || !pruneScheduled.contains(name)) { // close() ran meanwhile, or the timer fired already
                pruneTimers.remove(name, timer);
                if (closed) {
                    timer.dispose();
                }
            }
        } catch (java.util.concurrent.RejectedExecutionException e) {
            run.run();
        }
    }

    /** Deletes the lock's node if it is empty; best effort (someone in it, or already gone, is fine). */
    private Mono<Void> prune(String name) {
        return pruneOrFail(name).onErrorResume(e -> Mono.empty());
    }

    /** Like {@link #prune}, but fails when ZooKeeper could not be asked (the name stays pending). */
    private Mono<Void> pruneOrFail(String name) {
        return Mono.fromCompletionStage(() -> async.delete().forPath(paths.lockPath(name)))
                .then()
                .doOnSuccess(v -> prunePending.remove(name))
                .onErrorResume(e -> {
                    KeeperException.Code code = ZooKeeperErrors.code(e);
                    if (code == KeeperException.Code.NONODE || code == KeeperException.Code.NOTEMPTY) {
                        prunePending.remove(name);
                        return Mono.empty();
                    }
                    return Mono.error(e);
                });
    }

    /**
     * Sends again the deletes of owner nodes, then the prunes of lock nodes, that a lost
     * connection interrupted (a lease lost in a partition, say), retrying while ZooKeeper is
     * unreachable; the caller bounds it in time.
     */
    private Mono<Void> sweepCleanUp() {
        Mono<Void> deletes = Flux.fromIterable(new ArrayList<>(deletePending))
                .concatMap(p -> deleteTracked(p)
                        .retryWhen(Retry.fixedDelay(Long.MAX_VALUE, WATCH_RETRY).filter(ZooKeeperErrors::isTransient))
                        .onErrorResume(e -> Mono.empty()))
                .then();
        return deletes.thenMany(Flux.fromIterable(new ArrayList<>(prunePending)))
                .filter(n -> owners.values().stream().noneMatch(o -> o.name.equals(n)))
                .concatMap(n -> pruneOrFail(n)
                        .retryWhen(Retry.fixedDelay(Long.MAX_VALUE, WATCH_RETRY).filter(ZooKeeperErrors::isTransient))
                        .onErrorResume(e -> Mono.empty()))
                .then();
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

    // ---------------------------------------------------------------- for tests

    /** @return how many predecessor watches were set (on a predecessor that still existed) */
    long predecessorWatches() {
        return predecessorWatches.get();
    }

    /** @return how many predecessor watches fired (one per hand-over in a queue: no herd) */
    long predecessorWatchEvents() {
        return predecessorWatchEvents.get();
    }

    /** @return how many times a queued owner looked at the children again after its wait */
    long queueChecks() {
        return queueChecks.get();
    }

    ZooKeeperSession session() {
        return session;
    }

    ZNodeNames paths() {
        return paths;
    }

    CuratorFramework client() {
        return client;
    }

    AsyncCuratorFramework async() {
        return async;
    }

    /** @return the number of owners with a node (or a create in flight) in this backend */
    int ownerNodes() {
        return owners.size();
    }

    @Override
    public String toString() {
        return "ZooKeeperLockBackend{root='" + options.root() + "'}";
    }

    // ---------------------------------------------------------------- owner nodes

    /** The node this backend made (or is making) in ZooKeeper for one owner of one lock. */
    private record Created(String path, String node, long czxid, long sessionId) {
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

        OwnerNode(String name, String owner, String key) {
            this.name = name;
            this.owner = owner;
            this.key = key;
            this.creation = createNode(name, owner, 0)
                    .doOnNext(c -> {
                        created = c;
                        if (released || closed) {
                            // released while the create was in flight: ours to delete, now that it exists
                            owners.remove(key, this);
                            deleteQuietly(c.path());
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

    // ---------------------------------------------------------------- events

    private final class EventsWatch {
        private final String name;
        private final String lockPath;
        private final FluxSink<LockEvent> sink;
        private final WatcherRemoveCuratorFramework watchers;
        private final AsyncCuratorFrameworkDsl watching;
        private final AtomicLong generation = new AtomicLong();
        private volatile boolean done;
        private Disposable reconnects;
        private volatile Disposable retryTimer;
        // guarded by this
        private boolean subscribed;
        private boolean resubscribe;
        private ZNodeNames.Child lowest;

        EventsWatch(String name, FluxSink<LockEvent> sink) {
            this.name = name;
            this.lockPath = paths.lockPath(name);
            this.sink = sink;
            this.watchers = client.newWatcherRemoveCuratorFramework();
            this.watching = AsyncCuratorFramework.wrap(watchers).with(WatchMode.successOnly);
        }

        void start() {
            reconnects = session.reconnects().subscribe(s -> {
                synchronized (this) {
                    resubscribe = true;
                }
                arm();
            });
            arm();
        }

        private void arm() {
            if (done) {
                return;
            }
            long g = generation.incrementAndGet();
            AsyncStage<List<String>> stage;
            try {
                stage = watching.watched().getChildren().forPath(lockPath);
            } catch (RuntimeException e) {
                fail(e);
                return;
            }
            stage.whenComplete((children, error) -> {
                if (done || g != generation.get()) {
                    return;
                }
                if (error != null) {
                    onError(g, error);
                    return;
                }
                stage.event().thenAccept(e -> rearm(g));
                onChildren(ZNodeNames.sorted(children));
            });
        }

        /** The lock's node does not exist: the lock is free; watch for the node's creation. */
        private void armExists(long g) {
            AsyncStage<Stat> stage;
            try {
                stage = watching.watched().checkExists().forPath(lockPath);
            } catch (RuntimeException e) {
                fail(e);
                return;
            }
            stage.whenComplete((stat, error) -> {
                if (done || g != generation.get()) {
                    return;
                }
                if (error != null) {
                    onError(g, error);
                    return;
                }
                if (stat != null) {
                    arm(); // created meanwhile: watch its children
                    return;
                }
                stage.event().thenAccept(e -> rearm(g));
                onChildren(List.of());
            });
        }

        private void rearm(long g) {
            if (!done && g == generation.get()) {
                arm();
            }
        }

        private void onError(long g, Throwable error) {
            if (ZooKeeperErrors.code(error) == KeeperException.Code.NONODE) {
                armExists(g);
            } else if (ZooKeeperErrors.isTransient(error)) {
                try {
                    retryTimer = options.scheduler().schedule(() -> rearm(g), WATCH_RETRY.toMillis(), TimeUnit.MILLISECONDS);
                    if (done) {
                        retryTimer.dispose();
                    }
                } catch (java.util.concurrent.RejectedExecutionException e) {
                    fail(e);
                }
            } else {
                fail(error);
            }
        }

        private void onChildren(List<ZNodeNames.Child> children) {
            ZNodeNames.Child now = children.isEmpty() ? null : children.get(0);
            List<LockEvent> out = new ArrayList<>(2);
            synchronized (this) {
                if (!subscribed || resubscribe) {
                    subscribed = true;
                    resubscribe = false;
                    out.add(new LockEvent.Subscribed(name));
                } else {
                    boolean changed = now == null ? lowest != null : lowest == null || !now.node().equals(lowest.node());
                    if (changed && lowest != null) {
                        out.add(new LockEvent.Released(name, lowest.owner(), false));
                    }
                    if (changed && now != null) {
                        out.add(new LockEvent.Acquired(name, now.owner(), 0));
                    }
                }
                lowest = now;
            }
            for (LockEvent e : out) {
                if (!done) {
                    sink.next(e);
                }
            }
        }

        private void fail(Throwable error) {
            if (!done) {
                sink.error(ZooKeeperErrors.map(name, "watch", error));
            }
        }

        void complete() {
            sink.complete();
        }

        void dispose() {
            done = true;
            eventStreams.remove(this);
            Disposable retry = retryTimer;
            if (retry != null) {
                retry.dispose();
            }
            if (reconnects != null) {
                reconnects.dispose();
            }
            watchers.removeWatchers();
        }
    }
}
