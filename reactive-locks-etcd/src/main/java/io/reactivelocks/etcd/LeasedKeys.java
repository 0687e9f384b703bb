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
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Schedulers;

/**
 * Keys on leases of their own, one per owner and name, {@code <prefix>/<base64url(name)>/<id>-<slot>}:
 * the layout of the semaphore's permits and of the read-write lock's requests. {@code <id>} is a
 * random id of this store instance, {@code <slot>} the lowest slot of the name not reserved by
 * another owner of this store ({@link LockSlots}): one name acquired and released over and over
 * reuses one key instead of leaving a deleted key behind each time (etcd keeps each in its index
 * until a compaction, and every read of the range visits them). The owner is the first line of the
 * value ({@link EtcdKeys#value}), the store's payload the rest. Keys sit on the store's shared leases
 * ({@link SharedLeases}: one per TTL, kept alive by the renewals of the keys on it). A slot is freed
 * only once its key is known gone — a delete confirmed (a clean-up delete that fails is sent again
 * until one is) — with no put transaction of its owner left in the driver, so a release's first
 * delete, sent with none in flight, is a plain one that can only meet its owner's key (its slot is
 * retired if that delete's answer is lost: {@link #deleteKnown}); every other delete of a key is
 * guarded by its create revision (or, when the outcome of its put is unknown, by its value, which
 * names its owner), which cannot touch the next owner's key in the same slot; and a
 * retried put of an owner finds its own key (the value names the owner) in the same slot. What both stores do
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

    /** The most operations etcd takes in one transaction by default ({@code --max-txn-ops}). */
    static final int MAX_TXN_OPS = 128;
    private static final GetOption KEY_ONLY = GetOption.builder().withKeysOnly(true).build();
    private static final Duration CLEAN_UP_RETRY = Duration.ofMillis(250);
    private static final Duration CLEAN_UP_RETRY_MAX = Duration.ofSeconds(5);

    /** Timers of {@link #deleteUntilConfirmed} retries, cancelled by {@link #close()}. */
    private final Disposable.Composite pendingFrees = Disposables.composite();
    /** The leases the store's keys are put on. */
    private final SharedLeases leases;
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
     * @param leases the leases to put keys on (a store session's semaphore and read-write stores share theirs)
     */
    LeasedKeys(Client client, String prefix, SharedLeases leases) {
        this.client = Objects.requireNonNull(client, "client");
        this.prefix = EtcdKeys.checkPrefix(prefix);
        byte[] random = new byte[9];
        RANDOM.nextBytes(random);
        this.id = Base64.getUrlEncoder().withoutPadding().encodeToString(random);
        this.leases = Objects.requireNonNull(leases, "leases");
    }

    /** @return the leases the store's keys are put on */
    SharedLeases leases() {
        return leases;
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
     * (it deletes what the transaction may have put), again until etcd confirms it, and is freed then.
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
            deleteUntilConfirmed(free, undo);
        }
    }

    /**
     * The place's key is known gone (its delete confirmed, or a read found no key of the
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
     * Sends the delete of the places' keys until etcd confirms it (after 250 ms, doubling up to 5 s,
     * until the store closes), then frees the places: a key left on a shared lease would otherwise
     * live as long as the other keys on it are renewed, and its slot must stay reserved meanwhile
     * (the delete is guarded by what the key holds, which only its owner puts).
     *
     * @param delete the delete: true once etcd answered it (whatever it deleted), false when it failed
     */
    void deleteUntilConfirmed(List<LockSlots.Place> places, Supplier<Mono<Boolean>> delete) {
        deleteUntilConfirmed(places, delete, CLEAN_UP_RETRY);
    }

    private void deleteUntilConfirmed(List<LockSlots.Place> places, Supplier<Mono<Boolean>> delete, Duration next) {
        Disposable.Swap attempt = Disposables.swap();
        if (!pendingFrees.add(attempt)) {
            return; // closed
        }
        attempt.update(Mono.defer(delete).onErrorReturn(false).subscribe(confirmed -> {
            pendingFrees.remove(attempt);
            if (confirmed) {
                places.forEach(this::gone);
                return;
            }
            Disposable.Swap timer = Disposables.swap();
            if (pendingFrees.add(timer)) {
                timer.update(Mono.delay(next, Schedulers.parallel()).subscribe(x -> {
                    pendingFrees.remove(timer);
                    Duration after = next.multipliedBy(2);
                    deleteUntilConfirmed(places, delete, after.compareTo(CLEAN_UP_RETRY_MAX) > 0 ? CLEAN_UP_RETRY_MAX : after);
                }, e -> { }));
            }
        }, e -> pendingFrees.remove(attempt)));
    }

    /** @return deletes the key, unguarded ({@link #deleteKnown}): true when it was there */
    private Mono<Boolean> deletePlain(ByteSequence key) {
        return Mono.fromFuture(() -> client.getKVClient().delete(key)).map(r -> r.getDeleted() > 0);
    }

    /**
     * @return deletes the key if its create revision is still {@code revision}: true when it did,
     *         false when the key was gone or is another one
     */
    Mono<Boolean> deleteOwned(ByteSequence key, long revision) {
        return Mono.fromFuture(() -> client.getKVClient().txn()
                .If(new Cmp(key, Cmp.Op.EQUAL, CmpTarget.createRevision(revision)))
                .Then(Op.delete(key, DeleteOption.DEFAULT)).commit()).map(r -> r.isSucceeded());
    }

    /**
     * The release of a key this store put and knows: its delete, followed to its end whatever the
     * caller does (a request timeout cancels only the caller's view) and, when it fails, sent again
     * until etcd confirms it ({@link #deleteUntilConfirmed}), the slot reserved until then: on a
     * shared lease that other keys keep alive, a key whose delete was given up would stay. With no put
     * transaction of the owner in the driver, the first delete is a plain one (no create-revision
     * compare, which costs etcd a read): the slot is its owner's until this delete is answered, so it
     * can only meet its owner's key; when its answer is lost (it may still run later) the slot is
     * retired ({@link LockSlots.Place#retire}). Otherwise, and for every retry, the delete is guarded
     * by the key's create revision.
     *
     * @param lease the lease the key is on: retired when the delete fails (no new key goes on it)
     * @return whether the key was there (false when it was gone or, guarded, another one), or the first attempt's error
     */
    Mono<Boolean> deleteKnown(LockSlots.Place slot, long revision, SharedLeases.Shared lease) {
        return Mono.defer(() -> {
            ByteSequence k = key(slot);
            boolean unguarded;
            synchronized (this) {
                unguarded = !inFlight.containsKey(slot);
            }
            Sinks.One<Boolean> answer = Sinks.one();
            (unguarded ? deletePlain(k) : deleteOwned(k, revision)).subscribe(deleted -> {
                gone(slot);
                answer.tryEmitValue(deleted);
            }, e -> {
                if (unguarded) {
                    slot.retire();
                }
                leases.retire(lease);
                deleteUntilConfirmed(List.of(slot), () -> deleteOwned(k, revision).thenReturn(true));
                answer.tryEmitError(e);
            });
            return answer.asMono();
        });
    }

    /**
     * The clean-up of puts whose outcome is unknown: deletes each key whose value is still the one
     * its owner put, in one transaction.
     *
     * @return true once etcd answered (whatever it deleted), false when the request failed
     */
    Mono<Boolean> deleteIfValues(List<ByteSequence> keys, List<ByteSequence> values) {
        Op[] each = new Op[keys.size()];
        for (int i = 0; i < each.length; i++) {
            each[i] = Op.txn(new Cmp[] {new Cmp(keys.get(i), Cmp.Op.EQUAL, CmpTarget.value(values.get(i)))},
                    new Op[] {Op.delete(keys.get(i), DeleteOption.DEFAULT)}, new Op[0]);
        }
        return Mono.fromFuture(() -> client.getKVClient().txn().Then(each).commit()).thenReturn(true)
                .onErrorResume(e -> Mono.just(false));
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

    /** @return a {@code keepAliveOnce} of the lease: the TTL left, {@code <= 0} when it is gone */
    Mono<Long> keepAlive(long lease) {
        return Mono.fromFuture(() -> client.getLeaseClient().keepAliveOnce(lease)).map(r -> r.getTTL());
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

    /** A key this store put and knows: the key, its create revision, the lease it is on. */
    record Known(ByteSequence key, long revision, SharedLeases.Shared lease) {
    }

    /**
     * Renews a batch. The keys this store knows ({@code known} answers them) cost one read of them all
     * (a transaction of gets, {@value #MAX_TXN_OPS} at most each) and one keep-alive of each distinct
     * lease they are on, sent together: a key is renewed when it is still there with its create
     * revision and its lease is alive. The others are found by a read each ({@link #renew(RenewRequest,
     * ToLongFunction)}).
     *
     * @return the outcomes, in the batch's order
     */
    Mono<List<RenewOutcome>> renew(List<RenewRequest> batch, Function<RenewRequest, @Nullable Known> known,
            ToLongFunction<KeyValue> token) {
        return Mono.defer(() -> {
            int n = batch.size();
            Known[] ks = new Known[n];
            List<ByteSequence> read = new ArrayList<>(n);
            Map<Long, SharedLeases.Shared> distinct = new java.util.LinkedHashMap<>();
            for (int i = 0; i < n; i++) {
                ks[i] = known.apply(batch.get(i));
                if (ks[i] != null) {
                    read.add(ks[i].key());
                    distinct.putIfAbsent(ks[i].lease().id, ks[i].lease());
                }
            }
            Mono<Map<Long, Long>> ttls = Flux.fromIterable(distinct.values())
                    .flatMap(s -> leases.keepAlive(s).map(ttl -> Map.entry(s.id, ttl)))
                    .collectMap(Map.Entry::getKey, Map.Entry::getValue);
            Mono<List<Long>> revisions = createRevisions(read);
            Mono<List<RenewOutcome>> others = Flux.range(0, n).filter(i -> ks[i] == null)
                    .concatMap(i -> renew(batch.get(i), token)).collectList();
            return Mono.zip(ttls, revisions, others).map(t -> {
                List<RenewOutcome> out = new ArrayList<>(n);
                int mine = 0;
                int other = 0;
                for (int i = 0; i < n; i++) {
                    if (ks[i] == null) {
                        out.add(t.getT3().get(other++));
                    } else {
                        long ttl = t.getT1().get(ks[i].lease().id);
                        out.add(t.getT2().get(mine++) == ks[i].revision() ? renewed(batch.get(i), ttl) : RenewOutcome.notHeld());
                    }
                }
                return out;
            });
        });
    }

    /** @return the create revision of each key, 0 for a key that is not there: one transaction of gets per {@value #MAX_TXN_OPS} keys */
    private Mono<List<Long>> createRevisions(List<ByteSequence> read) {
        if (read.isEmpty()) {
            return Mono.just(List.of());
        }
        return Flux.range(0, (read.size() + MAX_TXN_OPS - 1) / MAX_TXN_OPS)
                .flatMapSequential(c -> {
                    List<ByteSequence> part = read.subList(c * MAX_TXN_OPS, Math.min(read.size(), (c + 1) * MAX_TXN_OPS));
                    Op[] gets = new Op[part.size()];
                    for (int i = 0; i < gets.length; i++) {
                        gets[i] = Op.get(part.get(i), KEY_ONLY);
                    }
                    return Mono.fromFuture(() -> client.getKVClient().txn().Then(gets).commit())
                            .flatMapIterable(r -> {
                                List<Long> revs = new ArrayList<>(gets.length);
                                for (io.etcd.jetcd.kv.GetResponse g : r.getGetResponses()) {
                                    revs.add(g.getKvs().isEmpty() ? 0L : g.getKvs().get(0).getCreateRevision());
                                }
                                return revs;
                            });
                })
                .collectList();
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
     * Release found by a read ({@link #find}): deletes the owner's key if its create revision is still
     * the one read (the lease it is on may carry other keys: it is never revoked); frees the owner's
     * place once its key is gone.
     *
     * @return whether a key of the owner was there
     */
    Mono<Boolean> release(String name, String owner) {
        return find(name, owner, true).flatMap(kv -> {
            LockSlots.Place p = slots.find(name, owner);
            return deleteOwned(kv.getKey(), kv.getCreateRevision())
                    .doOnNext(x -> {
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
