package io.reactivelocks.etcd;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.kv.TxnResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
import java.util.function.Supplier;
import reactor.core.Disposable;

/**
 * Acquire transactions and releases followed to their real end in the driver. A transaction the
 * engine gave up on (its request timeout passed while etcd was down) still waits in the gRPC
 * channel and runs when etcd answers again, creating the owner's key on the live session lease; a
 * release asked meanwhile is not enough, so the owner's key is deleted again once the last
 * transaction of that held key settled. A release's delete that fails transiently (the connection
 * broke with it in flight, or jetcd's own retries ran out) — whether its caller still waits or
 * gave up at its request timeout — is sent again too: otherwise the key would stay on a session
 * that outlives the outage and block the name for as long as the client lives. Both retry until
 * etcd confirms. Keys are reused ({@link LockSlots}): every delete but a release's first is guarded by
 * the create revision of the owner's key ({@link LockKeys#deleteOwned}), so a late one cannot hit the
 * next owner of the slot, and the owner's slot is freed only once a delete is confirmed with no
 * transaction of the owner left in the driver (one still there could put the key again); a release's
 * unguarded delete whose answer is lost retires the slot instead ({@link #trackedRelease}). close() cancels the retries
 * (its revoke of the session lease deletes the keys).
 */
final class AbandonedTransactions {

    private static final Duration CLEAN_UP_RETRY = Duration.ofMillis(250);

    private final LockSlots slots;
    private final LockKeys requests;
    private final EtcdLockOptions options;
    private final BooleanSupplier closed;
    /** Acquire transactions the driver has not answered yet, by held key ({@link EtcdKeys#heldKey}). */
    private final Map<String, Integer> txnsInFlight = new ConcurrentHashMap<>();
    /** Held keys released while a transaction of theirs was in flight: deleted again once it settled. */
    private final Set<String> releaseAfterTxns = ConcurrentHashMap.newKeySet();
    /** Timers of clean-up deletes waiting to be retried: close() cancels them (the revoke deletes the keys). */
    private final Set<Disposable> cleanUpRetries = ConcurrentHashMap.newKeySet();

    /**
     * @param slots    the owners' keys
     * @param requests the deletes
     * @param options  the scheduler of the retries
     * @param closed   whether the backend is closed (no retry then)
     */
    AbandonedTransactions(LockSlots slots, LockKeys requests, EtcdLockOptions options, BooleanSupplier closed) {
        this.slots = slots;
        this.requests = requests;
        this.options = options;
        this.closed = closed;
    }

    /**
     * Follows an acquire transaction to its real end in the driver, whatever its caller does (a
     * timeout cancels only the caller's view of it). Its answer tells the create revision of the
     * owner's key (put, or found), noted in {@code place} for the deletes.
     *
     * @param send sends the transaction on {@code key} (put if absent, else read it first)
     * @return a view of the transaction for the caller; cancelling it leaves the transaction alone
     */
    CompletableFuture<TxnResponse> tracked(LockSlots.Place place, ByteSequence key,
                                           Supplier<CompletableFuture<TxnResponse>> send) {
        String held = EtcdKeys.heldKey(place.name, place.owner);
        txnsInFlight.merge(held, 1, Integer::sum);
        CompletableFuture<TxnResponse> txn;
        try {
            txn = send.get();
        } catch (RuntimeException e) {
            settled(place, held);
            throw e;
        }
        // the caller's view depends on the bookkeeping's stage, so it completes after it; it is a stage of its
        // own, so cancelling it skips neither the bookkeeping (a cancelled stage would) nor the transaction
        return txn.whenComplete((r, e) -> {
            if (r != null) {
                place.put(key, r.isSucceeded() ? r.getHeader().getRevision() : createRevisionFound(r, place.owner));
            }
            settled(place, held);
        }).thenApply(Function.identity());
    }

    private void settled(LockSlots.Place place, String held) {
        boolean last = txnsInFlight.computeIfPresent(held, (k, n) -> n == 1 ? null : n - 1) == null;
        if (last && releaseAfterTxns.remove(held)) {
            deleteUntilConfirmed(place);
        }
    }

    /** @return the create revision of the owner's key read by the else branch of an acquire transaction, or 0 */
    private static long createRevisionFound(TxnResponse r, String owner) {
        List<KeyValue> found = r.getGetResponses().isEmpty() ? List.of() : r.getGetResponses().get(0).getKvs();
        return found.isEmpty() || !owner.equals(EtcdKeys.ownerOf(found.get(0).getValue())) ? 0
                : found.get(0).getCreateRevision();
    }

    /**
     * A release's delete of the owner's key, sent now and followed to its real end: when it fails
     * transiently, the key is deleted again until etcd confirms, whatever its caller does (a timeout
     * cancels only the caller's view of it); once confirmed, the owner's slot is freed.
     *
     * <p>With no acquire transaction of the owner in the driver (the usual release: of a holder, or of
     * a waiter whose last transaction was answered) the delete is unguarded — a plain delete, without the
     * create-revision compare that costs etcd a read per release. That is safe while the slot is
     * reserved, and it is until this very delete is answered: no other owner can have a key there, no
     * transaction of this owner can put one again (a released owner sends none), and a single delete is
     * sent. If its answer is lost (it may still run later), the slot is retired ({@link LockSlots.Place#retire})
     * and the retries are guarded as before. jetcd sends a delete again by itself only when etcd refused
     * the first one unapplied (an auth-token error: {@code DeleteOption.DEFAULT} has no auto-retry, so
     * jetcd 0.8 uses {@code Errors.isRetryableForNoSafeRedoOp}). With a transaction still in
     * flight, the delete is guarded (that transaction's settling sends another).
     *
     * @return a view of the delete for the caller (whether a key of the owner was deleted);
     *         cancelling it leaves the delete alone
     */
    CompletableFuture<Boolean> trackedRelease(LockSlots.Place place, LockSlots.At at) {
        boolean unguarded = !txnsInFlight.containsKey(EtcdKeys.heldKey(place.name, place.owner));
        CompletableFuture<Boolean> delete = (unguarded ? requests.delete(at.key())
                : requests.deleteOwned(at.key(), place.owner, at.token())).toFuture();
        // as for the transactions: the view completes after the bookkeeping, and cancelling it skips nothing
        return delete.whenComplete((r, e) -> {
            if (e == null) {
                gone(place);
                return;
            }
            if (unguarded) {
                place.retire();
            }
            if (EtcdErrors.isTransient(e) && !closed.getAsBoolean()) {
                deleteUntilConfirmed(place);
            }
        }).thenApply(Function.identity());
    }

    /**
     * The owner's key is known gone: its slot is free unless a transaction of the owner is still in
     * the driver (then a release asked for it deletes the key again once that one settled, and frees
     * the slot then).
     */
    void gone(LockSlots.Place place) {
        if (!txnsInFlight.containsKey(EtcdKeys.heldKey(place.name, place.owner))) {
            slots.free(place);
        }
    }

    /**
     * A release of the held key {@code held}: an acquire transaction still in the driver may put
     * the key after the release's delete, so delete it again once that transaction settled.
     */
    void released(String held) {
        txnsInFlight.computeIfPresent(held, (k, n) -> {
            releaseAfterTxns.add(held);
            return n;
        });
    }

    /**
     * Deletes the owner's key, retrying transient failures until etcd confirms (then frees the
     * owner's slot), the session lease that key may be on ends, or the backend closes (its revoke
     * deletes the key).
     */
    private void deleteUntilConfirmed(LockSlots.Place place) {
        LockSlots.At at = place.at();
        if (at == null) {
            gone(place);
            return;
        }
        requests.deleteOwned(at.key(), place.owner, at.token()).subscribe(deleted -> gone(place), e -> {
            if (!EtcdErrors.isTransient(e) || closed.getAsBoolean()) {
                return;
            }
            Disposable[] timer = new Disposable[1];
            try {
                timer[0] = options.scheduler().schedule(() -> {
                    cleanUpRetries.remove(timer[0]);
                    deleteUntilConfirmed(place);
                }, CLEAN_UP_RETRY.toMillis(), TimeUnit.MILLISECONDS);
                cleanUpRetries.add(timer[0]);
                if (closed.getAsBoolean()) {
                    timer[0].dispose();
                    cleanUpRetries.remove(timer[0]);
                }
            } catch (RejectedExecutionException refused) {
                // the scheduler is gone: so is the application; the session lease ends with it
            }
        });
    }

    /** Cancels the clean-up retries waiting for their timer (close: the revoke deletes the keys). */
    void cancelRetries() {
        for (Disposable retry : new ArrayList<>(cleanUpRetries)) {
            retry.dispose();
        }
        cleanUpRetries.clear();
    }
}
