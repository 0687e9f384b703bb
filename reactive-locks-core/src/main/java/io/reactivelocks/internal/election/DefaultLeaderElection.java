package io.reactivelocks.internal.election;

import io.reactivelocks.LockClient;
import io.reactivelocks.LockNames;
import io.reactivelocks.LockOptions;
import io.reactivelocks.LockState;
import io.reactivelocks.election.Leader;
import io.reactivelocks.election.LeaderElection;
import io.reactivelocks.election.Leadership;
import java.util.Objects;
import java.util.Optional;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * {@link LeaderElection} over a {@link LockClient}: a campaign is a hold of the election's lock
 * with the candidate's value as payload; the leader is the lock's holder. Not API; create with
 * {@link LeaderElection#create}.
 */
public final class DefaultLeaderElection implements LeaderElection {

    private final LockClient locks;
    private final LockOptions options; // null: the client's defaults, read per campaign

    /**
     * @param locks   the client carrying the elections
     * @param options campaign options, or {@code null} for the client's defaults
     */
    public DefaultLeaderElection(LockClient locks, @Nullable LockOptions options) {
        this.locks = Objects.requireNonNull(locks, "locks");
        this.options = options;
    }

    @Override
    public Flux<Leadership> campaign(String name, String value) {
        LockNames.check(name, "name");
        LockOptions.checkPayload(value, "value");
        LockOptions base = options != null ? options : locks.options();
        if (!base.isWaitTimeoutSet()) {
            base = base.mutate().waitTimeout(null).build(); // a candidate campaigns until it leads unless told otherwise
        }
        LockOptions withValue = base.withPayload(value);
        return Flux.defer(() -> locks.hold(name, withValue)).map(lease -> new Leadership(name, lease));
    }

    @Override
    public Mono<Leader> leader(String name) {
        LockNames.check(name, "name");
        return locks.inspect(name).flatMap(s -> Mono.justOrEmpty(leaderOf(s)));
    }

    @Override
    public Flux<Optional<Leader>> observe(String name) {
        LockNames.check(name, "name");
        return locks.observe(name).map(DefaultLeaderElection::leaderOf).distinctUntilChanged();
    }

    private static Optional<Leader> leaderOf(LockState s) {
        return s instanceof LockState.Held h
                ? Optional.of(new Leader(h.name(), h.payload(), h.owner(), h.token()))
                : Optional.empty();
    }

    @Override
    public String toString() {
        return "LeaderElection{" + locks + "}";
    }
}
