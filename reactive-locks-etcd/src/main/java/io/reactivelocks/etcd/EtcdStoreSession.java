package io.reactivelocks.etcd;

import io.etcd.jetcd.Client;
import io.reactivelocks.Concept;
import io.reactivelocks.LockOptions;
import io.reactivelocks.spi.LockBackend;
import io.reactivelocks.spi.rwlock.ReadWriteStore;
import io.reactivelocks.spi.semaphore.SemaphoreStore;
import io.reactivelocks.spi.store.AbstractLockStore;
import io.reactivelocks.window.WindowLock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * The etcd {@link io.reactivelocks.LockStore}: every concept over one jetcd client (one gRPC
 * channel). Locks (plain and fair: etcd's lock is FIFO already), multi-locks and elections share
 * one {@link EtcdLockBackend} — one session lease — per lease time asked for (on etcd a lock's
 * lease time is its session's TTL, so lock clients with another lease time get a backend, and a
 * session lease, of their own; usually there is one). Semaphore permits and read-write grants live on
 * a lease per grant over the same channel; fenced values are plain keys.
 */
final class EtcdStoreSession extends AbstractLockStore {

    /** What the etcd store offers: all but the task queue. */
    static final Set<Concept> CONCEPTS = EnumSet.complementOf(EnumSet.of(Concept.TASK_QUEUE));

    private final Client client;
    private final boolean ownsClient;
    private final EtcdLockOptions etcdOptions;
    private final Map<Duration, EtcdLockBackend> backends = new LinkedHashMap<>(); // guarded by itself

    EtcdStoreSession(Client client, boolean ownsClient, EtcdLockOptions etcdOptions) {
        super("etcd", CONCEPTS);
        this.client = Objects.requireNonNull(client, "client");
        this.ownsClient = ownsClient;
        this.etcdOptions = Objects.requireNonNull(etcdOptions, "etcdOptions");
        ChannelReconnect.follow(client, etcdOptions.reconnectInterval(), etcdOptions.scheduler());
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
        return new EtcdSemaphoreStore(client, false, etcdOptions.prefix() + "-semaphore");
    }

    @Override
    protected ReadWriteStore readWriteStore() {
        return new EtcdReadWriteStore(client, false, etcdOptions.prefix() + "-rw");
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
