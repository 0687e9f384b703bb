package io.reactivelocks.redis;

import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.reactive.RedisScriptingReactiveCommands;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.reactivelocks.fencing.Fencing;
import io.reactivelocks.fencing.StaleTokenException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.OptionalLong;
import reactor.core.publisher.Mono;

/**
 * Fenced writes on the application's own Redis keys: each key is a hash — the application's fields
 * beside a {@code fence} field holding the token of the last accepted write — and every write is one
 * script ({@code fenced-write.lua}) that compares the writer's token with the fence and sets the
 * fields and the fence together, atomically on the server, by the library's one rule
 * ({@link Fencing#admits}): the key keeps the highest token it has accepted; a lower token is refused
 * with {@link StaleTokenException} (carrying the fence, read by the same script) and changes nothing;
 * an equal token is the same grant writing again and is accepted.
 *
 * <pre>{@code
 * RedisFencedWrites carts = RedisFencedWrites.of(connection);   // the application's connection
 * locks.withLock("cart:42", lease -> carts.write("cart:42", "items", json, lease.token()));
 * // HGETALL cart:42  ->  items = json, fence = <token>
 * }</pre>
 *
 * <p>One key per write, so it works on Redis Cluster whatever the key's slot. A key that does not exist
 * admits any token and is created (Redis has no row to be missing). Keys and fields are data, never
 * patterns. Tokens are compared exactly over the whole {@code long} range. The keys are the
 * application's: no TTL is set or changed, and the connection stays the caller's (nothing to close).
 * Errors of the connection or the server (a key that is not a hash, a fence field that holds no token)
 * pass unchanged, as Lettuce signals them. For a fenced key/value resource kept by the lock store
 * itself, use a session's {@code fencedValues()} instead.
 *
 * <p>Immutable and thread-safe; {@link #fenceField} returns a changed copy.
 */
public final class RedisFencedWrites {

    private final RedisScriptingReactiveCommands<String, String> commands;
    private final String fenceField;

    private RedisFencedWrites(RedisScriptingReactiveCommands<String, String> commands, String fenceField) {
        this.commands = commands;
        this.fenceField = fenceField;
    }

    /**
     * @param connection the application's connection to a Redis server (standalone, or a master chosen by Sentinel)
     * @return fenced writes over it, with the fence in field {@code fence}
     * @throws NullPointerException when {@code connection} is null
     */
    public static RedisFencedWrites of(StatefulRedisConnection<String, String> connection) {
        return of(Objects.requireNonNull(connection, "connection").reactive());
    }

    /**
     * @param connection the application's connection to a Redis Cluster; each write goes to the master of its key's slot
     * @return fenced writes over it, with the fence in field {@code fence}
     * @throws NullPointerException when {@code connection} is null
     */
    public static RedisFencedWrites of(StatefulRedisClusterConnection<String, String> connection) {
        return of(Objects.requireNonNull(connection, "connection").reactive());
    }

    private static RedisFencedWrites of(RedisScriptingReactiveCommands<String, String> commands) {
        LuaScript.loadAll();    // the script is read here, on the caller's thread, never on an event loop
        return new RedisFencedWrites(commands, "fence");
    }

    /**
     * @param fenceField the hash field holding the last writer's token; not empty
     * @return a copy using that field
     * @throws NullPointerException     when {@code fenceField} is null
     * @throws IllegalArgumentException when it is empty
     */
    public RedisFencedWrites fenceField(String fenceField) {
        return new RedisFencedWrites(commands, nonEmpty(fenceField, "fenceField"));
    }

    /**
     * Sets one field of the hash {@code key} if {@link Fencing#admits} {@code token} against its fence;
     * see {@link #write(String, Map, long)}.
     *
     * @param key   the application's key
     * @param field the field to set
     * @param value its value
     * @param token the writer's fencing token, e.g. {@code lease.token()}
     * @return completes when written; errors with {@link StaleTokenException} when refused
     * @throws NullPointerException     when an argument is null
     * @throws IllegalArgumentException when the key or the field is empty, or the field is the fence field
     */
    public Mono<Void> write(String key, String field, String value, long token) {
        Objects.requireNonNull(field, "field");
        Objects.requireNonNull(value, "value");
        return write(key, Map.of(field, value), token);
    }

    /**
     * Sets fields of the hash {@code key} if {@link Fencing#admits} {@code token} against its fence
     * (a key or a fence field that does not exist admits any token), and stores {@code token} as the
     * new fence — one script, so the check and the write are atomic. Nothing is sent before subscribe;
     * one request per subscription; cancelling does not recall a request already sent.
     *
     * @param key    the application's key
     * @param fields the fields to set and their values; at least one
     * @param token  the writer's fencing token, e.g. {@code lease.token()}
     * @return completes when written; errors with {@link StaleTokenException} (carrying {@code token}
     *         and the key's fence) when the key carries a greater token — the hash is unchanged
     * @throws NullPointerException     when the key, the map, a field or a value is null
     * @throws IllegalArgumentException when the key or a field is empty, there is no field, or a field is
     *                                  the fence field
     */
    public Mono<Void> write(String key, Map<String, String> fields, long token) {
        nonEmpty(key, "key");
        Objects.requireNonNull(fields, "fields");
        if (fields.isEmpty()) {
            throw new IllegalArgumentException("fields must not be empty");
        }
        List<String> args = new ArrayList<>(2 + 2 * fields.size());
        args.add(Long.toString(token));
        args.add(fenceField);
        for (Map.Entry<String, String> e : fields.entrySet()) {
            String f = nonEmpty(e.getKey(), "field");
            if (f.equals(fenceField)) {
                throw new IllegalArgumentException("field must not be the fence field, was '" + f + "'");
            }
            args.add(f);
            args.add(Objects.requireNonNull(e.getValue(), "value of field " + f));
        }
        String[] argv = args.toArray(new String[0]);
        return LuaScript.FENCED_WRITE.<List<Object>>run(commands, ScriptOutputType.MULTI, new String[] {key}, argv)
                .next()
                .flatMap(reply -> {
                    if (Long.valueOf(1L).equals(reply.get(0))) {
                        return Mono.<Void>empty();
                    }
                    long fence = Long.parseLong(String.valueOf(reply.get(1)));
                    return Mono.error(new StaleTokenException(key, token, OptionalLong.of(fence)));
                });
    }

    private static String nonEmpty(String value, String argument) {
        Objects.requireNonNull(value, argument);
        if (value.isEmpty()) {
            throw new IllegalArgumentException(argument + " must not be empty");
        }
        return value;
    }

    @Override
    public String toString() {
        return "RedisFencedWrites{fence field " + fenceField + "}";
    }
}
