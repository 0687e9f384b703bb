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
     * No herd: a chain of 8 waiters on one permit (each releases as soon as it is granted) writes
     * only to grant and release — 3 revisions per handoff (put asking, mark held, delete) — where
     * waiters that put and delete an asking key on each busy attempt wake each other into many
     * more. The store's revision counts the writes (each deletion is a watch event for every waiter);
     * this class's tests run one at a time, so nothing else writes meanwhile.
     */
    @Test
    void waitersDoNotWriteWhileTheyWait() {
        Client c = EtcdTestSupport.client(etcd.server.host(), etcd.server.port());
        CountingSemaphoreStore store = new CountingSemaphoreStore(new EtcdSemaphoreStore(c, false, etcd.prefix + "-semaphore"));
        // a lease that outlasts the test: the holder (not renewed) must hold until it releases
        Semaphore s = Semaphore.create(store, options().mutate().leaseTime(Duration.ofSeconds(20)).build());
        int waiters = 8;
        try {
            String name = name("herd");
            Lease holder = s.acquire(name, 1).block(STEP);
            long start = revision(c);
            AtomicInteger granted = new AtomicInteger();
            List<Disposable> subs = new ArrayList<>();
            for (int i = 0; i < waiters; i++) {
                subs.add(s.acquire(name, 1).flatMap(l -> l.release().doOnSuccess(x -> granted.incrementAndGet()))
                        .subscribe());
            }
            settled(store, waiters);
            long before = revision(c);
            assertThat(granted.get()).as("granted while the holder holds").isZero();
            assertThat(before - start).as("writes while %d waiters wait", waiters).isZero();
            int attemptsBefore = store.attempts();
            holder.release().block(STEP);
            await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(granted.get()).isEqualTo(waiters));
            long writes = revision(c) - before;
            int attempts = store.attempts() - attemptsBefore;
            subs.forEach(Disposable::dispose);
            System.out.printf("etcd semaphore, %d waiters: %d writes, %d grant attempts for %d handoffs%n",
                    waiters, writes, attempts, waiters);
            // per handoff: the release, the next holder's key and its mark, and the next holder's
            // attempt; spare: one write and two attempts per handoff (a woken waiter may find the permit taken)
            assertThat(writes).as("writes for %d handoffs", waiters).isLessThanOrEqualTo(4L * waiters + 1);
            assertThat(attempts).as("grant attempts for %d handoffs", waiters).isLessThanOrEqualTo(3 * waiters);
        } finally {
            s.close().block(STEP);
            c.close();
        }
    }

    private static long revision(Client c) {
        return Mono.fromFuture(() -> c.getKVClient().get(io.etcd.jetcd.ByteSequence.from(new byte[] {0}))).block(STEP)
                .getHeader().getRevision();
    }

    /**
     * Every waiter has asked and the change stream is live (and woke them to ask again, which shows as
     * at least one attempt more); nothing in flight.
     */
    private static void settled(CountingSemaphoreStore store, int waiters) {
        await("the waiters go quiet (they do not while each busy attempt wakes the others)").atMost(Duration.ofSeconds(20))
                .until(() -> store.subscribed() >= 1 && store.attempts() >= 2 + waiters
                && store.inFlight() == 0);
    }
}
