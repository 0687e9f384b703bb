package io.reactivelocks.test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.reactivelocks.LockBackendException;
import io.reactivelocks.LockOptions;
import io.reactivelocks.spi.window.WindowStore;
import io.reactivelocks.window.WindowClaim;
import io.reactivelocks.window.WindowLock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.util.retry.Retry;

/**
 * The contract every window-lock store passes. A store's test extends this class and supplies
 * {@link #newStore()}: each call must return an independent store (its own connections) to the
 * same server, so that several window locks contend as separate processes would. Periods are short
 * (1 s) so the suite stays quick; assertions never depend on which side of a window boundary a
 * request lands.
 */
public abstract class WindowLockContract {

    /** Generous bound for any single step that involves the real store. */
    protected static final Duration STEP = Duration.ofSeconds(10);

    private static final Duration SHORT = Duration.ofSeconds(1);
    private static final Duration LONG = Duration.ofHours(1);

    private final List<WindowLock> locks = new ArrayList<>();

    /** @return a new, independent store (its own connections) to the server under test */
    protected abstract WindowStore newStore();

    /** @return options for the tests: a short request timeout */
    protected LockOptions options() {
        return LockOptions.builder().requestTimeout(Duration.ofSeconds(5)).build();
    }

    /** @return a new window lock over {@link #newStore()}, closed after the test */
    protected WindowLock newWindowLock() {
        WindowLock w = WindowLock.create(newStore(), options());
        locks.add(w);
        return w;
    }

    /**
     * @param prefix a readable prefix
     * @return a name unique to this run
     */
    protected static String name(String prefix) {
        return prefix + "-" + UUID.randomUUID();
    }

    @AfterEach
    void closeWindowLocks() {
        for (WindowLock w : locks) {
            w.close().block(STEP);
        }
        locks.clear();
    }

    @Test
    void manyRacersGetExactlyOneClaimPerWindow() {
        List<WindowLock> fleet = List.of(newWindowLock(), newWindowLock(), newWindowLock());
        String name = name("race");
        for (WindowLock w : fleet) { // connect first: the race is about claims, not connection set-up
            // (a connection set-up slower than the request timeout on a loaded machine is asked again)
            w.tryClaim(name("warm-up"), SHORT)
                    .retryWhen(Retry.max(2).filter(e -> e instanceof LockBackendException b && b.isTransient()))
                    .block(STEP.multipliedBy(2));
        }
        for (int round = 0; round < 2; round++) {
            List<WindowClaim> claims = Flux.range(0, 24)
                    .flatMap(i -> fleet.get(i % fleet.size()).tryClaim(name, SHORT).subscribeOn(Schedulers.parallel()), 24)
                    .collectList().block(STEP);
            assertThat(claims).as("a fresh window is claimed by one of the racers").isNotEmpty();
            Map<Long, Long> perWindow = claims.stream().collect(Collectors.groupingBy(WindowClaim::window, Collectors.counting()));
            assertThat(perWindow.values()).as("claims per window %s", perWindow).allMatch(n -> n == 1);
            long lastWindow = claims.stream().mapToLong(WindowClaim::window).max().orElseThrow();
            awaitWindowAfter(fleet.get(0), lastWindow); // the next round races in a later window
        }
    }

    /** Waits (real time) until the store's clock is past {@code window} of {@link #SHORT}, without claiming. */
    private void awaitWindowAfter(WindowLock lock, long window) {
        String probe = name("probe");
        await().atMost(STEP).pollInterval(Duration.ofMillis(50)).until(() -> {
            WindowClaim c = lock.tryClaim(probe + "-" + UUID.randomUUID(), SHORT).block(STEP);
            return c != null && c.window() > window;
        });
    }

    @Test
    void aClaimedWindowRefusesEveryOtherCaller() {
        WindowLock a = newWindowLock();
        WindowLock b = newWindowLock();
        String name = name("claimed");
        WindowClaim first = a.tryClaim(name, LONG).block(STEP);
        assertThat(first).isNotNull();
        assertThat(first.remaining(a.options().clock())).isPositive().isLessThanOrEqualTo(LONG);
        if (first.remaining(a.options().clock()).compareTo(Duration.ofSeconds(5)) > 0) { // not at the very end of the hour
            assertThat(b.tryClaim(name, LONG).blockOptional(STEP)).isEmpty();
            assertThat(a.tryClaim(name, LONG).blockOptional(STEP)).isEmpty();
        }
    }

    @Test
    void theNextWindowIsClaimableWithAHigherToken() {
        WindowLock a = newWindowLock();
        WindowLock b = newWindowLock();
        String name = name("next");
        List<WindowClaim> claims = new ArrayList<>();
        claims.add(await().atMost(STEP).pollInterval(Duration.ofMillis(20)).until(() -> a.tryClaim(name, SHORT).block(STEP), c -> c != null));
        for (int i = 0; i < 2; i++) {
            WindowLock next = i % 2 == 0 ? b : a;
            long after = claims.get(claims.size() - 1).window();
            WindowClaim c = await().atMost(STEP).pollInterval(Duration.ofMillis(20))
                    .until(() -> next.tryClaim(name, SHORT).block(STEP), x -> x != null);
            assertThat(c.window()).isGreaterThan(after);
            claims.add(c);
        }
        for (int i = 1; i < claims.size(); i++) {
            assertThat(claims.get(i).token()).as("tokens %s", claims).isGreaterThan(claims.get(i - 1).token());
            assertThat(claims.get(i).window()).isGreaterThan(claims.get(i - 1).window());
        }
        for (WindowClaim c : claims) {
            assertThat(c.name()).isEqualTo(name);
            assertThat(c.period()).isEqualTo(SHORT);
            assertThat(Duration.ofNanos(c.endsAtNanos() - a.options().clock().nanoTime())).isLessThanOrEqualTo(SHORT);
        }
    }

    @Test
    void theWindowIndexFollowsTheStoreClock() {
        WindowLock a = newWindowLock();
        WindowClaim c = a.tryClaim(name("index"), LONG).block(STEP);
        assertThat(c).isNotNull();
        long expected = System.currentTimeMillis() / LONG.toMillis(); // the test's clock agrees with the server's within seconds
        assertThat(c.window()).isBetween(expected - 1, expected + 1);
    }

    @Test
    void namesAndPeriodsAreIndependent() {
        WindowLock a = newWindowLock();
        String x = name("x");
        String y = name("y");
        assertThat(a.tryClaim(x, LONG).blockOptional(STEP)).isPresent();
        assertThat(a.tryClaim(y, LONG).blockOptional(STEP)).isPresent();
        assertThat(a.tryClaim(x, LONG.multipliedBy(2)).blockOptional(STEP)).isPresent();
        for (String odd : List.of("a/b", "{tag}", "..", "zookeeper", "ünïcödé \u0000 x", "*?[]")) {
            assertThat(a.tryClaim(x + odd, LONG).blockOptional(STEP)).as("name %s", odd).isPresent();
        }
    }

    @Test
    void nothingIsSentBeforeSubscribe() {
        WindowLock a = newWindowLock();
        String name = name("lazy");
        Mono<WindowClaim> unused = a.tryClaim(name, LONG);
        assertThat(unused).isNotNull();
        assertThat(a.tryClaim(name, LONG).blockOptional(STEP)).as("the first subscribed call is the first of the window").isPresent();
    }

    @Test
    void badArgumentsFailAtCallTime() {
        WindowLock a = newWindowLock();
        assertThatThrownBy(() -> a.tryClaim(null, SHORT)).isInstanceOf(NullPointerException.class).hasMessageContaining("name");
        assertThatThrownBy(() -> a.tryClaim("", SHORT)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("name");
        assertThatThrownBy(() -> a.tryClaim("x".repeat(1025), SHORT)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("name");
        assertThatThrownBy(() -> a.tryClaim("job", null)).isInstanceOf(NullPointerException.class).hasMessageContaining("period");
        assertThatThrownBy(() -> a.tryClaim("job", Duration.ZERO)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("period");
        assertThatThrownBy(() -> a.tryClaim("job", Duration.ofMillis(-1))).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("period");
        assertThatThrownBy(() -> a.tryClaim("job", WindowLock.MAX_PERIOD.plusMillis(1))).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("period");
    }
}
