package io.reactivelocks.shedlock;

import io.reactivelocks.Lease;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockOptions;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Iterator;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import net.javacrumbs.shedlock.core.ClockProvider;
import net.javacrumbs.shedlock.core.ExtensibleLockProvider;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * A ShedLock {@link net.javacrumbs.shedlock.core.LockProvider} over a reactive-locks
 * {@link LockClient}: scheduled tasks guarded by {@code @SchedulerLock} or a
 * {@code LockingTaskExecutor} run under a lease of any store (Redis, PostgreSQL, etcd,
 * ZooKeeper), with a fencing token and a loss signal.
 *
 * <p>Semantics, mapped onto a renewed lease:
 * <ul>
 *   <li>{@link #lock(LockConfiguration)} makes one {@link LockClient#tryAcquire} attempt and never
 *       waits for the holder, as ShedLock expects: empty when another process (or another task of
 *       this one) holds the name.</li>
 *   <li>The lease is granted with the lease time of this provider's {@link LockOptions} and
 *       renewed in the background while the task runs, so a process that dies frees the lock
 *       within one lease time, usually long before {@code lockAtMostFor}.</li>
 *   <li>{@code lockAtMostFor} bounds a live holder: when it has passed (counted from the
 *       configuration's creation time on ShedLock's {@link ClockProvider}) the lease is released
 *       even if {@link SimpleLock#unlock()} never came. If that release cannot reach the store,
 *       the lock ends by the lease's TTL.</li>
 *   <li>{@link SimpleLock#unlock()} before {@code lockAtLeastFor} has passed returns at once and
 *       keeps the lease (renewed) until then; after it, it releases and waits for the store's
 *       answer. Difference from ShedLock's own stores: if the process dies while such an unlocked
 *       lock waits out {@code lockAtLeastFor}, the lock is freed by the lease's TTL, possibly
 *       earlier.</li>
 *   <li>{@link SimpleLock#extend(Duration, Duration)} (and so ShedLock's {@code LockExtender})
 *       moves both deadlines, counted from now; the lease itself needs no extension. It returns
 *       empty once the lock has ended (past {@code lockAtMostFor}, or the lease was lost), and
 *       the lock it was called on can no longer be unlocked or extended.</li>
 *   <li>If the lease is lost while the task runs (the store could not be reached for a lease
 *       time), ShedLock cannot stop the task: read {@link #currentLease()} and pass
 *       {@link Lease#token()} to the resource the task writes, which rejects stale tokens, or
 *       watch {@link Lease#lost()}.</li>
 * </ul>
 *
 * <p>Blocking: ShedLock's providers are blocking, so {@code lock}, {@code unlock} and
 * {@code extend} block the calling thread for at most the request timeout (plus a second) while
 * the store answers. They refuse to run on a Reactor non-blocking thread (an event loop or
 * {@code Schedulers.parallel()}) with {@link IllegalStateException}; ShedLock runs scheduled
 * tasks on scheduler threads, where blocking is fine. Store failures surface as
 * {@link io.reactivelocks.LockBackendException} from {@code lock}.
 */
public final class ReactiveLocksLockProvider implements ExtensibleLockProvider {

    private static final ThreadLocal<Deque<ShedLockGrant>> CURRENT = ThreadLocal.withInitial(ArrayDeque::new);

    private final LockClient client;
    private final LockOptions options;
    private final Scheduler timers;
    private final Duration blockBound;
    private final ConcurrentMap<String, ShedLockGrant> held = new ConcurrentHashMap<>();

    /**
     * A provider using the client's default options: their lease time for every grant.
     *
     * @param client the lock client (not closed by this provider)
     */
    public ReactiveLocksLockProvider(LockClient client) {
        this(client, Objects.requireNonNull(client, "client").options());
    }

    /**
     * A provider with its own options: their lease time and renewal interval for every grant,
     * their request timeout for every call, and their scheduler (or {@code Schedulers.parallel()})
     * for the {@code lockAtMostFor}/{@code lockAtLeastFor} timers.
     *
     * @param client  the lock client (not closed by this provider)
     * @param options the options of every acquire
     */
    public ReactiveLocksLockProvider(LockClient client, LockOptions options) {
        this.client = Objects.requireNonNull(client, "client");
        this.options = Objects.requireNonNull(options, "options");
        this.timers = options.scheduler() != null ? options.scheduler() : Schedulers.parallel();
        this.blockBound = options.requestTimeout().plusSeconds(1);
    }

    /**
     * One attempt to take the lock named by the configuration, blocking the calling thread until
     * the store answered (at most the request timeout plus a second).
     *
     * @param lockConfiguration ShedLock's lock name and {@code lockAtMostFor}/{@code lockAtLeastFor}
     * @return the lock, or empty when it is held by someone else
     * @throws IllegalStateException on a Reactor non-blocking thread
     * @throws io.reactivelocks.LockBackendException when the store fails or does not answer in time
     */
    @Override
    public Optional<SimpleLock> lock(LockConfiguration lockConfiguration) {
        Objects.requireNonNull(lockConfiguration, "lockConfiguration");
        checkBlockingAllowed();
        String name = lockConfiguration.getName();
        Lease lease = client.tryAcquire(name, options).block(blockBound);
        if (lease == null) {
            return Optional.empty();
        }
        ShedLockGrant grant = new ShedLockGrant(lease, timers, blockBound, this::ended);
        held.put(name, grant);
        Deque<ShedLockGrant> stack = CURRENT.get();
        // grants unlocked on another thread end without leaving this thread's stack: drop them here
        stack.removeIf(ShedLockGrant::isEnded);
        stack.push(grant);
        grant.scheduleLockAtMostUntil(lockConfiguration.getLockAtMostUntil());
        return Optional.of(new ShedLockHandle(grant, lockConfiguration.getLockAtLeastUntil()));
    }

    /**
     * The lease this provider holds for a name now, from {@link #lock} until the lock ended
     * (released after unlock and {@code lockAtLeastFor}, given up at {@code lockAtMostFor}, or
     * lost).
     *
     * @param name the ShedLock lock name
     * @return the lease, or empty when this provider does not hold the name
     */
    public Optional<Lease> heldLease(String name) {
        Objects.requireNonNull(name, "name");
        ShedLockGrant grant = held.get(name);
        return grant == null || grant.isEnded() ? Optional.empty() : Optional.of(grant.lease());
    }

    /**
     * The lease of the innermost lock that a {@code ReactiveLocksLockProvider} took on the
     * calling thread and that has not ended — inside a {@code @SchedulerLock} method or a
     * {@code LockingTaskExecutor} task, the lease of that task's lock. Pass its
     * {@link Lease#token()} to the resource the task writes.
     *
     * @return the lease, or empty when the thread runs under no such lock
     */
    public static Optional<Lease> currentLease() {
        Deque<ShedLockGrant> stack = CURRENT.get();
        for (Iterator<ShedLockGrant> it = stack.iterator(); it.hasNext(); ) {
            ShedLockGrant grant = it.next();
            if (grant.isEnded()) {
                it.remove();
            } else {
                return Optional.of(grant.lease());
            }
        }
        return Optional.empty();
    }

    private void ended(ShedLockGrant grant) {
        held.remove(grant.lease().name(), grant);
    }

    /** Called by the unlocking thread: the lock leaves that thread's stack even if it waits out lockAtLeastFor. */
    static void leaveCurrentThread(ShedLockGrant grant) {
        CURRENT.get().remove(grant);
    }

    static void checkBlockingAllowed() {
        if (Schedulers.isInNonBlockingThread()) {
            throw new IllegalStateException("ShedLock's LockProvider blocks; do not call it on the non-blocking thread "
                    + Thread.currentThread().getName());
        }
    }

    /** @return the current instant on ShedLock's clock */
    static java.time.Instant now() {
        return ClockProvider.now();
    }

    @Override
    public String toString() {
        return "ReactiveLocksLockProvider{" + client + "}";
    }
}
