package io.reactivelocks.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.reactivelocks.Lease;
import io.reactivelocks.LockBackendException;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockClock;
import io.reactivelocks.LockListener;
import io.reactivelocks.LockOptions;
import io.reactivelocks.spi.Attempt;
import io.reactivelocks.spi.Holder;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.test.scheduler.VirtualTimeScheduler;

/** The engine tells its listener what happened, with the right durations; a throwing listener changes nothing. */
class LockListenerTest {

    private final List<String> events = new CopyOnWriteArrayList<>();

    private final LockListener recorder = new LockListener() {
        @Override
        public void onAcquired(String name, long token, Duration waited) {
            events.add("acquired " + name + " " + token + " after " + waited.toMillis() + "ms");
        }

        @Override
        public void onContended(String name) {
            events.add("contended " + name);
        }

        @Override
        public void onAcquireFailed(String name, Throwable error, Duration waited) {
            events.add("failed " + name + " " + error.getClass().getSimpleName() + " after " + waited.toMillis() + "ms");
        }

        @Override
        public void onRenewed(String name, long token) {
            events.add("renewed " + name);
        }

        @Override
        public void onRenewalFailed(String name, long token, Throwable error) {
            events.add("renewal failed " + name);
        }

        @Override
        public void onLost(String name, long token, String reason, Duration held) {
            events.add("lost " + name + " after " + held.toMillis() + "ms");
        }

        @Override
        public void onReleased(String name, long token, Duration held) {
            events.add("released " + name + " after " + held.toMillis() + "ms");
        }
    };

    @Test
    void acquisitionsRenewalsReleasesLossesAndFailuresAreReported() {
        VirtualTimeScheduler vts = VirtualTimeScheduler.create();
        ScriptedBackend backend = new ScriptedBackend();
        LockOptions options = LockOptions.builder().leaseTime(Duration.ofSeconds(30)).scheduler(vts).clock(LockClock.of(vts)).build();
        LockClient client = LockClient.create(backend, options, recorder);
        try {
            Lease a = client.acquire("a").block(Duration.ofSeconds(5));
            vts.advanceTimeBy(Duration.ofSeconds(10));
            a.release().block(Duration.ofSeconds(5));

            backend.onGrant = r -> Mono.just(Attempt.busy(new Holder("other", 1, Duration.ofSeconds(60))));
            assertThat(client.tryAcquire("b").blockOptional(Duration.ofSeconds(5))).isEmpty();
            client.acquire("c", options.mutate().waitTimeout(Duration.ofSeconds(2)).build()).subscribe(l -> { }, e -> { });
            vts.advanceTimeBy(Duration.ofSeconds(2));

            backend.onGrant = r -> Mono.just(Attempt.granted(5, r.leaseTime()));
            backend.onRenew = b -> Mono.error(new LockBackendException(null, "down", null, true));
            client.acquire("d").block(Duration.ofSeconds(5));
            vts.advanceTimeBy(Duration.ofSeconds(30));

            assertThat(events).containsSubsequence(
                    "acquired a 1 after 0ms", "renewed a", "released a after 10000ms",
                    "contended b",
                    "failed c LockTimeoutException after 2000ms",
                    "acquired d 5 after 0ms", "renewal failed d", "lost d after 29698ms");
        } finally {
            client.close().block(Duration.ofSeconds(5));
            vts.dispose();
        }
    }

    @Test
    void aThrowingListenerDoesNotBreakTheLock() {
        ScriptedBackend backend = new ScriptedBackend();
        LockClient client = LockClient.create(backend, LockOptions.defaults(), new LockListener() {
            @Override
            public void onAcquired(String name, long token, Duration waited) {
                throw new IllegalStateException("listener bug");
            }
        });
        try {
            Lease lease = client.acquire("a").block(Duration.ofSeconds(5));
            assertThat(lease).isNotNull();
            lease.release().block(Duration.ofSeconds(5));
        } finally {
            client.close().block(Duration.ofSeconds(5));
        }
    }
}
