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
import java.util.List;
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
        return sessions.session()
                .flatMap(s -> enqueue(request, s).onErrorResume(EtcdErrors::isLeaseNotFound, e -> {
                    // the lease ended before the session heard of it (revoked, expired while the keys' own
                    // watches already saw the deletions): end it, and put the key on a new one
                    s.lose("etcd says the session lease " + Long.toHexString(s.leaseId) + " is gone");
                    return sessions.session().flatMap(fresh -> enqueue(request, fresh));
                }))
                .onErrorMap(e -> EtcdErrors.forLock(request.name(), "acquire", EtcdErrors.map(request.name(), "acquire", e)));
    }

    private Mono<Attempt> enqueue(GrantRequest request, EtcdSession s) {
        return Mono.defer(() -> {
            LockSlots.Place place = slots.place(request.name(), request.owner());
            ByteSequence key = keys.slot(request.name(), s.leaseId, place.slot);
            LockSlots.At before = place.use(key);
            // the owner's key on a session lost since (a retry): gone with its lease, or soon; deleted so as
            // not to wait behind it meanwhile
            Mono<Boolean> stale = before == null ? Mono.just(false)
                    : requests.deleteIfCreated(before.key(), before.token()).onErrorReturn(false);
            return stale.then(enqueue(request, s, place, key));
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
        return Mono.firstWithSignal(awaitTurn(request, s, key, myRev), lost, entryGone)
                .onErrorMap(e -> EtcdErrors.map(request.name(), "acquire", e));
    }

    private Mono<Attempt> awaitTurn(GrantRequest request, EtcdSession s, ByteSequence key, long myRev) {
        ByteSequence range = keys.lock(request.name());
        GetOption before = GetOption.builder().isPrefix(true).withMaxCreateRevision(myRev - 1)
                .withSortField(GetOption.SortTarget.CREATE).withSortOrder(GetOption.SortOrder.DESCEND)
                .withLimit(1).build();
        return Mono.fromFuture(() -> kv.txn()
                        .Then(Op.get(key, GetOption.DEFAULT), Op.get(range, before))
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
                    // on the predecessor's deletion, read again (our key, the one before it) before a grant — even when
                    // the predecessor was the lowest: our own key may have been deleted behind our back first, and the
                    // watch that reports that (the held keys' shared watch, opened from a past revision when it was
                    // closed) may deliver it after this one (etcd syncs such a watch every 100 ms); granting on this
                    // deletion alone granted a deleted key in a loaded CI run
                    return awaitDeletion(request.name(), p, r.getHeader().getRevision())
                            .then(Mono.defer(() -> awaitTurn(request, s, key, myRev)));
                });
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
        io.reactivelocks.spi.Renewal recent = s.recentConfirmation(request.clock());
        Mono<io.reactivelocks.spi.Renewal> confirmed = recent != null ? Mono.just(recent) : s.confirm(request.clock());
        return confirmed.flatMap(c -> sessions.granted(EtcdKeys.heldKey(request.name(), request.owner()), s)
                ? Mono.just(new Attempt.Granted(token, c.ttl(), c.sentAtNanos()))
                : Mono.error(new LockBackendException(request.name(), "the etcd session ended before the grant of lock '"
                        + request.name() + "' was confirmed: " + s.endReason(), null, true)));
    }

    // ---------------------------------------------------------------- release

    /**
     * Leaves the queue: deletes the owner's key (whether it holds or waits), guarded by its create
     * revision, also once more after an acquire transaction of it still in the driver settled; its
     * slot is free once a delete is confirmed. The key of an owner with no place here (another
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
}
