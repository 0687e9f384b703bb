package io.reactivelocks.etcd;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.Watch;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.DeleteOption;
import io.etcd.jetcd.options.WatchOption;
import io.etcd.jetcd.watch.WatchEvent;
import io.reactivelocks.spi.LockEvent;
import io.reactivelocks.spi.RenewOutcome;
import io.reactivelocks.spi.RenewRequest;
import io.etcd.jetcd.options.GetOption;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.function.ToLongFunction;
import org.jspecify.annotations.Nullable;
import reactor.core.Disposable;
import reactor.core.Disposables;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * Keys on leases of their own, one per owner and name, {@code <prefix>/<base64url(name)>/<id>-<slot>}:
 * the layout of the semaphore's permits and of the read-write lock's requests. {@code <id>} is a
 * random id of this store instance, {@code <slot>} the lowest slot of the name not reserved by
 * another owner of this store ({@link LockSlots}): one name acquired and released over and over
 * reuses one key instead of leaving a deleted key behind each time (etcd keeps each in its index
 * until a compaction, and every read of the range visits them). The owner is the first line of the
 * value ({@link EtcdKeys#value}), the store's payload the rest. Each key sits on a lease of its own,
 * so every delete of it is a revoke of that lease, which cannot touch the next owner's key in the
 * same slot (put on another lease); a slot is freed only once its key is known gone — its lease's
 * revoke confirmed, or its TTL passed — with no put transaction of its owner left in the driver, and
 * a retried put of an owner finds its own key (the value names the owner) in the same slot. What both stores do
 * the same way on it lives here — the key of an owner, renewal and release found by a read, the
 * wait for a deletion, the name's change stream and its revocation requests; each store says how a
 * key's token is read. Every method is lazy and never blocks; errors are the client's (the stores
 * map them).
 *
 * <p>The key {@code <prefix>/<base64url(name)>} — the name's segment with no owner after it — is the
 * name's revocation key ({@link #revocation}), as the lock's ({@link EtcdRevocations}): it lies outside
 * the range {@code <prefix>/<base64url(name)>/} that every read of the grants (grant decisions,
 * counts, holders, renewal and release by a read, the waits and the change stream's range watch)
 * covers, and the admin's listing of names skips a key with no owner segment.
 */
final class LeasedKeys {

    private static final SecureRandom RANDOM = new SecureRandom();

    /** Timers of {@link #freeWhenGone}, cancelled by {@link #close()}. */
    private final Disposable.Composite pendingFrees = Disposables.composite();
    private final Client client;
    private final String prefix;
    /** This store instance's random id: the first part of its keys' last segment. */
    private final String id;
    private final LockSlots slots = new LockSlots();
    // guarded by this: put transactions of each place still in the driver, and what to do once the last settled
    private final Map<LockSlots.Place, Integer> inFlight = new IdentityHashMap<>();
    private final Map<LockSlots.Place, Boolean> goneWhenSettled = new IdentityHashMap<>();

    /**
     * @param client the jetcd client (not closed here)
     * @param prefix the key prefix of the concept (the lock prefix + {@code "-semaphore"} or {@code "-rw"})
     */
    LeasedKeys(Client client, String prefix) {
        this.client = Objects.requireNonNull(client, "client");
        this.prefix = EtcdKeys.checkPrefix(prefix);
        byte[] random = new byte[9];
        RANDOM.nextBytes(random);
        this.id = Base64.getUrlEncoder().withoutPadding().encodeToString(random);
    }

    /** @return this store instance's random id (12 base64url characters) */
    String id() {
        return id;
    }

    String prefix() {
        return prefix;
    }

    /** @return {@code <prefix>/<base64url(name)>/}: the range of one name's keys */
    ByteSequence range(String name) {
        return EtcdKeys.bytes(prefix + "/" + EtcdKeys.encode(name) + "/");
    }

    /** @return the owner's place under the name, reserving the lowest free slot of this store when it has none */
    LockSlots.Place place(String name, String owner) {
        return slots.place(name, owner);
    }

    /** @return the owner's place under the name, or null when it has none */
    LockSlots.@Nullable Place find(String name, String owner) {
        return slots.find(name, owner);
    }

    /** @return {@code <prefix>/<base64url(name)>/<id>-<slot>}: the key of a place */
    ByteSequence key(LockSlots.Place place) {
        return EtcdKeys.bytes(prefix + "/" + EtcdKeys.encode(place.name) + "/" + id + "-" + place.slot);
    }

    /** @return the key of the owner's place, or null when this store gave it none */
    @Nullable ByteSequence key(String name, String owner) {
        LockSlots.Place p = slots.find(name, owner);
        return p == null ? null : key(p);
    }

    /** @return how many owners hold a slot (tests) */
    int slotsInUse() {
        return slots.size();
    }

    /**
     * Follows a put transaction of the places' owners to its real end in the driver, whatever its
     * caller does (a timeout cancels only the caller's view): a place is not freed while one is in
     * flight; a place found gone meanwhile ({@link #gone}) has {@code undo} run once the last settled
     * (it revokes what the transaction may have put), and is freed then.
     *
     * @return a view of the transaction for the caller; cancelling it leaves the transaction alone
     */
    <T> CompletableFuture<T> tracked(List<LockSlots.Place> places, Supplier<CompletableFuture<T>> send,
            Supplier<Mono<Boolean>> undo) {
        synchronized (this) {
            places.forEach(p -> inFlight.merge(p, 1, Integer::sum));
        }
        CompletableFuture<T> txn;
        try {
            txn = send.get();
        } catch (RuntimeException e) {
            settled(places, undo);
            throw e;
        }
        return txn.whenComplete((r, e) -> settled(places, undo)).thenApply(Function.identity());
    }

    private void settled(List<LockSlots.Place> places, Supplier<Mono<Boolean>> undo) {
        List<LockSlots.Place> free = new ArrayList<>();
        synchronized (this) {
            for (LockSlots.Place p : places) {
                if (inFlight.computeIfPresent(p, (k, n) -> n == 1 ? null : n - 1) == null && goneWhenSettled.remove(p) != null) {
                    free.add(p);
                }
            }
        }
        if (!free.isEmpty()) {
            undo.get().subscribe(confirmed -> free.forEach(p -> freeWhenGone(p, confirmed, 0)));
        }
    }

    /**
     * The place's key is known gone (its lease's revoke confirmed, or a read found no key of the
     * owner in it): its slot is freed, once no put transaction of its owner is left in the driver.
     */
    void gone(LockSlots.Place place) {
        synchronized (this) {
            if (inFlight.containsKey(place)) {
                goneWhenSettled.put(place, Boolean.TRUE);
                return;
            }
        }
        slots.free(place);
    }

    /**
     * Frees the place when the revoke of its key's lease was confirmed, else once twice that lease's
     * TTL passed, and at least two minutes (an unrevoked lease runs out by then, and its key with it).
     */
    void freeWhenGone(LockSlots.Place place, boolean confirmed, long ttlSeconds) {
        if (confirmed) {
            gone(place);
        } else {
            Disposable.Swap timer = Disposables.swap();
            pendingFrees.add(timer);
            timer.update(Mono.delay(Duration.ofSeconds(2 * Math.max(ttlSeconds, 60)), Schedulers.parallel())
                    .subscribe(x -> {
                        pendingFrees.remove(timer);
                        gone(place);
                    }, e -> { }));
        }
    }

    /** Cancels the timers that would free places later (the store closing: its places go with it). */
    void close() {
        pendingFrees.dispose();
    }

    /**
     * @return the owner's key: the key of its place in this store when it has one, else the key of
     *         the name whose value names the owner (one read either way); empty when there is none
     */
    Mono<KeyValue> find(String name, String owner, boolean any) {
        LockSlots.Place p = slots.find(name, owner);
        ByteSequence k = p != null ? key(p) : range(name);
        GetOption option = p != null ? GetOption.DEFAULT : GetOption.builder().isPrefix(true).build();
        return Mono.fromFuture(() -> client.getKVClient().get(k, option)).flatMap(r -> {
            for (KeyValue kv : r.getKvs()) {
                if (owner.equals(ownerOf(kv))) {
                    return Mono.just(kv);
                }
            }
            if (p != null && any) { // no key of the owner in its slot
                gone(p);
            }
            return Mono.empty();
        });
    }

    /**
     * @return {@code <prefix>/<base64url(name)>}: the key of the name's revocation requests, outside
     *         {@link #range} (no read of the grants sees it)
     */
    ByteSequence revocation(String name) {
        return EtcdKeys.bytes(prefix + "/" + EtcdKeys.encode(name));
    }

    /**
     * A revocation request to the grant of {@code owner}: a put of the name's revocation key on a
     * short lease revoked right after ({@link EtcdRevocations#request}), seen by the revocation watch of
     * every {@link #events} stream of the name; nothing is left.
     *
     * @param name   the name
     * @param owner  the grant asked
     * @param reason why
     * @return completes once the request was put
     * @throws NullPointerException when {@code owner} or {@code reason} is null
     */
    Mono<Void> revoke(String name, String owner, String reason) {
        Objects.requireNonNull(owner, "owner");
        Objects.requireNonNull(reason, "reason");
        return Mono.defer(() -> EtcdRevocations.request(client, revocation(name), owner, reason));
    }

    /** @return the owner of a key: the first line of its value */
    static String ownerOf(KeyValue kv) {
        return EtcdKeys.ownerOf(kv.getValue());
    }

    /** @return what a key's value holds after the owner's line (empty when nothing) */
    static String payloadOf(ByteSequence value) {
        String v = EtcdKeys.string(value);
        int nl = v.indexOf('\n');
        return nl < 0 ? "" : v.substring(nl + 1);
    }

    /** @return revokes the lease: true once etcd confirmed (or knows no such lease), false on an error */
    Mono<Boolean> revokeConfirmed(long lease) {
        return Mono.fromFuture(() -> client.getLeaseClient().revoke(lease)).thenReturn(true)
                .onErrorResume(EtcdErrors::isLeaseNotFound, e -> Mono.just(true))
                .onErrorResume(e -> Mono.just(false));
    }

    /** @return a {@code keepAliveOnce} of the lease: the TTL left, {@code <= 0} when it is gone */
    Mono<Long> keepAlive(long lease) {
        return Mono.fromFuture(() -> client.getLeaseClient().keepAliveOnce(lease)).map(r -> r.getTTL());
    }

    /** @return revokes the lease (which deletes its keys), errors ignored: an unrevoked lease runs out by its TTL */
    Mono<Void> revoke(long lease) {
        return Mono.fromFuture(() -> client.getLeaseClient().revoke(lease)).onErrorResume(e -> Mono.empty()).then();
    }

    /**
     * Renewal found by a read: the owner's key, when its token is the grant's, has its lease kept alive.
     *
     * @param r     the renewal
     * @param token how a key's token is read
     * @return renewed for at most the TTL etcd still gives the lease, or not held
     */
    Mono<RenewOutcome> renew(RenewRequest r, ToLongFunction<KeyValue> token) {
        return find(r.lock().name(), r.lock().owner(), false)
                .flatMap(kv -> {
                    if (token.applyAsLong(kv) != r.lock().token()) {
                        return Mono.just(RenewOutcome.notHeld());
                    }
                    return keepAlive(kv.getLease()).map(ttl -> renewed(r, ttl));
                })
                .defaultIfEmpty(RenewOutcome.notHeld())
                .onErrorResume(EtcdErrors::isLeaseNotFound, e -> Mono.just(RenewOutcome.notHeld()));
    }

    /**
     * @param r   the renewal
     * @param ttl the TTL etcd gave the lease
     * @return renewed for at most that TTL, or not held when the lease is gone
     */
    static RenewOutcome renewed(RenewRequest r, long ttl) {
        if (ttl <= 0) {
            return RenewOutcome.notHeld();
        }
        Duration left = Duration.ofSeconds(ttl);
        return RenewOutcome.renewed(r.leaseTime().compareTo(left) <= 0 ? r.leaseTime() : left);
    }

    /**
     * Release found by a read ({@link #find}): revokes the lease of the owner's key (which deletes
     * it and nothing else), or deletes a key without a lease if its create revision is still the one
     * read; frees the owner's place once its key is gone.
     *
     * @return whether a key of the owner was there
     */
    Mono<Boolean> release(String name, String owner) {
        return find(name, owner, true).flatMap(kv -> {
            LockSlots.Place p = slots.find(name, owner);
            if (kv.getLease() == 0) {
                return Mono.fromFuture(() -> client.getKVClient().txn()
                                .If(new Cmp(kv.getKey(), Cmp.Op.EQUAL, CmpTarget.createRevision(kv.getCreateRevision())))
                                .Then(Op.delete(kv.getKey(), DeleteOption.DEFAULT)).commit())
                        .doOnNext(x -> {
                            if (p != null) {
                                gone(p);
                            }
                        })
                        .thenReturn(true);
            }
            return Mono.fromFuture(() -> client.getLeaseClient().revoke(kv.getLease()))
                    .onErrorResume(EtcdErrors::isLeaseNotFound, e -> Mono.empty()).then()
                    .doOnSuccess(x -> {
                        if (p != null) {
                            gone(p);
                        }
                    })
                    .thenReturn(true);
        }).defaultIfEmpty(false);
    }

    /**
     * A refused waiter's wait ({@link WaiterWatch}: a watch from now, and a read of what the refusing
     * read saw when the watch started after a change since it).
     *
     * @return completes on the first deletion (or put, where it counts), or when the watch ends or fails
     *         (ask again); cancel closes the watch
     */
    Mono<Void> deletion(WaiterWatch.Wait wait) {
        return WaiterWatch.await(client.getWatchClient(), client.getKVClient(), wait)
                .onErrorResume(e -> Mono.just(false))
                .then();
    }

    /**
     * The name's change stream: {@code Subscribed} once both its watches are live (the range's and the
     * revocation key's; again when jetcd re-created either), then an {@code Acquired} for each put of
     * a key in the range (a key joined, holding or waiting), a {@code Released} for each deletion, and
     * a {@code Revoked} for each revocation request ({@link #revoke}) put while the stream watches.
     *
     * @param name  the name
     * @param token how a key's token is read
     * @return the hot stream; errors on a watch failure that is not transient
     */
    Flux<LockEvent> events(String name, ToLongFunction<KeyValue> token) {
        return Flux.create(sink -> {
            boolean[] live = new boolean[2]; // guarded by itself: range, revocations
            Watch.Watcher revocations = EtcdRevocations.watch(client.getWatchClient(), name, revocation(name), sink, () -> {
                if (EtcdRevocations.created(live, 1)) {
                    sink.next(new LockEvent.Subscribed(name));
                }
            });
            // deletions carry the key's last value (the owner is in it)
            WatchOption option = WatchOption.builder().isPrefix(true).withCreateNotify(true).withPrevKV(true).build();
            Watch.Watcher w = client.getWatchClient().watch(range(name), option, Watch.listener(
                    response -> {
                        if (response.isCreatedNotify()) {
                            if (EtcdRevocations.created(live, 0)) {
                                sink.next(new LockEvent.Subscribed(name));
                            }
                            return;
                        }
                        for (WatchEvent e : response.getEvents()) {
                            KeyValue kv = e.getKeyValue();
                            if (e.getEventType() == WatchEvent.EventType.DELETE) {
                                sink.next(new LockEvent.Released(name, ownerOf(e.getPrevKV()), false));
                            } else if (e.getEventType() == WatchEvent.EventType.PUT) {
                                sink.next(new LockEvent.Acquired(name, ownerOf(kv), token.applyAsLong(kv)));
                            }
                        }
                    },
                    error -> {
                        if (!EtcdErrors.isTransient(error)) {
                            sink.error(EtcdErrors.map(name, "watch", error));
                        }
                    },
                    sink::complete));
            sink.onDispose(() -> {
                w.close();
                revocations.close();
            });
        });
    }
}
