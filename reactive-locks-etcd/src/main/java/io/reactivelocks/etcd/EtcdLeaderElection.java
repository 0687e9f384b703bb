package io.reactivelocks.etcd;

import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.Watch;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.WatchOption;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockOptions;
import io.reactivelocks.spi.LockNames;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Leader election on etcd, on the lock recipe of {@link EtcdLockBackend}: candidates queue by
 * create revision, the first one leads; each candidate waits on its predecessor only.
 *
 * <pre>{@code
 * EtcdLeaderElection elections = EtcdLeaderElection.create(etcd);
 * elections.campaign("scheduler", myAddress)
 *          .switchMap(term -> runSchedulerWhileLeading(term.token()))
 *          .repeat()                        // campaign again after losing leadership
 *          .subscribe();
 * elections.observe("scheduler").subscribe(leader -> route(leader));
 * }</pre>
 *
 * <p>Keys live under {@code <prefix>-election/<base64url(election)>/<owner>} (a range of their
 * own: elections never meet locks of the same name), their value is the candidate's value once
 * it leads. Leadership lasts while the election's session lease is kept alive; it is lost —
 * the campaign stream completes — exactly when a lock's hold stream would. Closing the election
 * object resigns every leadership and revokes its session lease.
 */
public final class EtcdLeaderElection {

    private static final GetOption LOWEST = GetOption.builder().isPrefix(true)
            .withSortField(GetOption.SortTarget.CREATE).withSortOrder(GetOption.SortOrder.ASCEND).withLimit(1).build();

    private final EtcdLockBackend backend;
    private final LockClient locks;

    private EtcdLeaderElection(EtcdLockBackend backend, LockOptions options) {
        this.backend = backend;
        this.locks = LockClient.create(backend, options);
    }

    /**
     * @param client the application's jetcd client (not closed by the election)
     * @return elections with {@link EtcdLockOptions#defaults()} and {@link LockOptions#defaults()}
     */
    public static EtcdLeaderElection create(Client client) {
        return create(client, EtcdLockOptions.defaults(), LockOptions.defaults());
    }

    /**
     * @param client      the application's jetcd client (not closed by the election)
     * @param etcdOptions prefix (elections use {@code <prefix>-election}) and session settings; an
     *                    unset session TTL becomes {@code options.leaseTime()}
     * @param options     timing of campaigns (wait timeout, request timeout, drift)
     * @return elections over a backend of their own (their own session lease)
     */
    public static EtcdLeaderElection create(Client client, EtcdLockOptions etcdOptions, LockOptions options) {
        Objects.requireNonNull(client, "client");
        Objects.requireNonNull(etcdOptions, "etcdOptions");
        Objects.requireNonNull(options, "options");
        EtcdLockOptions.Builder b = etcdOptions.mutate().prefix(etcdOptions.prefix() + "-election");
        if (!etcdOptions.isSessionTtlSet()) {
            b.sessionTtl(options.leaseTime().compareTo(Duration.ofSeconds(1)) < 0 ? Duration.ofSeconds(1) : options.leaseTime());
        }
        return new EtcdLeaderElection(EtcdLockBackend.create(client, b.build()), options);
    }

    /**
     * Campaigns: waits (on its predecessor only) until this candidate is first in line, then
     * publishes {@code value} as the leader's value and emits a {@link Leadership}; after each
     * session renewal it emits an updated one (same token, later deadline). Completes when
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
     *         value yet)
     */
    public Mono<Leader> leader(String election) {
        LockNames.check(election, "election");
        return Mono.fromFuture(() -> backend.kv().get(backend.keys().lock(election), LOWEST))
                .onErrorMap(e -> EtcdErrors.map(election, "leader read", e))
                .flatMap(r -> r.getKvs().isEmpty() ? Mono.empty() : Mono.justOrEmpty(leaderOf(election, r.getKvs().get(0))));
    }

    /**
     * Streams who leads: first the current leader ({@code Optional.empty()} when nobody does),
     * then each change (a new leader, or nobody). Backed by a watch on the election's keys; ends
     * only when cancelled, or with a {@link io.reactivelocks.LockBackendException} when the watch
     * fails permanently.
     *
     * @param election the election name
     * @return the leader stream
     */
    public Flux<Optional<Leader>> observe(String election) {
        LockNames.check(election, "election");
        Flux<Boolean> ticks = Flux.create(sink -> {
            WatchOption option = WatchOption.builder().isPrefix(true).withCreateNotify(true).build();
            Watch.Watcher w = backend.client().getWatchClient().watch(backend.keys().lock(election), option, Watch.listener(
                    response -> sink.next(Boolean.TRUE),
                    error -> {
                        if (!EtcdErrors.isTransient(error)) {
                            sink.error(EtcdErrors.map(election, "watch", error));
                        }
                    },
                    sink::complete));
            sink.onDispose(w::close);
        });
        // every watch answer (the first is the creation: nothing is missed after it) re-reads the leader
        return ticks.switchMap(t -> leader(election).map(Optional::of).defaultIfEmpty(Optional.empty()))
                .distinctUntilChanged();
    }

    /**
     * Resigns every leadership and leaves every line of this object, revokes its session lease.
     * Idempotent.
     *
     * @return a {@code Mono} that closes on subscribe
     */
    public Mono<Void> close() {
        return locks.close();
    }

    /** A key whose value is still its owner id has not published its value yet. */
    private static Optional<Leader> leaderOf(String election, KeyValue kv) {
        String key = EtcdKeys.string(kv.getKey());
        String owner = key.substring(key.lastIndexOf('/') + 1);
        String value = EtcdKeys.string(kv.getValue());
        if (value.equals(owner) && kv.getVersion() == 1) {
            return Optional.empty();
        }
        return Optional.of(new Leader(election, value, kv.getCreateRevision()));
    }

    EtcdLockBackend backend() {
        return backend;
    }
}
