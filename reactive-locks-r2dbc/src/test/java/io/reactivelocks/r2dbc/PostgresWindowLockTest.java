package io.reactivelocks.r2dbc;

import static io.reactivelocks.r2dbc.PostgresTestSupport.TIMEOUT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.reactivelocks.test.server.PostgresServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.test.StepVerifier;

class PostgresWindowLockTest {

    private static PostgresLockBackend backend;
    private static PostgresWindowLock windows;

    @BeforeAll
    static void start() {
        PostgresServer pg = PostgresTestSupport.shared();
        backend = PostgresLockBackend.create(PostgresTestSupport.factory(pg), PostgresLockOptions.builder().schema("windows").build());
        windows = PostgresWindowLock.create(backend);
    }

    @AfterAll
    static void close() {
        backend.close().block(TIMEOUT);
    }

    @Test
    void theFirstClaimOfAWindowWinsAndLaterOnesGetNothing() {
        String name = "hourly-" + UUID.randomUUID();
        WindowClaim claim = windows.tryClaim(name, Duration.ofHours(1)).block(TIMEOUT);
        assertThat(claim).isNotNull();
        assertThat(claim.period()).isEqualTo(Duration.ofHours(1));
        assertThat(claim.window()).isEqualTo(System.currentTimeMillis() / 3_600_000L); // same clock here
        assertThat(claim.remaining()).isPositive().isLessThanOrEqualTo(Duration.ofHours(1));
        StepVerifier.create(windows.tryClaim(name, Duration.ofHours(1))).expectComplete().verify(TIMEOUT);
        // another period of the same name is independent
        StepVerifier.create(windows.tryClaim(name, Duration.ofDays(1))).expectNextCount(1).expectComplete().verify(TIMEOUT);
    }

    @Test
    void ofManyConcurrentClaimantsExactlyOneWins() {
        String name = "race-" + UUID.randomUUID();
        List<Mono<WindowClaim>> claims = new ArrayList<>();
        for (int i = 0; i < 16; i++) {
            claims.add(windows.tryClaim(name, Duration.ofHours(1)).subscribeOn(Schedulers.parallel()));
        }
        StepVerifier.create(Flux.merge(claims).count()).expectNext(1L).expectComplete().verify(TIMEOUT);
    }

    @Test
    void theNextWindowIsClaimableAgainWithAGreaterWindowAndToken() {
        String name = "short-" + UUID.randomUUID() + "-'; DROP TABLE x; --\u0000";
        Duration period = Duration.ofMillis(300);
        WindowClaim first = windows.tryClaim(name, period).block(TIMEOUT);
        assertThat(first).isNotNull();
        assertThat(first.remaining()).isLessThanOrEqualTo(period);
        AtomicReference<WindowClaim> next = new AtomicReference<>();
        await().atMost(TIMEOUT).pollInterval(Duration.ofMillis(50))
                .until(() -> {
                    windows.tryClaim(name, period).blockOptional(TIMEOUT).ifPresent(next::set);
                    return next.get() != null;
                });
        assertThat(next.get().window()).isGreaterThan(first.window());
        assertThat(next.get().token()).isGreaterThan(first.token());
        assertThat(next.get().name()).isEqualTo(name);
    }

    @Test
    void badArgumentsAreRejectedAtCallTime() {
        assertThatThrownBy(() -> windows.tryClaim("", Duration.ofHours(1))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("name");
        assertThatThrownBy(() -> windows.tryClaim("x".repeat(1025), Duration.ofHours(1))).hasMessageContaining("1024");
        assertThatThrownBy(() -> windows.tryClaim(null, Duration.ofHours(1))).isInstanceOf(NullPointerException.class)
                .hasMessageContaining("name");
        assertThatThrownBy(() -> windows.tryClaim("x", null)).isInstanceOf(NullPointerException.class).hasMessageContaining("period");
        assertThatThrownBy(() -> windows.tryClaim("x", Duration.ofNanos(999_999))).hasMessageContaining("period");
    }
}
