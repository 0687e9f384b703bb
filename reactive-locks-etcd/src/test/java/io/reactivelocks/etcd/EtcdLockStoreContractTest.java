package io.reactivelocks.etcd;

import static org.assertj.core.api.Assertions.assertThat;

import io.etcd.jetcd.Client;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.LeaseOption;
import java.nio.charset.StandardCharsets;
import io.reactivelocks.Concept;
import io.reactivelocks.Lease;
import io.reactivelocks.LockStore;
import io.reactivelocks.election.Leadership;
import io.reactivelocks.multi.MultiLease;
import io.reactivelocks.test.LockStoreContract;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;

/**
 * The store-session contract on a real etcd, and what the session holds on the server counted by
 * etcd: one session lease for every lock client, multi-lock and election of one lease time, and a
 * lease per held permit or read-write grant, all over the application's one client.
 */
class EtcdLockStoreContractTest extends LockStoreContract {

    private static EtcdTestSupport etcd;
    private static Client client;
    private static Client inspector;

    @BeforeAll
    static void startServer() {
        etcd = EtcdTestSupport.start();
        client = EtcdTestSupport.client(etcd.server.host(), etcd.server.port());
        inspector = EtcdTestSupport.client(etcd.server.host(), etcd.server.port());
    }

    @AfterAll
    static void stopServer() {
        if (client != null) {
            client.close();
        }
        if (inspector != null) {
            inspector.close();
        }
        if (etcd != null) {
            etcd.close();
        }
    }

    @Override
    protected LockStore connect() {
        return EtcdLocks.connect(client, EtcdLockOptions.builder().prefix(etcd.prefix).requestTimeout(Duration.ofSeconds(5)).build());
    }

    @Override
    protected Set<Concept> expectedConcepts() {
        return EtcdStoreSession.CONCEPTS;
    }

    /** @return the leases the keys under the fixture's prefix are attached to */
    private static Set<Long> leases() throws Exception {
        Set<Long> ids = new HashSet<>();
        for (KeyValue kv : inspector.getKVClient().get(ByteSequence.from(etcd.prefix, StandardCharsets.UTF_8),
                GetOption.builder().isPrefix(true).withKeysOnly(true).build()).get(10, TimeUnit.SECONDS).getKvs()) {
            if (kv.getLease() != 0) {
                ids.add(kv.getLease());
            }
        }
        return ids;
    }

    private static boolean alive(long lease) throws Exception {
        return inspector.getLeaseClient().timeToLive(lease, LeaseOption.DEFAULT).get(10, TimeUnit.SECONDS).getTTL() > 0;
    }

    @Test
    void everyLockConceptSharesOneSessionLease() throws Exception {
        Set<Long> before = leases();
        LockStore store = store();
        String n = name("leases");
        List<Lease> leases = new ArrayList<>();
        List<Disposable> running = new ArrayList<>();
        leases.add(store.locks(OPTIONS).acquire(n + "-lock").block(STEP));
        leases.add(store.fairLocks(OPTIONS).acquire(n + "-fair").block(STEP));
        MultiLease multi = store.multiLocks(OPTIONS).acquire(List.of(n + "-m1", n + "-m2")).block(STEP);
        Leadership term = store.elections(OPTIONS).campaign(n + "-elect", "me").next().block(STEP);
        assertThat(term).isNotNull();
        running.add(store.locks(OPTIONS).observe(n + "-lock").subscribe());
        running.add(store.locks(OPTIONS).acquire(n + "-lock").subscribe()); // a waiter

        // the waiter's key joins the line as it subscribes; it is on the same session lease
        Set<Long> lockLeases = leases();
        lockLeases.removeAll(before);
        assertThat(lockLeases).as("one session lease for every lock client, multi-lock and election").hasSize(1);

        leases.add(store.semaphores(OPTIONS).acquire(n + "-sem", 2).block(STEP));
        leases.add(store.readWriteLocks(OPTIONS).read().acquire(n + "-rw").block(STEP));
        Set<Long> all = leases();
        all.removeAll(before);
        assertThat(all).as("plus one lease the session's permits and read-write grants of one lease time share").hasSize(2);

        running.forEach(Disposable::dispose);
        multi.release().block(STEP);
        leases.forEach(l -> l.release().block(STEP));
        store.close().block(STEP);
        Set<Long> after = leases();
        after.removeAll(before);
        assertThat(after).as("closing the session leaves no key on a lease").isEmpty();
        for (long lease : lockLeases) {
            assertThat(alive(lease)).as("the session lease is revoked").isFalse();
        }
    }
}
