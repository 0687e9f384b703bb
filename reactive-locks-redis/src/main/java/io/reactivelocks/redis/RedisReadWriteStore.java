package io.reactivelocks.redis;

import io.lettuce.core.ScriptOutputType;
import io.reactivelocks.rwlock.LockMode;
import io.reactivelocks.spi.Holder;
import io.reactivelocks.spi.LockEvent;
import io.reactivelocks.spi.RenewOutcome;
import io.reactivelocks.spi.RenewRequest;
import io.reactivelocks.spi.rwlock.ReadWriteHolders;
import io.reactivelocks.spi.rwlock.ReadWriteStore;
import io.reactivelocks.spi.semaphore.PermitGrant;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Read-write locks on Redis: per name, a sorted set of grants (owner → expiry in server ms), a hash
 * of their tokens that also names the writer while one holds (a writer holds alone, so one field says
 * whose the grants are), and a sorted set of waiting writers' intents (owner → expiry), changed
 * only by one script per operation that reads the server's {@code TIME} and drops what expired
 * ({@code rwlock-acquire.lua}, {@code rwlock-release.lua}; renewal shares the semaphore's script);
 * tokens come from a per-name counter floored by {@code TIME} in µs, like a lock's; releases and
 * expiries noticed by a grant are published on the lock's channel. Uses the connections of its
 * {@link RedisLockBackend}, which {@link #close()} closes when the store owns it.
 */
final class RedisReadWriteStore implements ReadWriteStore {

    private final RedisLockBackend backend;
    private final boolean ownsBackend;

    /**
     * @param backend     whose connections and key prefix to use
     * @param ownsBackend whether {@link #close()} closes the backend (not when it is shared)
     */
    RedisReadWriteStore(RedisLockBackend backend, boolean ownsBackend) {
        this.backend = Objects.requireNonNull(backend, "backend");
        this.ownsBackend = ownsBackend;
    }

    @Override
    public String name() {
        return "redis";
    }

    private String[] keys(String name) {
        RedisKeys keys = backend.keys();
        return new String[] {keys.readWrite(name), keys.readWriteTokens(name), keys.readWriteIntents(name)};
    }

    @Override
    public Mono<PermitGrant> tryGrant(String name, String owner, LockMode mode, boolean writerPreferring, boolean waiting,
            Duration leaseTime) {
        return Mono.defer(() -> {
            RedisKeys keys = backend.keys();
            String[] k = {keys.readWrite(name), keys.readWriteTokens(name), keys.readWriteIntents(name), keys.readWriteFence(name)};
            return backend.script(LuaScript.RWLOCK_ACQUIRE, ScriptOutputType.MULTI, k, owner, mode == LockMode.READ ? "r" : "w",
                    (writerPreferring ? "1" : "0") + (waiting ? "1" : "0"), RedisLockBackend.millis(leaseTime), backend.fenceTtlMs(), keys.readWriteChannel(name),
                    keys.readWriteGrantsChannel(name));
        }).onErrorMap(e -> RedisErrors.map(name, "read-write lock grant", e)).map(reply -> {
            List<?> r = (List<?>) reply;
            if (!Long.valueOf(1L).equals(r.get(0))) {
                return new PermitGrant.Busy(Duration.ofMillis(Math.max(0, ((Number) r.get(1)).longValue())));
            }
            return new PermitGrant.Granted(List.of(Long.parseLong(String.valueOf(r.get(1)))), leaseTime);
        });
    }

    @Override
    public Mono<List<RenewOutcome>> renew(List<RenewRequest> batch) {
        RedisKeys keys = backend.keys();
        return RedisSemaphoreStore.renew(backend, batch,
                name -> new String[] {keys.readWrite(name), keys.readWriteTokens(name)}, "read-write lock");
    }

    @Override
    public Mono<Boolean> release(String name, String owner) {
        return Mono.defer(() -> backend.script(LuaScript.RWLOCK_RELEASE, ScriptOutputType.INTEGER, keys(name),
                        owner, backend.keys().readWriteChannel(name)))
                .onErrorMap(e -> RedisErrors.map(name, "read-write lock release", e)).map(n -> Long.valueOf(1L).equals(n));
    }

    @Override
    public Mono<ReadWriteHolders> holders(String name) {
        return Mono.defer(() -> backend.script(LuaScript.RWLOCK_HOLDERS, ScriptOutputType.MULTI, keys(name)))
                .onErrorMap(e -> RedisErrors.map(name, "read-write lock read", e)).map(reply -> {
                    List<?> r = (List<?>) reply;
                    List<?> grants = (List<?>) r.get(0);
                    List<?> intents = (List<?>) r.get(1);
                    List<Holder> readers = new ArrayList<>();
                    Holder writer = null;
                    for (int i = 0; i + 3 < grants.size(); i += 4) {
                        Holder h = new Holder(String.valueOf(grants.get(i)), Long.parseLong(String.valueOf(grants.get(i + 1))),
                                Duration.ofMillis(Math.max(0, ((Number) grants.get(i + 3)).longValue())));
                        if ("w".equals(String.valueOf(grants.get(i + 2)))) {
                            writer = h;
                        } else {
                            readers.add(h);
                        }
                    }
                    readers.sort(Comparator.comparingLong(Holder::token));
                    List<Holder> waiting = new ArrayList<>();
                    for (int i = 0; i + 1 < intents.size(); i += 2) {
                        waiting.add(new Holder(String.valueOf(intents.get(i)), 0,
                                Duration.ofMillis(Math.max(0, ((Number) intents.get(i + 1)).longValue()))));
                    }
                    return new ReadWriteHolders(readers, writer, waiting);
                });
    }

    /** A revocation request: one {@code PUBLISH} on the name's channel. */
    @Override
    public Mono<Void> revoke(String name, String owner, String reason) {
        return backend.publishRevocation(name, backend.keys().readWriteChannel(name), owner, reason);
    }

    @Override
    public Flux<LockEvent> events(String name) {
        RedisKeys keys = backend.keys();
        return backend.grantEvents(name, keys.readWriteChannel(name), keys.readWriteGrantsChannel(name));
    }

    /** The lock's channel alone (releases, revocations): its grants go to a channel only observers subscribe to. */
    @Override
    public Flux<LockEvent> wakeUps(String name) {
        return backend.grantEvents(name, backend.keys().readWriteChannel(name), null);
    }

    @Override
    public Mono<Void> close() {
        return ownsBackend ? backend.close() : Mono.empty();
    }

    @Override
    public String toString() {
        return "RedisReadWriteStore{" + backend + "}";
    }
}
