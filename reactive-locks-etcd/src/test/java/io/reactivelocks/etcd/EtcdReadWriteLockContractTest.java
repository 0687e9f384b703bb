package io.reactivelocks.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.options.GetOption;
import io.reactivelocks.Lease;
import io.reactivelocks.LockOptions;
import io.reactivelocks.LockStore;
import io.reactivelocks.rwlock.ReadWriteLock;
import io.reactivelocks.rwlock.ReadWriteLockOptions;
import io.reactivelocks.spi.rwlock.ReadWriteStore;
import io.reactivelocks.test.ReadWriteLockContract;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;

/**
 * The read-write lock contract against a real etcd (leases of whole seconds: the suite's lease time
 * is 2 s), plus the etcd specifics: one key per request on its own lease in create-revision order,
 * the create revision as token, and no key left (waiting readers' keys included) after each test.
 */
class EtcdReadWriteLockContractTest extends ReadWriteLockContract {

    private static EtcdTestSupport etcd;
    private static Client inspector;

    @BeforeAll
    static void startServer() {
        etcd = EtcdTestSupport.start();
        inspector = EtcdTestSupport.client(etcd.server.host(), etcd.server.port());
    }

    @AfterAll
    static void stopServer() {
        if (inspector != null) {
            inspector.close();
        }
        if (etcd != null) {
            etcd.close();
        }
    }

    private static String prefix() {
        return etcd.prefix + "-rw";
    }

    @Override
    protected ReadWriteStore newStore() {
        return new EtcdReadWriteStore(EtcdTestSupport.client(etcd.server.host(), etcd.server.port()), true, prefix());
    }

    @Override
    protected LockOptions options() {
        return super.options().mutate().leaseTime(Duration.ofSeconds(2)).build();
    }

    @AfterEach
    void noKeyLeft() {
        await().atMost(STEP).untilAsserted(() -> assertThat(Mono.fromFuture(() -> inspector.getKVClient()
                        .get(EtcdKeys.bytes(prefix() + "/"), GetOption.builder().isPrefix(true).withKeysOnly(true).build()))
                .block(STEP).getKvs()).extracting(kv -> kv.getKey().toString(StandardCharsets.UTF_8)).as("keys left").isEmpty());
    }

    @Test
    void eachRequestIsAKeyOnItsOwnLeaseAndTheTokenIsItsCreateRevision() {
        Client c = EtcdTestSupport.client(etcd.server.host(), etcd.server.port());
        LockStore session = EtcdLocks.connect(c, etcd.options());
        ReadWriteLock rw = session.readWriteLocks(ReadWriteLockOptions.of(options()));
        EtcdReadWriteStore store = new EtcdReadWriteStore(c, false, prefix());
        try {
            String name = name("keys");
            Lease r = rw.read().acquire(name).block(STEP);
            AtomicReference<Lease> w = new AtomicReference<>();
            Disposable writer = rw.write().acquire(name).subscribe(w::set);
            // the key whose value names the owner
            List<KeyValue> kvs = Mono.justOrEmpty(store.find(name, r.owner()).block(STEP)).flux().collectList().block(STEP);
            assertThat(kvs).hasSize(1);
            assertThat(kvs.get(0).getCreateRevision()).isEqualTo(r.token());
            assertThat(kvs.get(0).getValue().toString(StandardCharsets.US_ASCII)).isEqualTo(r.owner() + "\nr");
            assertThat(kvs.get(0).getLease()).as("on a lease").isNotZero();
            await().atMost(STEP).until(() -> rw.observe(name).blockFirst(STEP).waitingWriters().size() == 1);
            r.release().block(STEP);
            await().atMost(STEP).until(() -> w.get() != null);
            assertThat(w.get().token()).isGreaterThan(r.token());
            w.get().release().block(STEP);
            writer.dispose();
        } finally {
            session.close().block(STEP);
            c.close();
        }
    }

    /**
     * No herd on the write side: a chain of 8 waiting writers behind a writer (each releases as soon
     * as it is granted). Each keeps its key and watches only the key before it, so a handoff costs
     * the release and the next writer's attempt — counted by the server
     * ({@code grpc_server_msg_received_total}, keep-alives included).
     */
    @Test
    void aWriteHandoffWakesOnlyTheNextWriter() {
        Client c = EtcdTestSupport.client(etcd.server.host(), etcd.server.port());
        // a lease that outlasts the test: no renewal inside the chain
        LockOptions longLease = options().mutate().leaseTime(Duration.ofSeconds(20)).build();
        LockStore session = EtcdLocks.connect(c, etcd.options());
        ReadWriteLock rw = session.readWriteLocks(ReadWriteLockOptions.of(longLease));
        int waiters = 8;
        try {
            String name = name("herd");
            Lease holder = rw.write().acquire(name).block(STEP);
            AtomicInteger granted = new AtomicInteger();
            List<Disposable> subs = new ArrayList<>();
            for (int i = 0; i < waiters; i++) {
                subs.add(rw.write().acquire(name).flatMap(l -> l.release().doOnSuccess(x -> granted.incrementAndGet())).subscribe());
            }
            // every writer queued and watching the key before it
            await().atMost(Duration.ofSeconds(20)).until(() -> metric("etcd_debugging_mvcc_watcher_total") >= waiters
                    && Mono.fromFuture(() -> inspector.getKVClient().get(EtcdKeys.bytes(prefix() + "/"),
                            GetOption.builder().isPrefix(true).withCountOnly(true).build())).block(STEP).getCount() == waiters + 1);
            assertThat(granted.get()).isZero();
            long before = metric("grpc_server_msg_received_total{");
            holder.release().block(STEP);
            await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(granted.get()).isEqualTo(waiters));
            long requests = metric("grpc_server_msg_received_total{") - before;
            subs.forEach(Disposable::dispose);
            System.out.printf("etcd read-write lock, %d waiting writers: %d requests for %d handoffs%n", waiters, requests, waiters);
            // per handoff: the release (a revoke) and the next writer's read, about 3 with its watch; spare for keep-alives
            assertThat(requests).as("requests for %d handoffs", waiters).isLessThanOrEqualTo(4L * waiters + 2);
        } finally {
            session.close().block(STEP);
            c.close();
        }
    }

    /** @return the sum of the server's metric lines that start with {@code prefix} ({@code /metrics}) */
    private static long metric(String prefix) {
        try {
            java.net.http.HttpResponse<String> r = java.net.http.HttpClient.newHttpClient().send(
                    java.net.http.HttpRequest.newBuilder(java.net.URI.create(etcd.server.url() + "/metrics")).build(),
                    java.net.http.HttpResponse.BodyHandlers.ofString());
            long sum = 0;
            for (String line : r.body().split("\n")) {
                if (line.startsWith(prefix) && (prefix.endsWith("{") || line.startsWith(prefix + " "))) {
                    sum += (long) Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1).trim());
                }
            }
            return sum;
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /**
     * Revocation requests to two readers, sent one right after the other, reach a watching stream
     * once each; the revocation key lies outside the name's range (the grants and holders stay as
     * they are) and is gone right after each request.
     */
    @Test
    void revocationRequestsToReadersReachAWatchingStreamOnceEachAndLeaveNoKey() {
        String name = "revoke-" + java.util.UUID.randomUUID();
        ReadWriteStore holders = newStore();
        ReadWriteStore asker = newStore();
        List<io.reactivelocks.spi.LockEvent> seen = java.util.Collections.synchronizedList(new ArrayList<>());
        Disposable watching = null;
        try {
            Duration lease = Duration.ofSeconds(10);
            for (String o : List.of("reader-1", "reader-2")) {
                assertThat(holders.tryGrant(name, o, io.reactivelocks.rwlock.LockMode.READ, false, false, lease).block(STEP))
                        .isInstanceOf(io.reactivelocks.spi.semaphore.PermitGrant.Granted.class);
            }
            watching = asker.events(name).subscribe(seen::add);
            await().atMost(STEP).until(() -> seen.contains(new io.reactivelocks.spi.LockEvent.Subscribed(name)));

            String slots = ((EtcdReadWriteStore) holders).keys().id(); // the grant keys: slots 0 and 1 of the holders' store
            asker.revoke(name, "reader-1", "first").then(asker.revoke(name, "reader-2", "second")).block(STEP);
            List<io.reactivelocks.spi.LockEvent> asked = List.of(new io.reactivelocks.spi.LockEvent.Revoked(name, "reader-1", "first"),
                    new io.reactivelocks.spi.LockEvent.Revoked(name, "reader-2", "second"));
            await().atMost(STEP).until(() -> seen.containsAll(asked));
            assertThat(holders.holders(name).block(STEP).readers()).extracting(h -> h.owner())
                    .containsExactlyInAnyOrder("reader-1", "reader-2");
            assertThat(Mono.fromFuture(() -> inspector.getKVClient().get(EtcdKeys.bytes(prefix() + "/"),
                            GetOption.builder().isPrefix(true).withKeysOnly(true).build())).block(STEP).getKvs())
                    .extracting(kv -> kv.getKey().toString(StandardCharsets.UTF_8))
                    .as("the two grant keys, no revocation key").hasSize(2)
                    .allMatch(k -> k.endsWith("/" + slots + "-0") || k.endsWith("/" + slots + "-1"));
            synchronized (seen) {
                assertThat(seen.stream().filter(e -> e instanceof io.reactivelocks.spi.LockEvent.Revoked).toList()).isEqualTo(asked);
                assertThat(seen).as("a request is no grant event").noneMatch(e -> e instanceof io.reactivelocks.spi.LockEvent.Acquired
                        || e instanceof io.reactivelocks.spi.LockEvent.Released);
            }
        } finally {
            if (watching != null) {
                watching.dispose();
            }
            holders.release(name, "reader-1").block(STEP);
            holders.release(name, "reader-2").block(STEP);
            holders.close().block(STEP);
            asker.close().block(STEP);
        }
    }
}
