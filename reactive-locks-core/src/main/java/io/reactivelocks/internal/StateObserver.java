package io.reactivelocks.internal;

import io.reactivelocks.LockException;
import io.reactivelocks.LockState;
import io.reactivelocks.spi.BackendErrors;
import io.reactivelocks.spi.Holder;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import reactor.core.Exceptions;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

/**
 * {@code observe(name)}: the current state, then each change, shared per name (one upstream per
 * name per client, ref-counted). A change is seen through the store's events; a holder that
 * expires without an event is caught by re-reading the state when its TTL runs out.
 */
final class StateObserver {

    private static final Object FREE = new Object();

    private final DefaultLockClient client;
    private final ConcurrentHashMap<String, Flux<LockState>> shared = new ConcurrentHashMap<>();
    private final Sinks.Empty<Void> closed = Sinks.empty();

    StateObserver(DefaultLockClient client) {
        this.client = client;
    }

    Flux<LockState> observe(String name) {
        return Flux.defer(() -> shared.computeIfAbsent(name, this::build));
    }

    void close() {
        closed.tryEmitEmpty();
    }

    private Flux<LockState> build(String name) {
        @SuppressWarnings("unchecked")
        Flux<LockState>[] self = new Flux[1];
        // every event (Subscribed included: it closes the gap before the subscription) re-reads the state
        Flux<Object> triggers = Flux.<Object>just(name).concatWith(client.hub().events(name));
        Flux<LockState> states = triggers
                .switchMap(t -> inspect(name).expand(s -> s instanceof LockState.Held h
                        ? Mono.delay(untilExpiry(h), client.defaultScheduler()).then(inspect(name))
                        : Mono.empty()))
                .onErrorMap(StateObserver::oneError)
                .distinctUntilChanged(StateObserver::identity)
                .takeUntilOther(closed.asMono())
                .doFinally(s -> shared.remove(name, self[0]));
        self[0] = states.replay(1).refCount();
        return self[0];
    }

    /**
     * One error for a stream that re-reads on each trigger ({@code switchMap}): when the triggers and
     * the read in progress fail at once, Reactor reports both as one composite; the stream ends with
     * the first of them that is a {@link LockException} (the typed error its subscriber is promised),
     * else the first.
     *
     * @param e what the stream signalled
     * @return {@code e}, or one of the errors it combines
     */
    static Throwable oneError(Throwable e) {
        if (!Exceptions.isMultiple(e)) {
            return e;
        }
        List<Throwable> all = Exceptions.unwrapMultiple(e);
        for (Throwable t : all) {
            if (t instanceof LockException) {
                return t;
            }
        }
        return all.isEmpty() ? e : all.get(0);
    }

    Mono<LockState> inspect(String name) {
        return Mono.defer(() -> {
            long sentAt = client.clock().nanoTime();
            return client.backend().inspect(name)
                    .transform(m -> client.withinRequestTimeout(m, client.options()))
                    .onErrorMap(e -> BackendErrors.map(client.backend().name(), name, "inspect", e))
                    .map(h -> (LockState) held(name, h, sentAt))
                    .defaultIfEmpty(new LockState.Free(name));
        });
    }

    private static LockState.Held held(String name, Holder h, long sentAt) {
        long until = h.remaining() == null ? Long.MAX_VALUE : sentAt + h.remaining().toNanos();
        return new LockState.Held(name, h.owner(), h.token(), until, h.payload());
    }

    private Duration untilExpiry(LockState.Held h) {
        if (h.validUntilNanos() == Long.MAX_VALUE) {
            return Duration.ofNanos(Long.MAX_VALUE); // session stores report release through events
        }
        long d = h.validUntilNanos() - client.clock().nanoTime() + TimeUnit.MILLISECONDS.toNanos(1);
        return Duration.ofNanos(Math.max(TimeUnit.MILLISECONDS.toNanos(1), d));
    }

    private static Object identity(LockState s) {
        return s instanceof LockState.Held h ? java.util.Arrays.asList(h.owner(), h.token(), h.payload()) : FREE;
    }
}
