package io.reactivelocks.etcd;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.options.GetOption;
import io.reactivelocks.LockClient;
import io.reactivelocks.test.server.ConsensusTopologyContract;
import io.reactivelocks.test.server.EtcdClusterTopology;
import io.reactivelocks.test.server.Topology;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * Locks on a three-member etcd cluster, every client configured with the three members' endpoints
 * ({@link EtcdConnectionOptions.Builder#endpoints(String...)} through
 * {@link EtcdLocks#connect(EtcdConnectionOptions, EtcdLockOptions)}), across a
 * killed leader, a move-leader, a partitioned leader and a slow leader.
 */
class EtcdClusterTopologyTest extends ConsensusTopologyContract {

    private static EtcdClusterTopology cluster;
    private static Client checker;
    private static final String PREFIX = "rltopo-" + UUID.randomUUID().toString().substring(0, 8);

    @BeforeAll
    static void startCluster() {
        cluster = EtcdClusterTopology.start();
        checker = connection().connect();
    }

    @AfterAll
    static void stopCluster() {
        if (checker != null) {
            checker.close();
        }
        if (cluster != null) {
            cluster.close();
        }
    }

    private static EtcdConnectionOptions connection() {
        return EtcdConnectionOptions.builder()
                .endpoints(cluster.endpoints().split(","))
                .connectTimeout(Duration.ofSeconds(2))
                .build();
    }

    @Override
    protected Topology topology() {
        return cluster;
    }

    @Override
    protected LockClient newClient() {
        // the backend owns its jetcd client (closed with the lock client), as a session over connection options does
        EtcdLockOptions etcdOptions = EtcdLockOptions.builder().prefix(PREFIX).requestTimeout(Duration.ofSeconds(1)).build();
        return LockClient.create(EtcdLockBackend.owning(connection().connect(), EtcdLocks.withTtl(etcdOptions, options())), options());
    }

    @Override
    protected List<String> keysLeft() {
        try {
            List<String> out = new ArrayList<>();
            for (KeyValue kv : checker.getKVClient().get(ByteSequence.from(PREFIX + "/", StandardCharsets.UTF_8),
                    GetOption.builder().isPrefix(true).withKeysOnly(true).build()).get(10, TimeUnit.SECONDS).getKvs()) {
                out.add(kv.getKey().toString(StandardCharsets.UTF_8));
            }
            return out;
        } catch (Exception e) {
            throw new IllegalStateException("could not list keys under " + PREFIX, e);
        }
    }
}
