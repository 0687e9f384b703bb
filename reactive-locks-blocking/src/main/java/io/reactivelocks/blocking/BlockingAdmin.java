package io.reactivelocks.blocking;

import io.reactivelocks.LockBackendException;
import io.reactivelocks.admin.HeldGrant;
import io.reactivelocks.admin.LockAdmin;
import java.util.List;
import java.util.Objects;
import reactor.core.publisher.Mono;

/**
 * A blocking view of a store's {@link LockAdmin}: what every client holds under a prefix, and
 * force-release. Interruption, errors and the refusal on Reactor non-blocking threads are as
 * described on {@link BlockingLocks}.
 *
 * <pre>{@code
 * for (HeldGrant g : store.admin().list("orders:")) {
 *     System.out.println(g.name() + " held by " + g.owner() + " token " + g.token());
 * }
 * }</pre>
 */
public final class BlockingAdmin {

    private final LockAdmin admin;

    private BlockingAdmin(LockAdmin admin) {
        this.admin = admin;
    }

    /**
     * @param admin the reactive admin
     * @return a blocking view of it; cheap, holds no resources of its own
     * @throws NullPointerException naming {@code admin} when it is null
     */
    public static BlockingAdmin of(LockAdmin admin) {
        return new BlockingAdmin(Objects.requireNonNull(admin, "admin"));
    }

    /** @return the reactive admin underneath */
    public LockAdmin admin() {
        return admin;
    }

    /**
     * Every grant held now under {@code prefix} (see {@link LockAdmin#list}).
     *
     * @param prefix the start of the names, matched literally; {@code ""} for all
     * @return the grants, by name then token
     * @throws InterruptedException  when interrupted while waiting
     * @throws LockBackendException  when the store fails
     * @throws IllegalStateException when called on a Reactor non-blocking thread
     */
    public List<HeldGrant> list(String prefix) throws InterruptedException {
        Mono<List<HeldGrant>> list = admin.list(prefix).collectList();
        Await.refuseNonBlocking("BlockingAdmin.list");
        List<HeldGrant> out = Await.interruptibly(list, "list", v -> { });
        return out == null ? List.of() : out;
    }

    /**
     * Takes {@code name} away from every holder (see {@link LockAdmin#forceRelease}).
     *
     * @param name the name to free
     * @return the grants removed
     * @throws InterruptedException  when interrupted while waiting: the release may have reached the store
     * @throws LockBackendException  when the store fails
     * @throws IllegalStateException when called on a Reactor non-blocking thread
     */
    public List<HeldGrant> forceRelease(String name) throws InterruptedException {
        Mono<List<HeldGrant>> release = admin.forceRelease(name);
        Await.refuseNonBlocking("BlockingAdmin.forceRelease");
        List<HeldGrant> out = Await.interruptibly(release, "forceRelease", v -> { });
        return out == null ? List.of() : out;
    }

    /**
     * Asks the holder of the lock {@code name} to let go (see {@link LockAdmin#revoke}).
     *
     * @param name   the lock name
     * @param reason why, in words
     * @return {@code true} when the lock was held and its holder asked, {@code false} when it was free
     * @throws InterruptedException  when interrupted while waiting
     * @throws LockBackendException  when the store fails
     * @throws IllegalStateException when called on a Reactor non-blocking thread
     */
    public boolean revoke(String name, String reason) throws InterruptedException {
        Mono<Boolean> revoke = admin.revoke(name, reason);
        Await.refuseNonBlocking("BlockingAdmin.revoke");
        return Boolean.TRUE.equals(Await.interruptibly(revoke, "revoke", v -> { }));
    }

    @Override
    public String toString() {
        return "BlockingAdmin{" + admin + "}";
    }
}
