package io.reactivelocks.internal.task;

import io.reactivelocks.LockClientClosedException;
import io.reactivelocks.LockLostException;
import io.reactivelocks.LockNames;
import io.reactivelocks.LockOptions;
import io.reactivelocks.internal.Backoff;
import io.reactivelocks.internal.CleanUpBook;
import io.reactivelocks.internal.EngineTimers;
import io.reactivelocks.internal.RenewalScheduler;
import io.reactivelocks.spi.BackendErrors;
import io.reactivelocks.spi.RenewOutcome;
import io.reactivelocks.spi.task.Capture;
import io.reactivelocks.spi.task.CapturedTask;
import io.reactivelocks.spi.task.ClaimRef;
import io.reactivelocks.spi.task.NewTask;
import io.reactivelocks.spi.task.TaskStore;
import io.reactivelocks.spi.task.TaskWakeUp;
import io.reactivelocks.task.TaskClaim;
import io.reactivelocks.task.TaskQueue;
import io.reactivelocks.task.TaskStatus;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.Flux;
import reactor.core.publisher.FluxSink;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * The one {@link TaskQueue} implementation: argument checks, request timeouts, error mapping,
 * renewal and scoped processing over a {@link TaskStore}; capture is {@link TaskCapture}, a held
 * claim {@link ClaimHold}, renewed in batches by the engine's {@link RenewalScheduler} (one per
 * queue and claim time) under the queue's {@link EngineTimers}.
 */
public final class DefaultTaskQueue implements TaskQueue {

    private static final Logger LOG = Loggers.getLogger(DefaultTaskQueue.class);

    private final TaskStore store;
    private final LockOptions options;
    private final Scheduler scheduler;
    private final AtomicBoolean closed = new AtomicBoolean();
    private final Sinks.One<Boolean> closedSignal = Sinks.one();
    private final Mono<Void> close;
    /** Renewal batches, claim deadlines and renewal timeouts, closed with the queue. */
    private final EngineTimers timers;
    /** The renewal batches of each queue and claim time. */
    private final Map<ClaimGroup, RenewalScheduler<ClaimRef>> renewals = new ConcurrentHashMap<>();
    /** The holds running: the queue's close ends them. */
    private final Set<ClaimHold> holds = ConcurrentHashMap.newKeySet();
    /** Capture calls in flight and the releases of what they captured for nobody: close() waits for them. */
    private final CleanUpBook cleanUps = new CleanUpBook();
    /** Told of each claim delivered, renewed by {@link #hold}, lost, completed, failed or released (a claim is a lease on a task). */
    private final io.reactivelocks.internal.SafeListener listener;

    /**
     * @param store   the store, closed with the queue
     * @param options the timing
     */
    public DefaultTaskQueue(TaskStore store, LockOptions options) {
        this.store = Objects.requireNonNull(store, "store");
        this.options = Objects.requireNonNull(options, "options");
        this.listener = io.reactivelocks.internal.SafeListener.of(options.listener());
        this.scheduler = options.scheduler() != null ? options.scheduler() : Schedulers.parallel();
        this.timers = new EngineTimers(scheduler, options.clock());
        this.close = Mono.defer(() -> {
            closed.set(true);
            closedSignal.emitValue(true, Sinks.EmitFailureHandler.busyLooping(Duration.ofMillis(100)));
            // a held claim can no longer be renewed: its hold ends; then no timer is left
            holds.forEach(h -> h.end("the task queue closed"));
            timers.close();
            // capture calls still in flight settle within their request timeout, and the release of
            // what they captured for a subscriber that had gone within another: then the store closes
            Duration bound = options.requestTimeout().multipliedBy(2).plusSeconds(1);
            return cleanUps.drained()
                    .timeout(Mono.delay(bound, scheduler), Mono.fromRunnable(() -> LOG.warn(
                            "task queue on {} closed before the store confirmed the release of claims of {} (they expire by themselves)",
                            store.name(), cleanUps.names())))
                    .then(Mono.defer(store::close));
        }).cache();
    }

    @Override
    public LockOptions options() {
        return options;
    }

    // ------------------------------------------------------------------ registration

    @Override
    public Mono<Boolean> register(String queue, String taskId, int retries) {
        return register(queue, taskId, retries, null);
    }

    @Override
    public Mono<Boolean> register(String queue, String taskId, int retries, @Nullable String payload) {
        checkKey(queue, taskId);
        checkRetries(retries);
        checkPayload(payload);
        List<NewTask> one = List.of(new NewTask(taskId, payload));
        return call(queue, "task registration", () -> store.register(queue, one, retries)).map(n -> n == 1);
    }

    @Override
    public Mono<Integer> registerAll(String queue, Collection<String> taskIds, int retries) {
        LockNames.check(queue, "queue");
        Objects.requireNonNull(taskIds, "taskIds");
        checkRetries(retries);
        List<NewTask> all = new ArrayList<>(taskIds.size());
        for (String id : taskIds) {
            checkKey(queue, id);
            all.add(new NewTask(id, null));
        }
        int batch = Math.max(1, store.maxBatch());
        return Flux.range(0, (all.size() + batch - 1) / batch)
                .concatMap(chunk -> call(queue, "task registration", () -> store.register(queue,
                        all.subList(chunk * batch, Math.min(all.size(), (chunk + 1) * batch)), retries)))
                .reduce(0, Integer::sum);
    }

    // ------------------------------------------------------------------ capture

    @Override
    public Flux<TaskClaim> capture(String queue) {
        LockNames.check(queue, "queue");
        return capture(queue, Long.MAX_VALUE, true);
    }

    @Override
    public Flux<TaskClaim> tryCapture(String queue, int limit) {
        LockNames.check(queue, "queue");
        if (limit < 1) {
            throw new IllegalArgumentException("limit must be at least 1, was " + limit);
        }
        return capture(queue, limit, false);
    }

    private Flux<TaskClaim> capture(String queue, long limit, boolean wait) {
        return new Flux<>() {
            @Override
            public void subscribe(CoreSubscriber<? super TaskClaim> actual) {
                if (closed.get()) {
                    reactor.core.publisher.Operators.error(actual, new LockClientClosedException(queue));
                    return;
                }
                actual.onSubscribe(new TaskCapture(DefaultTaskQueue.this, queue, limit, wait, actual));
            }
        };
    }

    /** One capture call, timed and mapped. */
    Mono<Capture> captureCall(String queue, String owner, int limit) {
        return cleanUps.tracked(queue, call(queue, "task capture", () -> store.capture(queue, owner, limit, options.leaseTime())));
    }

    /** The claims of a capture answer, timed from {@code sentAt}. */
    List<TaskClaim> claims(String queue, String owner, Capture capture, long sentAt) {
        long validUntil = sentAt + options.validityNanos(capture.claimTime());
        List<TaskClaim> out = new ArrayList<>(capture.tasks().size());
        for (CapturedTask t : capture.tasks()) {
            out.add(new TaskClaim(queue, t.taskId(), owner, t.token(), t.attempt(), t.retriesLeft(), t.payload(),
                    capture.claimTime(), validUntil));
        }
        return out;
    }

    /** Gives back claims that were captured but never delivered; best effort (they expire anyway). */
    void releaseUndelivered(String queue, List<TaskClaim> claims) {
        if (claims.isEmpty()) {
            return;
        }
        List<ClaimRef> refs = new ArrayList<>(claims.size());
        claims.forEach(c -> refs.add(ref(c)));
        cleanUp(queue, "task release", () -> store.release(queue, refs)).subscribe(
                n -> LOG.debug("released {} claims of queue '{}' captured for a subscriber that had gone", n, queue),
                e -> LOG.debug("release of undelivered claims of queue '{}' failed (they expire by themselves): {}",
                        queue, e.toString()));
    }

    /** Gives back whatever a capture call whose answer was lost may have taken; best effort. */
    void releaseOwner(String queue, String owner) {
        cleanUp(queue, "task release", () -> store.releaseOwner(queue, owner)).subscribe(null,
                e -> LOG.debug("release after a failed capture of queue '{}' failed (claims expire by themselves): {}",
                        queue, e.toString()));
    }

    Flux<TaskWakeUp> wakeUps(String queue) {
        return Flux.defer(() -> store.wakeUps(queue)).takeUntilOther(closedSignal.asMono());
    }

    boolean isClosed() {
        return closed.get();
    }

    Scheduler scheduler() {
        return scheduler;
    }

    String storeName() {
        return store.name();
    }

    /** @return {@code backoff.maxAttempts}, or 10 when it is unbounded: failed capture calls retried in a row */
    long maxCaptureRetries() {
        long max = options.backoff().maxAttempts;
        return max >= Integer.MAX_VALUE ? 10 : max;
    }

    long backoffNanos(long attempt) {
        return Backoff.delayNanos(options.backoff(), attempt);
    }

    // ------------------------------------------------------------------ claims

    @Override
    public Mono<TaskClaim> renew(TaskClaim claim) {
        Objects.requireNonNull(claim, "claim");
        return Mono.defer(() -> {
            long sentAt = options.clock().nanoTime();
            return renewCall(claim.queue(), List.of(ref(claim)), claim.claimTime())
                    .filter(r -> !r.isEmpty() && Boolean.TRUE.equals(r.get(0)))
                    .map(r -> claim.withValidUntil(sentAt + options.validityNanos(claim.claimTime())));
        });
    }

    @Override
    public Flux<TaskClaim> hold(TaskClaim claim) {
        Objects.requireNonNull(claim, "claim");
        Duration interval = renewalInterval(claim.claimTime());
        return Flux.create(sink -> new ClaimHold(this, timers, renewals(claim), claim, interval, sink).start(),
                FluxSink.OverflowStrategy.LATEST);
    }

    /** One renewal call for claims of one queue, timed and mapped. */
    private Mono<List<Boolean>> renewCall(String queue, List<ClaimRef> claims, Duration claimTime) {
        return call(queue, "claim renewal", () -> store.renew(queue, claims, claimTime));
    }

    /** The claims of one queue with one claim time: what one {@link TaskStore#renew} call renews. */
    private record ClaimGroup(String queue, Duration claimTime) {
    }

    /**
     * @return the renewal batches of the claim's queue and claim time: each batch is one
     *         {@link TaskStore#renew} call (split at the store's {@link TaskStore#maxBatch()}), timed
     *         by the batches' request timeouts
     */
    private RenewalScheduler<ClaimRef> renewals(TaskClaim claim) {
        return renewals.computeIfAbsent(new ClaimGroup(claim.queue(), claim.claimTime()), g -> {
            RenewOutcome renewed = RenewOutcome.renewed(g.claimTime());
            BackendErrors errors = BackendErrors.of(store.name(), BackendErrors::isIoOrTimeout);
            return timers.renewals(
                    refs -> Mono.defer(() -> closed.get() ? Mono.<List<Boolean>>error(new LockClientClosedException(g.queue()))
                                    : store.renew(g.queue(), refs, g.claimTime()))
                            .map(answers -> {
                                List<RenewOutcome> out = new ArrayList<>(answers.size());
                                answers.forEach(a -> out.add(Boolean.TRUE.equals(a) ? renewed : RenewOutcome.notHeld()));
                                return out;
                            }),
                    store.maxBatch(),
                    e -> errors.mapQueue(g.queue(), "claim renewal", e));
        });
    }

    /** @return the renewal interval scaled to {@code claimTime} (a third of it by default) */
    private Duration renewalInterval(Duration claimTime) {
        if (claimTime.equals(options.leaseTime())) {
            return options.renewalInterval();
        }
        double ratio = (double) options.renewalInterval().toNanos() / options.leaseTime().toNanos();
        return Duration.ofNanos(Math.max(1, (long) (claimTime.toNanos() * ratio)));
    }

    /** @return false, and {@code hold} not kept, when the queue is closed */
    boolean held(ClaimHold hold) {
        holds.add(hold);
        if (closed.get()) {
            holds.remove(hold);
            return false;
        }
        return true;
    }

    void unheld(ClaimHold hold) {
        holds.remove(hold);
    }

    /** A held claim was renewed. */
    void renewed(TaskClaim c) {
        listener.onRenewed(c.queue(), c.token());
    }

    @Override
    public Mono<Boolean> complete(TaskClaim claim) {
        Objects.requireNonNull(claim, "claim");
        return ended(claim, call(claim.queue(), "task completion", () -> store.complete(claim.queue(), ref(claim))));
    }

    @Override
    public Mono<Boolean> fail(TaskClaim claim) {
        Objects.requireNonNull(claim, "claim");
        return ended(claim, call(claim.queue(), "task failure", () -> store.fail(claim.queue(), ref(claim))));
    }

    @Override
    public Mono<Boolean> release(TaskClaim claim) {
        Objects.requireNonNull(claim, "claim");
        return ended(claim, call(claim.queue(), "task release", () -> store.release(claim.queue(), List.of(ref(claim)))).map(n -> n > 0));
    }

    // ------------------------------------------------------------------ listener

    /**
     * @param c a claim
     * @return from the capture (or renewal) that made this claim object to now: the validity it was
     *         given counted back from its deadline
     */
    private Duration since(TaskClaim c) {
        return Duration.ofNanos(Math.max(0, options.clock().nanoTime() - (c.validUntilNanos() - options.validityNanos(c.claimTime()))));
    }

    /** A claim reaches its subscriber: a grant of the queue's name. */
    void delivered(TaskClaim c) {
        if (listener.active()) {
            listener.onAcquired(c.queue(), c.token(), since(c));
        }
    }

    /** The end of a claim that the store confirmed: a release; one the store no longer knew: a loss. */
    private Mono<Boolean> ended(TaskClaim c, Mono<Boolean> end) {
        return !listener.active() ? end : end.doOnNext(ours -> {
            if (ours) {
                listener.onReleased(c.queue(), c.token(), since(c));
            } else {
                listener.onLost(c.queue(), c.token(), "the claim on task '" + c.taskId() + "' had expired or been taken over", since(c));
            }
        });
    }

    @Override
    public <T> Mono<T> process(TaskClaim claim, Function<? super TaskClaim, ? extends Mono<T>> body) {
        Objects.requireNonNull(claim, "claim");
        Objects.requireNonNull(body, "body");
        return Mono.defer(() -> {
            LockLostException lost = lost(claim, "the claim expired or was taken over while the work ran");
            Mono<T> whenLost = hold(claim).then(Mono.error(lost));
            Mono<T> work = Mono.defer(() -> Objects.requireNonNull(body.apply(claim), "body returned null"));
            return Mono.usingWhen(Mono.just(claim),
                    c -> Mono.firstWithSignal(work, whenLost),
                    c -> complete(c).flatMap(done -> done ? Mono.<Void>empty()
                            : Mono.error(lost(c, "the claim was lost before the task could be completed"))),
                    (c, error) -> (error == lost ? release(c) : fail(c)).onErrorResume(e -> {
                        LOG.debug("ending the claim on task '{}' of queue '{}' after an error failed: {}",
                                c.taskId(), c.queue(), e.toString());
                        return Mono.empty();
                    }).then(),
                    c -> release(c).onErrorResume(e -> Mono.empty()).then());
        });
    }

    private static LockLostException lost(TaskClaim c, String why) {
        return new LockLostException(c.queue(), c.token(), "task '" + c.taskId() + "': " + why);
    }

    private static ClaimRef ref(TaskClaim c) {
        return new ClaimRef(c.taskId(), c.owner(), c.token());
    }

    // ------------------------------------------------------------------ inspection

    @Override
    public Mono<TaskStatus> status(String queue, String taskId) {
        checkKey(queue, taskId);
        return call(queue, "task status", () -> store.status(queue, taskId));
    }

    @Override
    public Mono<Boolean> remove(String queue, String taskId) {
        checkKey(queue, taskId);
        return call(queue, "task removal", () -> store.remove(queue, taskId));
    }

    @Override
    public Mono<Void> close() {
        return close;
    }

    // ------------------------------------------------------------------ internals

    /** One store call: refused after close, bounded by the request timeout, errors mapped. */
    private <T> Mono<T> call(String queue, String operation, Supplier<Mono<T>> work) {
        return Mono.defer(() -> closed.get() ? Mono.<T>error(new LockClientClosedException(queue)) : work.get())
                .timeout(options.requestTimeout(), scheduler)
                .onErrorMap(e -> BackendErrors.of(store.name(), BackendErrors::isIoOrTimeout).mapQueue(queue, operation, e));
    }

    /** A clean-up call: also after close (which waits for it), bounded by the request timeout. */
    private <T> Mono<T> cleanUp(String queue, String operation, Supplier<Mono<T>> work) {
        return cleanUps.tracked(queue, Mono.defer(work)
                .timeout(options.requestTimeout(), scheduler)
                .onErrorMap(e -> BackendErrors.of(store.name(), BackendErrors::isIoOrTimeout).mapQueue(queue, operation, e)));
    }

    private void checkKey(String queue, String taskId) {
        LockNames.check(queue, "queue");
        LockNames.check(taskId, "taskId");
        store.checkKey(queue, taskId);
    }

    private static void checkRetries(int retries) {
        if (retries < 0) {
            throw new IllegalArgumentException("retries must be at least 0, was " + retries);
        }
    }

    private static void checkPayload(@Nullable String payload) {
        if (payload != null) {
            int bytes = LockNames.utf8Length(payload);
            if (bytes > MAX_PAYLOAD_BYTES) {
                throw new IllegalArgumentException("payload must be at most " + MAX_PAYLOAD_BYTES + " UTF-8 bytes, was "
                        + bytes);
            }
        }
    }

    @Override
    public String toString() {
        return "TaskQueue{" + store + ", " + options + "}";
    }
}
