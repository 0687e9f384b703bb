package io.reactivelocks.spring.boot;

import io.reactivelocks.Lease;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockClientMetrics;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;

/**
 * The actuator endpoint {@code reactivelocks}: for each {@link LockClient} bean of the application, the leases it
 * holds now (name, fencing token, remaining lease time, payload) and the locks it is waiting for (name, number of
 * acquires in progress). Read only: it reads each client's {@link LockClient#metrics()}, which sends nothing to the
 * store. Expose it like any endpoint ({@code management.endpoints.web.exposure.include=reactivelocks}); owner ids are
 * not shown.
 */
@Endpoint(id = "reactivelocks")
public class ReactiveLocksEndpoint {

    private final Map<String, LockClient> clients;

    /**
     * @param clients the lock clients by bean name
     */
    public ReactiveLocksEndpoint(Map<String, LockClient> clients) {
        this.clients = Map.copyOf(Objects.requireNonNull(clients, "clients"));
    }

    /**
     * Reads what each client holds and waits for, at this moment.
     *
     * @return the clients by bean name, in name order
     */
    @ReadOperation
    public LocksDescriptor locks() {
        Map<String, ClientDescriptor> out = new TreeMap<>();
        clients.forEach((bean, client) -> out.put(bean, describe(client)));
        return new LocksDescriptor(out);
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
     */
    public record LocksDescriptor(Map<String, ClientDescriptor> clients) {

        /**
         * @param clients each lock client bean's state, by bean name
         */
        public LocksDescriptor {
            clients = new LinkedHashMap<>(clients);
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
