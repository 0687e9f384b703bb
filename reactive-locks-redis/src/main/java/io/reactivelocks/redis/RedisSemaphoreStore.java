package io.reactivelocks.redis;

import io.lettuce.core.ScriptOutputType;
import io.reactivelocks.spi.Holder;
import io.reactivelocks.spi.LockEvent;
import io.reactivelocks.spi.RenewOutcome;
import io.reactivelocks.spi.RenewRequest;
import io.reactivelocks.spi.semaphore.PermitGrant;
import io.reactivelocks.spi.semaphore.SemaphoreStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Semaphores on Redis: per name, a sorted set of holders (owner → expiry in server ms) and a hash
 * of their tokens, changed only by scripts that read the server's {@code TIME} and grant while
 * fewer than N unexpired holders remain ({@code semaphore-acquire.lua}: expired holders are dropped
 * when they stand in the way, so an uncontended grant runs 10 commands and its release 3); tokens
 * come from a per-name counter floored by {@code TIME} in µs, like a lock's; grants, releases (and
 * expiries noticed by a grant) are published on the semaphore's channel. Uses the connections of its
 * {@link RedisLockBackend}, which {@link #close()} closes when the store owns it.
 */
final class RedisSemaphoreStore implements SemaphoreStore {

    private final RedisLockBackend backend;
    private final boolean ownsBackend;

    /**
     * @param backend     whose connections and key prefix to use
     * @param ownsBackend whether {@link #close()} closes the backend (not when it is shared)
     */
    RedisSemaphoreStore(RedisLockBackend backend, boolean ownsBackend) {
        this.backend = Objects.requireNonNull(backend, "backend");
        this.ownsBackend = ownsBackend;
    }

    @Override
    public String name() {
        return "redis";
    }

    @Override
    public Mono<PermitGrant> tryGrant(String name, List<String> owners, int permits, Duration leaseTime) {
        return Mono.defer(() -> {
            String[] all = backend.keys().semaphoreKeys(name);
            String[] k = {all[0], all[1], all[2]};
            String[] a = new String[4 + owners.size()];
            a[0] = Integer.toString(permits);
            a[1] = RedisLockBackend.millis(leaseTime);
            a[2] = backend.fenceTtlMs();
            a[3] = all[3];
            for (int i = 0; i < owners.size(); i++) {
                a[4 + i] = owners.get(i);
            }
            return backend.script(LuaScript.SEMAPHORE_ACQUIRE, ScriptOutputType.MULTI, k, a);
        }).onErrorMap(e -> RedisErrors.map(name, "semaphore grant", e)).map(reply -> {
            List<?> r = (List<?>) reply;
            if (!Long.valueOf(1L).equals(r.get(0))) {
                return new PermitGrant.Busy(Duration.ofMillis(Math.max(0, ((Number) r.get(1)).longValue())));
            }
            List<Long> tokens = new ArrayList<>(r.size() - 1);
            for (int i = 1; i < r.size(); i++) {
                tokens.add(Long.parseLong(String.valueOf(r.get(i))));
            }
            return new PermitGrant.Granted(tokens, leaseTime);
        });
    }

    @Override
    public Mono<List<RenewOutcome>> renew(List<RenewRequest> batch) {
        RedisKeys keys = backend.keys();
        return renew(backend, batch, name -> new String[] {keys.semaphore(name), keys.semaphoreTokens(name)}, "semaphore");
    }

    /**
     * Renews grants held as a sorted set of owners by expiry beside a hash of their tokens
     * ({@code semaphore-renew.lua}; a read-write lock's grants too), one script per request: grants of
     * different names may live in different cluster slots.
     *
     * @param backend the connections
     * @param batch   the grants
     * @param keys    the keys of a name: the sorted set, the token hash, then any key that lives as long as they do
     * @param concept the concept's name in error messages
     * @return one outcome per request, in order
     */
    static Mono<List<RenewOutcome>> renew(RedisLockBackend backend, List<RenewRequest> batch,
            java.util.function.Function<String, String[]> keys, String concept) {
        return Flux.fromIterable(batch).concatMap(r -> {
            String name = r.lock().name();
            return Mono.defer(() -> backend.script(LuaScript.SEMAPHORE_RENEW, ScriptOutputType.MULTI, keys.apply(name),
                            RedisLockBackend.millis(r.leaseTime()), r.lock().owner(), Long.toString(r.lock().token())))
                    .onErrorMap(e -> RedisErrors.map(name, concept + " renewal", e))
                    .map(reply -> Long.valueOf(1L).equals(((List<?>) reply).get(0))
                            ? RenewOutcome.renewed(r.leaseTime()) : RenewOutcome.notHeld());
        }).collectList();
    }

    @Override
    public Mono<Boolean> release(String name, String owner) {
        return Mono.defer(() -> {
            String[] all = backend.keys().semaphoreKeys(name);
            return backend.script(LuaScript.SEMAPHORE_RELEASE, ScriptOutputType.INTEGER,
                    new String[] {all[0], all[1]}, owner, all[3]);
        }).onErrorMap(e -> RedisErrors.map(name, "semaphore release", e)).map(n -> Long.valueOf(1L).equals(n));
    }

    @Override
    public Mono<List<Holder>> holders(String name) {
        return Mono.defer(() -> {
            RedisKeys keys = backend.keys();
            return backend.script(LuaScript.SEMAPHORE_HOLDERS, ScriptOutputType.MULTI,
                    new String[] {keys.semaphore(name), keys.semaphoreTokens(name)});
        }).onErrorMap(e -> RedisErrors.map(name, "semaphore read", e)).map(reply -> {
            List<?> r = (List<?>) reply;
            List<Holder> out = new ArrayList<>(r.size() / 3);
            for (int i = 0; i + 2 < r.size(); i += 3) {
                out.add(new Holder(String.valueOf(r.get(i)), Long.parseLong(String.valueOf(r.get(i + 1))),
                        Duration.ofMillis(Math.max(0, ((Number) r.get(i + 2)).longValue()))));
            }
            out.sort(Comparator.comparingLong(Holder::token));
            return out;
        });
    }

    /** A revocation request: one {@code PUBLISH} on the name's channel. */
    @Override
    public Mono<Void> revoke(String name, String owner, String reason) {
        return backend.publishRevocation(name, backend.keys().semaphoreChannel(name), owner, reason);
    }

    @Override
    public Flux<LockEvent> events(String name) {
        return backend.semaphoreEvents(name);
    }

    @Override
    public Mono<Void> close() {
        return ownsBackend ? backend.close() : Mono.empty();
    }

    @Override
    public String toString() {
        return "RedisSemaphoreStore{" + backend + "}";
    }
}
