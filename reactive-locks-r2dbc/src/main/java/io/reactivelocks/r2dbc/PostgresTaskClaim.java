package io.reactivelocks.r2dbc;

import io.reactivelocks.LockLostException;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.util.Logger;
import reactor.util.Loggers;
import reactor.util.retry.Retry;

/**
 * The {@link TaskClaim} of a {@link PostgresTaskQueue}: the captured task's identity, its
 * current local deadline (moved forward by confirmed renewals) and whether it has ended.
 */
final class PostgresTaskClaim implements TaskClaim {

    private static final Logger LOG = Loggers.getLogger(PostgresTaskClaim.class);

    private final PostgresTaskQueue tasks;
    private final String queue;
    private final String taskId;
    private final String owner;
    private final long token;
    private final int retriesLeft;
    private final int attempt;
    private final String payload;
    private final Duration claimTime;
    private final AtomicLong deadline;
    private volatile boolean ended;

    PostgresTaskClaim(PostgresTaskQueue tasks, String queue, String taskId, String owner, long token, int retriesLeft,
                      int attempt, String payload, Duration claimTime, long validUntilNanos) {
        this.tasks = tasks;
        this.queue = queue;
        this.taskId = taskId;
        this.owner = owner;
        this.token = token;
        this.retriesLeft = retriesLeft;
        this.attempt = attempt;
        this.payload = payload;
        this.claimTime = claimTime;
        this.deadline = new AtomicLong(validUntilNanos);
    }

    @Override
    public String queue() {
        return queue;
    }

    @Override
    public String taskId() {
        return taskId;
    }

    @Override
    public String owner() {
        return owner;
    }

    @Override
    public long token() {
        return token;
    }

    @Override
    public int retriesLeft() {
        return retriesLeft;
    }

    @Override
    public int attempt() {
        return attempt;
    }

    @Override
    public String payload() {
        return payload;
    }

    @Override
    public Duration claimTime() {
        return claimTime;
    }

    @Override
    public long validUntilNanos() {
        return deadline.get();
    }

    @Override
    public Duration remaining() {
        long left = deadline.get() - tasks.clock().nanoTime();
        return ended || left <= 0 ? Duration.ZERO : Duration.ofNanos(left);
    }

    @Override
    public boolean isValid() {
        return !ended && deadline.get() - tasks.clock().nanoTime() > 0;
    }

    @Override
    public Mono<Boolean> renew() {
        return Mono.defer(() -> {
            long sentAt = tasks.clock().nanoTime(); // before the connection is even acquired: conservative
            return tasks.renewStatement(this).doOnNext(renewed -> {
                if (renewed) {
                    long until = sentAt + tasks.options().validityNanos(claimTime);
                    deadline.accumulateAndGet(until, (a, b) -> b - a > 0 ? b : a);
                } else {
                    ended = true;
                }
            });
        });
    }

    @Override
    public Mono<Boolean> complete() {
        return Mono.defer(() -> tasks.completeStatement(this).doOnNext(done -> ended = true));
    }

    @Override
    public Mono<Boolean> fail() {
        return Mono.defer(() -> tasks.failStatement(this).doOnNext(failed -> ended = true));
    }

    @Override
    public Mono<Boolean> release() {
        return Mono.defer(() -> tasks.releaseClaim(this).doOnNext(released -> ended = true));
    }

    @Override
    public Flux<TaskClaim> hold() {
        Duration interval = tasks.renewalInterval(claimTime);
        return Mono.<TaskClaim>just(this)
                .expand(c -> Mono.delay(interval, tasks.scheduler()).then(renewWhileValid()))
                .skip(1);
    }

    /** One renewal, transient failures retried while the deadline allows: this claim, or empty when lost. */
    private Mono<TaskClaim> renewWhileValid() {
        return Mono.defer(() -> {
            long left = deadline.get() - tasks.clock().nanoTime();
            if (ended || left <= 0) {
                return Mono.empty();
            }
            return renew()
                    .retryWhen(Retry.backoff(Long.MAX_VALUE, tasks.options().backoff().minBackoff)
                            .maxBackoff(tasks.options().backoff().maxBackoff)
                            .jitter(tasks.options().backoff().jitterFactor)
                            .scheduler(tasks.scheduler())
                            .filter(PostgresErrors::isTransient))
                    .timeout(Duration.ofNanos(left), Mono.empty(), tasks.scheduler())
                    .onErrorResume(e -> {
                        LOG.debug("renewal of the claim on task '{}' of queue '{}' failed; treating it as lost: {}",
                                taskId, queue, e.toString());
                        return Mono.empty();
                    })
                    .flatMap(renewed -> renewed ? Mono.just((TaskClaim) this) : Mono.empty());
        });
    }

    @Override
    public <T> Mono<T> process(Function<? super TaskClaim, ? extends Mono<T>> body) {
        Objects.requireNonNull(body, "body");
        return Mono.defer(() -> {
            LockLostException lost = new LockLostException(queue, token, "the claim on task '" + taskId
                    + "' expired or was taken over while the work ran");
            Mono<T> whenLost = hold().then(Mono.error(lost));
            Mono<T> work = Mono.defer(() -> Objects.requireNonNull(body.apply(this), "body returned null"));
            return Mono.usingWhen(Mono.just(this),
                    c -> Mono.firstWithSignal(work, whenLost),
                    c -> complete().flatMap(done -> done ? Mono.empty()
                            : Mono.error(new LockLostException(queue, token, "the claim on task '" + taskId
                                    + "' was taken over before the work completed it"))),
                    (c, error) -> error == lost ? Mono.empty() : fail().onErrorResume(e -> {
                        LOG.debug("recording the failure of task '{}' of queue '{}' failed: {}", taskId, queue, e.toString());
                        return Mono.empty();
                    }).then(),
                    c -> release().onErrorResume(e -> Mono.empty()).then());
        });
    }

    @Override
    public String toString() {
        return "TaskClaim{queue=" + queue + ", taskId=" + taskId + ", token=" + token + ", attempt=" + attempt + "}";
    }
}
