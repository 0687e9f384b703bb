package io.reactivelocks.election;

import io.reactivelocks.LockClient;
import io.reactivelocks.LockOptions;
import io.reactivelocks.internal.election.DefaultLeaderElection;
import java.util.Optional;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Leader election over any {@link LockClient}: an election named {@code n} is the lock
 * {@code n}, its leader the lock's holder, the leader's value the lock's payload. So it runs on
 * every store, waits like {@link LockClient#acquire} (queueing stores wait on their predecessor
 * only), fences each term with the lock's token and ends a term before anyone else can lead.
 * Elections share the lock namespace of their client: do not use an election's name as a lock.
 *
 * <pre>{@code
 * LeaderElection elections = LeaderElection.create(locks);   // locks: any LockClient
 * elections.campaign("scheduler", myAddress)             // the term, then again after each renewal
 *          .distinctUntilChanged(Leadership::token)         // one element per term
 *          .concatMap(term -> runScheduler(term.token())    // the token fences the leader's writes
 *                  .takeUntilOther(term.lost()))            // stop when leadership is lost
 *          .repeat()                                        // campaign again after losing leadership
 *          .subscribe();
 * elections.observe("scheduler").subscribe(leader -> route(leader));
 * }</pre>
 *
 * <p>Arguments are checked at call time ({@link NullPointerException} /
 * {@link IllegalArgumentException} naming the argument); failures after subscribe are the
 * {@link io.reactivelocks.LockException} family, as on the client. Closing the client resigns
 * every leadership of its elections.
 */
public interface LeaderElection {

    /**
     * @param locks the client whose locks carry the elections (not closed by the election)
     * @return elections with the client's default options
     */
    static LeaderElection create(LockClient locks) {
        return new DefaultLeaderElection(locks, null);
    }

    /**
     * @param locks   the client whose locks carry the elections (not closed by the election)
     * @param options timing of campaigns (lease time, renewal, wait timeout); their payload is
     *                ignored, a campaign stores its value
     * @return elections with those options
     */
    static LeaderElection create(LockClient locks, LockOptions options) {
        return new DefaultLeaderElection(locks, java.util.Objects.requireNonNull(options, "options"));
    }

    /**
     * Campaigns: waits until this candidate may lead (as {@link LockClient#hold} waits for the
     * lock; without a wait timeout set explicitly on the options —
     * {@link LockOptions#isWaitTimeoutSet()} — until it leads or is cancelled), stores {@code value} as the leader's value and emits a {@link Leadership}; after
     * each renewal it emits the term again (same token, later deadline). Completes when
     * leadership is lost — before any other candidate can be elected — or resigned
     * ({@link Leadership#resign()}); {@code repeat()} it to campaign again. Cancelling resigns, or
     * leaves the line. Errors: as {@link LockClient#hold}.
     *
     * @param name  the election name (a lock name: non-empty, at most 1024 UTF-8 bytes)
     * @param value what observers see as the leader's value: at most
     *              {@link LockOptions#MAX_PAYLOAD_BYTES} UTF-8 bytes; not null
     * @return the leadership stream
     */
    Flux<Leadership> campaign(String name, String value);

    /**
     * Reads who leads now.
     *
     * @param name the election name
     * @return the current leader, or empty when nobody leads; errors with
     *         {@link io.reactivelocks.LockBackendException} when the store cannot be read
     */
    Mono<Leader> leader(String name);

    /**
     * Streams who leads: first the current leader ({@code Optional.empty()} when nobody does),
     * then each change — a new leader, a new value proclaimed, or nobody. All observers of one
     * name share the client's one state subscription; the stream ends when cancelled or when
     * the client closes, or with a {@link io.reactivelocks.LockBackendException}.
     *
     * @param name the election name
     * @return the leader stream
     */
    Flux<Optional<Leader>> observe(String name);
}
