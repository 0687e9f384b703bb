package io.reactivelocks.etcd;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.KV;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.Watch;
import io.etcd.jetcd.common.exception.CompactedException;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.PutOption;
import io.reactivelocks.LockBackendException;
import io.reactivelocks.spi.Attempt;
import io.reactivelocks.spi.GrantRequest;
import io.reactivelocks.spi.Holder;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeoutException;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

/**
 * The queue recipe of {@link EtcdLockBackend} (its javadoc states it and why it is correct): the
 * transaction that puts the owner's key — its slot on the session lease ({@link LockSlots}) — on
 * that lease (or finds it) and reads the lowest key under the name; the answer (granted after a
 * keep-alive confirmed the lease, queued, busy); the wait of a queued owner on the key just before its own only; and leaving the queue (release).
 */
final class EtcdLockQueue {

    /** The key with the lowest create revision in a range: the holder's. */
    static final GetOption LOWEST = GetOption.builder().isPrefix(true)
            .withSortField(GetOption.SortTarget.CREATE).withSortOrder(GetOption.SortOrder.ASCEND).withLimit(1).build();

    private final KV kv;
    private final Watch watch;
    private final EtcdKeys keys;
    private final LockSlots slots;
    private final LockKeys requests;
    private final SessionLeases sessions;
    private final AbandonedTransactions txns;
    private final EtcdLockOptions options;
    private final HeldKeyWatch heldKeys;
    /** The keys queued owners of this backend wait on, each with what is known of it. */
    private final ConcurrentHashMap<ByteSequence, Predecessor> waitingOn = new ConcurrentHashMap<>();

    /**
     * How long a queued owner whose own watch saw its predecessor deleted waits for the shared watch to
     * report the same deletion in order (it delivers it as it commits once caught up; a read otherwise).
     */
    static final Duration IN_ORDER_GRACE = Duration.ofMillis(50);

    EtcdLockQueue(KV kv, Watch watch, EtcdKeys keys, LockSlots slots, LockKeys requests, SessionLeases sessions,
              AbandonedTransactions txns, EtcdLockOptions options, HeldKeyWatch heldKeys) {
        this.kv = kv;
        this.watch = watch;
        this.keys = keys;
        this.slots = slots;
        this.requests = requests;
        this.sessions = sessions;
        this.txns = txns;
        this.options = options;
        this.heldKeys = heldKeys;
    }

    /** See {@link EtcdLockBackend#tryGrant}. */
    Mono<Attempt> tryGrant(GrantRequest request) {
        EtcdSession live = sessions.ready(); // the usual case: straight to the transaction
        return (live != null ? enqueueOrAgain(request, live) : sessions.session().flatMap(s -> enqueueOrAgain(request, s)))
                .onErrorMap(e -> EtcdErrors.forLock(request.name(), "acquire", EtcdErrors.map(request.name(), "acquire", e)));
    }

    private Mono<Attempt> enqueueOrAgain(GrantRequest request, EtcdSession s) {
        return enqueue(request, s).onErrorResume(EtcdErrors::isLeaseNotFound, e -> {
            // the lease ended before the session heard of it (revoked, expired while the keys' own
            // watches already saw the deletions): end it, and put the key on a new one
            s.lose("etcd says the session lease " + Long.toHexString(s.leaseId) + " is gone");
            return sessions.session().flatMap(fresh -> enqueue(request, fresh));
        });
    }

    private Mono<Attempt> enqueue(GrantRequest request, EtcdSession s) {
        return Mono.defer(() -> {
            LockSlots.Place place = slots.place(request.name(), request.owner());
            ByteSequence key = keys.slot(request.name(), s.leaseId, place.slot);
            LockSlots.At before = place.use(key);
            // the owner's key on a session lost since (a retry): gone with its lease, or soon; deleted so as
            // not to wait behind it meanwhile
            if (before == null) {
                return enqueue(request, s, place, key);
            }
            return requests.deleteIfCreated(before.key(), before.token()).onErrorReturn(false)
                    .then(enqueue(request, s, place, key));
        });
    }

    private Mono<Attempt> enqueue(GrantRequest request, EtcdSession s, LockSlots.Place place, ByteSequence key) {
        ByteSequence range = keys.lock(request.name());
        Cmp absent = new Cmp(key, Cmp.Op.EQUAL, CmpTarget.createRevision(0));
        Op put = Op.put(key, EtcdKeys.value(request.owner(), request.payload()), PutOption.builder().withLeaseId(s.leaseId).build());
        return Mono.fromFuture(() -> txns.tracked(place, key, () -> kv.txn()
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
                        if (mine.getLease() != s.leaseId || !request.owner().equals(EtcdKeys.ownerOf(mine.getValue()))) {
                            // the slot is reserved for this owner on this lease until its key is known gone: not expected
                            return Mono.error(new LockBackendException(request.name(), "the key of owner "
                                    + request.owner() + " holds another owner or lease", null, true));
                        }
                        myRev = mine.getCreateRevision();
                        lowest = r.getGetResponses().get(1).getKvs();
                    }
                    if (!lowest.isEmpty() && lowest.get(0).getKey().equals(key)) {
                        return granted(request, s, key, myRev);
                    }
                    if (lowest.isEmpty()) {
                        return Mono.error(new LockBackendException(request.name(), "the key of owner " + request.owner()
                                + " vanished at once (the session lease ended)", null, true));
                    }
                    if (request.queue()) {
                        return Mono.just(new Attempt.Queued(turn(request, s, key, myRev)));
                    }
                    Holder holder = EtcdKeys.holder(lowest.get(0));
                    return requests.deleteIfCreated(key, myRev).doOnNext(deleted -> {
                        // an acquire of this owner still in the driver may put the key again: deleted once it settled
                        txns.released(EtcdKeys.heldKey(request.name(), request.owner()));
                        txns.gone(place);
                    }).thenReturn(Attempt.busy(holder));
                });
    }

    /** The wait of a queued owner: until no key before ours is left, then granted. */
    private Mono<Attempt> turn(GrantRequest request, EtcdSession s, ByteSequence key, long myRev) {
        Mono<Attempt> lost = s.whenOver().then(Mono.error(() -> new LockBackendException(request.name(),
                "the session lease ended while queued for lock '" + request.name() + "': " + s.endReason(), null, true)));
        // our key deleted behind our back (an operator) while we wait: the shared watch of held keys ends the wait
        // when it reports that; the read after the predecessor's deletion (awaitTurn) catches it if that comes first
        Mono<Attempt> entryGone = heldKeys.keyGone(key, myRev)
                .then(Mono.error(() -> new LockBackendException(request.name(), "the queue entry of owner "
                        + request.owner() + " was deleted while queued", null, true)));
        // the entry's registration first (firstWithSignal subscribes in order): a predecessor's deletion is reported in
        // order only for a queued key registered with the shared watch when the wait for it is decided
        return Mono.firstWithSignal(entryGone, lost, awaitTurn(request, s, key, myRev))
                .onErrorMap(e -> EtcdErrors.map(request.name(), "acquire", e));
    }

    private Mono<Attempt> awaitTurn(GrantRequest request, EtcdSession s, ByteSequence key, long myRev) {
        ByteSequence range = keys.lock(request.name());
        GetOption before = GetOption.builder().isPrefix(true).withMaxCreateRevision(myRev - 1)
                .withSortField(GetOption.SortTarget.CREATE).withSortOrder(GetOption.SortOrder.DESCEND)
                .withLimit(1).build();
        return Mono.fromFuture(() -> kv.txn()
                        .Then(Op.get(key, GetOption.DEFAULT), Op.get(range, before), Op.get(range, LOWEST))
                        .commit())
                .flatMap(r -> {
                    if (r.getGetResponses().get(0).getKvs().isEmpty()) {
                        return Mono.error(new LockBackendException(request.name(), "the queue entry of owner "
                                + request.owner() + " is gone (its session lease ended)", null, true));
                    }
                    // gone or another generation (deleted behind our back, then put again by a retry of ours)
                    KeyValue mine = r.getGetResponses().get(0).getKvs().get(0);
                    if (mine.getCreateRevision() != myRev) {
                        return Mono.error(new LockBackendException(request.name(), "the queue entry of owner "
                                + request.owner() + " was replaced while queued", null, true));
                    }
                    List<KeyValue> predecessor = r.getGetResponses().get(1).getKvs();
                    if (predecessor.isEmpty()) {
                        return granted(request, s, key, myRev);
                    }
                    KeyValue p = predecessor.get(0);
                    List<KeyValue> lowest = r.getGetResponses().get(2).getKvs();
                    Predecessor wait = new Predecessor(p.getCreateRevision(),
                            !lowest.isEmpty() && lowest.get(0).getKey().equals(p.getKey()));
                    return Mono.defer(() -> {
                                waitingOn.put(p.getKey(), wait);
                                HeldKeyWatch.PredecessorWait w = heldKeys.predecessorGone(key, myRev, p.getKey(), r.getHeader().getRevision());
                                return predecessorGone(request.name(), w, p, r.getHeader().getRevision())
                                        .doFinally(signal -> {
                                            w.cancel();
                                            waitingOn.remove(p.getKey(), wait);
                                        });
                            })
                            .flatMap(gone -> gone == HeldKeyWatch.Gone.IN_ORDER && wait.first
                                    // the predecessor was the lowest key and no key came between it and ours; the
                                    // shared watch reported its deletion before any of ours: ours is the lowest
                                    ? granted(request, s, key, myRev)
                                    : awaitTurn(request, s, key, myRev));
                });
    }

    /**
     * The deletion of a queued owner's predecessor. It is granted on that alone only when the held keys'
     * shared watch reports it — the watch that reports a deletion of the owner's own key, in the same
     * order as etcd made them ({@link HeldKeyWatch#predecessorGone}); two watches of their own may report
     * them the other way round (a grant on the predecessor's deletion alone once granted a key deleted
     * behind the waiter's back, in a loaded CI run). While the shared watch may still be catching up
     * (etcd serves a watch from a past revision every 100 ms) the owner also watches the predecessor
     * itself, and on that watch's event gives the shared watch {@link #IN_ORDER_GRACE} to agree.
     *
     * @return {@link HeldKeyWatch.Gone#IN_ORDER} when the shared watch vouches for the order, else
     *         {@link HeldKeyWatch.Gone#UNORDERED} (the caller reads again)
     */
    private Mono<HeldKeyWatch.Gone> predecessorGone(String name, HeldKeyWatch.PredecessorWait w, KeyValue p, long readRevision) {
        Mono<HeldKeyWatch.Gone> shared = w.gone().map(g -> g == HeldKeyWatch.Gone.NOT_WATCHED ? HeldKeyWatch.Gone.UNORDERED : g);
        Mono<HeldKeyWatch.Gone> own = awaitDeletion(name, p, readRevision)
                .then(Mono.defer(() -> heldKeys.live()
                        ? shared.timeout(IN_ORDER_GRACE, options.scheduler())
                                .onErrorResume(TimeoutException.class, e -> Mono.just(HeldKeyWatch.Gone.UNORDERED))
                        : Mono.just(HeldKeyWatch.Gone.UNORDERED)));
        Mono<HeldKeyWatch.Gone> viaShared = w.gone().flatMap(g -> g == HeldKeyWatch.Gone.NOT_WATCHED ? own : Mono.just(g));
        if (heldKeys.live()) {
            return viaShared;
        }
        // the own watch only until the shared one is live: then it is closed (not in a handoff's path) and the
        // shared watch alone reports the deletion
        return Mono.firstWithSignal(viaShared, own.takeUntilOther(heldKeys.whenLive()).switchIfEmpty(Mono.never()));
    }

    /**
     * Watches the predecessor's key for its deletion, from now on, with a read of it when the watch
     * started after a change since the read that found it ({@link WaiterWatch}: a watch from that
     * read's revision would be caught up only by etcd's 100 ms loop).
     *
     * @return true on the deletion; false shortly after the watch failed transiently (the caller
     *         then looks again); a permanent watch failure is an error
     */
    private Mono<Boolean> awaitDeletion(String name, KeyValue predecessor, long readRevision) {
        return WaiterWatch.await(watch, kv, new WaiterWatch.Wait(readRevision, WaiterWatch.Seen.key(predecessor, false)))
                .onErrorResume(e -> EtcdErrors.isTransient(e) || e instanceof CompactedException, e -> Mono.just(false))
                .onErrorMap(e -> EtcdErrors.map(name, "watch", e))
                .flatMap(deleted -> deleted ? Mono.just(true)
                        : Mono.delay(EtcdLockBackend.WATCH_RETRY, options.scheduler()).thenReturn(false)); // do not spin on a failing watch
    }

    /**
     * Answers granted once the session lease is known alive at and after the grant: timed from
     * the session's latest confirmation when it is recent (no request: the lease lives until at
     * least its send time + TTL, past this answer), else from a keep-alive sent after now, shared
     * with the other grants waiting for one (see {@link EtcdSession}).
     */
    private Mono<Attempt> granted(GrantRequest request, EtcdSession s, ByteSequence key, long token) {
        // this key was the lowest under its name at a revision before now: its successor, if it waits on it
        // from this backend, needs no read once the shared watch reports its deletion in order
        if (!waitingOn.isEmpty()) { // nothing to look up when no owner of this backend waits
            Predecessor successor = waitingOn.get(key);
            if (successor != null && successor.createRevision == token) {
                successor.first = true;
            }
        }
        io.reactivelocks.spi.Renewal recent = s.recentConfirmation(request.clock());
        if (recent != null) { // the usual case: answered at once
            return grantedOn(request, s, token, recent);
        }
        return s.confirm(request.clock()).flatMap(c -> grantedOn(request, s, token, c));
    }

    private Mono<Attempt> grantedOn(GrantRequest request, EtcdSession s, long token, io.reactivelocks.spi.Renewal confirmed) {
        return sessions.granted(EtcdKeys.heldKey(request.name(), request.owner()), s)
                ? Mono.just(new Attempt.Granted(token, confirmed.ttl(), confirmed.sentAtNanos()))
                : Mono.error(new LockBackendException(request.name(), "the etcd session ended before the grant of lock '"
                        + request.name() + "' was confirmed: " + s.endReason(), null, true));
    }

    // ---------------------------------------------------------------- release

    /**
     * Leaves the queue: deletes the owner's key (whether it holds or waits) — a plain delete, or one
     * guarded by its create revision while an acquire transaction of it is still in the driver (and
     * once more after that settled) ({@link AbandonedTransactions#trackedRelease}); its slot is free
     * once a delete is confirmed. The key of an owner with no place here (another
     * backend's, released by an admin) is looked up by its value.
     */
    Mono<Boolean> release(String name, String owner) {
        return Mono.defer(() -> {
            String held = EtcdKeys.heldKey(name, owner);
            sessions.forget(held);
            LockSlots.Place place = slots.find(name, owner);
            if (place == null) { // not an owner of this backend (an admin's forced release), or gone already
                return releaseForeign(name, owner);
            }
            // an acquire transaction still in the driver may put the key after this delete: delete it
            // again once that transaction settled
            txns.released(held);
            LockSlots.At at = place.at();
            if (at == null) { // no transaction was sent
                txns.gone(place);
                return Mono.just(false);
            }
            // a delete that fails transiently is sent again until etcd confirms, even after our caller gave up
            return Mono.fromFuture(() -> txns.trackedRelease(place, at));
        }).onErrorMap(e -> EtcdErrors.map(name, "release", e));
    }

    /**
     * The release of an owner this backend has no key of: its key is found by its value among the
     * name's keys (one read), then deleted guarded by the create revision read.
     */
    private Mono<Boolean> releaseForeign(String name, String owner) {
        return Mono.fromFuture(() -> kv.get(keys.lock(name), GetOption.builder().isPrefix(true).build()))
                .flatMap(r -> {
                    for (KeyValue found : r.getKvs()) {
                        if (owner.equals(EtcdKeys.ownerOf(found.getValue()))) {
                            return requests.deleteOwned(found.getKey(), owner, found.getCreateRevision());
                        }
                    }
                    return Mono.just(false);
                });
    }

    /**
     * @return the key of {@code owner}'s place under {@code name} and the token it was last put with
     *         (0 when unknown), or null when the owner has no key here
     */
    LockSlots.@Nullable At keyOf(String name, String owner) {
        LockSlots.Place place = slots.find(name, owner);
        return place == null ? null : place.at();
    }

    /**
     * The key a queued owner waits on: its create revision, and whether it is known to have been the
     * lowest key under the name at some revision (read so by the owner, or granted by this backend).
     * Then no key before it can exist any more (keys only get larger create revisions), and the owner's
     * read found no key between it and the owner's: its deletion makes the owner's key the lowest — if
     * the owner's key still stands then.
     */
    private static final class Predecessor {
        final long createRevision;
        volatile boolean first;

        Predecessor(long createRevision, boolean first) {
            this.createRevision = createRevision;
            this.first = first;
        }
    }
}
