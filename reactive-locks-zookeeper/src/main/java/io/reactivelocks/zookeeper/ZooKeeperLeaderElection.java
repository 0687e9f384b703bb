package io.reactivelocks.zookeeper;

import io.reactivelocks.LockClient;
import io.reactivelocks.LockOptions;
import io.reactivelocks.spi.LockNames;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.curator.framework.CuratorFramework;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Leader election on ZooKeeper, on the lock recipe of {@link ZooKeeperLockBackend}: candidates
 * queue as ephemeral-sequential nodes, the lowest leads; each candidate watches its predecessor
 * only.
 *
 * <pre>{@code
 * ZooKeeperLeaderElection elections = ZooKeeperLeaderElection.create(curator);
 * elections.campaign("scheduler", myAddress)
 *          .switchMap(term -> runSchedulerWhileLeading(term.token()))
 *          .repeat()                        // campaign again after losing leadership
 *          .subscribe();
 * elections.observe("scheduler").subscribe(leader -> route(leader));
 * }</pre>
 *
 * <p>Nodes live under {@code <root>-election/n-<base64url(election)>/} (a tree of their own:
 * elections never meet locks of the same name); a candidate's node holds its owner id until it
 * leads, then the value it campaigned with. Leadership lasts while the Curator client's session
 * is confirmed; it is lost — the campaign stream completes — exactly when a lock's hold stream
 * would. Closing the election object resigns every leadership and leaves every line.
 */
public final class ZooKeeperLeaderElection {

    private final ZooKeeperLockBackend backend;
    private final LockClient locks;

    private ZooKeeperLeaderElection(ZooKeeperLockBackend backend, LockOptions options) {
        this.backend = backend;
        this.locks = LockClient.create(backend, options);
    }

    /**
     * @param client the application's Curator client (started here if it was not yet; never closed by the election)
     * @return elections with {@link ZooKeeperLockOptions#defaults()} and {@link LockOptions#defaults()}
     */
    public static ZooKeeperLeaderElection create(CuratorFramework client) {
        return create(client, ZooKeeperLockOptions.defaults(), LockOptions.defaults());
    }

    /**
     * @param client    the application's Curator client (started here if it was not yet; never closed by the election)
     * @param zkOptions root (elections use {@code <root>-election}), ACL and confirmation settings
     * @param options   timing of campaigns (wait timeout, request timeout, drift)
     * @return elections over a backend of their own
     */
    public static ZooKeeperLeaderElection create(CuratorFramework client, ZooKeeperLockOptions zkOptions, LockOptions options) {
        Objects.requireNonNull(client, "client");
        Objects.requireNonNull(zkOptions, "zkOptions");
        Objects.requireNonNull(options, "options");
        ZooKeeperLockOptions electionOptions = zkOptions.mutate().root(zkOptions.root() + "-election").build();
        return new ZooKeeperLeaderElection(ZooKeeperLockBackend.create(ZooKeeperLocks.started(client), electionOptions), options);
    }

    static ZooKeeperLeaderElection over(ZooKeeperLockBackend backend, LockOptions options) {
        return new ZooKeeperLeaderElection(backend, options);
    }

    /**
     * Campaigns: waits (on its predecessor only) until this candidate is first in line, then
     * publishes {@code value} as the leader's value and emits a {@link Leadership}; after each
     * session confirmation it emits an updated one (same token, later deadline). Completes when
     * leadership is lost — before any other candidate can be elected — or after
     * {@link Leadership#resign()}; {@code repeat()} it to campaign again. Cancelling resigns (or
     * leaves the line). Errors: as {@link LockClient#hold}.
     *
     * @param election the election name (a lock name: non-empty, at most 1024 UTF-8 bytes)
     * @param value    what observers see as the leader's value; not null
     * @return the leadership stream
     */
    public Flux<Leadership> campaign(String election, String value) {
        LockNames.check(election, "election");
        Objects.requireNonNull(value, "value");
        return Flux.defer(() -> {
            AtomicBoolean proclaimed = new AtomicBoolean();
            return locks.hold(election).concatMap(lease -> {
                Leadership term = new Leadership(election, value, lease);
                if (proclaimed.compareAndSet(false, true)) {
                    return backend.proclaim(election, lease.owner(), lease.token(), value).thenReturn(term);
                }
                return Mono.just(term);
            });
        });
    }

    /**
     * @param leadership a leadership of this object's campaigns
     * @return completes when it is given up (see {@link Leadership#resign()})
     */
    public Mono<Void> resign(Leadership leadership) {
        Objects.requireNonNull(leadership, "leadership");
        return leadership.resign();
    }

    /**
     * @param election the election name
     * @return the current leader, or empty when nobody leads (or the leader has not published its
     *         value yet); a {@link io.reactivelocks.LockBackendException} when ZooKeeper fails
     */
    public Mono<Leader> leader(String election) {
        LockNames.check(election, "election");
        return Mono.defer(() -> backend.readLeader(election, null)).flatMap(r -> Mono.justOrEmpty(r.leader()));
    }

    /**
     * Streams who leads: first the current leader ({@code Optional.empty()} when nobody does),
     * then each change (a new leader, its published value, or nobody). Backed by a children
     * watch on the election and a data watch on the leader's node; ends only when cancelled
     * (which removes the watches), when the election object closes (completes), or with a
     * {@link io.reactivelocks.LockBackendException}.
     *
     * @param election the election name
     * @return the leader stream
     */
    public Flux<Optional<Leader>> observe(String election) {
        LockNames.check(election, "election");
        // every children event (Subscribed first: nothing is missed after it) re-reads the leader
        return backend.events(election)
                .switchMap(e -> backend.leaderUpdates(election))
                .distinctUntilChanged();
    }

    /**
     * Resigns every leadership and leaves every line of this object. Idempotent.
     *
     * @return a {@code Mono} that closes on subscribe
     */
    public Mono<Void> close() {
        return locks.close();
    }

    ZooKeeperLockBackend backend() {
        return backend;
    }
}
