package io.reactivelocks.safety;

import io.r2dbc.spi.ConnectionFactories;
import io.r2dbc.spi.ConnectionFactory;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockListener;
import io.reactivelocks.LockOptions;
import io.reactivelocks.LockStore;
import io.reactivelocks.r2dbc.postgresql.PostgresLockBackend;
import io.reactivelocks.r2dbc.postgresql.PostgresLockOptions;
import io.reactivelocks.r2dbc.postgresql.PostgresLocks;
import io.reactivelocks.test.server.PostgresReplicaTopology;
import io.reactivelocks.test.server.Topology;
import java.time.Duration;
import reactor.core.publisher.Mono;

/**
 * {@link SafetyTopology#POSTGRESQL_REPLICA}: a primary with a streaming replica
 * ({@link PostgresReplicaTopology}), synchronous replication by default — the setting that keeps
 * tokens monotonic and grants remembered across a promotion; {@code -Dsafety.postgres.async=true}
 * runs it asynchronous to measure what a promotion loses. Workers connect through the multi-host
 * URL ({@code targetServerType=primary}).
 */
final class PostgresReplicaSafety {

    /** System property: run the PostgreSQL topology with asynchronous replication. */
    static final String ASYNC_PROPERTY = "safety.postgres.async";

    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    private PostgresReplicaSafety() {
    }

    static Topology start() {
        return PostgresReplicaTopology.builder().synchronous(!Boolean.getBoolean(ASYNC_PROPERTY)).start();
    }

    static SafetyBackend.Connection connect(String endpoints, String namespace, LockOptions options, LockListener listener) {
        ConnectionFactory factory = ConnectionFactories.get(endpoints + "&connectTimeout=PT2S");
        LockStore store = PostgresLocks.connect(factory, options(namespace));
        LockClient client = store.locks(options, listener);
        return new SafetyBackend.Connection(client, ObservedFairBackend.watching(store.fairLocks(options), options, listener), store.semaphores(options),
                store.readWriteLocks(io.reactivelocks.rwlock.ReadWriteLockOptions.of(options)), store.admin(), () -> store.close().block(TIMEOUT));
    }

    static void prepare(Topology topology, String namespace) {
        PostgresLockBackend backend = PostgresLocks.backend(ConnectionFactories.get(topology.endpoints()), options(namespace));
        try {
            backend.migrate().block(TIMEOUT);
        } finally {
            backend.close().block(TIMEOUT);
        }
    }

    static long held(Topology topology, String namespace) {
        ConnectionFactory factory = ConnectionFactories.get(topology.endpoints());
        Long n = Mono.usingWhen(Mono.from(factory.create()),
                c -> Mono.from(c.createStatement("SELECT count(*) FROM " + namespace + " WHERE expires_at > now()").execute())
                        .flatMap(r -> Mono.from(r.map((row, m) -> row.get(0, Long.class)))),
                c -> Mono.from(c.close())).block(TIMEOUT);
        return n == null ? 0 : n;
    }

    private static PostgresLockOptions options(String namespace) {
        return PostgresLockOptions.builder().table(namespace).sequence(namespace + "_seq")
                .channel(namespace).createSchemaOnFirstUse(true).build();
    }
}
