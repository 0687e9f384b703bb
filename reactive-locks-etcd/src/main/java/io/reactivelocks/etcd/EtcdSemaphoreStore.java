package io.reactivelocks.etcd;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.Watch;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.DeleteOption;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.LeaseOption;
import io.etcd.jetcd.options.PutOption;
import io.etcd.jetcd.options.WatchOption;
import io.etcd.jetcd.watch.WatchEvent;
import io.reactivelocks.spi.Holder;
import io.reactivelocks.spi.LockEvent;
import io.reactivelocks.spi.RenewOutcome;
import io.reactivelocks.spi.RenewRequest;
import io.reactivelocks.spi.semaphore.PermitGrant;
import io.reactivelocks.spi.semaphore.SemaphoreStore;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Semaphores on etcd: each permit is a key {@code <prefix>-semaphore/<base64url(name)>/<owner>} on a
 * lease of its own (TTL = the lease time, rounded up to whole seconds), so a dead holder's permit
 * goes when its lease runs out; its value is the N of the call that put it, in decimal. In
 * create-revision order a key holds while fewer than its N keys precede it — granted keys and
 * waiting ones alike, a FIFO queue — and the token is its create revision (global, strictly
 * increasing, across restarts). A grant puts the owners' keys, one transaction each (keys put
 * together would share a revision, hence a token); the last transaction also reads the keys just
 * before it: granted when fewer than N precede the owners' last key. Any key below a granted one
 * existed when that grant checked, so at most N keys are ever granted at once. Who holds follows
 * from the keys alone (no mark is written at the grant). Renewal is a {@code keepAliveOnce} of the
 * permit's lease; release revokes the lease (which deletes the key).
 *
 * <p>No herd: a waiting caller keeps its keys (its place in the queue, its leases kept alive while
 * it waits) and, refused, watches only what can let it in ({@link #awaitTurn}): for N = 1 the key just
 * before its own, so a release wakes the one waiter it lets in and a waiter joining or leaving wakes
 * nobody but its successor; for N > 1 the key of the waiter before it (which, let in, tells it by a
 * put), or — the head of the line — the name's deletions (any holder's release may let it in). A single
 * attempt ({@code waiting == false}) reads first and puts nothing when the keys there already take
 * the permits, and revokes what it put when refused. The name's change stream ({@link #events}) is
 * for observers.
 */
final class EtcdSemaphoreStore implements SemaphoreStore {

    private final Client client;
    private final boolean ownsClient;
    private final String prefix;
    /** The key of each owner this store put and has not released: grants and waiting places. */
    private final Map<String, Place> places = new ConcurrentHashMap<>();
    /** Of each refused waiting attempt (by its first owner): the keys whose deletion may let it in, and from which revision. */
    private final Map<String, Blockers> before = new ConcurrentHashMap<>();

    /** A key this store put: its create revision (the token), its lease and when that lease was last refreshed. */
    private record Place(long revision, long lease, long refreshedNanos) {
    }

    /**
     * What a refused waiter watches, from {@code revision} on (the read that refused it): a key (for
     * its deletion, and with {@code puts} its change too) or the name's prefix (deletions).
     */
    private record Blockers(List<ByteSequence> keys, boolean prefix, boolean puts, long revision) {
    }

    /**
     * @param client     the jetcd client
     * @param ownsClient whether {@link #close()} closes it
     * @param prefix     the key prefix of the semaphore keys (the lock prefix + {@code "-semaphore"})
     */
    EtcdSemaphoreStore(Client client, boolean ownsClient, String prefix) {
        this.client = Objects.requireNonNull(client, "client");
        this.ownsClient = ownsClient;
        this.prefix = EtcdKeys.checkPrefix(prefix);
    }

    ByteSequence range(String name) {
        return EtcdKeys.bytes(prefix + "/" + EtcdKeys.encode(name) + "/");
    }

    ByteSequence key(String name, String owner) {
        return EtcdKeys.bytes(prefix + "/" + EtcdKeys.encode(name) + "/" + owner);
    }

    private String ownerOf(String name, ByteSequence key) {
        String k = key.toString(StandardCharsets.UTF_8);
        return k.substring(range(name).toString(StandardCharsets.UTF_8).length());
    }

    @Override
    public String name() {
        return "etcd";
    }

    @Override
    public boolean queues() {
        return true;
    }

    private static ByteSequence value(int permits) {
        return ByteSequence.from(Integer.toString(permits), StandardCharsets.US_ASCII);
    }

    /** @return the N a key was put with, or 0 when its value is not one (it then holds nothing) */
    private static int permitsOf(ByteSequence value) {
        try {
            return Integer.parseInt(value.toString(StandardCharsets.US_ASCII));
        } catch (NumberFormatException e) {
            return 0;
        }
    }

    /** A single attempt: nothing left when refused. */
    @Override
    public Mono<PermitGrant> tryGrant(String name, List<String> owners, int permits, Duration leaseTime) {
        return tryGrant(name, owners, permits, false, leaseTime);
    }

    @Override
    public Mono<PermitGrant> tryGrant(String name, List<String> owners, int permits, boolean waiting, Duration leaseTime) {
        long ttlSeconds = Math.max(1, (leaseTime.toMillis() + 999) / 1000);
        return Mono.defer(() -> {
            List<Place> known = new ArrayList<>(owners.size());
            for (String o : owners) {
                Place p = places.get(o);
                if (p != null) {
                    known.add(p);
                }
            }
            if (known.size() == owners.size()) { // our place in the queue (or a retried grant): look again
                return check(name, owners, permits, waiting, leaseTime, known);
            }
            if (!known.isEmpty()) { // partly put (an attempt failed midway): start again
                return forget(name, owners).thenReturn((PermitGrant) new PermitGrant.Busy(null));
            }
            if (waiting) {
                return ask(name, owners, permits, waiting, leaseTime, ttlSeconds);
            }
            GetOption count = GetOption.builder().isPrefix(true).withCountOnly(true).build();
            return Mono.fromFuture(() -> client.getKVClient().get(range(name), count)).flatMap(r -> r.getCount() + owners.size() > permits
                    // busy without putting a key: nothing to undo, no successor woken
                    ? Mono.just((PermitGrant) new PermitGrant.Busy(null))
                    : ask(name, owners, permits, false, leaseTime, ttlSeconds));
        }).onErrorMap(e -> EtcdErrors.map(name, "semaphore grant", e));
    }

    /** Puts the owners' keys, one lease and one transaction each; the last transaction reads the keys before it. */
    private Mono<PermitGrant> ask(String name, List<String> owners, int permits, boolean waiting, Duration leaseTime, long ttlSeconds) {
        GetOption newest = GetOption.builder().isPrefix(true).withKeysOnly(true)
                .withSortField(GetOption.SortTarget.CREATE).withSortOrder(GetOption.SortOrder.DESCEND)
                .withLimit(permits + 2L).build();
        List<Long> leases = new ArrayList<>(owners.size());
        return Flux.range(0, owners.size())
                .concatMap(i -> Mono.fromFuture(() -> client.getLeaseClient().grant(ttlSeconds)).map(l -> l.getID()).flatMap(lease -> {
                    leases.add(lease);
                    long sent = System.nanoTime();
                    String o = owners.get(i);
                    ByteSequence k = key(name, o);
                    boolean last = i == owners.size() - 1;
                    var txn = client.getKVClient().txn()
                            .If(new Cmp(k, Cmp.Op.EQUAL, CmpTarget.createRevision(0)));
                    txn = last ? txn.Then(Op.put(k, value(permits), PutOption.builder().withLeaseId(lease).build()),
                                    Op.get(range(name), newest))
                            : txn.Then(Op.put(k, value(permits), PutOption.builder().withLeaseId(lease).build()));
                    var commit = txn.Else(Op.get(k, GetOption.DEFAULT));
                    return Mono.fromFuture(commit::commit).map(r -> {
                        if (!r.isSucceeded()) { // a retried put found our key: adopt it (and drop the new lease)
                            KeyValue kv = r.getGetResponses().get(0).getKvs().get(0);
                            places.put(o, new Place(kv.getCreateRevision(), kv.getLease(), sent - (1L << 62))); // lease age unknown: refresh
                            revoke(lease).subscribe();
                            return List.<KeyValue>of();
                        }
                        places.put(o, new Place(r.getHeader().getRevision(), lease, sent));
                        return last ? r.getGetResponses().get(0).getKvs() : List.<KeyValue>of();
                    });
                }))
                .last()
                .flatMap(newestKeys -> {
                    List<Place> mine = new ArrayList<>(owners.size());
                    for (String o : owners) {
                        mine.add(places.get(o));
                    }
                    if (newestKeys.isEmpty()) { // adopted: read the queue again
                        return check(name, owners, permits, waiting, leaseTime, mine);
                    }
                    // the newest key is our last one; the next ones are those just before it
                    return decide(name, owners, permits, waiting, leaseTime, mine,
                            newestKeys.subList(1, newestKeys.size()), newestKeys.get(0).getModRevision(), false);
                })
                .onErrorResume(e -> forget(name, owners).then(Mono.error(e)));
    }

    /** Reads the N keys just before the owners' last one, then decides. */
    private Mono<PermitGrant> check(String name, List<String> owners, int permits, boolean waiting, Duration leaseTime, List<Place> mine) {
        long last = 0;
        for (Place p : mine) {
            last = Math.max(last, p.revision());
        }
        GetOption justBefore = GetOption.builder().isPrefix(true).withKeysOnly(true)
                .withSortField(GetOption.SortTarget.CREATE).withSortOrder(GetOption.SortOrder.DESCEND)
                .withMaxCreateRevision(last - 1).withLimit(permits + 1L).build();
        return Mono.fromFuture(() -> client.getKVClient().get(range(name), justBefore))
                .flatMap(r -> decide(name, owners, permits, waiting, leaseTime, mine, r.getKvs(), r.getHeader().getRevision(), true));
    }

    /**
     * @param preceding the keys just before the owners' last key, newest first, at most N + 1 of them (our own among them)
     * @param revision  the store revision of that read
     * @param waited    whether the keys were put by an earlier attempt (a waiter behind ours may watch them)
     */
    private Mono<PermitGrant> decide(String name, List<String> owners, int permits, boolean waiting, Duration leaseTime,
            List<Place> mine, List<KeyValue> preceding, long revision, boolean waited) {
        String first = owners.get(0);
        if (preceding.size() < permits) { // fewer than N keys before our last one: every one of ours holds
            before.remove(first);
            // N > 1: a waiter behind ours may watch our last key (not the holders): tell it we are in, by
            // a put of the same value (N = 1 needs none: there the waiter behind waits for our key to go)
            Mono<Void> tell = Mono.empty();
            if (waited && permits > 1) {
                String lastOwner = owners.get(0);
                Place lastPlace = mine.get(0);
                for (int i = 1; i < mine.size(); i++) {
                    if (mine.get(i).revision() > lastPlace.revision()) {
                        lastPlace = mine.get(i);
                        lastOwner = owners.get(i);
                    }
                }
                ByteSequence k = key(name, lastOwner);
                Place lp = lastPlace;
                tell = Mono.fromFuture(() -> client.getKVClient().txn()
                        .If(new Cmp(k, Cmp.Op.EQUAL, CmpTarget.createRevision(lp.revision())))
                        .Then(Op.put(k, value(permits), PutOption.builder().withLeaseId(lp.lease()).build()))
                        .commit()).then();
            }
            Mono<Void> told = tell;
            List<Long> tokens = new ArrayList<>(mine.size());
            long oldest = Long.MAX_VALUE;
            for (Place p : mine) {
                tokens.add(p.revision());
                oldest = Math.min(oldest, p.refreshedNanos());
            }
            long elapsed = System.nanoTime() - oldest;
            if (elapsed < leaseTime.toNanos() / 3) {
                // the leases were put or refreshed moments ago: what is left of them is the TTL
                return told.thenReturn(new PermitGrant.Granted(tokens, leaseTime.minusNanos(elapsed)));
            }
            return told.then(refresh(owners, mine)).thenReturn(new PermitGrant.Granted(tokens, leaseTime));
        }
        if (!waiting) {
            return forget(name, owners).thenReturn((PermitGrant) new PermitGrant.Busy(null));
        }
        before.put(first, waitFor(name, owners, permits, preceding, revision + 1));
        // waiting keeps the leases alive: refresh those not refreshed within a third of the lease time
        long oldest = Long.MAX_VALUE;
        for (Place p : mine) {
            oldest = Math.min(oldest, p.refreshedNanos());
        }
        Mono<Void> keep = System.nanoTime() - oldest < leaseTime.toNanos() / 3 ? Mono.empty() : refresh(owners, mine);
        return keep.thenReturn((PermitGrant) new PermitGrant.Busy(null));
    }

    /**
     * What a refused waiter watches. N = 1: the key just before its own, for its deletion (a FIFO
     * line). N > 1: behind another waiter (N + 1 keys or more before ours), that waiter's key, for its
     * deletion or its put when it is let in; at the head of the line (only holders before it) the
     * name's keys, for any deletion — watching each of the N keys before it instead would cost N
     * watches per wait and wake up to N waiters per release.
     */
    private Blockers waitFor(String name, List<String> owners, int permits, List<KeyValue> preceding, long from) {
        KeyValue previous = preceding.get(0);
        if (permits == 1) {
            return new Blockers(List.of(previous.getKey()), false, false, from);
        }
        if (preceding.size() > permits && !owners.contains(ownerOf(name, previous.getKey()))) {
            return new Blockers(List.of(previous.getKey()), false, true, from);
        }
        return new Blockers(List.of(range(name)), true, false, from);
    }

    private Mono<Void> refresh(List<String> owners, List<Place> mine) {
        return Flux.range(0, owners.size())
                .concatMap(i -> {
                    Place p = mine.get(i);
                    long sent = System.nanoTime();
                    return keepAlive(p.lease()).doOnNext(ttl -> places.computeIfPresent(owners.get(i),
                            (o, q) -> q.lease() == p.lease() ? new Place(q.revision(), q.lease(), sent) : q));
                })
                .then();
    }

    /** Revokes every key of the owners (known or found) and forgets them. */
    private Mono<Void> forget(String name, List<String> owners) {
        before.remove(owners.get(0));
        return Flux.fromIterable(owners).concatMap(o -> release(name, List.of(o))).then();
    }

    /**
     * Watches the keys that stood before the owners' place at their last refused attempt, from the
     * revision after that read (so a deletion in between is delivered too): completes on the first
     * deletion, or when a watch ends or fails; at once when no place is known.
     */
    @Override
    public Mono<Void> awaitTurn(String name, List<String> owners) {
        return Mono.defer(() -> {
            Blockers b = before.get(owners.get(0));
            if (b == null || b.keys().isEmpty()) {
                return Mono.<Void>empty();
            }
            return deletion(b.keys(), b.prefix(), b.puts(), b.revision());
        }).onErrorMap(e -> EtcdErrors.map(name, "semaphore wait", e));
    }

    /**
     * @param keys     the keys (or key prefixes) to watch
     * @param prefix   whether each is a prefix
     * @param puts     whether a put wakes too (else deletions only)
     * @param revision the revision to watch from (a change since then is delivered too)
     * @return completes on the first deletion (or put), or when a watch ends or fails (compacted, lost:
     *         ask again); cancel closes the watches
     */
    Mono<Void> deletion(List<ByteSequence> keys, boolean prefix, boolean puts, long revision) {
        return Mono.create(sink -> {
            List<Watch.Watcher> watchers = new ArrayList<>(keys.size());
            WatchOption option = WatchOption.builder().isPrefix(prefix).withRevision(revision).withNoPut(!puts).build();
            sink.onDispose(() -> {
                synchronized (watchers) {
                    watchers.forEach(Watch.Watcher::close);
                    watchers.clear();
                }
            });
            for (ByteSequence k : keys) {
                Watch.Watcher w = client.getWatchClient().watch(k, option, Watch.listener(
                        response -> {
                            if (!response.getEvents().isEmpty()) {
                                sink.success();
                            }
                        },
                        error -> sink.success(),
                        sink::success));
                synchronized (watchers) {
                    watchers.add(w);
                }
            }
        });
    }

    private Mono<Long> keepAlive(long leaseId) {
        return Mono.fromFuture(() -> client.getLeaseClient().keepAliveOnce(leaseId)).map(r -> r.getTTL());
    }

    private Mono<Void> revoke(long lease) {
        return Mono.fromFuture(() -> client.getLeaseClient().revoke(lease)).onErrorResume(e -> Mono.empty()).then();
    }

    @Override
    public Mono<List<RenewOutcome>> renew(List<RenewRequest> batch) {
        return Flux.fromIterable(batch).concatMap(r -> {
                    Place known = places.get(r.lock().owner());
                    if (known != null && known.revision() == r.lock().token()) {
                        // the lease of the key this store put: the key lives exactly as long as it
                        return keepAlive(known.lease())
                                .map(ttl -> ttl <= 0 ? RenewOutcome.notHeld() : RenewOutcome.renewed(min(r.leaseTime(), Duration.ofSeconds(ttl))))
                                .onErrorResume(EtcdErrors::isLeaseNotFound, e -> Mono.just(RenewOutcome.notHeld()))
                                .onErrorMap(e -> EtcdErrors.map(r.lock().name(), "semaphore renewal", e));
                    }
                    return Mono.fromFuture(() -> client.getKVClient().get(key(r.lock().name(), r.lock().owner())))
                        .flatMap(got -> {
                            if (got.getKvs().isEmpty() || got.getKvs().get(0).getCreateRevision() != r.lock().token()) {
                                return Mono.just(RenewOutcome.notHeld());
                            }
                            return keepAlive(got.getKvs().get(0).getLease()).map(ttl -> ttl <= 0 ? RenewOutcome.notHeld()
                                    : RenewOutcome.renewed(min(r.leaseTime(), Duration.ofSeconds(ttl))));
                        })
                        .onErrorResume(EtcdErrors::isLeaseNotFound, e -> Mono.just(RenewOutcome.notHeld()))
                        .onErrorMap(e -> EtcdErrors.map(r.lock().name(), "semaphore renewal", e));
                })
                .collectList();
    }

    private static Duration min(Duration a, Duration b) {
        return a.compareTo(b) <= 0 ? a : b;
    }

    @Override
    public Mono<Boolean> release(String name, String owner) {
        return release(name, List.of(owner)).onErrorMap(e -> EtcdErrors.map(name, "semaphore release", e));
    }

    /** Revokes each owner's lease (which deletes its key): the one this store put if known, else found by a read. */
    private Mono<Boolean> release(String name, List<String> owners) {
        return Flux.fromIterable(owners)
                .concatMap(o -> {
                    before.remove(o);
                    Place known = places.remove(o);
                    if (known != null) {
                        return Mono.fromFuture(() -> client.getLeaseClient().revoke(known.lease())).thenReturn(true)
                                .onErrorResume(EtcdErrors::isLeaseNotFound, e -> Mono.just(false));
                    }
                    return Mono.fromFuture(() -> client.getKVClient().get(key(name, o))).flatMap(r -> {
                        if (r.getKvs().isEmpty()) {
                            return Mono.just(false);
                        }
                        KeyValue kv = r.getKvs().get(0);
                        // revoking the lease deletes the key; a key without a lease is deleted directly
                        return (kv.getLease() == 0
                                ? Mono.fromFuture(() -> client.getKVClient().delete(kv.getKey(), DeleteOption.DEFAULT)).then()
                                : Mono.fromFuture(() -> client.getLeaseClient().revoke(kv.getLease()))
                                        .onErrorResume(EtcdErrors::isLeaseNotFound, e -> Mono.empty()).then())
                                .thenReturn(true);
                    });
                })
                .reduce(false, Boolean::logicalOr);
    }

    @Override
    public Mono<List<Holder>> holders(String name) {
        GetOption all = GetOption.builder().isPrefix(true)
                .withSortField(GetOption.SortTarget.CREATE).withSortOrder(GetOption.SortOrder.ASCEND).build();
        return Mono.defer(() -> Mono.fromFuture(() -> client.getKVClient().get(range(name), all)))
                .flatMapMany(r -> Flux.range(0, r.getKvs().size()).filter(i -> i < permitsOf(r.getKvs().get(i).getValue()))
                        .map(i -> r.getKvs().get(i)))
                .concatMap(kv -> Mono.fromFuture(() -> client.getLeaseClient().timeToLive(kv.getLease(), LeaseOption.DEFAULT))
                        .map(ttl -> new Holder(ownerOf(name, kv.getKey()), kv.getCreateRevision(), Duration.ofSeconds(Math.max(0, ttl.getTTL())))))
                .collectList()
                .onErrorMap(e -> EtcdErrors.map(name, "semaphore read", e));
    }

    @Override
    public Flux<LockEvent> events(String name) {
        return Flux.create(sink -> {
            WatchOption option = WatchOption.builder().isPrefix(true).withCreateNotify(true).build();
            Watch.Watcher w = client.getWatchClient().watch(range(name), option, Watch.listener(
                    response -> {
                        if (response.isCreatedNotify()) {
                            sink.next(new LockEvent.Subscribed(name));
                            return;
                        }
                        for (WatchEvent e : response.getEvents()) {
                            KeyValue kv = e.getKeyValue();
                            if (e.getEventType() == WatchEvent.EventType.DELETE) {
                                sink.next(new LockEvent.Released(name, ownerOf(name, kv.getKey()), false));
                            } else if (e.getEventType() == WatchEvent.EventType.PUT) { // a key joined (holding or waiting)
                                sink.next(new LockEvent.Acquired(name, ownerOf(name, kv.getKey()), kv.getCreateRevision()));
                            }
                        }
                    },
                    error -> {
                        if (!EtcdErrors.isTransient(error)) {
                            sink.error(EtcdErrors.map(name, "watch", error));
                        }
                    },
                    sink::complete));
            sink.onDispose(w::close);
        });
    }

    @Override
    public Mono<Void> close() {
        return ownsClient ? Mono.fromRunnable(client::close) : Mono.empty();
    }

    @Override
    public String toString() {
        return "EtcdSemaphoreStore{" + prefix + "}";
    }
}
