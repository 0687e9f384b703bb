package io.reactivelocks.etcd;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.LeaseOption;
import io.etcd.jetcd.options.PutOption;
import io.reactivelocks.rwlock.LockMode;
import io.reactivelocks.spi.Holder;
import io.reactivelocks.spi.LockEvent;
import io.reactivelocks.spi.RenewOutcome;
import io.reactivelocks.spi.RenewRequest;
import io.reactivelocks.spi.rwlock.ReadWriteHolders;
import io.reactivelocks.spi.rwlock.ReadWriteStore;
import io.reactivelocks.spi.semaphore.PermitGrant;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * Read-write locks on etcd, in the order of etcd's and Curator's read-write lock recipes: each
 * request is a key {@code <prefix>-rw/<base64url(name)>/<id>-<slot>} ({@link LeasedKeys}: a random
 * id of this store, and the lowest slot of the name free in it, so a name acquired over and over
 * reuses its keys) on the store's shared lease of its TTL (the lease time, rounded up to whole
 * seconds, {@link SharedLeases}: a grant asks for no lease, one keep-alive renews every key on it, and
 * a dead holder's key goes when its lease runs out), with the value the owner, a newline, then
 * {@code r} or {@code w} (no mark is written at the grant: who holds follows from the
 * keys' order, so a grant writes nothing and wakes no watcher). In
 * create-revision order, a reader holds when no write key precedes it (it waits for earlier writers
 * only) and a writer when its key is the first (it waits for every earlier key); decisions depend
 * only on which keys exist and their revisions, so a reader and a writer never both hold. The token
 * is the key's create revision: a writer's exceeds every key before it, a reader's the writer before
 * it.
 *
 * <p>A waiting caller keeps its key between attempts (its place in the queue, its lease kept alive
 * by each attempt; a waiting writer's key is its intent, blocking later readers) and deletes it when
 * it gives up. Under the reader-preferring policy a writer looks before it queues: it puts a key only
 * when the name has none (and deletes it at once when refused), so it never blocks readers nor shows
 * as a waiting writer. A single attempt ({@code waiting == false}) deletes a refused key. Renewal,
 * release and the change stream are shared with the semaphore's keys ({@link LeasedKeys}).
 *
 * <p>No herd ({@link #awaitTurn}): a refused caller that keeps its key watches only the key whose
 * deletion can let it in, as Curator's recipe does — a writer the key just before its own, a reader
 * the nearest write key before it — from the revision of the read that refused it. A release thus
 * wakes the one writer behind it, or the readers behind a leaving writer (all of whom it lets in).
 * A reader-preferring writer (no key) watches the name's keys for a deletion.
 */
final class EtcdReadWriteStore implements ReadWriteStore {

    /** The name's keys in create order: who is before whom. */
    /** The number of keys under a prefix, nothing else. */
    private static final GetOption COUNT = GetOption.builder().isPrefix(true).withCountOnly(true).build();

    private static final GetOption BY_CREATION = GetOption.builder().isPrefix(true)
            .withSortField(GetOption.SortTarget.CREATE).withSortOrder(GetOption.SortOrder.ASCEND).build();

    private final Client client;
    private final boolean ownsClient;
    private final String prefix;
    private final LeasedKeys keys;
    /** Of each refused waiting owner: the key (or, without a key of its own, the name's prefix) to watch, and what the read that refused it saw. */
    private final Map<String, WaiterWatch.Wait> before = new ConcurrentHashMap<>();

    /** The key of each owner this store put and has not released: grants and waiting places. */
    private final Map<String, Place> places = new ConcurrentHashMap<>();

    /** A key this store put: its create revision (the token) and the shared lease it is on. */
    private record Place(long revision, SharedLeases.Shared lease) {
    }

    /**
     * @param client     the jetcd client
     * @param ownsClient whether {@link #close()} closes it
     * @param prefix     the key prefix of the read-write lock keys (the lock prefix + {@code "-rw"})
     */
    EtcdReadWriteStore(Client client, boolean ownsClient, String prefix) {
        this(client, ownsClient, prefix, new SharedLeases(client.getLeaseClient()));
    }

    /**
     * @param leases the leases to put keys on (shared with the session's semaphore store)
     */
    EtcdReadWriteStore(Client client, boolean ownsClient, String prefix, SharedLeases leases) {
        this.client = Objects.requireNonNull(client, "client");
        this.ownsClient = ownsClient;
        this.prefix = EtcdKeys.checkPrefix(prefix);
        this.keys = new LeasedKeys(client, prefix, leases); // renew, release, watch: shared with the semaphore's keys
    }

    /** @return the key of the owner's slot in this store, or null when it has none */
    @Nullable ByteSequence key(String name, String owner) {
        return keys.key(name, owner);
    }

    /** @return the owner's key (its slot's here, else found by its value), empty when none */
    Mono<KeyValue> find(String name, String owner) {
        return keys.find(name, owner, false);
    }

    /** @return the store's keys ({@link LeasedKeys}) */
    LeasedKeys keys() {
        return keys;
    }

    private static ByteSequence value(String owner, LockMode mode) {
        return EtcdKeys.value(owner, mode == LockMode.READ ? "r" : "w");
    }

    private static boolean isWrite(KeyValue kv) {
        return LeasedKeys.payloadOf(kv.getValue()).startsWith("w");
    }

    @Override
    public String name() {
        return "etcd";
    }

    @Override
    public boolean queues() {
        return true;
    }

    /** Watches the key noted at the owner's last refusal for its deletion; at once when none is noted. */
    @Override
    public Mono<Void> awaitTurn(String name, List<String> owners) {
        return Mono.defer(() -> {
            WaiterWatch.Wait w = before.get(owners.get(0));
            return w == null ? Mono.<Void>empty() : keys.deletion(w);
        }).onErrorMap(e -> EtcdErrors.map(name, "read-write lock wait", e));
    }

    @Override
    public Mono<PermitGrant> tryGrant(String name, String owner, LockMode mode, boolean writerPreferring, boolean waiting,
            Duration leaseTime) {
        long ttlSeconds = Math.max(1, (leaseTime.toMillis() + 999) / 1000);
        boolean keepPlace = waiting && (mode == LockMode.READ || writerPreferring);
        return Mono.defer(() -> {
            LockSlots.Place slot = keys.place(name, owner);
            ByteSequence k = keys.key(slot);
            Place known = places.get(owner);
            if (known != null) { // our place in the queue (or a retried grant): read the queue, nothing else
                return decide(name, owner, slot, mode, known, keepPlace, leaseTime);
            }
            if (mode == LockMode.READ || writerPreferring) {
                // one transaction puts our key and reads the name's keys (or finds a key of ours: adopted)
                return put(name, owner, slot, mode, ttlSeconds, keepPlace, leaseTime);
            }
            // a reader-preferring writer does not queue behind anyone: it looks first — its slot and the name's
            // keys, in one read — and puts a key only when the name is free (so it never shows as an intent, nor
            // wakes itself)
            return Mono.fromFuture(() -> client.getKVClient().txn()
                            .Then(Op.get(k, GetOption.DEFAULT), Op.get(keys.range(name), COUNT))
                            .commit())
                    .flatMap(look -> {
                        List<KeyValue> existing = look.getGetResponses().get(0).getKvs();
                        if (!existing.isEmpty() && owner.equals(LeasedKeys.ownerOf(existing.get(0)))) {
                            // a key of ours this store does not know (a retried put): adopt it
                            KeyValue mine = existing.get(0);
                            Place adopted = new Place(mine.getCreateRevision(), keys.leases().adopt(mine.getLease(), ttlSeconds));
                            places.put(owner, adopted);
                            return decide(name, owner, slot, mode, adopted, keepPlace, leaseTime);
                        }
                        if (!existing.isEmpty()) { // another owner's key, still in the slot: nothing of ours there
                            keys.gone(slot);
                            return Mono.just((PermitGrant) new PermitGrant.Busy(null));
                        }
                        long count = look.getGetResponses().get(1).getCount();
                        if (count == 0) {
                            return put(name, owner, slot, mode, ttlSeconds, keepPlace, leaseTime);
                        }
                        keys.gone(slot); // nothing put
                        if (waiting) {
                            long read = look.getHeader().getRevision();
                            before.put(owner, new WaiterWatch.Wait(read, new WaiterWatch.Seen.Keys(keys.range(name), read, (int) count)));
                        }
                        return Mono.just((PermitGrant) new PermitGrant.Busy(null));
                    });
        }).onErrorMap(e -> EtcdErrors.map(name, "read-write lock grant", e));
    }

    /**
     * Puts our key (if it is still absent) on the shared lease of its TTL and reads the name's keys, in
     * one transaction — its read sees exactly the keys created up to ours — then decides. A key
     * already in the slot is read instead: ours (a put sent again by the driver, or one whose answer
     * was lost) is adopted and decided on by the same read; another owner's leaves nothing of ours there.
     */
    private Mono<PermitGrant> put(String name, String owner, LockSlots.Place slot, LockMode mode, long ttlSeconds, boolean keepPlace,
            Duration leaseTime) {
        ByteSequence k = keys.key(slot);
        ByteSequence range = keys.range(name);
        ByteSequence v = value(owner, mode);
        // what a put whose outcome is unknown may have left: our key, if it still holds the value put
        Supplier<Mono<Boolean>> undo = () -> keys.deleteIfValues(List.of(k), List.of(v));
        SharedLeases.Shared[] taken = new SharedLeases.Shared[1];
        return keys.leases().take(ttlSeconds)
                .flatMap(lease -> {
                    taken[0] = lease;
                    // followed to its real end: the slot stays reserved while it is in the driver
                    return Mono.fromFuture(() -> keys.tracked(List.of(slot), () -> client.getKVClient().txn()
                                    .If(new Cmp(k, Cmp.Op.EQUAL, CmpTarget.createRevision(0)))
                                    .Then(Op.put(k, v, PutOption.builder().withLeaseId(lease.id).build()),
                                            Op.get(range, BY_CREATION))
                                    .Else(Op.get(k, GetOption.DEFAULT), Op.get(range, BY_CREATION))
                                    .commit(), undo))
                            .flatMap(put -> {
                                long revision = put.getHeader().getRevision();
                                if (put.isSucceeded()) {
                                    Place p = new Place(revision, lease);
                                    places.put(owner, p);
                                    return decide(name, owner, slot, mode, p, keepPlace, leaseTime, put.getGetResponses().get(0).getKvs(),
                                            revision);
                                }
                                List<KeyValue> found = put.getGetResponses().get(0).getKvs();
                                if (found.isEmpty() || !owner.equals(LeasedKeys.ownerOf(found.get(0)))) {
                                    // another owner's key, still in the slot (or gone again): nothing of ours there
                                    keys.gone(slot);
                                    return Mono.just((PermitGrant) new PermitGrant.Busy(null));
                                }
                                // a key of ours: this put sent again by the driver (on this lease), or one this store does not
                                // know, on a lease of unknown age (refreshed before it is handed out)
                                KeyValue mine = found.get(0);
                                Place adopted = new Place(mine.getCreateRevision(), keys.leases().adopt(mine.getLease(), ttlSeconds));
                                places.put(owner, adopted);
                                return decide(name, owner, slot, mode, adopted, keepPlace, leaseTime,
                                        put.getGetResponses().get(1).getKvs(), revision);
                            });
                })
                .onErrorResume(e -> {
                    if (taken[0] != null && EtcdErrors.isLeaseNotFound(e)) {
                        keys.leases().retire(taken[0]);
                    }
                    places.remove(owner);
                    if (taken[0] == null) { // no lease, nothing put
                        List.of(slot).forEach(keys::gone);
                    } else {
                        keys.deleteUntilConfirmed(List.of(slot), undo);
                    }
                    return Mono.error(e);
                });
    }

    /**
     * Reads the keys up to ours: grants when ours is there and no key before it forbids it; else
     * keeps our place (noting what to watch) or gives it up.
     */
    private Mono<PermitGrant> decide(String name, String owner, LockSlots.Place slot, LockMode mode, Place mine, boolean keepPlace,
            Duration leaseTime) {
        GetOption upToOurs = GetOption.builder().isPrefix(true).withKeysOnly(false)
                .withSortField(GetOption.SortTarget.CREATE).withSortOrder(GetOption.SortOrder.ASCEND)
                .withMaxCreateRevision(mine.revision()).build();
        return Mono.fromFuture(() -> client.getKVClient().get(keys.range(name), upToOurs))
                .flatMap(r -> decide(name, owner, slot, mode, mine, keepPlace, leaseTime, r.getKvs(), r.getHeader().getRevision()));
    }

    /**
     * @param read     the name's keys in create order, at least up to ours (later ones are ignored)
     * @param revision the store revision of that read
     */
    private Mono<PermitGrant> decide(String name, String owner, LockSlots.Place slot, LockMode mode, Place mine, boolean keepPlace,
            Duration leaseTime, List<KeyValue> read, long revision) {
        return Mono.defer(() -> {
            List<KeyValue> kvs = read;
            int upTo = kvs.size();
            while (upTo > 0 && kvs.get(upTo - 1).getCreateRevision() > mine.revision()) {
                upTo--;
            }
            kvs = kvs.subList(0, upTo);
            if (kvs.isEmpty() || kvs.get(kvs.size() - 1).getCreateRevision() != mine.revision()) {
                // our key is gone (its lease lapsed, or a release raced the attempt): ask anew next time
                if (places.remove(owner, mine)) {
                    keys.gone(slot);
                }
                before.remove(owner);
                return Mono.just((PermitGrant) new PermitGrant.Busy(null));
            }
            KeyValue blocker = null; // a writer waits for the key just before it, a reader for the nearest write key
            for (KeyValue kv : kvs.subList(0, kvs.size() - 1)) {
                if (mode == LockMode.WRITE || isWrite(kv)) {
                    blocker = kv;
                }
            }
            long elapsed = System.nanoTime() - mine.lease().refreshedNanos();
            boolean stale = elapsed >= leaseTime.toNanos() / 3;
            if (blocker != null) {
                if (keepPlace) {
                    before.put(owner, new WaiterWatch.Wait(revision, WaiterWatch.Seen.key(blocker, false)));
                    // a waiting key stays alive: refresh its lease when a third of the lease time has passed
                    return (stale ? keys.leases().keepAlive(mine.lease()).then() : Mono.<Void>empty()).thenReturn((PermitGrant) new PermitGrant.Busy(null));
                }
                before.remove(owner);
                places.remove(owner, mine);
                return giveUp(slot, mine).thenReturn((PermitGrant) new PermitGrant.Busy(null));
            }
            before.remove(owner);
            // no mark on the key: who holds follows from the keys' order; the TTL is what is left of the lease
            if (!stale) {
                return Mono.just((PermitGrant) new PermitGrant.Granted(List.of(mine.revision()), leaseTime.minusNanos(elapsed)));
            }
            return keys.leases().keepAlive(mine.lease()).map(ttl -> {
                if (ttl > 0) {
                    return (PermitGrant) new PermitGrant.Granted(List.of(mine.revision()), leaseTime);
                }
                // the lease ran out (and our key with it): ask anew next time
                if (places.remove(owner, mine)) {
                    keys.gone(slot);
                }
                return (PermitGrant) new PermitGrant.Busy(null);
            });
        });
    }

    /** Deletes our key (plain, or guarded by its create revision), followed to its end ({@link LeasedKeys#deleteKnown}). */
    private Mono<Boolean> giveUp(LockSlots.Place slot, Place mine) {
        return keys.deleteKnown(slot, mine.revision(), mine.lease());
    }

    /**
     * The grants this store put: one read of their keys and one keep-alive per lease they are on,
     * together; others found by a read each (the create revision is the token).
     */
    @Override
    public Mono<List<RenewOutcome>> renew(List<RenewRequest> batch) {
        return keys.renew(batch, r -> {
                    Place known = places.get(r.lock().owner());
                    ByteSequence k = known == null || known.revision() != r.lock().token() ? null : key(r.lock().name(), r.lock().owner());
                    return k == null ? null : new LeasedKeys.Known(k, known.revision(), known.lease());
                }, KeyValue::getCreateRevision)
                .onErrorMap(e -> EtcdErrors.map(batch.get(0).lock().name(), "read-write lock renewal", e));
    }

    @Override
    public Mono<Boolean> release(String name, String owner) {
        return Mono.defer(() -> {
            before.remove(owner);
            Place known = places.remove(owner);
            LockSlots.Place slot = known == null ? null : keys.find(name, owner);
            if (slot != null) { // a delete guarded by its create revision: one request
                return giveUp(slot, known);
            }
            return keys.release(name, owner);
        }).onErrorMap(e -> EtcdErrors.map(name, "read-write lock release", e));
    }

    /** Who holds follows from the keys' order: a reader after no write key, a writer first of all; write keys that do not hold wait. */
    @Override
    public Mono<ReadWriteHolders> holders(String name) {
        GetOption all = GetOption.builder().isPrefix(true)
                .withSortField(GetOption.SortTarget.CREATE).withSortOrder(GetOption.SortOrder.ASCEND).build();
        return Mono.defer(() -> Mono.fromFuture(() -> client.getKVClient().get(keys.range(name), all)))
                .flatMapMany(r -> {
                    List<Object[]> rows = new ArrayList<>();
                    boolean writeBefore = false;
                    for (int i = 0; i < r.getKvs().size(); i++) {
                        KeyValue kv = r.getKvs().get(i);
                        boolean holds = isWrite(kv) ? i == 0 : !writeBefore;
                        writeBefore |= isWrite(kv);
                        if (holds || isWrite(kv)) {
                            rows.add(new Object[] {kv, holds});
                        }
                    }
                    return Flux.fromIterable(rows);
                })
                .concatMap(row -> {
                    KeyValue kv = (KeyValue) row[0];
                    boolean holds = (Boolean) row[1];
                    return Mono.fromFuture(() -> client.getLeaseClient().timeToLive(kv.getLease(), LeaseOption.DEFAULT))
                            .map(ttl -> new Object[] {kv, holds, new Holder(LeasedKeys.ownerOf(kv), holds ? kv.getCreateRevision() : 0,
                                    Duration.ofSeconds(Math.max(0, ttl.getTTL())))});
                })
                .collectList()
                .map(rows -> {
                    List<Holder> readers = new ArrayList<>();
                    List<Holder> waiting = new ArrayList<>();
                    Holder writer = null;
                    for (Object[] row : rows) {
                        KeyValue kv = (KeyValue) row[0];
                        Holder h = (Holder) row[2];
                        if (!(Boolean) row[1]) {
                            waiting.add(h);
                        } else if (isWrite(kv)) {
                            writer = h;
                        } else {
                            readers.add(h);
                        }
                    }
                    return new ReadWriteHolders(readers, writer, waiting);
                })
                .onErrorMap(e -> EtcdErrors.map(name, "read-write lock read", e));
    }

    /**
     * A revocation request to the grant of {@code owner}: a put of the name's revocation key
     * {@code <prefix>/<base64url(name)>} (outside the range of the name's keys, so no grant decision,
     * count, holder read, renewal or release sees it) on a lease of its own revoked right after the
     * put ({@link LeasedKeys#revoke}): the revocation watch of every {@link #events} stream of the
     * name reports it as {@link LockEvent.Revoked}, and nothing is left.
     */
    @Override
    public Mono<Void> revoke(String name, String owner, String reason) {
        return keys.revoke(name, owner, reason).onErrorMap(e -> EtcdErrors.map(name, "read-write lock revocation request", e));
    }

    /**
     * The name's change stream ({@link LeasedKeys#events}): puts and deletions of its keys, and the
     * revocation requests put while it watches.
     */
    @Override
    public Flux<LockEvent> events(String name) {
        return keys.events(name, KeyValue::getCreateRevision);
    }

    @Override
    public Mono<Void> close() {
        keys.close();
        return ownsClient ? Mono.<Void>fromRunnable(client::close).subscribeOn(Schedulers.boundedElastic()) : Mono.empty();
    }

    @Override
    public String toString() {
        return "EtcdReadWriteStore{" + prefix + "}";
    }
}
