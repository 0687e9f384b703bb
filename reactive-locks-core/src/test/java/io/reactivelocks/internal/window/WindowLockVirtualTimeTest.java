package io.reactivelocks.internal.window;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.reactivelocks.LockBackendException;
import io.reactivelocks.LockClientClosedException;
import io.reactivelocks.LockClock;
import io.reactivelocks.LockOptions;
import io.reactivelocks.local.LocalWindowStore;
import io.reactivelocks.spi.window.WindowGrant;
import io.reactivelocks.spi.window.WindowStore;
import io.reactivelocks.window.WindowClaim;
import io.reactivelocks.window.WindowLock;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;
import reactor.test.scheduler.VirtualTimeScheduler;

/** The window-lock engine on the in-memory store, on virtual time. */
class WindowLockVirtualTimeTest {

    private static final Duration VERIFY = Duration.ofSeconds(5);

    private VirtualTimeScheduler vts;
    private LockOptions options;
    private WindowLock windows;

    @BeforeEach
    void setUp() {
        vts = VirtualTimeScheduler.create();
        vts.advanceTimeTo(java.time.Instant.ofEpochMilli(1_000_000)); // window 1000 of a 1 s period starts here
        options = LockOptions.builder().clock(LockClock.of(vts)).scheduler(vts)
                .drift(0.01, Duration.ofMillis(2)).requestTimeout(Duration.ofSeconds(1)).build();
        windows = WindowLock.create(new LocalWindowStore(vts), options);
    }

    @AfterEach
    void tearDown() {
        vts.dispose();
    }

    private WindowClaim claim(String name, Duration period) {
        return windows.tryClaim(name, period).block(VERIFY);
    }

    @Test
    void theFirstCallerOfAWindowWinsAndTheOthersGetNothing() {
        vts.advanceTimeBy(Duration.ofMillis(250));
        long sentAt = options.clock().nanoTime();
        WindowClaim first = claim("job", Duration.ofSeconds(1));
        assertThat(first).isNotNull();
        assertThat(first.window()).isEqualTo(1000);
        assertThat(first.period()).isEqualTo(Duration.ofSeconds(1));
        // 750 ms left in the window, minus 1% and 2 ms of drift allowance
        assertThat(first.endsAtNanos()).isEqualTo(sentAt + 740_500_000L); // 750 ms - 7.5 ms - 2 ms
        assertThat(first.remaining(options.clock())).isEqualTo(Duration.ofNanos(first.endsAtNanos() - sentAt));
        StepVerifier.create(windows.tryClaim("job", Duration.ofSeconds(1))).expectComplete().verify(VERIFY);
        vts.advanceTimeBy(Duration.ofMillis(749));
        StepVerifier.create(windows.tryClaim("job", Duration.ofSeconds(1))).expectComplete().verify(VERIFY);
        assertThat(first.remaining(options.clock())).isZero();
    }

    @Test
    void theNextWindowIsClaimableWithAHigherToken() {
        WindowClaim first = claim("job", Duration.ofSeconds(1));
        vts.advanceTimeBy(Duration.ofSeconds(1));
        WindowClaim second = claim("job", Duration.ofSeconds(1));
        assertThat(second.window()).isEqualTo(first.window() + 1);
        assertThat(second.token()).isGreaterThan(first.token());
        vts.advanceTimeBy(Duration.ofSeconds(5)); // skipped windows do not matter
        WindowClaim third = claim("job", Duration.ofSeconds(1));
        assertThat(third.window()).isEqualTo(first.window() + 6);
        assertThat(third.token()).isGreaterThan(second.token());
    }

    @Test
    void namesAndPeriodsAreIndependent() {
        assertThat(claim("a", Duration.ofSeconds(1))).isNotNull();
        assertThat(claim("b", Duration.ofSeconds(1))).isNotNull();
        WindowClaim other = claim("a", Duration.ofSeconds(2));
        assertThat(other).isNotNull();
        assertThat(other.window()).isEqualTo(500);
    }

    @Test
    void aStoreThatDoesNotAnswerFailsWithATransientErrorAtTheRequestTimeout() {
        WindowStore silent = new WindowStore() {
            @Override
            public Mono<WindowGrant> claim(String name, Duration period) {
                return Mono.never();
            }

            @Override
            public Mono<Void> close() {
                return Mono.empty();
            }
        };
        WindowLock lock = WindowLock.create(silent, options);
        java.util.concurrent.atomic.AtomicReference<Throwable> error = new java.util.concurrent.atomic.AtomicReference<>();
        lock.tryClaim("job", Duration.ofSeconds(1)).subscribe(c -> { }, error::set);
        vts.advanceTimeBy(Duration.ofMillis(999));
        assertThat(error.get()).isNull();
        vts.advanceTimeBy(Duration.ofMillis(1));
        assertThat(error.get()).isInstanceOf(LockBackendException.class);
        assertThat(((LockBackendException) error.get()).isTransient()).isTrue();
    }

    @Test
    void nothingIsSentBeforeSubscribeAndAClosedLockRefuses() {
        int[] calls = {0};
        WindowStore counting = new WindowStore() {
            @Override
            public Mono<WindowGrant> claim(String name, Duration period) {
                calls[0]++;
                return Mono.empty();
            }

            @Override
            public Mono<Void> close() {
                return Mono.empty();
            }
        };
        WindowLock lock = WindowLock.create(counting, options);
        Mono<WindowClaim> m = lock.tryClaim("job", Duration.ofSeconds(1));
        assertThat(calls[0]).isZero();
        StepVerifier.create(m).expectComplete().verify(VERIFY);
        assertThat(calls[0]).isEqualTo(1);
        StepVerifier.create(lock.close()).expectComplete().verify(VERIFY);
        StepVerifier.create(lock.tryClaim("job", Duration.ofSeconds(1)))
                .expectError(LockClientClosedException.class).verify(VERIFY);
        assertThat(calls[0]).isEqualTo(1);
    }

    @Test
    void badArgumentsFailAtCallTimeNamingTheArgument() {
        assertThatThrownBy(() -> windows.tryClaim(null, Duration.ofSeconds(1))).isInstanceOf(NullPointerException.class).hasMessageContaining("name");
        assertThatThrownBy(() -> windows.tryClaim("", Duration.ofSeconds(1))).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("name");
        assertThatThrownBy(() -> windows.tryClaim("x".repeat(1025), Duration.ofSeconds(1))).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("name");
        assertThatThrownBy(() -> windows.tryClaim("job", null)).isInstanceOf(NullPointerException.class).hasMessageContaining("period");
        assertThatThrownBy(() -> windows.tryClaim("job", Duration.ZERO)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("period");
        assertThatThrownBy(() -> windows.tryClaim("job", Duration.ofMillis(-5))).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("period");
        assertThatThrownBy(() -> windows.tryClaim("job", Duration.ofNanos(1_500_000))).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("period");
        assertThatThrownBy(() -> windows.tryClaim("job", WindowLock.MAX_PERIOD.plusMillis(1))).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("period");
        assertThatThrownBy(() -> WindowLock.create(null)).isInstanceOf(NullPointerException.class).hasMessageContaining("store");
    }
}
