package io.reactivelocks.etcd;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.LeaseOption;
import io.etcd.jetcd.options.PutOption;
import io.reactivelocks.spi.Holder;
import io.reactivelocks.spi.LockEvent;
import io.reactivelocks.spi.RenewOutcome;
import io.reactivelocks.spi.RenewRequest;
import io.reactivelocks.spi.semaphore.PermitGrant;
import io.reactivelocks.spi.semaphore.SemaphoreStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * Semaphores on etcd. Each permit is a key {@code <prefix>-semaphore/<base64url(name)>/<id>-<slot>}
 * ({@link LeasedKeys}: a random id of this store, and the lowest slot of the name free in it, so a
 * name acquired over and over reuses its keys) on the store's shared lease of its TTL (the lease
 * time, rounded up to whole seconds; {@link SharedLeases}): a grant asks for no lease, one
 * keep-alive renews every permit on a lease, a release deletes the permit's key alone, and a dead
 * holder's permits go when its lease runs out. Its value is the owner, a newline, then
 * {@code <N>:<index>}: the N of the call that put it and the permit's index in its unit.
 *
 * <p><b>Units.</b> The k permits of one request are put in <em>one</em> transaction, so they share
 * one create revision and take their place in line as one unit: no other request's key can fall
 * between them. (Put one transaction each, the keys of callers asking together interleave — A1 B1
 * C1 A2 B2 C2 for three callers asking for 2 of 3 — and then every caller's last key has N keys
 * before it: nobody is ever let in.) In create-revision order a unit holds when its keys and the
 * keys before it are at most N (the unit's own N) — granted units and waiting ones alike, a FIFO
 * line. The transaction that puts a unit also reads the keys just before it, so the first attempt
 * decides at once. Any key below a granted unit existed when that grant read, and keys only leave,
 * so at most N permits are ever held at once. Who holds follows from the keys alone (no mark is
 * written at the grant). A unit is never half put; once granted, a permit released alone frees its
 * place at once (the count of keys drops), and a unit that lost a key while it waits starts again.
 *
 * <p><b>Tokens.</b> A permit's token is {@code createRevision * 65536 + index} (index 0 to k − 1 in
 * its unit): etcd's revision is global, strictly increasing and persisted, so tokens are distinct,
 * increase with every later grant (across names, clients and restarts) and are exact for any
 * revision below 2^47. A request therefore asks for at most {@value EtcdPermitKeys#MAX_COUNT} permits at once
 * (more fails with {@link IllegalArgumentException}); etcd's {@code --max-txn-ops} (128 by default)
 * bounds it further to one less than that setting, as the put transaction also reads the line.
 *
 * <p><b>No herd.</b> A waiting caller keeps its keys (its place in line, its leases kept alive
 * while it waits) and, refused, is woken only by what lets it in ({@link #awaitTurn}): for N = 1 it
 * watches the key just before its own, so a release wakes the one waiter it lets in and a waiter
 * joining or leaving wakes nobody but its successor; for N > 1 it counts the keys before its unit
 * down from the name's deletions ({@link LineWatch}: holders leave in any order, so no single key
 * says when) and the deletion that leaves room lets it in without a read — every waiter sees each
 * deletion as a watch event, only the one let in asks etcd anything. A
 * single attempt ({@code waiting == false}) reads first and puts nothing when the keys there
 * already take the permits, and deletes what it put when refused. Renewal of a batch is one read of
 * its keys and a {@code keepAliveOnce} of each distinct lease they are on ({@link LeasedKeys#renew(List,
 * java.util.function.Function, java.util.function.ToLongFunction)}); release deletes the key, guarded by its
 * create revision.
 * The name's change stream ({@link #events}) is for observers.
 */
final class EtcdSemaphoreStore implements SemaphoreStore {

    private final Client client;
    private final boolean ownsClient;
    private final LeasedKeys keys;
    /** The key of each owner this store put and has not released: grants and waiting places. */
    private final Map<String, Place> places = new ConcurrentHashMap<>();
    /** Of each refused waiting attempt (by its first owner): the keys whose change may let it in, and what the read that refused it saw. */
    private final Map<String, WaiterWatch.Wait> before = new ConcurrentHashMap<>();
    /** Of each refused waiting attempt with N > 1 (by its first owner): its line, counted down by its watch ({@link LineWatch}). */
    private final Map<String, LineWatch.Line> lines = new ConcurrentHashMap<>();
    /** The first owners whose line watch saw them let in: their next attempt holds without a read. */
    private final Set<String> letIn = ConcurrentHashMap.newKeySet();
    /** The waits of those lines: one watch per name, shared. */
    private final LineWatch lineWatch;

    /** A key this store put: its unit's create revision, its index in the unit, the shared lease it is on. */
    private record Place(long revision, int index, SharedLeases.Shared lease) {
        long token() {
            return EtcdPermitKeys.token(revision, index);
        }
    }

    /**
     * @param client     the jetcd client
     * @param ownsClient whether {@link #close()} closes it
     * @param prefix     the key prefix of the semaphore keys (the lock prefix + {@code "-semaphore"})
     */
    EtcdSemaphoreStore(Client client, boolean ownsClient, String prefix) {
        this(client, ownsClient, prefix, new SharedLeases(client.getLeaseClient()));
    }

    /**
     * @param leases the leases to put permits on (shared with the session's read-write store)
     */
    EtcdSemaphoreStore(Client client, boolean ownsClient, String prefix, SharedLeases leases) {
        this.client = Objects.requireNonNull(client, "client");
        this.ownsClient = ownsClient;
        this.keys = new LeasedKeys(client, prefix, leases);
        this.lineWatch = new LineWatch(client.getWatchClient(), client.getKVClient());
    }

    ByteSequence range(String name) {
        return keys.range(name);
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

    @Override
    public int maxCount() {
        return EtcdPermitKeys.MAX_COUNT;
    }

    @Override
    public String name() {
        return "etcd";
    }

    @Override
    public boolean queues() {
        return true;
    }

    /** A single attempt: nothing left when refused. */
    @Override
    public Mono<PermitGrant> tryGrant(String name, List<String> owners, int permits, Duration leaseTime) {
        return tryGrant(name, owners, permits, false, leaseTime);
    }

    @Override
    public Mono<PermitGrant> tryGrant(String name, List<String> owners, int permits, boolean waiting, Duration leaseTime) {
        if (owners.size() > EtcdPermitKeys.MAX_COUNT) {
            return Mono.error(EtcdPermitKeys.tooMany(owners.size()));
        }
        long ttlSeconds = Math.max(1, (leaseTime.toMillis() + 999) / 1000);
        return Mono.defer(() -> {
            List<Place> known = new ArrayList<>(owners.size());
            for (String o : owners) {
                Place p = places.get(o);
                if (p != null) {
                    known.add(p);
                }
            }
            if (known.size() == owners.size()) { // our place in line (or a retried grant): look again
                return check(name, owners, permits, waiting, leaseTime, known);
            }
            if (!known.isEmpty()) { // partly known (a release raced the attempt): start again
                return forget(name, owners).thenReturn((PermitGrant) new PermitGrant.Busy(null));
            }
            if (waiting) {
                return put(name, owners, permits, true, leaseTime, ttlSeconds);
            }
            GetOption count = GetOption.builder().isPrefix(true).withCountOnly(true).build();
            return Mono.fromFuture(() -> client.getKVClient().get(range(name), count)).flatMap(r -> r.getCount() + owners.size() > permits
                    // busy without putting a key: nothing to undo, no successor woken
                    ? Mono.just((PermitGrant) new PermitGrant.Busy(null))
                    : put(name, owners, permits, false, leaseTime, ttlSeconds));
        }).onErrorMap(e -> EtcdErrors.map(name, "semaphore grant", e));
    }

    /** @return the newest keys of the name up to {@code revision} (when not 0): ours first, then up to N + 1 before them */
    private static GetOption newest(int count, int permits, long revision) {
        GetOption.Builder b = GetOption.builder().isPrefix(true).withKeysOnly(true)
                .withSortField(GetOption.SortTarget.CREATE).withSortOrder(GetOption.SortOrder.DESCEND)
                .withLimit((long) count + permits + 1);
        return (revision > 0 ? b.withMaxCreateRevision(revision) : b).build();
    }

    /**
     * Puts the owners' keys as one unit, on the shared lease of their TTL, in one transaction which
     * also reads the keys just before them; then decides.
     */
    private Mono<PermitGrant> put(String name, List<String> owners, int permits, boolean waiting, Duration leaseTime, long ttlSeconds) {
        int k = owners.size();
        List<LockSlots.Place> slots = new ArrayList<>(k);
        List<ByteSequence> unitKeys = new ArrayList<>(k);
        List<ByteSequence> values = new ArrayList<>(k);
        for (int i = 0; i < k; i++) {
            LockSlots.Place slot = keys.place(name, owners.get(i));
            slots.add(slot);
            unitKeys.add(keys.key(slot));
            values.add(EtcdPermitKeys.value(owners.get(i), permits, i));
        }
        // what a put whose outcome is unknown may have left: the keys still holding the values it put
        Supplier<Mono<Boolean>> undo = () -> keys.deleteIfValues(unitKeys, values);
        SharedLeases.Shared[] taken = new SharedLeases.Shared[1];
        return keys.leases().take(ttlSeconds)
                .flatMap(lease -> {
                    taken[0] = lease;
                    Cmp[] absent = new Cmp[k];
                    Op[] puts = new Op[k + 1];
                    Op[] found = new Op[k];
                    for (int i = 0; i < k; i++) {
                        ByteSequence key = unitKeys.get(i);
                        absent[i] = new Cmp(key, Cmp.Op.EQUAL, CmpTarget.createRevision(0));
                        puts[i] = Op.put(key, values.get(i), PutOption.builder().withLeaseId(lease.id).build());
                        found[i] = Op.get(key, GetOption.DEFAULT);
                    }
                    puts[k] = Op.get(range(name), newest(k, permits, 0));
                    // followed to its real end: the slots stay reserved while it is in the driver
                    return Mono.fromFuture(() -> keys.tracked(slots, () -> client.getKVClient().txn().If(absent).Then(puts).Else(found).commit(),
                            undo)).flatMap(r -> {
                        if (!r.isSucceeded()) { // a retried request put the unit already: adopt it
                            return adopt(name, owners, permits, waiting, leaseTime, ttlSeconds, r.getGetResponses());
                        }
                        long revision = r.getHeader().getRevision();
                        List<Place> mine = new ArrayList<>(k);
                        for (int i = 0; i < k; i++) {
                            Place p = new Place(revision, i, lease);
                            places.put(owners.get(i), p);
                            mine.add(p);
                        }
                        // no key is newer than the unit's yet: the range's count is the unit and every key before it
                        GetResponse line = r.getGetResponses().get(0);
                        return decide(name, owners, permits, waiting, leaseTime, mine, line.getKvs(), revision, line.getCount() - k);
                    });
                })
                .onErrorResume(e -> {
                    // the outcome of the put may be unknown: whatever it put (or adopted) is deleted, again until etcd
                    // confirms; the slots are freed then
                    if (taken[0] != null && EtcdErrors.isLeaseNotFound(e)) {
                        keys.leases().retire(taken[0]);
                    }
                    forgetWait(owners.get(0));
                    for (String o : owners) {
                        places.remove(o);
                    }
                    if (taken[0] == null) { // no lease, nothing put
                        slots.forEach(keys::gone);
                    } else {
                        keys.deleteUntilConfirmed(slots, undo);
                    }
                    return Mono.error(e);
                });
    }

    /** A retried put found keys of the owners: the whole unit is adopted, a part of one is given up. */
    private Mono<PermitGrant> adopt(String name, List<String> owners, int permits, boolean waiting, Duration leaseTime,
            long ttlSeconds, List<GetResponse> found) {
        List<Place> mine = new ArrayList<>(owners.size());
        for (int i = 0; i < found.size(); i++) {
            GetResponse g = found.get(i);
            // only a key whose value names the owner is its own (a slot is reused by the owners of this store)
            if (!g.getKvs().isEmpty() && owners.get(i).equals(LeasedKeys.ownerOf(g.getKvs().get(0)))) {
                KeyValue kv = g.getKvs().get(0);
                // lease age unknown: refreshed before it is handed out
                mine.add(new Place(kv.getCreateRevision(), EtcdPermitKeys.indexOf(kv.getValue()),
                        keys.leases().adopt(kv.getLease(), ttlSeconds)));
            }
        }
        if (mine.size() < owners.size() || mine.stream().anyMatch(p -> p.revision() != mine.get(0).revision())) {
            return forget(name, owners).thenReturn((PermitGrant) new PermitGrant.Busy(null));
        }
        for (int i = 0; i < owners.size(); i++) {
            places.put(owners.get(i), mine.get(i));
        }
        return check(name, owners, permits, waiting, leaseTime, mine);
    }

    /**
     * Holds at once when the owners' line watch saw them let in ({@link LineWatch}); else reads the
     * unit's keys and the N + 1 keys just before it, then decides.
     */
    private Mono<PermitGrant> check(String name, List<String> owners, int permits, boolean waiting, Duration leaseTime, List<Place> mine) {
        if (letIn.remove(owners.get(0))) {
            forgetWait(owners.get(0));
            return granted(name, owners, leaseTime, mine);
        }
        long unit = mine.get(0).revision();
        return Mono.fromFuture(() -> client.getKVClient().get(range(name), newest(owners.size(), permits, unit)))
                .flatMap(r -> decide(name, owners, permits, waiting, leaseTime, mine, r.getKvs(), r.getHeader().getRevision(), -1));
    }

    /**
     * @param read     the newest keys up to the unit's, newest first: the unit's, then up to N + 1 before it
     * @param revision the store revision of that read
     * @param counted  the keys before the unit at that revision, when known (the put's read); else -1
     */
    private Mono<PermitGrant> decide(String name, List<String> owners, int permits, boolean waiting, Duration leaseTime,
            List<Place> mine, List<KeyValue> read, long revision, long counted) {
        long unit = mine.get(0).revision();
        int ours = 0;
        List<KeyValue> preceding = new ArrayList<>(read.size());
        for (KeyValue kv : read) {
            if (kv.getCreateRevision() == unit) {
                ours++;
            } else if (kv.getCreateRevision() < unit) {
                preceding.add(kv);
            }
        }
        if (ours < owners.size()) { // a key of the unit is gone (its lease ran out, or a release raced): start again
            return forget(name, owners).thenReturn((PermitGrant) new PermitGrant.Busy(null));
        }
        String first = owners.get(0);
        if (preceding.size() + owners.size() <= permits) { // the unit and the keys before it fit: every permit holds
            forgetWait(first);
            return granted(name, owners, leaseTime, mine);
        }
        if (!waiting) {
            return forget(name, owners).thenReturn((PermitGrant) new PermitGrant.Busy(null));
        }
        if (permits == 1) {
            before.put(first, waitFor(preceding, revision));
        } else {
            // the read saw every key before the unit when it saw at most N of them (it reads N + 1)
            int known = counted >= 0 ? (int) counted : preceding.size() <= permits ? preceding.size() : -1;
            lines.put(first, new LineWatch.Line(range(name), unit, owners.size(), permits, revision, known));
        }
        // waiting keeps the leases alive: refresh those not refreshed within a third of the lease time
        if (sinceRefreshed(mine) < leaseTime.toNanos() / 3) {
            return Mono.just(new PermitGrant.Busy(null));
        }
        return refresh(mine).flatMap(alive -> alive ? Mono.just((PermitGrant) new PermitGrant.Busy(null))
                // a lease ran out while waiting: the place is gone, take a new one at the end of the line
                : forget(name, owners).thenReturn((PermitGrant) new PermitGrant.Busy(null)));
    }

    /** The unit holds: its tokens, its leases refreshed first unless they were within a third of the lease time. */
    private Mono<PermitGrant> granted(String name, List<String> owners, Duration leaseTime, List<Place> mine) {
        List<Long> tokens = new ArrayList<>(mine.size());
        for (Place p : mine) {
            tokens.add(p.token());
        }
        long elapsed = sinceRefreshed(mine);
        if (elapsed < leaseTime.toNanos() / 3) {
            // the leases were put or refreshed moments ago: what is left of them is the TTL
            return Mono.just(new PermitGrant.Granted(tokens, leaseTime.minusNanos(elapsed)));
        }
        return refresh(mine).flatMap(alive -> alive
                ? Mono.just((PermitGrant) new PermitGrant.Granted(tokens, leaseTime))
                : forget(name, owners).thenReturn((PermitGrant) new PermitGrant.Busy(null)));
    }

    /**
     * What a refused waiter with N = 1 watches: the key just before its unit, for its deletion (a FIFO
     * line: a release wakes the one waiter it lets in). With N &gt; 1 the waiter counts the keys
     * before it down instead ({@link LineWatch}).
     *
     * @param preceding the keys just before the waiter's unit, newest first (never empty when refused)
     */
    private static WaiterWatch.Wait waitFor(List<KeyValue> preceding, long revision) {
        return new WaiterWatch.Wait(revision, WaiterWatch.Seen.key(preceding.get(0), false));
    }

    /** @return nanos since the least recently confirmed lease of the keys was last kept alive */
    private static long sinceRefreshed(List<Place> mine) {
        long oldest = Long.MAX_VALUE;
        for (Place p : mine) {
            oldest = Math.min(oldest, p.lease().refreshedNanos());
        }
        return System.nanoTime() - oldest;
    }

    /** Forgets the wait of an attempt (by its first owner): its watch target, its line, its let-in. */
    private void forgetWait(String first) {
        before.remove(first);
        lines.remove(first);
        letIn.remove(first);
    }

    /** @return keeps every lease of the owners' keys alive (one keep-alive per distinct lease); false when one of them is gone */
    private Mono<Boolean> refresh(List<Place> mine) {
        Map<Long, SharedLeases.Shared> distinct = new LinkedHashMap<>();
        for (Place p : mine) {
            distinct.putIfAbsent(p.lease().id, p.lease());
        }
        return Flux.fromIterable(distinct.values()).flatMap(keys.leases()::keepAlive).all(ttl -> ttl > 0);
    }

    /** Deletes every key of the owners (known or found) and forgets them. */
    private Mono<Void> forget(String name, List<String> owners) {
        forgetWait(owners.get(0));
        return Flux.fromIterable(owners).concatMap(o -> release(name, List.of(o))).then();
    }

    /**
     * Watches the keys that stood before the owners' place at their last refused attempt, from now on,
     * with a read of them when the watch started after a change since that attempt ({@link
     * WaiterWatch}): completes on the first
     * deletion (or put, where chosen), or when a watch ends or fails; at once when no place is known.
     */
    @Override
    public Mono<Void> awaitTurn(String name, List<String> owners) {
        return Mono.defer(() -> {
            String first = owners.get(0);
            LineWatch.Line line = lines.get(first);
            if (line != null) {
                // a watch that fails or ends asks again (the engine's next attempt reads)
                return lineWatch.await(line)
                        .onErrorResume(e -> Mono.just(LineWatch.End.LOOK_AGAIN))
                        .doOnNext(end -> {
                            if (end == LineWatch.End.LET_IN && lines.get(first) == line) {
                                letIn.add(first);
                            }
                        })
                        .then();
            }
            WaiterWatch.Wait w = before.get(first);
            return w == null ? Mono.<Void>empty() : keys.deletion(w);
        }).onErrorMap(e -> EtcdErrors.map(name, "semaphore wait", e));
    }

    /**
     * The permits this store put: one read of their keys and one keep-alive per lease they are on,
     * together; others found by a read each.
     */
    @Override
    public Mono<List<RenewOutcome>> renew(List<RenewRequest> batch) {
        return keys.renew(batch, r -> {
                    Place known = places.get(r.lock().owner());
                    ByteSequence k = known == null || known.token() != r.lock().token() ? null : key(r.lock().name(), r.lock().owner());
                    return k == null ? null : new LeasedKeys.Known(k, known.revision(), known.lease());
                }, EtcdPermitKeys::token)
                .onErrorMap(e -> EtcdErrors.map(batch.get(0).lock().name(), "semaphore renewal", e));
    }

    @Override
    public Mono<Boolean> release(String name, String owner) {
        return release(name, List.of(owner)).onErrorMap(e -> EtcdErrors.map(name, "semaphore release", e));
    }

    /**
     * Deletes each owner's key: the one this store put if known, plain or guarded ({@link LeasedKeys#deleteKnown}; a
     * delete that fails is sent again until etcd confirms it, its slot reserved until then), else
     * found by a read; the owner's slot is freed once its key is known gone.
     */
    private Mono<Boolean> release(String name, List<String> owners) {
        return Flux.fromIterable(owners)
                .concatMap(o -> {
                    forgetWait(o);
                    Place known = places.remove(o);
                    LockSlots.Place slot = known == null ? null : keys.find(name, o);
                    if (slot != null) {
                        return keys.deleteKnown(slot, known.revision(), known.lease());
                    }
                    return keys.release(name, o);
                })
                .reduce(false, Boolean::logicalOr);
    }

    /** The holding keys ({@link EtcdPermitKeys#holding}), in token order. */
    @Override
    public Mono<List<Holder>> holders(String name) {
        GetOption all = GetOption.builder().isPrefix(true)
                .withSortField(GetOption.SortTarget.CREATE).withSortOrder(GetOption.SortOrder.ASCEND).build();
        return Mono.defer(() -> Mono.fromFuture(() -> client.getKVClient().get(range(name), all)))
                .flatMapMany(r -> Flux.fromIterable(EtcdPermitKeys.holding(r.getKvs())))
                .concatMap(kv -> Mono.fromFuture(() -> client.getLeaseClient().timeToLive(kv.getLease(), LeaseOption.DEFAULT))
                        .map(ttl -> new Holder(LeasedKeys.ownerOf(kv), EtcdPermitKeys.token(kv), Duration.ofSeconds(Math.max(0, ttl.getTTL())))))
                .collectList()
                .onErrorMap(e -> EtcdErrors.map(name, "semaphore read", e));
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
        return keys.revoke(name, owner, reason).onErrorMap(e -> EtcdErrors.map(name, "semaphore revocation request", e));
    }

    /**
     * The name's change stream ({@link LeasedKeys#events}): puts and deletions of its keys, and the
     * revocation requests put while it watches.
     */
    @Override
    public Flux<LockEvent> events(String name) {
        return keys.events(name, EtcdPermitKeys::token);
    }

    @Override
    public Mono<Void> close() {
        lineWatch.close();
        keys.close();
        return ownsClient ? Mono.<Void>fromRunnable(client::close).subscribeOn(Schedulers.boundedElastic()) : Mono.empty();
    }

    @Override
    public String toString() {
        return "EtcdSemaphoreStore{" + keys.prefix() + "}";
    }
}
