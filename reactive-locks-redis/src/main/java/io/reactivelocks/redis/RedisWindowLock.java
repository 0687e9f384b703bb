package io.reactivelocks.redis;

import io.lettuce.core.ScriptOutputType;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import reactor.core.publisher.Mono;

/**
 * A window lock ("run this job once per hour across the fleet"): at most one claim per name and
 * period. The window is {@code floor(server time in ms / period)}, decided by the server's clock
 * alone; the first caller of a window wins ({@code ZADD GT CH} of the window number, as in the
 * "timeout" lock of the source notes); nothing is ever released — the next window is simply
 * claimable again. The key expires when its longest period's window ends.
 *
 * <pre>{@code
 * RedisWindowLock hourly = RedisWindowLock.create(backend);
 * hourly.tryClaim("report", Duration.ofHours(1)).flatMap(claim -> sendReport(claim.window()));
 * }</pre>
 *
 * <p>Uses the command connection of the {@link RedisLockBackend} it was created from, and lives
 * as long as that backend (closing the backend closes it).
 */
public final class RedisWindowLock {

    private final RedisLockBackend backend;

    private RedisWindowLock(RedisLockBackend backend) {
        this.backend = backend;
    }

    /**
     * @param backend the backend whose connection and key prefix to use
     * @return a window lock over {@code backend}
     */
    public static RedisWindowLock create(RedisLockBackend backend) {
        return new RedisWindowLock(Objects.requireNonNull(backend, "backend"));
    }

    /**
     * Claims the current window of {@code name} for {@code period}. Each subscription is one
     * attempt (one script call); cancelling does not recall a request already sent.
     *
     * @param name   the lock name: non-empty, at most 1024 UTF-8 bytes
     * @param period the window length: whole milliseconds, at least 1 ms; the same name may be
     *               claimed independently with different periods
     * @return the claim when this call was the first of the window, empty when the window was
     *         claimed already; errors with {@link io.reactivelocks.LockBackendException}
     * @throws NullPointerException     when an argument is null
     * @throws IllegalArgumentException when the name is empty or too long, or the period is shorter than 1 ms
     */
    public Mono<WindowClaim> tryClaim(String name, Duration period) {
        io.reactivelocks.spi.LockNames.check(name);
        Objects.requireNonNull(period, "period");
        if (period.toMillis() < 1) {
            throw new IllegalArgumentException("period must be at least 1 ms, was " + period);
        }
        String periodMs = Long.toString(period.toMillis());
        return Mono.defer(() -> backend.script(LuaScript.WINDOW, ScriptOutputType.MULTI,
                        new String[] {backend.keys().window(name)}, periodMs))
                .onErrorMap(e -> RedisErrors.map(name, "window claim", e))
                .flatMap(reply -> {
                    List<?> r = (List<?>) reply;
                    if (!Long.valueOf(1L).equals(r.get(0))) {
                        return Mono.empty();
                    }
                    return Mono.just(new WindowClaim(name, Duration.ofMillis(period.toMillis()),
                            Long.parseLong(String.valueOf(r.get(1))), Duration.ofMillis(((Number) r.get(2)).longValue())));
                });
    }
}
