package io.reactivelocks.redis;

import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.cluster.SlotHash;
import io.reactivelocks.spi.Holder;
import io.reactivelocks.spi.LockEvent;
import io.reactivelocks.spi.RenewOutcome;
import io.reactivelocks.spi.RenewRequest;
import io.reactivelocks.spi.semaphore.PermitGrant;
import io.reactivelocks.spi.semaphore.SemaphoreStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Semaphores on Redis: per name, a sorted set of holders (owner → expiry in server ms) and a hash
 * of their tokens, changed only by scripts that read the server's {@code TIME} and grant while
 * fewer than N unexpired holders remain ({@code semaphore-acquire.lua}: expired holders are dropped
 * when they stand in the way, so an uncontended grant runs 9 commands and its release 3); tokens
 * come from a per-name counter floored by {@code TIME} in µs, like a lock's; grants, releases (and
 * expiries noticed by a grant) are published on the semaphore's channel, grants on a channel of their own that only
 * observers subscribe to (waiters need the releases). Uses the connections of its
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
            String[] a = new String[5 + owners.size()];
            a[0] = Integer.toString(permits);
            a[1] = RedisLockBackend.millis(leaseTime);
            a[2] = backend.fenceTtlMs();
            a[3] = all[3];
            a[4] = all[4];
            for (int i = 0; i < owners.size(); i++) {
                a[5 + i] = owners.get(i);
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
     * ({@code semaphore-renew.lua}; a read-write lock's grants too): one script call per
     * {@value RedisLockBackend#MAX_RENEWALS_PER_CALL} grants of the batch — on a cluster (or with
     * {@link RedisLockOptions#clusterSafeBatches()}) per slot, the keys of one name sharing one — the
     * calls sent together.
     *
     * @param backend the connections
     * @param batch   the grants
     * @param keys    the keys of a name: the sorted set, the token hash, then any key that lives as long as they do
     * @param concept the concept's name in error messages
     * @return one outcome per request, in order
     */
    static Mono<List<RenewOutcome>> renew(RedisLockBackend backend, List<RenewRequest> batch,
            java.util.function.Function<String, String[]> keys, String concept) {
        return Mono.defer(() -> {
            if (batch.isEmpty()) {
                return Mono.just(List.<RenewOutcome>of());
            }
            boolean bySlot = backend.isCluster() || backend.options().clusterSafeBatches();
            Map<Integer, List<Integer>> calls = new LinkedHashMap<>();
            for (int i = 0; i < batch.size(); i++) {
                int slot = bySlot ? SlotHash.getSlot(keys.apply(batch.get(i).lock().name())[0]) : -1;
                calls.computeIfAbsent(slot, x -> new ArrayList<>()).add(i);
            }
            List<List<Integer>> chunks = new ArrayList<>();
            for (List<Integer> members : calls.values()) {
                for (int from = 0; from < members.size(); from += RedisLockBackend.MAX_RENEWALS_PER_CALL) {
                    chunks.add(members.subList(from, Math.min(members.size(), from + RedisLockBackend.MAX_RENEWALS_PER_CALL)));
                }
            }
            RenewOutcome[] out = new RenewOutcome[batch.size()];
            return Flux.fromIterable(chunks)
                    .flatMap(chunk -> renewCall(backend, batch, chunk, keys).doOnNext(renewed -> {
                        for (int j = 0; j < chunk.size(); j++) {
                            RenewRequest r = batch.get(chunk.get(j));
                            out[chunk.get(j)] = j < renewed.size() && Long.valueOf(1L).equals(renewed.get(j))
                                    ? RenewOutcome.renewed(r.leaseTime()) : RenewOutcome.notHeld();
                        }
                    }), Integer.MAX_VALUE)
                    .then(Mono.fromSupplier(() -> {
                        for (int i = 0; i < out.length; i++) {
                            if (out[i] == null) {
                                out[i] = RenewOutcome.notHeld();
                            }
                        }
                        return List.of(out);
                    }));
        }).onErrorMap(e -> RedisErrors.map(batch.size() == 1 ? batch.get(0).lock().name() : null, concept + " renewal", e));
    }

    /** One call of {@code semaphore-renew.lua} over the grants at {@code chunk} (positions in the batch). */
    private static Mono<List<?>> renewCall(RedisLockBackend backend, List<RenewRequest> batch, List<Integer> chunk,
            java.util.function.Function<String, String[]> keys) {
        Map<String, Integer> groups = new HashMap<>();
        List<String> k = new ArrayList<>();
        List<String> a = new ArrayList<>(1 + 4 * chunk.size());
        a.add(null); // the keys per name, set below
        int width = 0;
        for (int i : chunk) {
            RenewRequest r = batch.get(i);
            String name = r.lock().name();
            Integer group = groups.get(name);
            if (group == null) {
                String[] named = keys.apply(name);
                width = named.length;
                k.addAll(List.of(named));
                group = groups.size() + 1;
                groups.put(name, group);
            }
            a.add(Integer.toString(group));
            a.add(RedisLockBackend.millis(r.leaseTime()));
            a.add(r.lock().owner());
            a.add(Long.toString(r.lock().token()));
        }
        a.set(0, Integer.toString(width));
        return backend.script(LuaScript.SEMAPHORE_RENEW, ScriptOutputType.MULTI, k.toArray(String[]::new), a.toArray(String[]::new))
                .map(reply -> (List<?>) reply);
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
        RedisKeys keys = backend.keys();
        return backend.grantEvents(name, keys.semaphoreChannel(name), keys.semaphoreGrantsChannel(name));
    }

    /** The semaphore's channel alone (releases, revocations): its grants go to a channel only observers subscribe to. */
    @Override
    public Flux<LockEvent> wakeUps(String name) {
        return backend.grantEvents(name, backend.keys().semaphoreChannel(name), null);
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
