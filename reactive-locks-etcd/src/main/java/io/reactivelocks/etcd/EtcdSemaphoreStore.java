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
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Semaphores on etcd: each permit is a key {@code <prefix>-semaphore/<base64url(name)>/<owner>} on a
 * lease of its own (TTL = the lease time, rounded up to whole seconds), so a dead holder's permit
 * goes when its lease runs out. A grant puts the owners' keys (value {@code 0}, "asking"), one
 * transaction each, then reads the name's keys in create-revision order: when every new key is among the
 * N lowest, the permits are granted (value set to {@code 1}) and each token is its key's create
 * revision (global, strictly increasing, across restarts); otherwise the keys are deleted again and
 * the answer is busy. Any key below a granted one existed when that grant checked, so at most N
 * keys are ever granted at once; asking keys only make grants rarer. Renewal is a
 * {@code keepAliveOnce} of the permit's lease after checking its key; release revokes the lease.
 * Waiters watch the name's keys and wake on deletions of keys that held (or whose value is unknown).
 *
 * <p>No herd: an attempt reads the name's keys first (keys only) and answers busy without putting
 * anything when the keys there already take the permits (a held key stays among the N lowest, so
 * the count is never below the holders). A waiter thus deletes nothing while it waits: a deletion
 * is a release (or a grant attempt that lost a race), and each wakes one local waiter (the engine's
 * choice for a semaphore) instead of a chain of asking keys put and deleted that woke the others in
 * turn. A key deleted while still asking (an attempt that lost a race to a lower key) wakes no one:
 * it freed no permit, and the lower key is then held or asking, so its own deletion follows. (An
 * asking key left by an attempt that failed midway is revoked without waking; a waiter it refused
 * asks again after its backoff.) Waiters keep no key (no place in a queue): which waiter gets a
 * freed permit is the engine's order, not the create revision.
 */
final class EtcdSemaphoreStore implements SemaphoreStore {

    private static final ByteSequence ASKING = ByteSequence.from("0", StandardCharsets.US_ASCII);
    private static final ByteSequence HELD = ByteSequence.from("1", StandardCharsets.US_ASCII);

    private final Client client;
    private final boolean ownsClient;
    private final String prefix;

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
    public Mono<PermitGrant> tryGrant(String name, List<String> owners, int permits, Duration leaseTime) {
        long ttlSeconds = Math.max(1, (leaseTime.toMillis() + 999) / 1000);
        GetOption keys = GetOption.builder().isPrefix(true).withKeysOnly(true).build();
        return Mono.defer(() -> Mono.fromFuture(() -> client.getKVClient().get(range(name), keys))
                .flatMap(existing -> {
                    String first = owners.get(0);
                    for (KeyValue kv : existing.getKvs()) {
                        if (ownerOf(name, kv.getKey()).equals(first)) {
                            return again(name, owners, leaseTime); // a retried request
                        }
                    }
                    if (existing.getKvs().size() + owners.size() > permits) {
                        // busy without putting a key: a key put and deleted again would wake the
                        // other waiters to ask in turn (a herd that feeds itself)
                        return Mono.just((PermitGrant) new PermitGrant.Busy(null));
                    }
                    return ask(name, owners, permits, leaseTime, ttlSeconds);
                }))
                .onErrorMap(e -> EtcdErrors.map(name, "semaphore grant", e));
    }

    /** A retried request: the owners' keys exist; refresh their leases and return their tokens. */
    private Mono<PermitGrant> again(String name, List<String> owners, Duration leaseTime) {
        return Flux.fromIterable(owners)
                .concatMap(o -> Mono.fromFuture(() -> client.getKVClient().get(key(name, o)))
                        .flatMap(r -> r.getKvs().isEmpty() || !HELD.equals(r.getKvs().get(0).getValue())
                                ? Mono.error(new IllegalStateException("a retried grant found its keys incomplete"))
                                : keepAlive(r.getKvs().get(0).getLease()).thenReturn(r.getKvs().get(0).getCreateRevision())))
                .collectList()
                .map(tokens -> (PermitGrant) new PermitGrant.Granted(tokens, leaseTime))
                .onErrorResume(IllegalStateException.class, e -> release(name, owners).thenReturn(new PermitGrant.Busy(null)));
    }

    private Mono<PermitGrant> ask(String name, List<String> owners, int permits, Duration leaseTime, long ttlSeconds) {
        return Flux.fromIterable(owners)
                .concatMap(o -> Mono.fromFuture(() -> client.getLeaseClient().grant(ttlSeconds)).map(l -> l.getID()))
                .collectList()
                .flatMap(leases -> Flux.range(0, owners.size())
                        // one transaction per key: keys put together would share a revision, hence a token
                        .concatMap(i -> {
                            ByteSequence k = key(name, owners.get(i));
                            return Mono.fromFuture(() -> client.getKVClient().txn()
                                    .If(new Cmp(k, Cmp.Op.EQUAL, CmpTarget.createRevision(0)))
                                    .Then(Op.put(k, ASKING, PutOption.builder().withLeaseId(leases.get(i)).build()))
                                    .commit());
                        })
                        .all(r -> r.isSucceeded())
                        .flatMap(ok -> ok ? check(name, owners, permits, leaseTime, leases)
                                : revokeAll(leases).thenReturn((PermitGrant) new PermitGrant.Busy(null)))
                        .onErrorResume(e -> revokeAll(leases).then(Mono.error(e))));
    }

    /** Granted when every new key is among the N lowest create revisions of the name. */
    private Mono<PermitGrant> check(String name, List<String> owners, int permits, Duration leaseTime, List<Long> leases) {
        GetOption lowest = GetOption.builder().isPrefix(true).withKeysOnly(true)
                .withSortField(GetOption.SortTarget.CREATE).withSortOrder(GetOption.SortOrder.ASCEND)
                .withLimit(permits).build();
        return Mono.fromFuture(() -> client.getKVClient().get(range(name), lowest)).flatMap(r -> {
            Map<String, Long> revisions = new HashMap<>();
            for (KeyValue kv : r.getKvs()) {
                revisions.put(ownerOf(name, kv.getKey()), kv.getCreateRevision());
            }
            List<Long> tokens = new ArrayList<>(owners.size());
            for (String o : owners) {
                Long rev = revisions.get(o);
                if (rev == null) {
                    return revokeAll(leases).thenReturn((PermitGrant) new PermitGrant.Busy(null));
                }
                tokens.add(rev);
            }
            return Flux.range(0, owners.size())
                    .concatMap(i -> Mono.fromFuture(() -> client.getKVClient().txn()
                            .If(new Cmp(key(name, owners.get(i)), Cmp.Op.EQUAL, CmpTarget.createRevision(tokens.get(i))))
                            .Then(Op.put(key(name, owners.get(i)), HELD, PutOption.builder().withLeaseId(leases.get(i)).build()))
                            .commit()))
                    .then(Mono.just((PermitGrant) new PermitGrant.Granted(tokens, leaseTime)));
        });
    }

    private Mono<Long> keepAlive(long leaseId) {
        return Mono.fromFuture(() -> client.getLeaseClient().keepAliveOnce(leaseId)).map(r -> r.getTTL());
    }

    private Mono<Void> revokeAll(List<Long> leases) {
        return Flux.fromIterable(leases)
                .concatMap(id -> Mono.fromFuture(() -> client.getLeaseClient().revoke(id)).onErrorResume(e -> Mono.empty()))
                .then();
    }

    @Override
    public Mono<List<RenewOutcome>> renew(List<RenewRequest> batch) {
        return Flux.fromIterable(batch).concatMap(r -> Mono.fromFuture(() -> client.getKVClient().get(key(r.lock().name(), r.lock().owner())))
                        .flatMap(got -> {
                            if (got.getKvs().isEmpty() || got.getKvs().get(0).getCreateRevision() != r.lock().token()) {
                                return Mono.just(RenewOutcome.notHeld());
                            }
                            return keepAlive(got.getKvs().get(0).getLease()).map(ttl -> ttl <= 0 ? RenewOutcome.notHeld()
                                    : RenewOutcome.renewed(min(r.leaseTime(), Duration.ofSeconds(ttl))));
                        })
                        .onErrorResume(EtcdErrors::isLeaseNotFound, e -> Mono.just(RenewOutcome.notHeld()))
                        .onErrorMap(e -> EtcdErrors.map(r.lock().name(), "semaphore renewal", e)))
                .collectList();
    }

    private static Duration min(Duration a, Duration b) {
        return a.compareTo(b) <= 0 ? a : b;
    }

    @Override
    public Mono<Boolean> release(String name, String owner) {
        return release(name, List.of(owner)).onErrorMap(e -> EtcdErrors.map(name, "semaphore release", e));
    }

    private Mono<Boolean> release(String name, List<String> owners) {
        return Flux.fromIterable(owners)
                .concatMap(o -> Mono.fromFuture(() -> client.getKVClient().get(key(name, o))).flatMap(r -> {
                    if (r.getKvs().isEmpty()) {
                        return Mono.just(false);
                    }
                    KeyValue kv = r.getKvs().get(0);
                    return Mono.fromFuture(() -> client.getKVClient().delete(kv.getKey(), DeleteOption.DEFAULT))
                            .then(Mono.fromFuture(() -> client.getLeaseClient().revoke(kv.getLease())).onErrorResume(e -> Mono.empty()))
                            .thenReturn(true);
                }))
                .reduce(false, Boolean::logicalOr);
    }

    @Override
    public Mono<List<Holder>> holders(String name) {
        GetOption all = GetOption.builder().isPrefix(true)
                .withSortField(GetOption.SortTarget.CREATE).withSortOrder(GetOption.SortOrder.ASCEND).build();
        return Mono.defer(() -> Mono.fromFuture(() -> client.getKVClient().get(range(name), all)))
                .flatMapMany(r -> Flux.fromIterable(r.getKvs()))
                .filter(kv -> HELD.equals(kv.getValue()))
                .concatMap(kv -> Mono.fromFuture(() -> client.getLeaseClient().timeToLive(kv.getLease(), LeaseOption.DEFAULT))
                        .map(ttl -> new Holder(ownerOf(name, kv.getKey()), kv.getCreateRevision(), Duration.ofSeconds(Math.max(0, ttl.getTTL())))))
                .collectList()
                .onErrorMap(e -> EtcdErrors.map(name, "semaphore read", e));
    }

    @Override
    public Flux<LockEvent> events(String name) {
        return Flux.create(sink -> {
            WatchOption option = WatchOption.builder().isPrefix(true).withCreateNotify(true).withPrevKV(true).build();
            Watch.Watcher w = client.getWatchClient().watch(range(name), option, Watch.listener(
                    response -> {
                        if (response.isCreatedNotify()) {
                            sink.next(new LockEvent.Subscribed(name));
                            return;
                        }
                        for (WatchEvent e : response.getEvents()) {
                            KeyValue kv = e.getKeyValue();
                            if (e.getEventType() == WatchEvent.EventType.DELETE && !ASKING.equals(e.getPrevKV().getValue())) {
                                // a deleted key that was only asking (an attempt that lost a race) frees no
                                // permit: waking a waiter for it would only start another race
                                sink.next(new LockEvent.Released(name, ownerOf(name, kv.getKey()), false));
                            } else if (e.getEventType() == WatchEvent.EventType.PUT && HELD.equals(kv.getValue())) {
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
