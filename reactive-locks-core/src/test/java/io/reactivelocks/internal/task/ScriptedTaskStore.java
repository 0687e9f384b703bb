package io.reactivelocks.internal.task;

import io.reactivelocks.LockBackendException;
import io.reactivelocks.local.LocalTaskStore;
import io.reactivelocks.spi.task.Capture;
import io.reactivelocks.spi.task.ClaimRef;
import io.reactivelocks.spi.task.NewTask;
import io.reactivelocks.spi.task.TaskStore;
import io.reactivelocks.spi.task.TaskWakeUp;
import io.reactivelocks.task.TaskStatus;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

/**
 * A {@link LocalTaskStore} with switches: failing renewals or captures, silent wake-ups, slow captures, a batch size,
 * call counters and the sizes of the renewal calls.
 */
final class ScriptedTaskStore implements TaskStore {

    final LocalTaskStore store;
    final Scheduler scheduler;
    final AtomicInteger captureCalls = new AtomicInteger();
    final AtomicInteger renewCalls = new AtomicInteger();
    final List<Integer> renewBatches = new CopyOnWriteArrayList<>();
    volatile int maxBatch = 1000;
    final AtomicInteger releaseOwnerCalls = new AtomicInteger();
    volatile boolean failRenewals;
    volatile boolean silentWakeUps;
    volatile int failCaptures;          // this many next captures fail
    volatile boolean permanentFailure;  // ... with a non-transient error
    volatile Duration captureDelay = Duration.ZERO;

    ScriptedTaskStore(LocalTaskStore store, Scheduler scheduler) {
        this.store = store;
        this.scheduler = scheduler;
    }

    @Override
    public String name() {
        return "scripted";
    }

    @Override
    public int maxBatch() {
        return maxBatch;
    }

    @Override
    public Mono<Integer> register(String queue, List<NewTask> tasks, int retries) {
        return store.register(queue, tasks, retries);
    }

    @Override
    public Mono<Capture> capture(String queue, String owner, int limit, Duration claimTime) {
        return Mono.defer(() -> {
            captureCalls.incrementAndGet();
            if (failCaptures > 0) {
                failCaptures--;
                return Mono.error(new LockBackendException(queue, "scripted capture failure", null, !permanentFailure));
            }
            Mono<Capture> c = store.capture(queue, owner, limit, claimTime);
            return captureDelay.isZero() ? c : Mono.delay(captureDelay, scheduler).then(c);
        });
    }

    @Override
    public Mono<List<Boolean>> renew(String queue, List<ClaimRef> claims, Duration claimTime) {
        return Mono.defer(() -> {
            renewCalls.incrementAndGet();
            renewBatches.add(claims.size());
            return failRenewals ? Mono.error(new LockBackendException(queue, "scripted renewal failure", null, true))
                    : store.renew(queue, claims, claimTime);
        });
    }

    @Override
    public Mono<Boolean> complete(String queue, ClaimRef claim) {
        return store.complete(queue, claim);
    }

    @Override
    public Mono<Boolean> fail(String queue, ClaimRef claim) {
        return store.fail(queue, claim);
    }

    @Override
    public Mono<Integer> release(String queue, List<ClaimRef> claims) {
        return store.release(queue, claims);
    }

    @Override
    public Mono<Integer> releaseOwner(String queue, String owner) {
        releaseOwnerCalls.incrementAndGet();
        return store.releaseOwner(queue, owner);
    }

    @Override
    public Mono<TaskStatus> status(String queue, String taskId) {
        return store.status(queue, taskId);
    }

    @Override
    public Mono<Boolean> remove(String queue, String taskId) {
        return store.remove(queue, taskId);
    }

    @Override
    public Flux<TaskWakeUp> wakeUps(String queue) {
        return silentWakeUps ? Flux.<TaskWakeUp>just(new TaskWakeUp(queue, true)).concatWith(Flux.never())
                : store.wakeUps(queue);
    }

    @Override
    public Mono<Void> close() {
        return store.close();
    }
}
