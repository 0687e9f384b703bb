package io.reactivelocks.spi.store;

import io.reactivelocks.Concept;
import io.reactivelocks.ConceptNotOfferedException;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockListener;
import io.reactivelocks.LockOptions;
import io.reactivelocks.LockStore;
import io.reactivelocks.admin.LockAdmin;
import io.reactivelocks.election.LeaderElection;
import io.reactivelocks.fencing.FencedValue;
import io.reactivelocks.fencing.FencedValues;
import io.reactivelocks.multi.MultiLock;
import io.reactivelocks.rwlock.ReadWriteLock;
import io.reactivelocks.rwlock.ReadWriteLockOptions;
import io.reactivelocks.semaphore.Semaphore;
import io.reactivelocks.spi.LockBackend;
import io.reactivelocks.spi.NameScan;
import io.reactivelocks.spi.rwlock.ReadWriteStore;
import io.reactivelocks.spi.semaphore.SemaphoreStore;
import io.reactivelocks.spi.task.TaskStore;
import io.reactivelocks.spi.window.WindowStore;
import io.reactivelocks.task.TaskQueue;
import io.reactivelocks.window.WindowLock;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * What every store's {@link LockStore} session shares: it hands each concept out over the parts a
 * store supplies, keeps what it handed out, and closes all of it — then the store's connections —
 * once. A store extends it, names the concepts it offers, overrides the part of each (every part
 * works over the session's connections and leaves them open when closed) and
 * {@link #closeConnections()}.
 *
 * <p>A concept the store does not offer throws {@link ConceptNotOfferedException} naming store and
 * concept; any method after {@link #close()} throws {@link IllegalStateException} naming the store.
 */
public abstract class AbstractLockStore implements LockStore {

    private final String name;
    private final Set<Concept> concepts;
    private final List<Supplier<Mono<Void>>> handedOut = new ArrayList<>();
    private boolean closed;
    private final Mono<Void> close;
    private @Nullable LockAdmin admin; // guarded by handedOut

    /**
     * @param name     the store's name in words, e.g. {@code "redis"}
     * @param concepts the concepts the store offers
     */
    protected AbstractLockStore(String name, Set<Concept> concepts) {
        this.name = Objects.requireNonNull(name, "name");
        Set<Concept> offered = EnumSet.noneOf(Concept.class);
        offered.addAll(Objects.requireNonNull(concepts, "concepts"));
        this.concepts = Collections.unmodifiableSet(offered);
        this.close = Mono.defer(this::closeAll).cache();
    }

    @Override
    public final String name() {
        return name;
    }

    @Override
    public final Set<Concept> concepts() {
        return concepts;
    }

    @Override
    public LockClient locks(LockOptions options) {
        return client(Concept.LOCK, options);
    }

    @Override
    public LockClient locks(LockOptions options, LockListener listener) {
        Objects.requireNonNull(options, "options");
        Objects.requireNonNull(listener, "listener");
        return client(Concept.LOCK, options.mutate().listener(listener).build());
    }

    @Override
    public LockClient fairLocks(LockOptions options) {
        LockOptions o = forConcept(options, Concept.FAIR_LOCK);
        return track(LockClient.create(fairLockBackend(o), o), LockClient::close);
    }

    @Override
    public Semaphore semaphores(LockOptions options) {
        LockOptions o = forConcept(options, Concept.SEMAPHORE);
        return track(Semaphore.create(semaphoreStore(), o), Semaphore::close);
    }

    @Override
    public ReadWriteLock readWriteLocks(ReadWriteLockOptions options) {
        Objects.requireNonNull(options, "options");
        LockOptions o = forConcept(options.lockOptions(), Concept.READ_WRITE_LOCK);
        ReadWriteLockOptions rw = o == options.lockOptions() ? options : options.withLockOptions(o);
        return track(ReadWriteLock.create(readWriteStore(), rw), ReadWriteLock::close);
    }

    @Override
    public MultiLock multiLocks(LockOptions options) {
        return MultiLock.create(client(Concept.MULTI_LOCK, options));
    }

    @Override
    public WindowLock windowLocks(LockOptions options) {
        LockOptions o = forConcept(options, Concept.WINDOW_LOCK);
        return track(WindowLock.create(windowStore(), o), WindowLock::close);
    }

    @Override
    public LeaderElection elections(LockOptions options) {
        LockClient client = client(Concept.LEADER_ELECTION, options);
        return LeaderElection.create(client, client.options());
    }

    @Override
    public FencedValues fencedValues() {
        offered(Concept.FENCED_VALUES);
        return track(fencedValuesPart(), FencedValues::close);
    }

    @Override
    public TaskQueue taskQueue(LockOptions options) {
        LockOptions o = forConcept(options, Concept.TASK_QUEUE);
        return track(TaskQueue.create(taskStore(), o), TaskQueue::close);
    }

    @Override
    public LockAdmin admin() {
        synchronized (handedOut) {
            if (closed) {
                throw closedError();
            }
            if (admin != null) {
                return admin;
            }
        }
        LockBackend locks = track(lockBackend(LockOptions.defaults()), LockBackend::close);
        SemaphoreStore semaphores = concepts.contains(Concept.SEMAPHORE) ? track(semaphoreStore(), SemaphoreStore::close) : null;
        ReadWriteStore readWrite = concepts.contains(Concept.READ_WRITE_LOCK) ? track(readWriteStore(), ReadWriteStore::close) : null;
        TaskStore tasks = concepts.contains(Concept.TASK_QUEUE) ? track(taskStore(), TaskStore::close) : null;
        LockAdmin made = LockAdmin.create(this::names, locks, semaphores, readWrite, tasks);
        synchronized (handedOut) {
            if (admin == null) {
                admin = made;
            }
            return admin;
        }
    }

    /**
     * The names this store keeps lock, semaphore or read-write state under, for {@link #admin()}
     * (see {@link NameScan#names}). The default errors: a store overrides it to be listed.
     *
     * @param prefix the start of the names, compared literally
     * @return the names with their concept
     */
    protected Flux<NameScan.Named> names(String prefix) {
        return Flux.error(new UnsupportedOperationException("the " + name + " store cannot list its names"));
    }

    @Override
    public final Mono<Void> close() {
        return close;
    }

    /**
     * Keeps a concept handed out so that {@link #close()} closes it before the connections. A store
     * that overrides a hand-out method (to return a richer type) passes its result through here.
     *
     * @param <T>     the concept's type
     * @param concept the concept handed out
     * @param closer  how to close it
     * @return {@code concept}
     * @throws IllegalStateException when the session is closed (the concept is closed at once)
     */
    protected final <T> T track(T concept, java.util.function.Function<T, Mono<Void>> closer) {
        boolean late;
        synchronized (handedOut) {
            late = closed;
            if (!late) {
                handedOut.add(() -> closer.apply(concept));
            }
        }
        if (late) {
            closer.apply(concept).subscribe(null, e -> { });
            throw closedError();
        }
        return concept;
    }

    /**
     * @param concept a concept about to be handed out
     * @throws ConceptNotOfferedException when the store does not offer it
     * @throws IllegalStateException      when the session is closed
     */
    protected final void offered(Concept concept) {
        if (!concepts.contains(concept)) {
            throw new ConceptNotOfferedException(name, concept);
        }
        synchronized (handedOut) {
            if (closed) {
                throw closedError();
            }
        }
    }

    private IllegalStateException closedError() {
        return new IllegalStateException("the " + name + " store session is closed");
    }

    /** A lock client over {@link #lockBackend(LockOptions)}, kept for {@link #close()}: the lock, multi-lock and election. */
    private LockClient client(Concept concept, LockOptions options) {
        LockOptions o = forConcept(options, concept);
        return track(LockClient.create(lockBackend(o), o), LockClient::close);
    }

    /**
     * Checks a concept may be handed out and gives its options the listener of that concept
     * ({@link LockListener#forConcept}). A store that overrides a hand-out method makes the concept
     * with the options returned here.
     *
     * @param options the caller's options
     * @param concept the concept about to be handed out
     * @return options whose listener is the concept's
     * @throws ConceptNotOfferedException when the store does not offer it
     * @throws IllegalStateException      when the session is closed
     */
    protected final LockOptions forConcept(LockOptions options, Concept concept) {
        Objects.requireNonNull(options, "options");
        offered(concept);
        LockListener listener = options.listener();
        LockListener scoped = listener.forConcept(concept);
        return scoped == null || scoped == listener ? options : options.mutate().listener(scoped).build();
    }

    /**
     * @param options the options of the lock client it is for (a store whose lease is a session may
     *                pick the session by their lease time)
     * @return the mutex backend over the session's connections; its close must leave them open
     */
    protected LockBackend lockBackend(LockOptions options) {
        throw new ConceptNotOfferedException(name, Concept.LOCK);
    }

    /**
     * @param options the options of the fair lock client it is for
     * @return the fair lock backend over the session's connections; its close must leave them open
     */
    protected LockBackend fairLockBackend(LockOptions options) {
        throw new ConceptNotOfferedException(name, Concept.FAIR_LOCK);
    }

    /** @return a semaphore store over the session's connections; its close must leave them open */
    protected SemaphoreStore semaphoreStore() {
        throw new ConceptNotOfferedException(name, Concept.SEMAPHORE);
    }

    /** @return a read-write store over the session's connections; its close must leave them open */
    protected ReadWriteStore readWriteStore() {
        throw new ConceptNotOfferedException(name, Concept.READ_WRITE_LOCK);
    }

    /** @return a window store over the session's connections; its close must leave them open */
    protected WindowStore windowStore() {
        throw new ConceptNotOfferedException(name, Concept.WINDOW_LOCK);
    }

    /** @return fenced values over the session's connections; their close must leave them open */
    protected FencedValues fencedValuesPart() {
        throw new ConceptNotOfferedException(name, Concept.FENCED_VALUES);
    }

    /** @return a task store over the session's connections; its close must leave them open */
    protected TaskStore taskStore() {
        throw new ConceptNotOfferedException(name, Concept.TASK_QUEUE);
    }

    /**
     * Closes the session's own connections (not the application's client). Called once, after
     * every concept handed out is closed.
     *
     * @return a {@code Mono} that closes on subscribe
     */
    protected abstract Mono<Void> closeConnections();

    private Mono<Void> closeAll() {
        List<Supplier<Mono<Void>>> all;
        synchronized (handedOut) {
            closed = true;
            all = new ArrayList<>(handedOut);
            handedOut.clear();
        }
        return Flux.fromIterable(all)
                .flatMap(c -> c.get().onErrorResume(e -> Mono.empty()))
                .then(Mono.defer(this::closeConnections));
    }

    /**
     * A view of a backend whose {@link LockBackend#close()} does nothing, for a store whose mutex
     * backend is the session's connection owner: lock clients over the view leave the connections
     * open when they close.
     *
     * @param backend the session's backend
     * @return the view
     */
    protected static LockBackend leftOpen(LockBackend backend) {
        return new LeftOpen(backend);
    }

    /**
     * A view of fenced values whose {@link FencedValues#close()} does nothing.
     *
     * @param values the session's fenced values
     * @return the view
     */
    protected static FencedValues leftOpen(FencedValues values) {
        return new FencedValues() {
            @Override
            public Mono<Boolean> write(String key, long token, String value) {
                return values.write(key, token, value);
            }

            @Override
            public Mono<FencedValue> read(String key) {
                return values.read(key);
            }

            @Override
            public Mono<Boolean> delete(String key, long token) {
                return values.delete(key, token);
            }

            @Override
            public Mono<Void> close() {
                return Mono.empty();
            }

            @Override
            public String toString() {
                return values.toString();
            }
        };
    }

    @Override
    public String toString() {
        return name + " store session";
    }

    private static final class LeftOpen extends io.reactivelocks.spi.DelegatingLockBackend {
        LeftOpen(LockBackend backend) {
            super(backend);
        }

        @Override
        public Mono<Void> close() {
            return Mono.empty();
        }

        @Override
        public String toString() {
            return delegate().toString();
        }
    }
}
