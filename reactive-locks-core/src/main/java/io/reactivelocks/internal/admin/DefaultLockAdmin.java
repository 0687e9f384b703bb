package io.reactivelocks.internal.admin;

import io.reactivelocks.Concept;
import io.reactivelocks.LockNames;
import io.reactivelocks.admin.HeldGrant;
import io.reactivelocks.admin.HeldGrant.Role;
import io.reactivelocks.admin.LockAdmin;
import io.reactivelocks.spi.Holder;
import io.reactivelocks.spi.LockBackend;
import io.reactivelocks.spi.NameScan;
import io.reactivelocks.spi.rwlock.ReadWriteHolders;
import io.reactivelocks.spi.rwlock.ReadWriteStore;
import io.reactivelocks.spi.semaphore.SemaphoreStore;
import io.reactivelocks.spi.task.ClaimRef;
import io.reactivelocks.spi.task.TaskStore;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * {@link LockAdmin} over a store's parts: the store names what it keeps ({@link NameScan}), each
 * concept's part says who holds a name, and a force-release releases each holder under its own
 * owner id (the store's release checks the owner, so a holder that re-acquired in between — a new
 * lease, a new owner — is not touched).
 */
public final class DefaultLockAdmin implements LockAdmin {

    /** Names read at once while listing: bounded, so a large store does not open a request per name at once. */
    private static final int CONCURRENCY = 8;

    private final NameScan scan;
    private final LockBackend locks;
    private final @Nullable SemaphoreStore semaphores;
    private final @Nullable ReadWriteStore readWrite;
    private final @Nullable TaskStore tasks;

    /**
     * @param scan       what names the store keeps
     * @param locks      the lock part
     * @param semaphores the semaphore part, or {@code null}
     * @param readWrite  the read-write part, or {@code null}
     * @param tasks      the task part, or {@code null}
     */
    public DefaultLockAdmin(NameScan scan, LockBackend locks, @Nullable SemaphoreStore semaphores,
                            @Nullable ReadWriteStore readWrite, @Nullable TaskStore tasks) {
        this.scan = Objects.requireNonNull(scan, "scan");
        this.locks = Objects.requireNonNull(locks, "locks");
        this.semaphores = semaphores;
        this.readWrite = readWrite;
        this.tasks = tasks;
    }

    @Override
    public Flux<HeldGrant> list(String prefix) {
        Objects.requireNonNull(prefix, "prefix");
        return scan.names(prefix)
                .filter(n -> n.name().startsWith(prefix)) // literal, whatever the store's scan matched
                .distinct()
                .flatMapSequential(n -> grants(n.concept(), n.name()), CONCURRENCY)
                .collectList()
                .flatMapIterable(all -> {
                    List<HeldGrant> sorted = new ArrayList<>(all);
                    sorted.sort(Comparator.comparing(HeldGrant::name).thenComparing(g -> g.concept().ordinal())
                            .thenComparingLong(HeldGrant::token));
                    return sorted;
                });
    }

    @Override
    public Mono<List<HeldGrant>> forceRelease(String name) {
        LockNames.check(name, "name");
        return Flux.concat(evict(Concept.LOCK, name), evict(Concept.SEMAPHORE, name), evict(Concept.READ_WRITE_LOCK, name),
                        evict(Concept.TASK_QUEUE, name))
                .collectList();
    }

    @Override
    public Mono<Boolean> revoke(String name, String reason) {
        LockNames.check(name, "name");
        Objects.requireNonNull(reason, "reason");
        if (reason.length() > MAX_REASON_LENGTH) {
            throw new IllegalArgumentException("reason must be at most " + MAX_REASON_LENGTH + " characters, was " + reason.length());
        }
        Flux<Boolean> asked = Flux.concat(
                locks.inspect(name).flatMap(holder -> locks.revoke(name, holder.owner(), reason).thenReturn(true)),
                semaphores == null ? Flux.<Boolean>empty() : semaphores.holders(name).flatMapIterable(hs -> hs)
                        .concatMap(h -> semaphores.revoke(name, h.owner(), reason).thenReturn(true)),
                readWrite == null ? Flux.<Boolean>empty() : readWrite.holders(name).flatMapIterable(DefaultLockAdmin::grantsOf)
                        .concatMap(h -> readWrite.revoke(name, h.owner(), reason).thenReturn(true)));
        return asked.reduce(false, (a, b) -> a || b);
    }

    /** Releases each holder of one concept's state at {@code name}; the grants actually removed. */
    private Flux<HeldGrant> evict(Concept concept, String name) {
        return grants(concept, name).concatMap(g -> release(concept, name, g).filter(Boolean::booleanValue).map(ok -> g));
    }

    private Mono<Boolean> release(Concept concept, String name, HeldGrant g) {
        String owner = g.owner();
        return switch (concept) {
            case TASK_QUEUE -> Objects.requireNonNull(tasks)
                    .release(name, List.of(new ClaimRef(Objects.requireNonNull(g.task()), owner, g.token()))).map(n -> n > 0);
            case SEMAPHORE -> Objects.requireNonNull(semaphores).release(name, owner);
            case READ_WRITE_LOCK -> Objects.requireNonNull(readWrite).release(name, owner);
            default -> locks.release(name, owner);
        };
    }

    /** Who holds {@code name} in one concept's state (empty when the store has no such part). */
    private Flux<HeldGrant> grants(Concept concept, String name) {
        return switch (concept) {
            case LOCK -> locks.inspect(name).flatMapMany(h -> locks.waiting(name).defaultIfEmpty(-1)
                    .map(w -> grant(Concept.LOCK, name, Role.HOLDER, h, w)));
            case SEMAPHORE -> semaphores == null ? Flux.empty() : semaphores.holders(name).flatMapIterable(hs -> hs.stream()
                    .map(h -> grant(Concept.SEMAPHORE, name, Role.PERMIT, h, -1)).toList());
            case READ_WRITE_LOCK -> readWrite == null ? Flux.empty() : readWrite.holders(name).flatMapIterable(hs -> readWrite(name, hs));
            case TASK_QUEUE -> tasks == null ? Flux.empty() : tasks.claims(name).map(c -> new HeldGrant(Concept.TASK_QUEUE, name,
                    Role.CLAIM, c.owner(), c.token(), c.remaining(), null, -1, c.taskId()))
                    // a store that cannot list its claims: a force-release of a lock name still works
                    .onErrorResume(UnsupportedOperationException.class, e -> Flux.empty());
            default -> Flux.empty();
        };
    }

    private static List<Holder> grantsOf(ReadWriteHolders hs) {
        List<Holder> out = new ArrayList<>(hs.readers());
        if (hs.writer() != null) {
            out.add(hs.writer());
        }
        return out;
    }

    private static List<HeldGrant> readWrite(String name, ReadWriteHolders hs) {
        List<HeldGrant> out = new ArrayList<>();
        int waiting = hs.waitingWriters().size();
        for (Holder r : hs.readers()) {
            out.add(grant(Concept.READ_WRITE_LOCK, name, Role.READER, r, waiting));
        }
        if (hs.writer() != null) {
            out.add(grant(Concept.READ_WRITE_LOCK, name, Role.WRITER, hs.writer(), waiting));
        }
        return out;
    }

    private static HeldGrant grant(Concept concept, String name, Role role, Holder h, int waiters) {
        return new HeldGrant(concept, name, role, h.owner(), h.token(), h.remaining(), h.payload(), waiters);
    }

    @Override
    public String toString() {
        return "LockAdmin{" + locks.name() + "}";
    }
}
