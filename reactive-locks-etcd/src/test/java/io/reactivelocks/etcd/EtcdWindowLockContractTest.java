package io.reactivelocks.etcd;

import static org.assertj.core.api.Assertions.assertThat;

import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.options.GetOption;
import io.reactivelocks.LockStore;
import io.reactivelocks.spi.window.WindowStore;
import io.reactivelocks.test.WindowLockContract;
import io.reactivelocks.window.WindowClaim;
import io.reactivelocks.window.WindowLock;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.test.scheduler.VirtualTimeScheduler;

/**
 * The window-lock contract against a real etcd, plus the etcd specifics: the key, its value and
 * lease, the revision token, and that a caller whose clock lags cannot claim an older window.
 */
class EtcdWindowLockContractTest extends WindowLockContract {

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
    protected WindowStore newStore() {
        return new EtcdWindowStore(EtcdTestSupport.client(etcd.server.host(), etcd.server.port()), true,
                etcd.prefix + "-window", Schedulers.parallel());
    }

    @Test
    void theKeyHoldsTheIndexUnderALeaseAndTheTokenIsThePutsRevision() {
        Client c = EtcdTestSupport.client(etcd.server.host(), etcd.server.port());
        LockStore session = EtcdLocks.connect(c, etcd.options());
        WindowLock w = session.windowLocks(options());
        try {
            String name = name("key");
            Duration hour = Duration.ofHours(1);
            WindowClaim claim = w.tryClaim(name, hour).block(STEP);
            EtcdWindowStore store = new EtcdWindowStore(c, false, etcd.prefix + "-window", Schedulers.parallel());
            List<KeyValue> kvs = Mono.fromFuture(() -> c.getKVClient().get(store.key(name, hour), GetOption.DEFAULT)).block(STEP).getKvs();
            assertThat(kvs).hasSize(1);
            KeyValue kv = kvs.get(0);
            assertThat(kv.getValue().toString(StandardCharsets.US_ASCII)).isEqualTo(String.format("%019d", claim.window()));
            assertThat(kv.getModRevision()).isEqualTo(claim.token());
            assertThat(kv.getLease()).as("the key expires by a lease").isNotZero();
            long ttl = Mono.fromFuture(() -> c.getLeaseClient().timeToLive(kv.getLease(), io.etcd.jetcd.options.LeaseOption.DEFAULT))
                    .block(STEP).getTTL();
            assertThat(ttl).as("rest of the window + one period").isGreaterThan(hour.toSeconds()).isLessThanOrEqualTo(2 * hour.toSeconds() + 1);
        } finally {
            session.close().block(STEP);
            c.close();
        }
    }

    @Test
    void aCallerWhoseClockLagsCannotClaimAnOlderWindow() {
        Client c = EtcdTestSupport.client(etcd.server.host(), etcd.server.port());
        VirtualTimeScheduler lagging = VirtualTimeScheduler.create();
        try {
            String name = name("lag");
            Duration minute = Duration.ofMinutes(1);
            WindowLock onTime = WindowLock.create(new EtcdWindowStore(c, false, etcd.prefix + "-window", Schedulers.parallel()), options());
            WindowLock late = WindowLock.create(new EtcdWindowStore(c, false, etcd.prefix + "-window", lagging), options());
            lagging.advanceTimeTo(java.time.Instant.now().minus(Duration.ofMinutes(5)));
            WindowClaim now = onTime.tryClaim(name, minute).block(STEP);
            assertThat(now).isNotNull();
            assertThat(late.tryClaim(name, minute).blockOptional(STEP)).as("five windows back").isEmpty();
            lagging.advanceTimeBy(Duration.ofMinutes(10));
            WindowClaim ahead = late.tryClaim(name, minute).block(STEP);
            assertThat(ahead).as("a clock ahead claims its later window").isNotNull();
            assertThat(ahead.window()).isGreaterThan(now.window());
            assertThat(ahead.token()).isGreaterThan(now.token());
            assertThat(onTime.tryClaim(name, minute).blockOptional(STEP)).as("the stored window never goes back").isEmpty();
        } finally {
            lagging.dispose();
            c.close();
        }
    }
}
