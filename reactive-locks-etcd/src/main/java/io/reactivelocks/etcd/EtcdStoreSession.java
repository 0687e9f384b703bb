package io.reactivelocks.etcd;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.GetOption;
import io.reactivelocks.Concept;
import io.reactivelocks.LockNames;
import io.reactivelocks.LockOptions;
import io.reactivelocks.spi.LockBackend;
import io.reactivelocks.spi.NameScan;
import io.reactivelocks.spi.rwlock.ReadWriteStore;
import io.reactivelocks.spi.semaphore.SemaphoreStore;
import io.reactivelocks.spi.store.AbstractLockStore;
import io.reactivelocks.window.WindowLock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * The etcd {@link io.reactivelocks.LockStore}: every concept over one jetcd client (one gRPC
 * channel). Locks (plain and fair: etcd's lock is FIFO already), multi-locks and elections share
 * one {@link EtcdLockBackend} — one session lease — per lease time asked for (on etcd a lock's
 * lease time is its session's TTL, so lock clients with another lease time get a backend, and a
 * session lease, of their own; usually there is one). Semaphore permits and read-write grants live on
 * the session's shared leases, one per lease time ({@link SharedLeases}), over the same channel;
 * fenced values are plain keys.
 */
final class EtcdStoreSession extends AbstractLockStore {

    /** What the etcd store offers: all but the task queue. */
    static final Set<Concept> CONCEPTS = EnumSet.complementOf(EnumSet.of(Concept.TASK_QUEUE));

    private final Client client;
    private final boolean ownsClient;
    private final EtcdLockOptions etcdOptions;
    private final Map<Duration, EtcdLockBackend> backends = new LinkedHashMap<>(); // guarded by itself
    /** The leases the semaphore's permits and the read-write lock's grants are put on: one per TTL. */
    private final SharedLeases sharedLeases;

    EtcdStoreSession(Client client, boolean ownsClient, EtcdLockOptions etcdOptions) {
        super("etcd", CONCEPTS);
        this.client = Objects.requireNonNull(client, "client");
        this.ownsClient = ownsClient;
        this.etcdOptions = Objects.requireNonNull(etcdOptions, "etcdOptions");
        ChannelReconnect.follow(client, etcdOptions.reconnectInterval(), etcdOptions.scheduler());
        this.sharedLeases = new SharedLeases(client.getLeaseClient());
    }

    @Override
    protected LockBackend lockBackend(LockOptions options) {
        EtcdLockOptions o = EtcdLocks.withTtl(etcdOptions, options);
        synchronized (backends) {
            return leftOpen(backends.computeIfAbsent(o.sessionTtl(), ttl -> EtcdLockBackend.create(client, o)));
        }
    }

    @Override
    protected LockBackend fairLockBackend(LockOptions options) {
        return lockBackend(options); // etcd's lock grants waiters in arrival order already
    }

    @Override
    protected SemaphoreStore semaphoreStore() {
        return new EtcdSemaphoreStore(client, false, etcdOptions.prefix() + "-semaphore", sharedLeases);
    }

    @Override
    protected ReadWriteStore readWriteStore() {
        return new EtcdReadWriteStore(client, false, etcdOptions.prefix() + "-rw", sharedLeases);
    }

    @Override
    public WindowLock windowLocks(LockOptions options) {
        LockOptions o = forConcept(options, Concept.WINDOW_LOCK);
        // etcd has no clock a transaction can read: the window comes from the options' scheduler's now
        return track(WindowLock.create(new EtcdWindowStore(client, false, etcdOptions.prefix() + "-window",
                o.scheduler() != null ? o.scheduler() : Schedulers.parallel()), o), WindowLock::close);
    }

    @Override
    protected io.reactivelocks.fencing.FencedValues fencedValuesPart() {
        return EtcdFencedValues.create(client, etcdOptions); // owns nothing: its close leaves the client open
    }

    /**
     * The names with keys under the lock, semaphore and read-write prefixes, read keys-only in one
     * transaction (one revision for all three). A key's name segment is base64url of the name's
     * UTF-8 bytes, which keeps byte prefixes only in whole groups of three bytes: each range is the
     * concept prefix plus the encoding of the longest such group prefix of {@code prefix} (a high
     * surrogate at its end is left out, since a name may continue it as a pair), so the server
     * returns the keys of the candidate names only; each key's name is decoded and the admin
     * matches the whole prefix literally. Lock keys are those of holders and waiters alike: a name
     * with only waiters left is listed with no holder (the admin skips it).
     */
    @Override
    protected Flux<NameScan.Named> names(String prefix) {
        String base = etcdOptions.prefix();
        List<Concept> concepts = List.of(Concept.LOCK, Concept.SEMAPHORE, Concept.READ_WRITE_LOCK);
        List<String> heads = List.of(base + "/", base + "-semaphore/", base + "-rw/");
        String stem = encodedStem(prefix);
        GetOption keysOnly = GetOption.builder().isPrefix(true).withKeysOnly(true).build();
        Op[] reads = new Op[heads.size()];
        for (int i = 0; i < reads.length; i++) {
            reads[i] = Op.get(EtcdKeys.bytes(heads.get(i) + stem), keysOnly);
        }
        return Mono.fromFuture(() -> client.getKVClient().txn().Then(reads).commit())
                .flatMapIterable(r -> {
                    Set<NameScan.Named> out = new LinkedHashSet<>();
                    for (int i = 0; i < heads.size(); i++) {
                        GetResponse got = r.getGetResponses().get(i);
                        for (KeyValue kv : got.getKvs()) {
                            String name = nameOf(heads.get(i), kv.getKey());
                            if (name != null && name.startsWith(prefix)) {
                                out.add(new NameScan.Named(concepts.get(i), name));
                            }
                        }
                    }
                    return out;
                })
                .timeout(etcdOptions.requestTimeout(), etcdOptions.scheduler())
                .onErrorMap(e -> EtcdErrors.map(null, "admin list", e));
    }

    /**
     * @param prefix a name prefix
     * @return the base64url of the longest prefix of its UTF-8 bytes made of whole three-byte
     *         groups: a prefix of the encoding of every name that starts with {@code prefix}
     */
    static String encodedStem(String prefix) {
        String p = !prefix.isEmpty() && Character.isHighSurrogate(prefix.charAt(prefix.length() - 1))
                ? prefix.substring(0, prefix.length() - 1) : prefix;
        byte[] utf8 = LockNames.utf8(p);
        return Base64.getUrlEncoder().withoutPadding().encodeToString(Arrays.copyOf(utf8, utf8.length / 3 * 3));
    }

    /** @return the name of a key {@code <head><base64url(name)>/<last segment>}, or {@code null} when it is not one */
    private static @Nullable String nameOf(String head, ByteSequence key) {
        String k = EtcdKeys.string(key);
        int slash = k.indexOf('/', head.length());
        if (!k.startsWith(head) || slash < 0) {
            return null;
        }
        try {
            return LockNames.fromBase64url(k.substring(head.length(), slash));
        } catch (IllegalArgumentException e) {
            return null;
        }
    }


    @Override
    protected Mono<Void> closeConnections() {
        List<EtcdLockBackend> all;
        synchronized (backends) {
            all = new ArrayList<>(backends.values());
            backends.clear();
        }
        Mono<Void> backendsClosed = Flux.fromIterable(all).flatMap(b -> b.close().onErrorResume(e -> Mono.empty())).then();
        return ownsClient
                ? backendsClosed.then(Mono.fromRunnable(client::close).subscribeOn(Schedulers.boundedElastic())).then()
                : backendsClosed;
    }
}
