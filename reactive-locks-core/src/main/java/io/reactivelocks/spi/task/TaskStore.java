package io.reactivelocks.spi.task;

import io.reactivelocks.task.TaskStatus;
import java.time.Duration;
import java.util.List;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * What a store must provide for the task-queue engine ({@code io.reactivelocks.internal.task},
 * created through {@link io.reactivelocks.task.TaskQueue#create}) to run on it. The engine checks
 * arguments, times every call (request timeout), retries transient failures, counts demand and
 * renews claims; a store only changes and reads task records atomically.
 *
 * <p>Every method is lazy (nothing is sent before subscribe) and never blocks. Errors should be
 * {@link io.reactivelocks.LockBackendException}s with the right {@code isTransient()} and the queue
 * as lock name; the engine maps anything else (timeouts and I/O errors as transient). Expiry of a
 * claim is decided by the store's own clock, never the client's. Operations on a claim check owner
 * and token ({@link ClaimRef}); an expired claim that nobody recaptured may still complete, fail or
 * release, but not renew.
 */
public interface TaskStore {

    /** @return a short name of the store for messages, e.g. {@code "redis"} */
    String name();

    /**
     * Checks at call time what the store cannot hold beyond the common rules (which the engine
     * checks first), e.g. a key length limit.
     *
     * @param queue  the queue name
     * @param taskId the task id
     * @throws IllegalArgumentException naming the argument when the store cannot hold it
     */
    default void checkKey(String queue, String taskId) {
    }

    /** @return the most tasks one {@link #register} or {@link #renew} call may carry; the engine splits larger batches */
    default int maxBatch() {
        return 1000;
    }

    /**
     * Registers tasks as pending, in one atomic step; ids the queue already has (in any state) are
     * left exactly as they are. Wakes the queue's capturers when any task was new.
     *
     * @param queue   the queue name
     * @param tasks   the tasks, never empty, at most {@link #maxBatch()}
     * @param retries how many failures of each are retried, at least 0
     * @return how many tasks were new
     */
    Mono<Integer> register(String queue, List<NewTask> tasks, int retries);

    /**
     * Moves up to {@code limit} capturable tasks — pending, failed with retries left, or claimed
     * with an expired claim — to in-progress for {@code owner}, atomically: two concurrent calls
     * never take the same task. Each gets a fresh fencing token, greater than every token handed
     * out before for the task (also across store restarts), and the claim time by the store's clock.
     *
     * @param queue     the queue name
     * @param owner     a fresh owner id for this call (so its claims can be released if the answer is lost)
     * @param limit     the most tasks to capture, at least 1
     * @param claimTime how long each claim lasts unless renewed
     * @return the captured tasks
     */
    Mono<Capture> capture(String queue, String owner, int limit, Duration claimTime);

    /**
     * Extends live claims by {@code claimTime} from now, each owner- and token-checked; an expired
     * claim is not revived.
     *
     * @param queue     the queue name
     * @param claims    the claims, never empty, at most {@link #maxBatch()}
     * @param claimTime the new claim time
     * @return one answer per claim, in order: {@code true} when renewed
     */
    Mono<List<Boolean>> renew(String queue, List<ClaimRef> claims, Duration claimTime);

    /**
     * Marks a claimed task done (owner and token checked).
     *
     * @param queue the queue name
     * @param claim the claim
     * @return {@code true} when done, {@code false} when the claim no longer holds the task
     */
    Mono<Boolean> complete(String queue, ClaimRef claim);

    /**
     * Records a failure of a claimed task (owner and token checked): with a retry left it becomes
     * failed (capturable, capturers woken) with one retry less; with none it becomes dead.
     *
     * @param queue the queue name
     * @param claim the claim
     * @return {@code true} when recorded, {@code false} when the claim no longer holds the task
     */
    Mono<Boolean> fail(String queue, ClaimRef claim);

    /**
     * Gives claimed tasks back (each owner- and token-checked): pending at once, no retry used,
     * capturers woken.
     *
     * @param queue  the queue name
     * @param claims the claims, never empty, at most {@link #maxBatch()}
     * @return how many were released
     */
    Mono<Integer> release(String queue, List<ClaimRef> claims);

    /**
     * Gives back every claim of {@code owner} on the queue: called after a capture call whose answer
     * was lost (it may have captured tasks nobody will ever see). Best effort; the default does
     * nothing, and such claims expire by themselves.
     *
     * @param queue the queue name
     * @param owner the owner id of the lost capture call
     * @return how many were released
     */
    default Mono<Integer> releaseOwner(String queue, String owner) {
        return Mono.just(0);
    }

    /**
     * Reads one task; a claim expired by the store's clock reads as pending.
     *
     * @param queue  the queue name
     * @param taskId the task id
     * @return the status, or empty when the queue does not have the task
     */
    Mono<TaskStatus> status(String queue, String taskId);

    /**
     * The claims held now on the queue, for {@link io.reactivelocks.admin.LockAdmin#list}; a claim
     * expired by the store's clock is not listed. The default errors: a store overrides it to be
     * listed.
     *
     * @param queue the queue name
     * @return the live claims, in any order
     */
    default Flux<HeldClaim> claims(String queue) {
        return Flux.error(new UnsupportedOperationException(name() + " cannot list its task claims"));
    }

    /**
     * Forgets a task in any state.
     *
     * @param queue  the queue name
     * @param taskId the task id
     * @return {@code true} when the queue had it
     */
    Mono<Boolean> remove(String queue, String taskId);

    /**
     * A hot stream of wake-ups of one queue: first a {@link TaskWakeUp} with {@code subscribed} once
     * the store-side subscription is live, then one whenever tasks may have become capturable
     * (registered, failed with a retry left, released), and {@code subscribed} again after a lost
     * subscription was re-established. Completes when the store closes. A store without
     * notifications emits the first {@code subscribed} and nothing else (capturers then poll).
     *
     * @param queue the queue name
     * @return the wake-ups
     */
    Flux<TaskWakeUp> wakeUps(String queue);

    /**
     * Closes what the store owns (not connections the application passed in); wake-up streams
     * complete. Idempotent and bounded in time.
     *
     * @return a {@code Mono} that closes on subscribe
     */
    Mono<Void> close();
}
