package io.reactivelocks.etcd;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KV;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.Lease;
import io.etcd.jetcd.Watch;
import io.etcd.jetcd.kv.TxnResponse;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.DeleteOption;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.PutOption;
import io.etcd.jetcd.options.WatchOption;
import io.etcd.jetcd.watch.WatchEvent;
import io.reactivelocks.LockBackendException;
import io.reactivelocks.LockClientClosedException;
import io.reactivelocks.LockClock;
import io.reactivelocks.LockException;
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
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * A {@link LockBackend} on etcd v3 through jetcd: KV, Lease and Watch, the recipe of Go's
 * {@code concurrency.Mutex} — not etcd's Lock RPC, which cannot be cancelled cleanly.
 *
 * <h2>Session</h2>
 * One etcd lease per backend, granted lazily by the first acquire and kept alive by one
 * keep-alive every interval (TTL/3), however many locks it carries: renewal cost does not grow
 * with the number of held locks ({@link RenewalMode#SESSION}). Each confirmed keep-alive is a
 * renewal of every held lock, timed from when its request was sent. Losing the lease (etcd says
 * it expired or was revoked, or no keep-alive was confirmed for a whole TTL) ends every hold
 * stream of the backend at once; the next acquire grants a new lease. Each held lock also
 * watches its own key (an idle watch stream, no round trips): a key deleted behind the client's
 * back — by an operator, by a revoke seen before the next keep-alive — ends that hold stream at once.
 *
 * <h2>Recipe</h2>
 * Keys are {@code <prefix>/<base64url(name)>/<owner>}, attached to the session lease, value =
 * the owner id. To acquire:
 * <ol>
 *   <li>one transaction: if the owner's key does not exist ({@code create_revision == 0}), put it
 *       with the session lease, else read it (a retried request finds its own key: idempotent);
 *       in both branches read the key with the lowest create revision under the name;</li>
 *   <li>if that is our key, the lock is ours: the fencing token is our key's create revision;</li>
 *   <li>otherwise, when the caller waits, answer {@link Attempt.Queued}: the turn reads the key
 *       just before ours (the highest create revision below ours) and watches only that key for
 *       its deletion, from the revision of that read on (nothing can slip between the read and the
 *       watch); then it looks again — a waiter in the middle that gave up only makes us watch the
 *       next one — until no key is before ours. One release wakes one waiter: no herd;</li>
 *   <li>when the caller does not wait ({@code tryAcquire}), our key is deleted again and the
 *       answer is {@link Attempt.Busy} with the holder;</li>
 *   <li>before answering {@link Attempt.Granted}, one keep-alive of the session lease confirms
 *       that the lease — and so our key, which only the lease's end or our own release removes —
 *       is still alive after the read that found us first (Jepsen's etcd finding, etcd issue
 *       #11456: a read can be served after the lease behind it expired). The lease then lives
 *       at least until that keep-alive's send time + TTL, which is where the grant's validity
 *       starts ({@link Attempt.Granted#validFromNanos()}).</li>
 * </ol>
 *
 * <h2>Why it is correct</h2>
 * <b>Exclusion:</b> etcd is linearizable; keys only get larger create revisions over time, so
 * the lowest key under a name is a total order of turns, and a key stops being lowest only when
 * deleted. A holder's key is deleted by its own release (after the engine stopped treating it as
 * held) or by the end of its lease, which happens no earlier than send time of its last confirmed
 * keep-alive + TTL — while the holder's deadline is that send time + TTL minus a drift
 * allowance, so its hold stream has ended before any successor can find itself lowest.
 * <b>Tokens:</b> the token is the create revision of the owner's key: etcd's revision is global
 * and strictly increasing across every key and every restart (it is persisted in the raft log),
 * and a successor's key was created after the predecessor's — its token is larger.
 * <b>Cancellation:</b> a waiter that gives up is released by the engine: its key is deleted,
 * which wakes only its successor, which watches the next key before it.
 * <b>Abandoned requests:</b> jetcd does not recall a transaction whose caller gave up (the
 * engine's request timeout while etcd was down): it waits in the gRPC channel and runs when etcd
 * answers again, putting the owner's key on the session lease, which outlives the outage. The
 * backend follows every acquire transaction to its end in the driver; a release asked while one
 * was still there deletes the key again once it settled, retrying until etcd confirms.
 *
 * <p>Names are data: base64url makes any string one key segment. The backend never closes a
 * {@link Client} it was given; {@link #close()} revokes the session lease (deleting whatever
 * keys are left on it) and closes only a client it created itself
 * ({@link EtcdLocks#connect(EtcdConnectionOptions, EtcdLockOptions, io.reactivelocks.LockOptions)}).
 */
public final class EtcdLockBackend implements LockBackend {

    private static final GetOption LOWEST = GetOption.builder().isPrefix(true)
            .withSortField(GetOption.SortTarget.CREATE).withSortOrder(GetOption.SortOrder.ASCEND).withLimit(1).build();

    private static final Duration WATCH_RETRY = Duration.ofMillis(100);
    private static final Duration CLEAN_UP_RETRY = Duration.ofMillis(250);

    private final Client client;
    private final boolean ownsClient;
    private final EtcdLockOptions options;
    private final EtcdKeys keys;
    private final KV kv;
    private final Lease leases;
    private final Watch watch;
    private final Map<String, EtcdSession> grantedSessions = new ConcurrentHashMap<>();
    /**
     * Acquire transactions the driver has not answered yet, by held key: a transaction the engine
     * gave up on (its request timeout passed while etcd was down) still waits in the gRPC channel
     * and runs when etcd answers again, creating the owner's key on the live session lease.
     */
    private final Map<String, Integer> txnsInFlight = new ConcurrentHashMap<>();
    /** Held keys released while a transaction of theirs was in flight: deleted again once it settled. */
    private final java.util.Set<String> releaseAfterTxns = ConcurrentHashMap.newKeySet();
    /** Timers of clean-up deletes waiting to be retried: close() cancels them (the revoke deletes the keys). */
    private final java.util.Set<reactor.core.Disposable> cleanUpRetries = ConcurrentHashMap.newKeySet();
    private final Object sessionLock = new Object();
    private final AtomicLong predecessorWakeups = new AtomicLong();
    private final AtomicLong sessionsGranted = new AtomicLong();
    private final AtomicLong sessionsLost = new AtomicLong();
    private final Mono<Void> close;

    // guarded by sessionLock
    private EtcdSession session;
    private Mono<EtcdSession> granting;
    private boolean closed;

    private EtcdLockBackend(Client client, boolean ownsClient, EtcdLockOptions options) {
        this.client = Objects.requireNonNull(client, "client");
        this.ownsClient = ownsClient;
        this.options = Objects.requireNonNull(options, "options");
        this.keys = new EtcdKeys(options.prefix());
        this.kv = client.getKVClient();
        this.leases = client.getLeaseClient();
        this.watch = client.getWatchClient();
        this.close = Mono.defer(this::doClose).cache();
    }

    /**
     * @param client  the application's jetcd client (not closed by the backend)
     * @param options prefix and session settings
     * @return a backend; nothing is sent to etcd before the first operation is subscribed
     */
    public static EtcdLockBackend create(Client client, EtcdLockOptions options) {
        return new EtcdLockBackend(client, false, options);
    }

    /**
     * @param client  a jetcd client the backend takes over: {@link #close()} closes it
     * @param options prefix and session settings
     * @return a backend owning {@code client}
     */
    static EtcdLockBackend owning(Client client, EtcdLockOptions options) {
        return new EtcdLockBackend(client, true, options);
    }

    /** @return the settings of this backend */
    public EtcdLockOptions options() {
        return options;
    }

    @Override
    public String name() {
        return "etcd";
    }

    @Override
    public RenewalMode renewalMode() {
        return RenewalMode.SESSION;
    }


    // ---------------------------------------------------------------- session

    /** @return the live session, granting a lease when there is none (one grant shared by concurrent callers) */
    Mono<EtcdSession> session() {
        return Mono.defer(() -> {
            synchronized (sessionLock) {
                if (closed) {
                    return Mono.error(new LockClientClosedException(null));
                }
                if (session != null && !session.isOver()) {
                    return Mono.just(session);
                }
                if (granting == null) {
                    Mono<EtcdSession> g = grantSession().cache();
                    granting = g;
                    g.subscribe(null, e -> { });
                }
                return granting;
            }
        });
    }

    private Mono<EtcdSession> grantSession() {
        return Mono.defer(() -> {
            long sentAt = options.clock().nanoTime();
            return Mono.fromFuture(() -> leases.grant(options.sessionTtlSeconds()))
                    .timeout(options.requestTimeout(), options.scheduler())
                    .map(r -> new EtcdSession(r.getID(), Duration.ofSeconds(r.getTTL()), sentAt, leases, options,
                            this::onSessionEnded));
        }).doOnNext(s -> {
            boolean revoke;
            synchronized (sessionLock) {
                granting = null;
                revoke = closed;
                if (!closed) {
                    session = s;
                }
            }
            sessionsGranted.incrementAndGet();
            if (revoke) {
                s.close().subscribe();
            } else {
                s.start();
            }
        }).doOnError(e -> {
            synchronized (sessionLock) {
                granting = null;
            }
        }).onErrorMap(e -> EtcdErrors.map(null, "session lease grant", e))
                .flatMap(s -> s.isOver() ? Mono.error(endedAtOnce(s)) : Mono.just(s));
    }

    /**
     * A session over as soon as it was granted: revoked because the backend closed meanwhile, or
     * lost because its grant was answered only after a whole TTL (a partition that healed) — the
     * latter is transient: the next attempt grants a new lease.
     */
    private LockException endedAtOnce(EtcdSession s) {
        synchronized (sessionLock) {
            if (closed) {
                return new LockClientClosedException(null);
            }
        }
        return new LockBackendException(null, "the etcd session lease granted was over at once: " + s.endReason(),
                null, true);
    }

    private void onSessionEnded(EtcdSession s) {
        synchronized (sessionLock) {
            if (session == s) {
                session = null;
            }
            if (!closed) {
                sessionsLost.incrementAndGet();
            }
        }
        grantedSessions.values().removeIf(x -> x == s);
    }

    // ---------------------------------------------------------------- grant

    @Override
    public Mono<Attempt> tryGrant(GrantRequest request) {
        return session()
                .flatMap(s -> enqueue(request, s, true).onErrorResume(EtcdErrors::isLeaseNotFound, e -> {
                    // the lease ended before the session heard of it (revoked, expired while the keys' own
                    // watches already saw the deletions): end it, and put the key on a new one
                    s.lose("etcd says the session lease " + Long.toHexString(s.leaseId) + " is gone");
                    return session().flatMap(fresh -> enqueue(request, fresh, true));
                }))
                .onErrorMap(e -> EtcdErrors.forLock(request.name(), "acquire", EtcdErrors.map(request.name(), "acquire", e)));
    }

    private Mono<Attempt> enqueue(GrantRequest request, EtcdSession s, boolean mayReplaceStale) {
        ByteSequence key = keys.owner(request.name(), request.owner());
        ByteSequence range = keys.lock(request.name());
        Cmp absent = new Cmp(key, Cmp.Op.EQUAL, CmpTarget.createRevision(0));
        Op put = Op.put(key, EtcdKeys.bytes(request.owner()), PutOption.builder().withLeaseId(s.leaseId).build());
        return Mono.fromFuture(() -> tracked(request.name(), request.owner(), kv.txn()
                        .If(absent)
                        .Then(put, Op.get(range, LOWEST))
                        .Else(Op.get(key, GetOption.DEFAULT), Op.get(range, LOWEST))
                        .commit()))
                .flatMap(r -> {
                    long myRev;
                    List<KeyValue> lowest;
                    if (r.isSucceeded()) {
                        myRev = r.getHeader().getRevision();
                        lowest = r.getGetResponses().get(0).getKvs();
                    } else {
                        KeyValue mine = r.getGetResponses().get(0).getKvs().get(0);
                        if (mine.getLease() != s.leaseId) {
                            // left by a session that is gone (a retry after a lost session): replace it
                            return mayReplaceStale
                                    ? deleteIfCreated(key, mine.getCreateRevision()).then(enqueue(request, s, false))
                                    : Mono.error(new LockBackendException(request.name(), "the key of owner "
                                            + request.owner() + " belongs to another etcd lease", null, true));
                        }
                        myRev = mine.getCreateRevision();
                        lowest = r.getGetResponses().get(1).getKvs();
                    }
                    if (!lowest.isEmpty() && lowest.get(0).getKey().equals(key)) {
                        return granted(request, s, myRev);
                    }
                    if (lowest.isEmpty()) {
                        return Mono.error(new LockBackendException(request.name(), "the key of owner " + request.owner()
                                + " vanished at once (the session lease ended)", null, true));
                    }
                    if (request.queue()) {
                        return Mono.just(new Attempt.Queued(turn(request, s, myRev)));
                    }
                    Holder holder = holder(lowest.get(0));
                    return deleteKey(key).thenReturn(Attempt.busy(holder));
                });
    }

    /** The wait of a queued owner: until no key before ours is left, then granted. */
    private Mono<Attempt> turn(GrantRequest request, EtcdSession s, long myRev) {
        Mono<Attempt> lost = s.whenOver().then(Mono.error(() -> new LockBackendException(request.name(),
                "the session lease ended while queued for lock '" + request.name() + "': " + s.endReason(), null, true)));
        return Mono.firstWithSignal(awaitTurn(request, s, myRev), lost)
                .onErrorMap(e -> EtcdErrors.map(request.name(), "acquire", e));
    }

    private Mono<Attempt> awaitTurn(GrantRequest request, EtcdSession s, long myRev) {
        ByteSequence key = keys.owner(request.name(), request.owner());
        GetOption before = GetOption.builder().isPrefix(true).withMaxCreateRevision(myRev - 1)
                .withSortField(GetOption.SortTarget.CREATE).withSortOrder(GetOption.SortOrder.DESCEND)
                .withLimit(1).build();
        return Mono.fromFuture(() -> kv.txn()
                        .Then(Op.get(key, GetOption.DEFAULT), Op.get(keys.lock(request.name()), before))
                        .commit())
                .flatMap(r -> {
                    if (r.getGetResponses().get(0).getKvs().isEmpty()) {
                        return Mono.error(new LockBackendException(request.name(), "the queue entry of owner "
                                + request.owner() + " is gone (its session lease ended)", null, true));
                    }
                    List<KeyValue> predecessor = r.getGetResponses().get(1).getKvs();
                    if (predecessor.isEmpty()) {
                        return granted(request, s, myRev);
                    }
                    return awaitDeletion(request.name(), predecessor.get(0).getKey(), r.getHeader().getRevision() + 1)
                            .then(Mono.defer(() -> awaitTurn(request, s, myRev)));
                });
    }

    /**
     * Watches one key for its deletion, from {@code fromRevision} on (so a deletion after the read
     * that found the key is seen even if it happened before the watch was set up).
     *
     * @return completes on the deletion, or shortly after the watch failed transiently (the caller
     *         then looks again); a permanent watch failure is an error
     */
    private Mono<Void> awaitDeletion(String name, ByteSequence key, long fromRevision) {
        return Mono.<Boolean>create(sink -> {
            WatchOption option = WatchOption.builder().withRevision(fromRevision).withNoPut(true).build();
            Watch.Watcher w = watch.watch(key, option, Watch.listener(
                    response -> {
                        if (!response.getEvents().isEmpty()) {
                            predecessorWakeups.incrementAndGet();
                            sink.success(true);
                        }
                    },
                    error -> {
                        if (EtcdErrors.isTransient(error) || error instanceof io.etcd.jetcd.common.exception.CompactedException) {
                            sink.success(false);
                        } else {
                            sink.error(EtcdErrors.map(name, "watch", error));
                        }
                    },
                    () -> sink.success(false)));
            sink.onDispose(w::close);
        }).flatMap(deleted -> deleted ? Mono.<Void>empty()
                : Mono.delay(WATCH_RETRY, options.scheduler()).then()); // do not spin on a failing watch
    }

    private Mono<Attempt> granted(GrantRequest request, EtcdSession s, long token) {
        return s.confirm(request.clock()).flatMap(c -> {
            grantedSessions.put(heldKey(request.name(), request.owner()), s);
            if (s.isOver()) {
                // the session was given up (and its lease revoked, deleting our key) while the
                // confirmation was on its way: its answer proves nothing any more
                grantedSessions.remove(heldKey(request.name(), request.owner()), s);
                return Mono.error(new LockBackendException(request.name(), "the etcd session ended before the grant of lock '"
                        + request.name() + "' was confirmed: " + s.endReason(), null, true));
            }
            return Mono.just(new Attempt.Granted(token, c.ttl(), c.sentAtNanos()));
        });
    }

    // ---------------------------------------------------------------- renewal

    /**
     * The session's keep-alive confirmations, for as long as the session lives <i>and</i> the
     * owner's key exists: a watch on that one key ends the stream when the key is deleted by
     * anyone else (an operator, a forged release) — the session alone would not notice.
     */
    @Override
    public Flux<Renewal> sessionRenewals(HeldLock lease, LockClock clock) {
        return Flux.defer(() -> {
            EtcdSession s = grantedSessions.get(heldKey(lease.name(), lease.owner()));
            if (s == null) {
                return Flux.empty();
            }
            return s.renewals(clock).takeUntilOther(keyGone(lease));
        });
    }

    /** Completes when the held key of {@code lease} is deleted (or was already replaced or gone). */
    private Mono<Void> keyGone(HeldLock lease) {
        ByteSequence key = keys.owner(lease.name(), lease.owner());
        return keyGone(lease, key, lease.token() + 1);
    }

    private Mono<Void> keyGone(HeldLock lease, ByteSequence key, long fromRevision) {
        return Mono.<Boolean>create(sink -> {
            WatchOption option = WatchOption.builder().withRevision(fromRevision).withNoPut(true).build();
            Watch.Watcher w = watch.watch(key, option, Watch.listener(
                    response -> {
                        if (!response.getEvents().isEmpty()) {
                            sink.success(true);
                        }
                    },
                    error -> sink.success(false),
                    () -> sink.success(false)));
            sink.onDispose(w::close);
        }).flatMap(deleted -> deleted ? Mono.<Void>empty() : recheckKey(lease, key, fromRevision));
    }

    /** After a failed watch: gone (complete), still ours (watch again from now), or unknown (watch again). */
    private Mono<Void> recheckKey(HeldLock lease, ByteSequence key, long fromRevision) {
        return Mono.delay(WATCH_RETRY, options.scheduler())
                .then(Mono.fromFuture(() -> kv.get(key))
                        .timeout(options.requestTimeout(), options.scheduler())
                        .map(java.util.Optional::of)
                        .onErrorReturn(java.util.Optional.empty()))
                .flatMap(found -> {
                    if (found.isEmpty()) {
                        return keyGone(lease, key, fromRevision); // etcd unreachable: the session's deadline rules
                    }
                    List<KeyValue> kvs = found.get().getKvs();
                    if (kvs.isEmpty() || kvs.get(0).getCreateRevision() != lease.token()) {
                        return Mono.<Void>empty();
                    }
                    return keyGone(lease, key, found.get().getHeader().getRevision() + 1);
                });
    }

    /**
     * Not used by the engine (this backend renews by session); answers whether each owner's key
     * still exists on a live session lease, confirming that lease with one keep-alive.
     */
    @Override
    public Mono<List<RenewOutcome>> renew(List<RenewRequest> batch) {
        return Flux.fromIterable(batch)
                .concatMap(r -> Mono.fromFuture(() -> kv.get(keys.owner(r.lock().name(), r.lock().owner())))
                        .flatMap(g -> {
                            EtcdSession s = currentSession();
                            if (g.getKvs().isEmpty() || s == null || g.getKvs().get(0).getLease() != s.leaseId
                                    || g.getKvs().get(0).getCreateRevision() != r.lock().token()) {
                                return Mono.just(RenewOutcome.notHeld());
                            }
                            return s.confirm(LockClock.system()).map(c -> RenewOutcome.renewed(c.ttl()));
                        }))
                .collectList()
                .onErrorMap(e -> EtcdErrors.map(null, "renewal", e));
    }

    // ---------------------------------------------------------------- release, inspect, events

    @Override
    public Mono<Boolean> release(String name, String owner) {
        return Mono.defer(() -> {
            String held = heldKey(name, owner);
            grantedSessions.remove(held);
            // an acquire transaction still in the driver may put the key after this delete: delete it
            // again once that transaction settled
            txnsInFlight.computeIfPresent(held, (k, n) -> {
                releaseAfterTxns.add(held);
                return n;
            });
            return deleteKey(keys.owner(name, owner));
        }).onErrorMap(e -> EtcdErrors.map(name, "release", e));
    }

    /**
     * Follows an acquire transaction to its real end in the driver, whatever its caller does (a
     * timeout cancels only the caller's view of it).
     *
     * @return a view of {@code txn} for the caller; cancelling it leaves {@code txn} alone
     */
    private java.util.concurrent.CompletableFuture<TxnResponse> tracked(String name, String owner,
                                                                       java.util.concurrent.CompletableFuture<TxnResponse> txn) {
        String held = heldKey(name, owner);
        txnsInFlight.merge(held, 1, Integer::sum);
        txn.whenComplete((r, e) -> {
            boolean last = txnsInFlight.computeIfPresent(held, (k, n) -> n == 1 ? null : n - 1) == null;
            if (last && releaseAfterTxns.remove(held)) {
                deleteUntilConfirmed(name, owner);
            }
        });
        return txn.thenApply(java.util.function.Function.identity());
    }

    /**
     * Deletes the owner's key, retrying transient failures until etcd confirms, the session lease
     * that key may be on ends, or the backend closes (its revoke deletes the key).
     */
    private void deleteUntilConfirmed(String name, String owner) {
        ByteSequence key = keys.owner(name, owner);
        deleteKey(key).subscribe(null, e -> {
            if (!EtcdErrors.isTransient(e) || isClosed()) {
                return;
            }
            reactor.core.Disposable[] timer = new reactor.core.Disposable[1];
            try {
                timer[0] = options.scheduler().schedule(() -> {
                    cleanUpRetries.remove(timer[0]);
                    deleteUntilConfirmed(name, owner);
                }, CLEAN_UP_RETRY.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS);
                cleanUpRetries.add(timer[0]);
                if (isClosed()) {
                    timer[0].dispose();
                    cleanUpRetries.remove(timer[0]);
                }
            } catch (java.util.concurrent.RejectedExecutionException refused) {
                // the scheduler is gone: so is the application; the session lease ends with it
            }
        });
    }

    private boolean isClosed() {
        synchronized (sessionLock) {
            return closed;
        }
    }

    @Override
    public Mono<Holder> inspect(String name) {
        return Mono.fromFuture(() -> kv.get(keys.lock(name), LOWEST))
                .flatMap(r -> r.getKvs().isEmpty() ? Mono.<Holder>empty() : Mono.just(holder(r.getKvs().get(0))))
                .onErrorMap(e -> EtcdErrors.map(name, "inspect", e));
    }

    /**
     * A watch on the name's key range. {@link LockEvent.Subscribed} when etcd confirmed the watch
     * (again after jetcd re-created it following a connection loss: it resumes from the last
     * revision seen, so nothing is missed); a new key is reported as {@link LockEvent.Acquired}
     * and a deleted key as {@link LockEvent.Released} — whether it was the holder's or a waiter's
     * (consumers re-read the holder: the engine does). Transient watch errors are left to jetcd,
     * which re-creates the watch; a permanent one ends the stream with a
     * {@link LockBackendException}.
     */
    @Override
    public Flux<LockEvent> events(String name) {
        return Flux.create(sink -> {
            WatchOption option = WatchOption.builder().isPrefix(true).withCreateNotify(true).build();
            Watch.Watcher w = watch.watch(keys.lock(name), option, Watch.listener(
                    response -> {
                        if (response.isCreatedNotify()) {
                            sink.next(new LockEvent.Subscribed(name));
                            return;
                        }
                        for (WatchEvent e : response.getEvents()) {
                            KeyValue kv = e.getKeyValue();
                            if (e.getEventType() == WatchEvent.EventType.DELETE) {
                                sink.next(new LockEvent.Released(name, ownerOf(kv.getKey()), false));
                            } else if (e.getEventType() == WatchEvent.EventType.PUT && kv.getVersion() == 1) {
                                sink.next(new LockEvent.Acquired(name, ownerOf(kv.getKey()), kv.getCreateRevision()));
                            }
                        }
                    },
                    error -> {
                        if (!EtcdErrors.isTransient(error)) {
                            sink.error(EtcdErrors.map(name, "watch", error));
                        }
                    },
                    sink::complete));
            sink.onDispose(w::close);
        });
    }

    /**
     * Writes {@code value} into the held key of {@code owner} (leader election's proclamation),
     * only while that key is still the one granted with {@code token}, keeping it on its lease.
     *
     * @return completes when written; a {@link io.reactivelocks.LockLostException} when the key is gone
     */
    Mono<Void> proclaim(String name, String owner, long token, String value) {
        return Mono.defer(() -> {
            EtcdSession s = grantedSessions.get(heldKey(name, owner));
            if (s == null || s.isOver()) {
                return Mono.error(new io.reactivelocks.LockLostException(name, token, "the session lease ended"));
            }
            ByteSequence key = keys.owner(name, owner);
            return Mono.fromFuture(() -> kv.txn()
                            .If(new Cmp(key, Cmp.Op.EQUAL, CmpTarget.createRevision(token)))
                            .Then(Op.put(key, EtcdKeys.bytes(value), PutOption.builder().withLeaseId(s.leaseId).build()))
                            .commit())
                    .onErrorMap(EtcdErrors::isLeaseNotFound, e -> {
                        s.lose("etcd says the session lease " + Long.toHexString(s.leaseId) + " is gone");
                        return new io.reactivelocks.LockLostException(name, token, "the session lease is gone");
                    })
                    .onErrorMap(e -> EtcdErrors.map(name, "proclamation", e))
                    .flatMap(r -> r.isSucceeded() ? Mono.<Void>empty()
                            : Mono.error(new io.reactivelocks.LockLostException(name, token, "the key is gone")));
        });
    }

    // ---------------------------------------------------------------- close

    @Override
    public Mono<Void> close() {
        return close;
    }

    private Mono<Void> doClose() {
        EtcdSession s;
        synchronized (sessionLock) {
            closed = true;
            s = session;
            session = null;
        }
        for (reactor.core.Disposable retry : new java.util.ArrayList<>(cleanUpRetries)) {
            retry.dispose();
        }
        cleanUpRetries.clear();
        Mono<Void> end = s == null ? Mono.empty() : s.close();
        return end.then(Mono.fromRunnable(() -> {
            if (ownsClient) {
                client.close();
            }
        }).subscribeOn(Schedulers.boundedElastic())).then();
    }

    // ---------------------------------------------------------------- helpers

    private Mono<Boolean> deleteKey(ByteSequence key) {
        return Mono.fromFuture(() -> kv.delete(key, DeleteOption.DEFAULT)).map(d -> d.getDeleted() > 0);
    }

    private Mono<Boolean> deleteIfCreated(ByteSequence key, long createRevision) {
        return Mono.fromFuture(() -> kv.txn()
                        .If(new Cmp(key, Cmp.Op.EQUAL, CmpTarget.createRevision(createRevision)))
                        .Then(Op.delete(key, DeleteOption.DEFAULT))
                        .commit())
                .map(TxnResponse::isSucceeded);
    }

    private Holder holder(KeyValue kv) {
        return new Holder(ownerOf(kv.getKey()), kv.getCreateRevision(), null);
    }

    /** The owner is the last segment of the key (the value holds it too, for people reading etcd). */
    private static String ownerOf(ByteSequence key) {
        String k = EtcdKeys.string(key);
        return k.substring(k.lastIndexOf('/') + 1);
    }

    private static String heldKey(String name, String owner) {
        return owner + '\u0000' + name;
    }

    private EtcdSession currentSession() {
        synchronized (sessionLock) {
            return session;
        }
    }

    EtcdKeys keys() {
        return keys;
    }

    KV kv() {
        return kv;
    }

    Client client() {
        return client;
    }

    /** @return how many times a queued waiter was woken by its predecessor's deletion (for tests) */
    long predecessorWakeups() {
        return predecessorWakeups.get();
    }

    /** @return how many session leases were granted (for tests) */
    long sessionsGranted() {
        return sessionsGranted.get();
    }

    /** @return how many sessions were lost (not closed) (for tests) */
    long sessionsLost() {
        return sessionsLost.get();
    }

    /** @return completes when the live session ends (lost or closed); empty at once without one (for tests) */
    Mono<Void> sessionEnd() {
        EtcdSession s = currentSession();
        return s == null ? Mono.empty() : s.whenOver();
    }

    /** @return the id of the live session lease, or empty (for tests) */
    java.util.OptionalLong sessionLeaseId() {
        EtcdSession s = currentSession();
        return s == null || s.isOver() ? java.util.OptionalLong.empty() : java.util.OptionalLong.of(s.leaseId);
    }

    @Override
    public String toString() {
        return "EtcdLockBackend{prefix='" + options.prefix() + "'}";
    }
}
