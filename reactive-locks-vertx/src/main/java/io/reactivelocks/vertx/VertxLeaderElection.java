package io.reactivelocks.vertx;

import io.reactivelocks.election.Leader;
import io.reactivelocks.election.LeaderElection;
import io.reactivelocks.election.Leadership;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.util.Objects;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * The {@link LeaderElection} API for Vert.x: campaigns and observations as {@link LockStream}s,
 * reads and writes as futures, all delivered on the caller's context (the current one when the
 * method is called, or the one bound with {@link #on(Context)}), over the election's own engine.
 *
 * <pre>{@code
 * VertxLeaderElection elections = VertxLeaderElection.create(vertx, LeaderElection.create(locks));
 * LockStream<Leadership> term = elections.campaign("scheduler", myAddress)
 *         .handler(leadership -> startScheduling(leadership.token()))   // elected (and each renewal)
 *         .endHandler(lost -> stopScheduling());                         // leadership lost
 * term.cancel();                                                         // resign, or leave the line
 * }</pre>
 */
public final class VertxLeaderElection {

    private final LeaderElection elections;
    private final CallerContext context;

    VertxLeaderElection(LeaderElection elections, CallerContext context) {
        this.elections = elections;
        this.context = context;
    }

    /**
     * @param vertx     the Vert.x instance whose contexts receive the results
     * @param elections the elections to use
     * @return the Vert.x view of {@code elections}
     * @throws NullPointerException naming the argument when one is null
     */
    public static VertxLeaderElection create(Vertx vertx, LeaderElection elections) {
        Objects.requireNonNull(elections, "elections");
        return new VertxLeaderElection(elections, new CallerContext(vertx, null));
    }

    /**
     * @param context the context that receives every result of the returned view; it must belong
     *                to this object's Vert.x
     * @return a view of the same elections bound to {@code context}
     * @throws NullPointerException     naming {@code context} when it is null
     * @throws IllegalArgumentException when {@code context} belongs to another Vert.x instance
     */
    public VertxLeaderElection on(Context context) {
        return new VertxLeaderElection(elections, this.context.on(context));
    }

    /** @return the elections behind this view (for their Reactor API) */
    public LeaderElection elections() {
        return elections;
    }

    /**
     * Campaigns, as {@link LeaderElection#campaign(String, String)}: setting a handler joins the
     * line; the handler receives the {@link Leadership} when elected and again after each renewal;
     * the stream ends when leadership is lost (before anyone else can be elected) or resigned.
     * {@link LockStream#cancel()} resigns, or leaves the line.
     *
     * @param name  the election name
     * @param value what observers see as the leader's value
     * @return the leadership stream on the caller's context
     */
    public LockStream<Leadership> campaign(String name, String value) {
        return ContextBridge.toStream(elections.campaign(name, value), context.get(), Leadership::resign);
    }

    /**
     * Reads who leads now.
     *
     * @param name the election name
     * @return a future of the leader, or of {@code null} when nobody leads
     */
    public Future<@Nullable Leader> leader(String name) {
        return context.future(elections.leader(name));
    }

    /**
     * Streams who leads, as {@link LeaderElection#observe(String)}: the current leader first
     * ({@code Optional.empty()} for nobody), then each change.
     *
     * @param name the election name
     * @return the leader stream on the caller's context
     */
    public LockStream<Optional<Leader>> observe(String name) {
        return context.stream(elections.observe(name));
    }

    /**
     * Publishes a new value while leading, as {@link Leadership#proclaim(String)}.
     *
     * @param leadership the current term
     * @param value      the new value
     * @return a future completed when the store confirmed; failed with
     *         {@link io.reactivelocks.LockLostException} when the term is over
     * @throws NullPointerException naming the argument when one is null
     */
    public Future<Void> proclaim(Leadership leadership, String value) {
        Objects.requireNonNull(leadership, "leadership");
        return context.future(leadership.proclaim(value));
    }

    /**
     * Gives leadership up, as {@link Leadership#resign()}; the campaign stream ends.
     *
     * @param leadership the current term
     * @return a future completed when the store confirmed
     * @throws NullPointerException naming {@code leadership} when it is null
     */
    public Future<Void> resign(Leadership leadership) {
        Objects.requireNonNull(leadership, "leadership");
        return context.future(leadership.resign());
    }

    /**
     * Completes when the term is lost, as {@link Leadership#lost()} (not when it is resigned: then
     * it never completes).
     *
     * @param leadership the current term
     * @return a future completed on the caller's context when leadership is lost
     * @throws NullPointerException naming {@code leadership} when it is null
     */
    public Future<Void> lost(Leadership leadership) {
        Objects.requireNonNull(leadership, "leadership");
        return context.future(leadership.lost());
    }
}
