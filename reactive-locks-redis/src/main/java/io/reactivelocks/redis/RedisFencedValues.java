package io.reactivelocks.redis;

import io.lettuce.core.ScriptOutputType;
import io.reactivelocks.LockNames;
import io.reactivelocks.fencing.FencedValue;
import io.reactivelocks.fencing.FencedValues;
import java.util.List;
import java.util.Objects;
import reactor.core.publisher.Mono;

/**
 * Fenced values on Redis: each key is a hash {@code {prefix}{<tag>}:value} holding the value and
 * its fence; {@code fenced-value.lua} compares the writer's token with the fence and writes both
 * in one script, so the check and the write are atomic on the server. Reads are one
 * {@code HMGET}. Keys have no TTL: they are application data. Uses the command connection of its
 * {@link RedisLockBackend}, which {@link #close()} closes.
 */
final class RedisFencedValues implements FencedValues {

    private final RedisLockBackend backend;

    RedisFencedValues(RedisLockBackend backend) {
        this.backend = Objects.requireNonNull(backend, "backend");
    }

    @Override
    public Mono<Boolean> write(String key, long token, String value) {
        LockNames.check(key, "key");
        Objects.requireNonNull(value, "value");
        return run(key, token, "w", value, "fenced write");
    }

    @Override
    public Mono<Boolean> delete(String key, long token) {
        LockNames.check(key, "key");
        return run(key, token, "d", "", "fenced delete");
    }

    private Mono<Boolean> run(String key, long token, String mode, String value, String operation) {
        return Mono.defer(() -> backend.script(LuaScript.FENCED_VALUE, ScriptOutputType.INTEGER,
                        new String[] {backend.keys().fencedValue(key)}, Long.toString(token), mode, value))
                .map(r -> Long.valueOf(1L).equals(r))
                .onErrorMap(e -> RedisErrors.map(key, operation, e));
    }

    @Override
    public Mono<FencedValue> read(String key) {
        LockNames.check(key, "key");
        return Mono.defer(() -> backend.commands().flatMap(c -> RedisErrors.errorsAfterTheWrite(c
                        .hmget(backend.keys().fencedValue(key), "value", "fence").collectList())))
                .onErrorMap(e -> RedisErrors.map(key, "fenced read", e))
                .flatMap(fields -> {
                    List<io.lettuce.core.KeyValue<String, String>> f = fields;
                    if (!f.get(0).hasValue() || !f.get(1).hasValue()) {
                        return Mono.empty();
                    }
                    return Mono.just(new FencedValue(f.get(0).getValue(), Long.parseLong(f.get(1).getValue())));
                });
    }

    @Override
    public Mono<Void> close() {
        return backend.close();
    }

    @Override
    public String toString() {
        return "RedisFencedValues{" + backend + "}";
    }
}
