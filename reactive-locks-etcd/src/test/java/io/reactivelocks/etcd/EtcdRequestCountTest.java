package io.reactivelocks.etcd;

import static org.assertj.core.api.Assertions.assertThat;

import io.etcd.jetcd.Client;
import io.reactivelocks.Lease;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockStore;
import io.reactivelocks.rwlock.ReadWriteLock;
import io.reactivelocks.semaphore.Semaphore;
import io.reactivelocks.test.RequestCountContract;
import java.time.Duration;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Requests per operation as etcd counts them (its {@code /metrics}, like benchmarks B1 and B3), on a
 * server of this class alone, over one jetcd client. A session keep-alive is the renewal tick of
 * every lock of a client; elsewhere sessions last 60 s, so no keep-alive falls inside a counted
 * window.
 */
class EtcdRequestCountTest extends RequestCountContract {

    private static EtcdTestSupport etcd;
    private static Client client;

    @BeforeAll
    static void startServer() {
        etcd = EtcdTestSupport.start();
        client = EtcdTestSupport.client(etcd.server.host(), etcd.server.port());
    }

    @AfterAll
    static void stopServer() {
        if (client != null) {
            client.close();
        }
        if (etcd != null) {
            etcd.close();
        }
    }

    @AfterEach
    void nothingLeft() {
        closeSessions();
        assertThat(etcd.keys()).as("keys left after the session closed").isEmpty();
    }

    /** The session lease of the lock clients lasts {@code leaseTime} (a keep-alive every third of it). */
    @Override
    protected LockStore connect(Duration leaseTime) {
        return EtcdLocks.connect(client, EtcdLockOptions.builder().prefix(etcd.prefix).sessionTtl(leaseTime)
                .requestTimeout(Duration.ofSeconds(5)).build());
    }

    @Override
    protected long serverRequests() {
        return etcd.requestsReceived();
    }

    /** The reads, writes and deletes etcd's store ran (its mvcc counters), inside transactions or not. */
    @Override
    protected long serverCommands() {
        return etcd.mvccOperations();
    }

    @Override
    protected double commandsPer(Operation operation) {
        return switch (operation) {
            // the acquire transaction's compare (a read of the key), put and read of the name's lowest key, then the
            // delete: 4 (the simplest put-if-absent lock does 3: no read of the lowest key)
            case LOCK_PAIR, FAIR_PAIR, SEMAPHORE_PAIR, READ_PAIR, READ_BESIDE_READER_PAIR, WRITE_PAIR -> 4;
            // the tick's transaction reads each permit's key: one read per permit (the keep-alive is no store operation)
            case PERMIT_RENEWAL -> 1.0;
            case RENEWAL_TICK -> 0;
            // a delete per handoff, and the last grantee's
            case HANDOFF -> (WAITERS + 1.0) / WAITERS;
        };
    }

    @Override
    protected java.util.Map<String, Long> requestsByKind() {
        return etcd.requestsByMethod();
    }

    /**
     * What etcd is asked per pair, by kind, for a lock, a semaphore permit and a read lock: one transaction (the
     * acquire) and one plain delete (the release: no create-revision compare, which cost etcd a read per release
     * before).
     */
    @Test
    void aPairIsOneTransactionAndOnePlainDelete() {
        LockStore store = store(Duration.ofSeconds(60));
        LockClient locks = store.locks(options(Duration.ofSeconds(60)));
        Semaphore permits = store.semaphores(options(Duration.ofSeconds(60)));
        ReadWriteLock rw = store.readWriteLocks(options(Duration.ofSeconds(60)));
        String name = name("kinds");
        assertOneTxnAndOneDelete("lock", () -> locks.acquire(name).flatMap(Lease::release).block(STEP));
        assertOneTxnAndOneDelete("permit", () -> permits.acquire(name + "-s", 3).flatMap(Lease::release).block(STEP));
        assertOneTxnAndOneDelete("read lock", () -> rw.read().acquire(name + "-r").flatMap(Lease::release).block(STEP));
    }

    private void assertOneTxnAndOneDelete(String what, Runnable pair) {
        pair.run(); // warm: connection, session, watch
        quietCount();
        Map<String, Long> before = requestsByKind();
        int pairs = 10;
        for (int i = 0; i < pairs; i++) {
            pair.run();
        }
        quietCount();
        Map<String, Long> sent = new TreeMap<>();
        requestsByKind().forEach((kind, n) -> {
            long d = n - before.getOrDefault(kind, 0L);
            if (d != 0) {
                sent.put(kind, d);
            }
        });
        assertThat(sent).as("requests by kind for %s %s pairs", pairs, what).containsEntry("Txn", (long) pairs)
                .containsEntry("DeleteRange", (long) pairs).containsOnlyKeys("Txn", "DeleteRange");
    }

    @Override
    protected double requestsPer(Operation operation) {
        return switch (operation) {
            // the acquire transaction and the delete, a plain one (the session's latest keep-alive confirms the grant; one
            // prefix watch opened once serves every held key)
            case LOCK_PAIR, FAIR_PAIR -> 2;
            // the transaction that puts the permit on the store's shared lease and reads the line, the delete that
            // releases it (it used to be 3: a LeaseGrant of the permit's own before, a LeaseRevoke as the release)
            case SEMAPHORE_PAIR -> 2;
            // as the semaphore: one transaction that puts the key on the shared lease and reads the name's keys (it used
            // to read our slot first, and the name's keys after the put: 5; then a lease of its own: 3), the delete
            case READ_PAIR, READ_BESIDE_READER_PAIR, WRITE_PAIR -> 2;
            // one keepAliveOnce of the session lease — two LeaseKeepAlive messages: jetcd 0.8.6 writes the request
            // when the stream opens and again in end(request) when the answer arrives
            // the permits share the store's lease of their TTL: per tick one keepAliveOnce of it (two messages, as
            // RENEWAL_TICK) and one transaction reading every permit's key (it used to be a lease per permit: 2 each)
            case PERMIT_RENEWAL -> 3.0 / RENEWED_PERMITS;
            case RENEWAL_TICK -> 2;
            // per handoff the delete only: each waiter's predecessor was the holder when it queued or was granted
            // by this client, and the held keys' shared watch reports the predecessor's deletion in order with any
            // of the waiter's own key, so its deletion alone makes the waiter first; the chain adds the last
            // grantee's delete: 6 + 1 = 7
            case HANDOFF -> (WAITERS + 1.0) / WAITERS;
        };
    }
}
