package io.reactivelocks.dashboard;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.reactivelocks.Lease;
import io.reactivelocks.LockClock;
import io.reactivelocks.LockOptions;
import io.reactivelocks.LockStore;
import io.reactivelocks.local.LocalLocks;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import reactor.test.StepVerifier;
import reactor.test.scheduler.VirtualTimeScheduler;

/** The dashboard's feed on the in-memory store and virtual time, and its page. */
class LockDashboardTest {

    private static final Duration STEP = Duration.ofSeconds(10);

    @Test
    void aSnapshotAtOnceThenOnlyWhenSomethingChangedAndAHeartbeat() {
        VirtualTimeScheduler time = VirtualTimeScheduler.create();
        LockStore store = LocalLocks.open(time, LockClock.of(time));
        LockOptions noExpiry = LockOptions.builder().leaseTime(Duration.ofHours(1)).scheduler(time).build();
        Lease[] held = new Lease[1];
        StepVerifier.withVirtualTime(() -> LockDashboard.snapshots(store.admin(), "in-memory", "job", Duration.ofMillis(500), time), () -> time,
                        Long.MAX_VALUE)
                .assertNext(json -> assertThat(json).isEqualTo("{\"store\":\"in-memory\",\"truncated\":false,\"error\":null,\"held\":[]}"))
                .then(() -> held[0] = store.locks(noExpiry).acquire("job:<1>", noExpiry.withPayload("node \"a\"")).block(STEP))
                .thenAwait(Duration.ofMillis(500))
                .assertNext(json -> assertThat(json).contains("\"name\":\"job:\\u003c1\\u003e\"", "\"token\":" + held[0].token(),
                        "\"role\":\"holder\"", "\"concept\":\"lock\"", "\"payload\":\"node \\\"a\\\"\"", "\"remainingSeconds\":3599", "\"task\":null"))
                .thenAwait(Duration.ofMillis(400))
                .expectNoEvent(Duration.ofMillis(400)) // nothing changed within the second
                .then(() -> held[0].release().block(STEP))
                .thenAwait(Duration.ofMillis(500))
                .assertNext(json -> assertThat(json).endsWith("\"held\":[]}"))
                .expectNoEvent(Duration.ofSeconds(14))
                .thenAwait(Duration.ofSeconds(1))
                .assertNext(json -> assertThat(json).as("the heartbeat").endsWith("\"held\":[]}"))
                .thenCancel()
                .verify(STEP);
    }

    @Test
    void thePagePointsAtItsStreamAndOffersForceReleaseOnlyWhenAllowed() {
        String readOnly = LockDashboard.page("/actuator/reactivelocks/dashboard/events", null, null);
        assertThat(readOnly).contains("const EVENTS_URL = \"/actuator/reactivelocks/dashboard/events\";", "const RELEASE_URL = null;",
                "const REVOKE_URL = null;");
        String writable = LockDashboard.page("events", "release?x=\"</script>", "revoke");
        assertThat(writable).contains("const RELEASE_URL = \"release?x=\\\"\\u003c/script\\u003e\";", "const REVOKE_URL = \"revoke\";")
                .doesNotContain("x=\"</script>");
    }

    @Test
    void forceReleaseAnswersTheTokensRemoved() {
        LockStore store = LocalLocks.open();
        Lease lease = store.locks().acquire("job:1").block(STEP);
        assertThat(LockDashboard.forceRelease(store.admin(), "job:1").block(STEP))
                .isEqualTo("{\"name\":\"job:1\",\"released\":[" + lease.token() + "]}");
        assertThat(LockDashboard.revoke(store.admin(), "job:1", " ").block(STEP)).isEqualTo("{\"name\":\"job:1\",\"asked\":false}");
        assertThatThrownBy(() -> LockDashboard.forceRelease(store.admin(), "")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("name");
        assertThatThrownBy(() -> LockDashboard.snapshots(store.admin(), "x", "", Duration.ZERO, reactor.core.scheduler.Schedulers.parallel()))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("period");
        store.close().block(STEP);
    }
}
