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
import io.reactivelocks.spi.WaiterLine;
import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * A fair (FIFO) {@link LockBackend} over a {@link LocalLockStore}: waiters are granted in arrival
 * order, like the {@code fairLocks} of a Redis or PostgreSQL session. The held lock is the
 * in-memory mutex's (same tokens, renewal, inspect, payload and events, so a fair client and a
 * {@link LocalLockBackend} on one store exclude each other); waiting owners queue in the store,
 * each with a deadline of {@link WaiterLine#waiterDeadline twice the lease time} that its waiting
 * client refreshes, so an abandoned waiter expires instead of blocking the line. A try never joins
 * the line and is busy while anyone waits; a cancelled waiter leaves the line at once. The waits
 * are timed on the store's scheduler, so a {@code VirtualTimeScheduler} store drives them too.
 *
 * <pre>{@code
 * LockClient jobs = LocalFairLockBackend.client();
 * }</pre>
 */
public final class LocalFairLockBackend implements LockBackend {

    private final LocalLockStore store;
    private final WaiterLine line;

    /** @param store the shared in-memory state */
    public LocalFairLockBackend(LocalLockStore store) {
        this.store = Objects.requireNonNull(store, "store");
        this.line = new WaiterLine(this::ask, store::events, this::release, store.scheduler());
    }

    /** @return a fair lock client over a new private store, with default options */
    public static LockClient client() {
        return LockClient.create(new LocalFairLockBackend(new LocalLockStore()));
    }

    /**
     * @param store   the shared store
     * @param options the client's default options
     * @return a fair lock client over {@code store}
     */
    public static LockClient client(LocalLockStore store, LockOptions options) {
        return LockClient.create(new LocalFairLockBackend(store), Objects.requireNonNull(options, "options"));
    }

    /** @return the store this backend talks to */
    public LocalLockStore store() {
        return store;
    }

    @Override
    public String name() {
        return "local";
    }

    /** One grant attempt; a waiting request that is not granted answers {@link Attempt.Queued}. */
    @Override
    public Mono<Attempt> tryGrant(GrantRequest request) {
        Objects.requireNonNull(request, "request");
        return line.tryGrant(request);
    }

    private Mono<Object> ask(GrantRequest request) {
        return Mono.fromSupplier(() -> {
            long sentAt = request.clock().nanoTime(); // a grant at the end of a wait is timed from its own ask
            Object r = store.fairGrant(request.name(), request.owner(), request.leaseTime(), request.payload(),
                    request.queue(), WaiterLine.waiterDeadline(request.leaseTime()));
            if (r instanceof LocalLockStore.GrantResult g) {
                return g.granted() ? new Attempt.Granted(g.token(), request.leaseTime(), sentAt) : Attempt.busy(g.holder());
            }
            LocalLockStore.Queued q = (LocalLockStore.Queued) r;
            return new WaiterLine.StillQueued(q.hintMs(), q.ahead());
        });
    }

    /** As the mutex's, on the same store. */
    @Override
    public Mono<List<RenewOutcome>> renew(List<RenewRequest> batch) {
        return new LocalLockBackend(store).renew(batch);
    }

    /** Owner-checked release of the owner's hold or its place in the line. */
    @Override
    public Mono<Boolean> release(String name, String owner) {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(owner, "owner");
        return Mono.fromSupplier(() -> store.fairRelease(name, owner));
    }

    @Override
    public Mono<Boolean> updatePayload(HeldLock lock, @Nullable String payload) {
        return Mono.fromSupplier(() -> store.updatePayload(lock.name(), lock.owner(), lock.token(), payload));
    }

    /** The holder, never a waiter. */
    @Override
    public Mono<Holder> inspect(String name) {
        return Mono.fromSupplier(() -> store.inspect(name));
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
