package io.reactivelocks.local;

import io.reactivelocks.LockClient;
import io.reactivelocks.LockOptions;
import io.reactivelocks.spi.Attempt;
import io.reactivelocks.spi.GrantRequest;
import io.reactivelocks.spi.HeldLock;
import io.reactivelocks.spi.Holder;
import io.reactivelocks.spi.LockBackend;
import io.reactivelocks.spi.LockEvent;
import io.reactivelocks.spi.RenewOutcome;
import io.reactivelocks.spi.RenewRequest;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * A {@link LockBackend} over a {@link LocalLockStore}: one instance per simulated client, any
 * number sharing a store. Answers synchronously on the subscribing thread.
 *
 * <pre>{@code
 * LockClient locks = LocalLockBackend.client();
 * }</pre>
 */
public final class LocalLockBackend implements LockBackend {

    private final LocalLockStore store;

    /** @param store the shared in-memory state */
    public LocalLockBackend(LocalLockStore store) {
        this.store = Objects.requireNonNull(store, "store");
    }

    /** @return a client over a new private store, with default options */
    public static LockClient client() {
        return LockClient.create(new LocalLockBackend(new LocalLockStore()));
    }

    /**
     * @param store   the shared store
     * @param options the client's default options
     * @return a client over {@code store}
     */
    public static LockClient client(LocalLockStore store, LockOptions options) {
        return LockClient.create(new LocalLockBackend(store), options);
    }

    /** @return the store this backend talks to */
    public LocalLockStore store() {
        return store;
    }

    @Override
    public String name() {
        return "local";
    }

    @Override
    public Mono<Attempt> tryGrant(GrantRequest request) {
        return Mono.fromSupplier(() -> {
            LocalLockStore.GrantResult r = store.grant(request.name(), request.owner(), request.leaseTime(), request.payload());
            return r.granted() ? Attempt.granted(r.token(), request.leaseTime()) : Attempt.busy(r.holder());
        });
    }

    @Override
    public Mono<List<RenewOutcome>> renew(List<RenewRequest> batch) {
        return Mono.fromSupplier(() -> {
            List<RenewOutcome> out = new ArrayList<>(batch.size());
            for (RenewRequest r : batch) {
                boolean ok = store.renew(r.lock().name(), r.lock().owner(), r.lock().token(), r.leaseTime());
                out.add(ok ? RenewOutcome.renewed(r.leaseTime()) : RenewOutcome.notHeld());
            }
            return out;
        });
    }

    @Override
    public Mono<Boolean> release(String name, String owner) {
        return Mono.fromSupplier(() -> store.release(name, owner));
    }

    @Override
    public Mono<Boolean> updatePayload(HeldLock lock, String payload) {
        return Mono.fromSupplier(() -> store.updatePayload(lock.name(), lock.owner(), lock.token(), payload));
    }

    @Override
    public Mono<Holder> inspect(String name) {
        return Mono.fromSupplier(() -> store.inspect(name));
    }

    @Override
    public Mono<Void> revoke(String name, String owner, String reason) {
        return Mono.fromRunnable(() -> store.revoke(name, owner, reason));
    }

    @Override
    public Mono<Integer> waiting(String name) {
        return Mono.fromSupplier(() -> store.queued(name));
    }

    @Override
    public Flux<LockEvent> events(String name) {
        return store.events(name);
    }

    @Override
    public Mono<Void> close() {
        return Mono.empty();
    }
}
