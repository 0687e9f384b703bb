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
 * Read-write locks on etcd, in the order of etcd's and Curator's read-write lock recipes: each
 * request is a key {@code <prefix>-rw/<base64url(name)>/<owner>} on a lease of its own (TTL = the
 * lease time, rounded up to whole seconds, so a dead holder's key goes when its lease runs out),
 * with the value {@code r0}/{@code w0} while it asks and {@code r1}/{@code w1} once granted. In
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
 * release and the change stream are the semaphore's on the same key layout.
 *
 * <p>No herd ({@link #awaitTurn}): a refused caller that keeps its key watches only the key whose
 * deletion can let it in, as Curator's recipe does — a writer the key just before its own, a reader
 * the nearest write key before it — from the revision of the read that refused it. A release thus
 * wakes the one writer behind it, or the readers behind a leaving writer (all of whom it lets in).
 * A reader-preferring writer (no key) watches the name's keys for a deletion.
 */
final class EtcdReadWriteStore implements ReadWriteStore {

    private final Client client;
    private final boolean ownsClient;
    private final String prefix;
    private final EtcdSemaphoreStore keys;
    /** Of each refused waiting owner: the key (or, without a key of its own, the name's prefix) to watch, and from which revision. */
    private final Map<String, Blocker> before = new ConcurrentHashMap<>();

    private record Blocker(ByteSequence key, boolean prefix, long revision) {
    }

    /**
     * @param client     the jetcd client
     * @param ownsClient whether {@link #close()} closes it
     * @param prefix     the key prefix of the read-write lock keys (the lock prefix + {@code "-rw"})
     */
    EtcdReadWriteStore(Client client, boolean ownsClient, String prefix) {
        this.client = Objects.requireNonNull(client, "client");
        this.ownsClient = ownsClient;
        this.prefix = EtcdKeys.checkPrefix(prefix);
        this.keys = new EtcdSemaphoreStore(client, false, prefix); // renew, release, watch: the same layout
    }

    ByteSequence key(String name, String owner) {
        return keys.key(name, owner);
    }

    private String ownerOf(String name, ByteSequence key) {
        return key.toString(StandardCharsets.UTF_8).substring(keys.range(name).toString(StandardCharsets.UTF_8).length());
    }

    private static ByteSequence value(LockMode mode, boolean held) {
        return ByteSequence.from((mode == LockMode.READ ? "r" : "w") + (held ? "1" : "0"), StandardCharsets.US_ASCII);
    }

    private static boolean isWrite(KeyValue kv) {
        return kv.getValue().toString(StandardCharsets.US_ASCII).startsWith("w");
    }

    private static boolean isHeld(KeyValue kv) {
        return kv.getValue().toString(StandardCharsets.US_ASCII).endsWith("1");
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
            Blocker b = before.get(owners.get(0));
            return b == null ? Mono.<Void>empty() : keys.deletion(List.of(b.key()), b.prefix(), b.revision());
        }).onErrorMap(e -> EtcdErrors.map(name, "read-write lock wait", e));
    }

    @Override
    public Mono<PermitGrant> tryGrant(String name, String owner, LockMode mode, boolean writerPreferring, boolean waiting,
            Duration leaseTime) {
        long ttlSeconds = Math.max(1, (leaseTime.toMillis() + 999) / 1000);
        boolean keepPlace = waiting && (mode == LockMode.READ || writerPreferring);
        ByteSequence k = key(name, owner);
        return Mono.defer(() -> Mono.fromFuture(() -> client.getKVClient().get(k)).flatMap(existing -> {
            if (!existing.getKvs().isEmpty()) { // our place in the queue (or a retried grant): keep its lease alive
                KeyValue mine = existing.getKvs().get(0);
                return Mono.fromFuture(() -> client.getLeaseClient().keepAliveOnce(mine.getLease()))
                        .then(decide(name, k, mode, mine.getCreateRevision(), mine.getLease(), keepPlace, leaseTime));
            }
            if (mode == LockMode.WRITE && !writerPreferring) {
                // a reader-preferring writer does not queue behind anyone: it looks first, and puts a key
                // only when the name is free (so it never shows as an intent, nor wakes itself)
                return Mono.fromFuture(() -> client.getKVClient().get(keys.range(name), GetOption.builder().isPrefix(true).withCountOnly(true).build()))
                        .flatMap(r -> {
                            if (r.getCount() == 0) {
                                return put(name, k, mode, ttlSeconds, keepPlace, leaseTime);
                            }
                            if (waiting) {
                                before.put(owner, new Blocker(keys.range(name), true, r.getHeader().getRevision() + 1));
                            }
                            return Mono.just((PermitGrant) new PermitGrant.Busy(null));
                        });
            }
            return put(name, k, mode, ttlSeconds, keepPlace, leaseTime);
        })).onErrorMap(e -> EtcdErrors.map(name, "read-write lock grant", e));
    }

    /** Puts our key (if it is still absent) on a lease of its own, then decides. */
    private Mono<PermitGrant> put(String name, ByteSequence k, LockMode mode, long ttlSeconds, boolean keepPlace, Duration leaseTime) {
        return Mono.fromFuture(() -> client.getLeaseClient().grant(ttlSeconds)).map(l -> l.getID())
                .flatMap(lease -> Mono.fromFuture(() -> client.getKVClient().txn()
                                .If(new Cmp(k, Cmp.Op.EQUAL, CmpTarget.createRevision(0)))
                                .Then(Op.put(k, value(mode, false), PutOption.builder().withLeaseId(lease).build()))
                                .commit())
                        .flatMap(put -> put.isSucceeded()
                                ? decide(name, k, mode, put.getHeader().getRevision(), lease, keepPlace, leaseTime)
                                : revoke(lease).thenReturn((PermitGrant) new PermitGrant.Busy(null)))
                        .onErrorResume(e -> revoke(lease).then(Mono.error(e))));
    }

    /** Grants when no key before ours forbids it; else keeps or gives up our place. */
    private Mono<PermitGrant> decide(String name, ByteSequence k, LockMode mode, long revision, long lease, boolean keepPlace,
            Duration leaseTime) {
        GetOption preceding = GetOption.builder().isPrefix(true)
                .withSortField(GetOption.SortTarget.CREATE).withSortOrder(GetOption.SortOrder.ASCEND)
                .withMaxCreateRevision(revision - 1).build();
        return Mono.fromFuture(() -> client.getKVClient().get(keys.range(name), preceding)).flatMap(r -> {
            KeyValue blocker = null; // a writer waits for the key just before it, a reader for the nearest write key
            for (KeyValue kv : r.getKvs()) {
                if (mode == LockMode.WRITE || isWrite(kv)) {
                    blocker = kv;
                }
            }
            String owner = ownerOf(name, k);
            if (blocker != null) {
                if (keepPlace) {
                    before.put(owner, new Blocker(blocker.getKey(), false, r.getHeader().getRevision() + 1));
                    return Mono.just((PermitGrant) new PermitGrant.Busy(null));
                }
                before.remove(owner);
                return revoke(lease).thenReturn((PermitGrant) new PermitGrant.Busy(null));
            }
            before.remove(owner);
            return Mono.fromFuture(() -> client.getKVClient().txn()
                            .If(new Cmp(k, Cmp.Op.EQUAL, CmpTarget.createRevision(revision)))
                            .Then(Op.put(k, value(mode, true), PutOption.builder().withLeaseId(lease).build()))
                            .commit())
                    .map(put -> put.isSucceeded() ? (PermitGrant) new PermitGrant.Granted(List.of(revision), leaseTime)
                            : new PermitGrant.Busy(null)); // our key expired meanwhile
        });
    }

    private Mono<Void> revoke(long lease) {
        return Mono.fromFuture(() -> client.getLeaseClient().revoke(lease)).onErrorResume(e -> Mono.empty()).then();
    }

    @Override
    public Mono<List<RenewOutcome>> renew(List<RenewRequest> batch) {
        return keys.renew(batch);
    }

    @Override
    public Mono<Boolean> release(String name, String owner) {
        return Mono.defer(() -> {
            before.remove(owner);
            return keys.release(name, owner);
        });
    }

    @Override
    public Mono<ReadWriteHolders> holders(String name) {
        GetOption all = GetOption.builder().isPrefix(true)
                .withSortField(GetOption.SortTarget.CREATE).withSortOrder(GetOption.SortOrder.ASCEND).build();
        return Mono.defer(() -> Mono.fromFuture(() -> client.getKVClient().get(keys.range(name), all)))
                .flatMapMany(r -> Flux.fromIterable(r.getKvs()))
                .filter(kv -> isHeld(kv) || isWrite(kv))
                .concatMap(kv -> Mono.fromFuture(() -> client.getLeaseClient().timeToLive(kv.getLease(), LeaseOption.DEFAULT))
                        .map(ttl -> new Object[] {kv, new Holder(ownerOf(name, kv.getKey()), isHeld(kv) ? kv.getCreateRevision() : 0,
                                Duration.ofSeconds(Math.max(0, ttl.getTTL())))}))
                .collectList()
                .map(rows -> {
                    List<Holder> readers = new ArrayList<>();
                    List<Holder> waiting = new ArrayList<>();
                    Holder writer = null;
                    for (Object[] row : rows) {
                        KeyValue kv = (KeyValue) row[0];
                        Holder h = (Holder) row[1];
                        if (!isHeld(kv)) {
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

    @Override
    public Flux<LockEvent> events(String name) {
        return keys.events(name);
    }

    @Override
    public Mono<Void> close() {
        return ownsClient ? Mono.fromRunnable(client::close) : Mono.empty();
    }

    @Override
    public String toString() {
        return "EtcdReadWriteStore{" + prefix + "}";
    }
}
