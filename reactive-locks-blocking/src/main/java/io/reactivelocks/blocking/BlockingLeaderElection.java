package io.reactivelocks.blocking;

import io.reactivelocks.LockBackendException;
import io.reactivelocks.LockLostException;
import io.reactivelocks.election.Leader;
import io.reactivelocks.election.LeaderElection;
import io.reactivelocks.election.Leadership;
import java.util.Objects;
import java.util.Optional;

/**
 * Leader election for blocking code, over a core {@link LeaderElection} (an election is a lock
 * whose payload is the leader's value). Interruption, errors and the refusal on Reactor
 * non-blocking threads are as described on {@link BlockingLocks}.
 *
 * <pre>{@code
 * BlockingLeaderElection elections = BlockingLeaderElection.of(store.elections(LockOptions.defaults()));
 * elections.campaign("scheduler", myAddress, term -> runScheduler(term.token()));   // leads while the body runs
 * }</pre>
 */
public final class BlockingLeaderElection {

    private final LeaderElection elections;

    private BlockingLeaderElection(LeaderElection elections) {
        this.elections = elections;
    }

    /**
     * @param elections the reactive elections
     * @return a blocking view of them; cheap, holds no resources of its own
     * @throws NullPointerException naming {@code elections} when it is null
     */
    public static BlockingLeaderElection of(LeaderElection elections) {
        return new BlockingLeaderElection(Objects.requireNonNull(elections, "elections"));
    }

    /** @return the reactive elections underneath */
    public LeaderElection elections() {
        return elections;
    }

    /**
     * Campaigns and leads while {@code body} runs: waits until this candidate may lead (as
     * {@link LeaderElection#campaign} does), runs {@code body} on the calling thread with the
     * term, and resigns when the body ends, returning its result. If leadership is lost while the
     * body runs, this thread is interrupted and the call then throws {@link LockLostException}
     * (the body's own exception suppressed). To campaign again after a term, call again.
     *
     * @param name  the election name
     * @param value what observers see as the leader's value
     * @param body  the leader's work, on the calling thread
     * @param <T>   the result type
     * @param <E>   the checked exception the body may throw
     * @return the body's result
     * @throws E                     the body's own exception, unchanged (leadership is resigned)
     * @throws InterruptedException  when interrupted while waiting to lead: the candidate leaves the line
     * @throws LockLostException     when leadership was lost before the body ended
     * @throws LockBackendException  when the store fails
     * @throws IllegalStateException when called on a Reactor non-blocking thread
     */
    public <T, E extends Exception> T campaign(String name, String value, GrantBody<? super BlockingLeadership, T, E> body)
            throws E, InterruptedException {
        var campaign = elections.campaign(name, value);
        Objects.requireNonNull(body, "body");
        Await.refuseNonBlocking("BlockingLeaderElection.campaign");
        Await.First<Leadership> first = Await.first(campaign, "campaign");
        try {
            Leadership term = first.value();
            if (term == null) {
                throw new LockLostException(name, 0, "the campaign ended before this candidate led");
            }
            BlockingLease lease = new BlockingLease(term.lease());
            BlockingLeadership leadership = new BlockingLeadership(term, lease);
            return LeaseScope.run(lease, l -> body.apply(leadership), true);
        } finally {
            first.subscription().dispose();
        }
    }

    /**
     * Reads who leads now.
     *
     * @param name the election name
     * @return the current leader, or empty when nobody leads
     * @throws InterruptedException  when interrupted while waiting
     * @throws LockBackendException  when the store cannot be read
     * @throws IllegalStateException when called on a Reactor non-blocking thread
     */
    public Optional<Leader> leader(String name) throws InterruptedException {
        var leader = elections.leader(name);
        Await.refuseNonBlocking("BlockingLeaderElection.leader");
        return Optional.ofNullable(Await.interruptibly(leader, "leader", l -> { }));
    }

    /**
     * Follows who leads (see {@link LeaderElection#observe}): calls {@code body} with the current
     * leader (empty when nobody leads), then with each change, until it returns {@code false} or
     * throws, the thread is interrupted, or the client closes.
     *
     * @param name the election name
     * @param body called with each leader; {@code false} to stop
     * @param <E>  the checked exception the body may throw
     * @throws E                     the body's own exception, unchanged
     * @throws InterruptedException  when interrupted while waiting for a change
     * @throws LockBackendException  when the store fails
     * @throws IllegalStateException when called on a Reactor non-blocking thread
     */
    public <E extends Exception> void observe(String name, StreamBody<? super Optional<Leader>, E> body)
            throws E, InterruptedException {
        var leaders = elections.observe(name);
        Objects.requireNonNull(body, "body");
        Await.refuseNonBlocking("BlockingLeaderElection.observe");
        Await.each(leaders, "observe", false, body, null, null);
    }

    /** @return a description naming the elections */
    @Override
    public String toString() {
        return "BlockingLeaderElection[" + elections + "]";
    }
}
