package io.reactivelocks.etcd;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.kv.DeleteResponse;
import io.etcd.jetcd.kv.TxnResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
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
 * etcd confirms. The owner is never used again after its release (the engine draws a new owner
 * per acquire), so a late delete cannot hit a later grant. close() cancels the retries (its revoke
 * of the session lease deletes the keys).
 */
final class AbandonedTransactions {

    private static final Duration CLEAN_UP_RETRY = Duration.ofMillis(250);

    private final EtcdKeys keys;
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
     * @param keys     the key layout
     * @param requests the deletes
     * @param options  the scheduler of the retries
     * @param closed   whether the backend is closed (no retry then)
     */
    AbandonedTransactions(EtcdKeys keys, LockKeys requests, EtcdLockOptions options, BooleanSupplier closed) {
        this.keys = keys;
        this.requests = requests;
        this.options = options;
        this.closed = closed;
    }

    /**
     * Follows an acquire transaction to its real end in the driver, whatever its caller does (a
     * timeout cancels only the caller's view of it).
     *
     * @return a view of {@code txn} for the caller; cancelling it leaves {@code txn} alone
     */
    CompletableFuture<TxnResponse> tracked(String name, String owner, CompletableFuture<TxnResponse> txn) {
        String held = EtcdKeys.heldKey(name, owner);
        txnsInFlight.merge(held, 1, Integer::sum);
        txn.whenComplete((r, e) -> {
            boolean last = txnsInFlight.computeIfPresent(held, (k, n) -> n == 1 ? null : n - 1) == null;
            if (last && releaseAfterTxns.remove(held)) {
                deleteUntilConfirmed(name, owner);
            }
        });
        return txn.thenApply(Function.identity());
    }

    /**
     * Follows a release's delete to its real end in the driver: when it fails transiently, the key
     * is deleted again until etcd confirms, whatever its caller does (a timeout cancels only the
     * caller's view of it).
     *
     * @return a view of {@code delete} for the caller; cancelling it leaves {@code delete} alone
     */
    CompletableFuture<DeleteResponse> trackedRelease(String name, String owner, CompletableFuture<DeleteResponse> delete) {
        delete.whenComplete((r, e) -> {
            if (e != null && EtcdErrors.isTransient(e) && !closed.getAsBoolean()) {
                deleteUntilConfirmed(name, owner);
            }
        });
        return delete.thenApply(Function.identity());
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
     * Deletes the owner's key, retrying transient failures until etcd confirms, the session lease
     * that key may be on ends, or the backend closes (its revoke deletes the key).
     */
    private void deleteUntilConfirmed(String name, String owner) {
        ByteSequence key = keys.owner(name, owner);
        requests.deleteKey(key).subscribe(null, e -> {
            if (!EtcdErrors.isTransient(e) || closed.getAsBoolean()) {
                return;
            }
            Disposable[] timer = new Disposable[1];
            try {
                timer[0] = options.scheduler().schedule(() -> {
                    cleanUpRetries.remove(timer[0]);
                    deleteUntilConfirmed(name, owner);
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
