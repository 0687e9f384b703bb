package io.reactivelocks.zookeeper;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Predicate;
import org.apache.zookeeper.KeeperException;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.util.Logger;
import reactor.util.Loggers;
import reactor.util.retry.Retry;

/**
 * Removes what the backend left in the tree: owner nodes whose delete a lost connection
 * interrupted (remembered until ZooKeeper confirmed, sent again after a reconnection), and lock
 * nodes emptied by a release, pruned a moment later (once per name at a time). Its timers run on
 * the options' scheduler; {@link #cancelTimers()} stops them on close, whose {@link #sweep} then
 * prunes what is still pending.
 */
final class LockNodeJanitor {

    private static final Logger LOG = Loggers.getLogger(LockNodeJanitor.class);

    /** How long after a release the lock's empty node is pruned (see {@link #schedulePrune}). */
    static final Duration PRUNE_DELAY = Duration.ofMillis(500);

    private final LockNodes nodes;
    private final ZooKeeperLockOptions options;
    private final BooleanSupplier closed;
    private final Set<String> prunePending = ConcurrentHashMap.newKeySet();
    private final Set<String> pruneScheduled = ConcurrentHashMap.newKeySet();
    /** Names released again while their prune was scheduled: the timer waits another delay instead of pruning. */
    private final Set<String> usedAgain = ConcurrentHashMap.newKeySet();
    /** The prune timers not fired yet, by lock name: close() cancels them (and prunes their names itself). */
    private final ConcurrentHashMap<String, Disposable> pruneTimers = new ConcurrentHashMap<>();
    private final Set<String> deletePending = ConcurrentHashMap.newKeySet();

    /**
     * @param nodes   the requests on the lock nodes
     * @param options the scheduler of the timers and the request timeout
     * @param closed  whether the backend is closed (no prune is scheduled then)
     */
    LockNodeJanitor(LockNodes nodes, ZooKeeperLockOptions options, BooleanSupplier closed) {
        this.nodes = nodes;
        this.options = options;
        this.closed = closed;
    }

    /** Remembers that the lock's node may be empty soon: pruned by the next {@link #schedulePrune} or {@link #sweep}. */
    void prunePending(String name) {
        prunePending.add(name);
    }

    void deleteQuietly(String path) {
        deleteTracked(path).timeout(options.requestTimeout(), options.scheduler())
                .subscribe(null, e -> LOG.debug("could not delete {} yet (retried after reconnection): {}", path, e.toString()));
    }

    /**
     * Deletes a node of ours, remembering it until ZooKeeper confirmed: a delete that a lost
     * connection interrupted (or whose caller gave up) is sent again after the reconnection, so a
     * node whose session survived does not keep the lock from its successors.
     */
    Mono<Boolean> deleteTracked(String path) {
        return Mono.defer(() -> {
            deletePending.add(path);
            return nodes.delete(path).doOnSuccess(d -> deletePending.remove(path));
        });
    }

    /**
     * Prunes the lock's node once it was left unused for a moment rather than at each release: a
     * name taken again soon (the common case: a lock used in a loop) keeps its node, so its next
     * acquire is one create instead of a failed create, a container create and a create again (6
     * requests per acquire and release instead of 3); and a name released again while its prune
     * was scheduled waits another delay without a request, so a busy name costs no prune at all
     * (Curator's InterProcessMutex sends none: it leaves empty containers to the server's container
     * manager, which deletes them within a minute). At most one prune per name is scheduled at a
     * time; close() prunes whatever is still pending.
     */
    void schedulePrune(String name) {
        if (closed.getAsBoolean()) {
            return;
        }
        if (!pruneScheduled.add(name)) {
            usedAgain.add(name);
            return;
        }
        schedulePruneTimer(name);
    }

    private void schedulePruneTimer(String name) {
        Runnable run = () -> {
            pruneTimers.remove(name);
            if (closed.getAsBoolean()) {
                pruneScheduled.remove(name);
                return; // close() prunes what is pending
            }
            if (usedAgain.remove(name)) {
                schedulePruneTimer(name); // released again meanwhile: wait until it is left alone
                return;
            }
            pruneScheduled.remove(name);
            if (usedAgain.remove(name)) { // a release between the two checks: it found the prune scheduled
                schedulePrune(name);
                return;
            }
            prune(name).subscribe(null, e -> LOG.debug("prune of lock '{}' failed: {}", name, e.toString()));
        };
        try {
            Disposable timer = options.scheduler().schedule(run, PRUNE_DELAY.toMillis(), TimeUnit.MILLISECONDS);
            if (pruneScheduled.contains(name)) {
                pruneTimers.put(name, timer);
            }
            if (closed.getAsBoolean() || !pruneScheduled.contains(name)) { // close() ran meanwhile, or the timer fired already
                pruneTimers.remove(name, timer);
                if (closed.getAsBoolean()) {
                    timer.dispose();
                }
            }
        } catch (java.util.concurrent.RejectedExecutionException e) {
            pruneScheduled.remove(name);
            usedAgain.remove(name);
            prune(name).subscribe(null, x -> LOG.debug("prune of lock '{}' failed: {}", name, x.toString()));
        }
    }

    /** Cancels the prune timers not fired yet; their names stay pending, for the {@link #sweep} of close(). */
    void cancelTimers() {
        for (Disposable timer : new ArrayList<>(pruneTimers.values())) {
            timer.dispose(); // their names stay pending: the sweep prunes them
        }
        pruneTimers.clear();
    }

    /**
     * Deletes the lock's node if it is empty; best effort (someone in it, or already gone, is fine). A node
     * someone is in stays pending: that owner's release marks it pending again before its delete, but this
     * answer may come after that mark — forgetting the name then would leave the node once the owner leaves
     * and the backend closes before the next prune fires (seen under load: an empty lock node after close).
     */
    private Mono<Void> prune(String name) {
        return pruneOrFail(name, false).onErrorResume(e -> Mono.empty());
    }

    /**
     * Like {@link #prune}, but fails when ZooKeeper could not be asked (the name stays pending).
     *
     * @param forgetInUse whether a node someone is in is forgotten (the close's sweep: another backend's owner
     *                    prunes it when it leaves)
     */
    private Mono<Void> pruneOrFail(String name, boolean forgetInUse) {
        return Mono.fromCompletionStage(() -> nodes.async().delete().forPath(nodes.paths().lockPath(name)))
                .then()
                .doOnSuccess(v -> prunePending.remove(name))
                .onErrorResume(e -> {
                    KeeperException.Code code = ZooKeeperErrors.code(e);
                    if (code == KeeperException.Code.NONODE || (forgetInUse && code == KeeperException.Code.NOTEMPTY)) {
                        prunePending.remove(name);
                        return Mono.empty();
                    }
                    return code == KeeperException.Code.NOTEMPTY ? Mono.empty() : Mono.error(e);
                });
    }

    /**
     * Sends again the deletes of owner nodes, then the prunes of lock nodes, that a lost
     * connection interrupted (a lease lost in a partition, say), retrying while ZooKeeper is
     * unreachable; the caller bounds it in time.
     *
     * @param inUse whether this backend still has an owner node in a lock (that lock is not pruned)
     */
    Mono<Void> sweep(Predicate<String> inUse) {
        Mono<Void> deletes = Flux.fromIterable(new ArrayList<>(deletePending))
                .concatMap(p -> deleteTracked(p)
                        .retryWhen(Retry.fixedDelay(Long.MAX_VALUE, ZooKeeperLockBackend.RETRY_DELAY).filter(ZooKeeperErrors::isTransient))
                        .onErrorResume(e -> Mono.empty()))
                .then();
        return deletes.thenMany(Flux.fromIterable(new ArrayList<>(prunePending)))
                .filter(n -> !inUse.test(n))
                .concatMap(n -> pruneOrFail(n, true)
                        .retryWhen(Retry.fixedDelay(Long.MAX_VALUE, ZooKeeperLockBackend.RETRY_DELAY).filter(ZooKeeperErrors::isTransient))
                        .onErrorResume(e -> Mono.empty()))
                .then();
    }
}
