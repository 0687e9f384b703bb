package io.reactivelocks.docs;

import static org.assertj.core.api.Assertions.assertThat;

import io.reactivelocks.Lease;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockClientMetrics;
import io.reactivelocks.LockListener;
import io.reactivelocks.LockOptions;
import io.reactivelocks.LockStore;
import io.reactivelocks.admin.HeldGrant;
import io.reactivelocks.admin.LockAdmin;
import io.reactivelocks.local.LocalLockBackend;
import io.reactivelocks.local.LocalLockStore;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/** The samples of docs/operations.md that need no meter registry, run on the in-memory store. */
class DocsOperationsTest {

    static final Duration STEP = Duration.ofSeconds(10);

    private final List<String> audit = new CopyOnWriteArrayList<>();

    @Test
    void listenerAndLiveView() {
        // tag::listener[]
        LockListener auditing = new LockListener() {               // every method has a no-op default
            @Override
            public void onAcquired(String name, long token, Duration waited) {
                audit("acquired " + name + " with token " + token);   // called on the engine's threads: never block here
            }

            @Override
            public void onLost(String name, long token, String reason, Duration held) {
                audit("LOST " + name + ": " + reason);
            }
        };
        LockClient locks = LockClient.create(new LocalLockBackend(new LocalLockStore()),   // RedisLocks.backend(redis, redisOptions), ...
                LockOptions.defaults(), auditing);
        // end::listener[]
        Lease lease = locks.acquire("nightly").block(STEP);
        // tag::metrics[]
        LockClientMetrics view = locks.metrics();                   // a live view: nothing is sent to the store
        int held = view.heldLeaseCount();                           // leases this client holds now
        List<Lease> leases = view.heldLeases();                     // with names, tokens and remaining time
        List<String> waiting = view.pendingAcquires();              // names being acquired now, one entry per acquire
        // end::metrics[]
        assertThat(held).isEqualTo(1);
        assertThat(leases).singleElement().extracting(Lease::token).isEqualTo(lease.token());
        assertThat(waiting).isEmpty();
        assertThat(audit).containsExactly("acquired nightly with token " + lease.token());
        StepVerifier.create(lease.release().then(Mono.fromSupplier(view::heldLeaseCount))).expectNext(0).expectComplete().verify(STEP);
        locks.close().block(STEP);
    }

    @Test
    void admin() {
        LockStore store = io.reactivelocks.local.LocalLocks.open();  // RedisLocks.connect(redis), PostgresLocks.connect(factory), ...
        Lease stuck = store.locks(LockOptions.builder().leaseTime(Duration.ofMillis(600)).build()).acquire("orders:42").block(STEP);
        // tag::admin[]
        LockAdmin admin = store.admin();                            // across every client of the store, not only this one
        List<HeldGrant> held = admin.list("orders:").collectList().block(STEP);   // holder, token, remaining, payload, waiters
        List<HeldGrant> evicted = admin.forceRelease("orders:42").block(STEP);    // the next grant's token is above the evicted ones
        // end::admin[]
        assertThat(held).singleElement().extracting(HeldGrant::token).isEqualTo(stuck.token());
        assertThat(evicted).extracting(HeldGrant::token).containsExactly(stuck.token());
        StepVerifier.create(stuck.lost()).expectComplete().verify(STEP);
        store.close().block(STEP);
    }

    private void audit(String line) {
        audit.add(line);
    }
}
