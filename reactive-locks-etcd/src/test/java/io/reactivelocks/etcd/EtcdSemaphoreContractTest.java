package io.reactivelocks.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.options.GetOption;
import io.reactivelocks.Lease;
import io.reactivelocks.LockOptions;
import io.reactivelocks.semaphore.Semaphore;
import io.reactivelocks.spi.semaphore.SemaphoreStore;
import io.reactivelocks.test.CountingSemaphoreStore;
import io.reactivelocks.test.SemaphoreContract;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import reactor.core.Disposable;
import reactor.util.retry.Retry;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

/**
 * The semaphore contract against a real etcd (leases of whole seconds: the suite's lease time is
 * 2 s), plus the etcd specifics: one key per permit on its own lease, the create revision as token.
 */
class EtcdSemaphoreContractTest extends SemaphoreContract {

    private static EtcdTestSupport etcd;

    @BeforeAll
    static void startServer() {
        etcd = EtcdTestSupport.start();
    }

    @AfterAll
    static void stopServer() {
        if (etcd != null) {
            etcd.close();
        }
    }

    @Override
    protected SemaphoreStore newStore() {
        return new EtcdSemaphoreStore(EtcdTestSupport.client(etcd.server.host(), etcd.server.port()), true,
                etcd.prefix + "-semaphore");
    }

    @Override
    protected LockOptions options() {
        return super.options().mutate().leaseTime(Duration.ofSeconds(2)).build();
    }

    @Test
    void eachPermitIsAKeyOnItsOwnLeaseAndTheTokenIsItsCreateRevision() {
        Client c = EtcdTestSupport.client(etcd.server.host(), etcd.server.port());
        Semaphore s = EtcdLocks.semaphore(c, etcd.options(), options());
        try {
            String name = name("keys");
            List<Lease> both = s.acquire(name, 3, 2, options()).block(STEP);
            EtcdSemaphoreStore store = new EtcdSemaphoreStore(c, false, etcd.prefix + "-semaphore");
            for (Lease l : both) {
                List<KeyValue> kvs = Mono.fromFuture(() -> c.getKVClient().get(store.key(name, l.owner()), GetOption.DEFAULT))
                        .block(STEP).getKvs();
                assertThat(kvs).hasSize(1);
                assertThat(kvs.get(0).getCreateRevision()).isEqualTo(l.token());
                assertThat(kvs.get(0).getLease()).as("on a lease").isNotZero();
            }
            assertThat(both.get(0).owner()).isNotEqualTo(both.get(1).owner());
            both.forEach(l -> l.release().block(STEP));
        } finally {
            s.close().block(STEP);
            c.close();
        }
    }

    /**
     * No herd: a chain of 8 waiters on one permit (each releases as soon as it is granted). Each
     * waiter keeps its key in the queue and watches only its predecessor, so the store is written
     * only by the releases (one revoke each), and a handoff costs the release, the next waiter's
     * read and the close of its watch — about 3 requests, counted by the server
     * ({@code grpc_server_msg_received_total}, which also counts keep-alives: hence the spare).
     */
    @Test
    void aHandoffWakesOnlyTheNextWaiter() {
        Client c = EtcdTestSupport.client(etcd.server.host(), etcd.server.port());
        CountingSemaphoreStore store = new CountingSemaphoreStore(new EtcdSemaphoreStore(c, false, etcd.prefix + "-semaphore"));
        // a lease that outlasts the test: no renewal or lease refresh inside the chain
        Semaphore s = Semaphore.create(store, options().mutate().leaseTime(Duration.ofSeconds(20)).build());
        int waiters = 8;
        try {
            String name = name("herd");
            Lease holder = s.acquire(name, 1).block(STEP);
            AtomicInteger granted = new AtomicInteger();
            List<Disposable> subs = new ArrayList<>();
            for (int i = 0; i < waiters; i++) {
                subs.add(s.acquire(name, 1).flatMap(l -> l.release().doOnSuccess(x -> granted.incrementAndGet()))
                        .subscribe());
            }
            await("every waiter queued and parked on its predecessor").atMost(Duration.ofSeconds(20))
                    .until(() -> store.waiting() == waiters && store.inFlight() == 0);
            assertThat(granted.get()).as("granted while the holder holds").isZero();
            long revisionBefore = revision(c);
            long requestsBefore = etcd.requestsReceived();
            int attemptsBefore = store.attempts();
            holder.release().block(STEP);
            await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(granted.get()).isEqualTo(waiters));
            long requests = etcd.requestsReceived() - requestsBefore;
            long writes = revision(c) - revisionBefore;
            int attempts = store.attempts() - attemptsBefore;
            subs.forEach(Disposable::dispose);
            System.out.printf("etcd semaphore, %d waiters: %d requests, %d writes, %d grant attempts for %d handoffs%n",
                    waiters, requests, writes, attempts, waiters);
            // the releases only (the holder's and each grantee's): waiters write nothing while they wait
            assertThat(writes).as("writes for %d handoffs", waiters).isLessThanOrEqualTo(waiters + 1L);
            // one attempt per handoff (the woken waiter's); spare: one more each (a safety-net timer)
            assertThat(attempts).as("grant attempts for %d handoffs", waiters).isLessThanOrEqualTo(2 * waiters);
            // 3 per handoff; spare: one per handoff (the revision reads of this test, keep-alives)
            assertThat(requests).as("requests for %d handoffs", waiters).isLessThanOrEqualTo(4L * waiters + 2);
        } finally {
            s.close().block(STEP);
            c.close();
        }
    }

    /**
     * No herd with N = 2: only the head of the line watches the name's deletions, the others the
     * waiter before them (told by a put when it is let in). With a 10-minute backoff only these
     * watches can wake a waiter, so the chain ends only if none is missed.
     */
    @Test
    void withTwoPermitsTheHeadOfTheLineWatchesTheHoldersAndTheOthersTheirPredecessor() {
        Client c = EtcdTestSupport.client(etcd.server.host(), etcd.server.port());
        CountingSemaphoreStore store = new CountingSemaphoreStore(new EtcdSemaphoreStore(c, false, etcd.prefix + "-semaphore"));
        Semaphore s = Semaphore.create(store, options().mutate().leaseTime(Duration.ofSeconds(20))
                .backoff(Retry.backoff(Long.MAX_VALUE, Duration.ofMinutes(10)).maxBackoff(Duration.ofMinutes(10)).jitter(0)).build());
        int waiters = 8;
        try {
            String name = name("herd2");
            Lease one = s.acquire(name, 2).block(STEP);
            Lease two = s.acquire(name, 2).block(STEP);
            AtomicInteger granted = new AtomicInteger();
            List<Disposable> subs = new ArrayList<>();
            for (int i = 0; i < waiters; i++) {
                subs.add(s.acquire(name, 2).flatMap(l -> l.release().doOnSuccess(x -> granted.incrementAndGet())).subscribe());
            }
            await("every waiter queued and parked").atMost(Duration.ofSeconds(20))
                    .until(() -> store.waiting() == waiters && store.inFlight() == 0);
            long before = etcd.requestsReceived();
            one.release().block(STEP);
            two.release().block(STEP);
            await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(granted.get()).isEqualTo(waiters));
            long requests = etcd.requestsReceived() - before;
            subs.forEach(Disposable::dispose);
            System.out.printf("etcd semaphore N = 2, %d waiters: %d requests for %d handoffs%n", waiters, requests, waiters);
            assertThat(requests).as("requests for %d handoffs", waiters).isLessThanOrEqualTo(8L * waiters + 4);
        } finally {
            s.close().block(STEP);
            c.close();
        }
    }

    private static long revision(Client c) {
        return Mono.fromFuture(() -> c.getKVClient().get(io.etcd.jetcd.ByteSequence.from(new byte[] {0}))).block(STEP)
                .getHeader().getRevision();
    }
}
