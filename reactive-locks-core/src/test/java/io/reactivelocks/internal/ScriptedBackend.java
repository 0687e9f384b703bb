package io.reactivelocks.internal;

import io.reactivelocks.spi.Attempt;
import io.reactivelocks.spi.GrantRequest;
import io.reactivelocks.spi.Holder;
import io.reactivelocks.spi.LockBackend;
import io.reactivelocks.spi.LockEvent;
import io.reactivelocks.spi.RenewOutcome;
import io.reactivelocks.spi.RenewRequest;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Function;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * A backend for engine unit tests that answers what each test scripts and records every call.
 * The engine's own behaviour (timers, batching, clean-up) is what these tests check; the store's
 * behaviour is tested against real stores by the contract suite.
 */
final class ScriptedBackend implements LockBackend {

    final List<GrantRequest> grants = new CopyOnWriteArrayList<>();
    final List<List<RenewRequest>> renewals = new CopyOnWriteArrayList<>();
    final List<String> releasedOwners = new CopyOnWriteArrayList<>();

    volatile Function<GrantRequest, Mono<Attempt>> onGrant = r -> Mono.just(Attempt.granted(grants.size(), r.leaseTime()));
    volatile Function<List<RenewRequest>, Mono<List<RenewOutcome>>> onRenew =
            b -> Mono.just(b.stream().map(r -> RenewOutcome.renewed(r.leaseTime())).toList());
    volatile Function<String, Mono<Holder>> onInspect = n -> Mono.empty();
    volatile Flux<LockEvent> events = Flux.never();
    /** The waiters' stream ({@link #wakeUps}); {@code null}: {@link #events} */
    volatile Flux<LockEvent> wakeUps;
    /** What {@link #wakeUpsOmitGrants()} answers */
    volatile boolean omitGrants;
    volatile Function<String, Mono<Boolean>> onRelease = owner -> Mono.just(true);
    volatile boolean closed;
    final List<String> releasedAfterClose = new CopyOnWriteArrayList<>();

    @Override
    public String name() {
        return "scripted";
    }

    @Override
    public Mono<Attempt> tryGrant(GrantRequest request) {
        return Mono.defer(() -> {
            grants.add(request);
            return onGrant.apply(request);
        });
    }

    @Override
    public Mono<List<RenewOutcome>> renew(List<RenewRequest> batch) {
        return Mono.defer(() -> {
            renewals.add(batch);
            return onRenew.apply(batch);
        });
    }

    @Override
    public Mono<Boolean> release(String name, String owner) {
        return Mono.defer(() -> {
            releasedOwners.add(owner);
            if (closed) {
                releasedAfterClose.add(owner);
            }
            return onRelease.apply(owner);
        });
    }

    @Override
    public Mono<Holder> inspect(String name) {
        return Mono.defer(() -> onInspect.apply(name));
    }

    @Override
    public Flux<LockEvent> events(String name) {
        return events;
    }

    @Override
    public Flux<LockEvent> wakeUps(String name) {
        Flux<LockEvent> w = wakeUps;
        return w != null ? w : events;
    }

    @Override
    public boolean wakeUpsOmitGrants() {
        return omitGrants;
    }

    @Override
    public Mono<Void> close() {
        return Mono.fromRunnable(() -> closed = true);
    }
}
