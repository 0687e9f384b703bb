package io.reactivelocks.redis;

import io.lettuce.core.ScriptOutputType;
import io.reactivelocks.spi.window.WindowGrant;
import io.reactivelocks.spi.window.WindowStore;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import reactor.core.publisher.Mono;

/**
 * Window claims on Redis ({@code window.lua}): the window is {@code floor(server TIME in ms /
 * period)}, decided by the server's clock alone; {@code ZADD GT CH} of the window index lets only
 * the first caller of a window (and never an older window) through; the token comes from a
 * per-name counter floored by the server's {@code TIME} in µs. Uses the command connection of its
 * {@link RedisLockBackend}, which {@link #close()} closes when the store owns it.
 */
final class RedisWindowStore implements WindowStore {

    private final RedisLockBackend backend;
    private final boolean ownsBackend;

    /**
     * @param backend     whose command connection and key prefix to use
     * @param ownsBackend whether {@link #close()} closes the backend (not when it is shared)
     */
    RedisWindowStore(RedisLockBackend backend, boolean ownsBackend) {
        this.backend = Objects.requireNonNull(backend, "backend");
        this.ownsBackend = ownsBackend;
    }

    @Override
    public Mono<WindowGrant> claim(String name, Duration period) {
        return Mono.defer(() -> backend.script(LuaScript.WINDOW, ScriptOutputType.MULTI,
                        new String[] {backend.keys().window(name), backend.keys().windowFence(name)},
                        Long.toString(period.toMillis()), backend.fenceTtlMs()))
                .onErrorMap(e -> RedisErrors.map(name, "window claim", e))
                .flatMap(reply -> {
                    List<?> r = (List<?>) reply;
                    if (!Long.valueOf(1L).equals(r.get(0))) {
                        return Mono.empty();
                    }
                    return Mono.just(new WindowGrant(Long.parseLong(String.valueOf(r.get(1))),
                            Long.parseLong(String.valueOf(r.get(3))),
                            Duration.ofMillis(Math.max(0, ((Number) r.get(2)).longValue()))));
                });
    }

    @Override
    public Mono<Void> close() {
        return ownsBackend ? backend.close() : Mono.empty();
    }

    @Override
    public String toString() {
        return "RedisWindowStore{" + backend + "}";
    }
}
