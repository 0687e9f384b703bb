package io.reactivelocks.spring.boot;

import io.reactivelocks.Lease;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockClientMetrics;
import io.reactivelocks.LockStore;
import io.reactivelocks.admin.HeldGrant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.actuate.endpoint.Access;
import org.springframework.boot.actuate.endpoint.annotation.DeleteOperation;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.annotation.WriteOperation;
import reactor.core.publisher.Mono;

/**
 * The actuator endpoint {@code reactivelocks}.
 *
 * <ul>
 *   <li>{@code GET /actuator/reactivelocks}: for each {@link LockClient} bean of the application, the leases it
 *       holds now (name, fencing token, remaining lease time, payload) and the locks it is waiting for (name, number
 *       of acquires in progress), read from each client's {@link LockClient#metrics()} without a request to the
 *       store; and, with a {@link LockStore} bean, what every client of the store holds (its
 *       {@link LockStore#admin() admin} list: locks, permits, readers, writers), up to {@value #STORE_LIMIT}
 *       grants.</li>
 *   <li>{@code GET /actuator/reactivelocks/{prefix}}: what the store holds on names starting with {@code prefix}.</li>
 *   <li>{@code DELETE /actuator/reactivelocks/{name}}: force-release {@code name} (every holder evicted, the next
 *       grant fenced above them); {@code POST /actuator/reactivelocks/{name}} with {@code {"reason": "…"}}: ask the
 *       lock's holder to let go (cooperative). Write operations: the endpoint's default access is read-only, so they
 *       are refused until {@code management.endpoint.reactivelocks.access=unrestricted}.</li>
 * </ul>
 *
 * <p>Expose it like any endpoint ({@code management.endpoints.web.exposure.include=reactivelocks}). Owner ids are
 * never shown: an owner id is what a release is checked against.
 */
@Endpoint(id = "reactivelocks", defaultAccess = Access.READ_ONLY)
public class ReactiveLocksEndpoint {

    /** At most this many grants of the store in one answer ({@link StoreDescriptor#truncated()} says when more were held). */
    public static final int STORE_LIMIT = 1000;

    private final Map<String, LockClient> clients;
    private final @Nullable LockStore store;

    /**
     * @param clients the lock clients by bean name
     */
    public ReactiveLocksEndpoint(Map<String, LockClient> clients) {
        this(clients, null);
    }

    /**
     * @param clients the lock clients by bean name
     * @param store   the application's store session, whose admin lists every client's grants; {@code null} for none
     */
    public ReactiveLocksEndpoint(Map<String, LockClient> clients, @Nullable LockStore store) {
        this.clients = Map.copyOf(Objects.requireNonNull(clients, "clients"));
        this.store = store;
    }

    /**
     * Reads what each client holds and waits for, and what the store holds, at this moment.
     *
     * @return the clients by bean name, in name order, and the store's grants
     */
    @ReadOperation
    public Mono<LocksDescriptor> locks() {
        Map<String, ClientDescriptor> out = new TreeMap<>();
        clients.forEach((bean, client) -> out.put(bean, describe(client)));
        if (store == null) {
            return Mono.just(new LocksDescriptor(out, null));
        }
        return held(store, "").map(s -> new LocksDescriptor(out, s));
    }

    /**
     * What the store holds on names starting with {@code prefix}, whoever holds it.
     *
     * @param prefix the start of the names, matched literally
     * @return the grants; empty without a store bean
     */
    @ReadOperation
    public Mono<StoreDescriptor> locksUnder(@Selector String prefix) {
        return store == null ? Mono.empty() : held(store, prefix);
    }

    /**
     * Takes {@code name} away from every holder (see {@link io.reactivelocks.admin.LockAdmin#forceRelease}).
     *
     * @param name the name to free
     * @return the grants removed; empty without a store bean
     */
    @DeleteOperation
    public Mono<ReleasedDescriptor> forceRelease(@Selector String name) {
        if (store == null) {
            return Mono.empty();
        }
        return store.admin().forceRelease(name)
                .map(removed -> new ReleasedDescriptor(name, removed.stream().map(ReactiveLocksEndpoint::describe).toList()));
    }

    /**
     * Asks the holder of the lock {@code name} to let go (see {@link io.reactivelocks.admin.LockAdmin#revoke}):
     * {@code POST /actuator/reactivelocks/{name}} with {@code {"reason": "…"}}. A write operation, refused until
     * {@code management.endpoint.reactivelocks.access=unrestricted}.
     *
     * @param name   the lock name
     * @param reason why, shown to the holder; {@code null} for "requested by an operator"
     * @return whether the lock was held and its holder asked; empty without a store bean
     */
    @WriteOperation
    public Mono<RevokedDescriptor> revoke(@Selector String name, @Nullable String reason) {
        if (store == null) {
            return Mono.empty();
        }
        String why = reason == null || reason.isBlank() ? "requested by an operator" : reason;
        return store.admin().revoke(name, why).map(asked -> new RevokedDescriptor(name, why, asked));
    }

    /** The store's grants; a store that fails or cannot list answers its error in words, the clients' part stays. */
    private static Mono<StoreDescriptor> held(LockStore store, String prefix) {
        return Mono.defer(() -> store.admin().list(prefix).take(STORE_LIMIT + 1L).collectList())
                .map(all -> new StoreDescriptor(store.name(), all.stream().limit(STORE_LIMIT).map(ReactiveLocksEndpoint::describe).toList(),
                        all.size() > STORE_LIMIT, null))
                .onErrorResume(e -> !(e instanceof IllegalArgumentException),
                        e -> Mono.just(new StoreDescriptor(store.name(), List.of(), false, String.valueOf(e.getMessage()))));
    }

    private static GrantDescriptor describe(HeldGrant g) {
        return new GrantDescriptor(g.concept().toString(), g.role().name().toLowerCase(java.util.Locale.ROOT), g.name(),
                g.token(), g.remaining() == null ? null : g.remaining().toMillis(), g.payload(), g.waiters(), g.task());
    }

    private static ClientDescriptor describe(LockClient client) {
        LockClientMetrics metrics = client.metrics();
        List<LeaseDescriptor> held = new ArrayList<>();
        for (Lease lease : metrics.heldLeases()) {
            held.add(new LeaseDescriptor(lease.name(), lease.token(), lease.remaining().toMillis(), lease.payload()));
        }
        held.sort(Comparator.comparing(LeaseDescriptor::name).thenComparingLong(LeaseDescriptor::token));
        Map<String, Integer> waits = new TreeMap<>();
        for (String name : metrics.pendingAcquires()) {
            waits.merge(name, 1, Integer::sum);
        }
        List<WaitDescriptor> waiting = new ArrayList<>();
        waits.forEach((name, n) -> waiting.add(new WaitDescriptor(name, n)));
        return new ClientDescriptor(client.toString(), held, waiting);
    }

    /**
     * What the endpoint answers.
     *
     * @param clients each lock client bean's state, by bean name
     * @param store   what every client of the store holds, or {@code null} without a store bean
     */
    public record LocksDescriptor(Map<String, ClientDescriptor> clients, @Nullable StoreDescriptor store) {

        /**
         * @param clients each lock client bean's state, by bean name
         * @param store   the store's grants, or {@code null}
         */
        public LocksDescriptor {
            clients = new LinkedHashMap<>(clients);
        }
    }

    /**
     * What the store holds, across its clients.
     *
     * @param store     the store's name
     * @param held      the grants, by name then token
     * @param truncated whether more than {@link #STORE_LIMIT} grants were held (only the first are listed)
     * @param error     why the store could not be listed (it failed, or cannot list its names), or {@code null}
     */
    public record StoreDescriptor(String store, List<GrantDescriptor> held, boolean truncated, @Nullable String error) {

        /**
         * @param store     the store's name
         * @param held      the grants
         * @param truncated whether more were held
         * @param error     why the store could not be listed, or {@code null}
         */
        public StoreDescriptor {
            held = List.copyOf(held);
        }
    }

    /**
     * One grant held on the store (see {@link HeldGrant}); the owner id is not shown.
     *
     * @param concept         the concept in words ({@code lock}, {@code semaphore}, {@code read-write lock})
     * @param role            {@code holder}, {@code permit}, {@code reader} or {@code writer}
     * @param name            the name
     * @param token           the fencing token
     * @param remainingMillis the lease time left by the store's clock, or {@code null} for a session store
     * @param payload         the payload stored with the grant, or {@code null}
     * @param waiters         clients in the store's queue for the name, or {@code -1} when it keeps none
     * @param task            the claimed task's id for a task claim ({@code claim}; the name is the queue's), else {@code null}
     */
    public record GrantDescriptor(String concept, String role, String name, long token, @Nullable Long remainingMillis,
                                  @Nullable String payload, int waiters, @Nullable String task) {
    }

    /**
     * The answer of a revocation request.
     *
     * @param name   the lock name
     * @param reason the reason sent
     * @param asked  whether the lock was held and its holder asked ({@code false}: it was free)
     */
    public record RevokedDescriptor(String name, String reason, boolean asked) {
    }

    /**
     * The answer of a force-release.
     *
     * @param name     the name freed
     * @param released the grants removed
     */
    public record ReleasedDescriptor(String name, List<GrantDescriptor> released) {

        /**
         * @param name     the name freed
         * @param released the grants removed
         */
        public ReleasedDescriptor {
            released = List.copyOf(released);
        }
    }

    /**
     * One client's state.
     *
     * @param client  the client (its backend and id)
     * @param held    the leases it holds, by name and token
     * @param waiting the locks it is acquiring, by name
     */
    public record ClientDescriptor(String client, List<LeaseDescriptor> held, List<WaitDescriptor> waiting) {

        /**
         * @param client  the client (its backend and id)
         * @param held    the leases it holds
         * @param waiting the locks it is acquiring
         */
        public ClientDescriptor {
            held = List.copyOf(held);
            waiting = List.copyOf(waiting);
        }
    }

    /**
     * One held lease.
     *
     * @param name            the lock name
     * @param token           the fencing token
     * @param remainingMillis the lease time left as of the last confirmed renewal, in milliseconds (0 when over)
     * @param payload         the payload stored with the grant, or {@code null}
     */
    public record LeaseDescriptor(String name, long token, long remainingMillis, @Nullable String payload) {
    }

    /**
     * A lock the client is waiting for.
     *
     * @param name     the lock name
     * @param acquires how many acquires of that name are in progress
     */
    public record WaitDescriptor(String name, int acquires) {
    }
}
