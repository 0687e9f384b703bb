package io.reactivelocks.redis;

import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.reactive.RedisScriptingReactiveCommands;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import reactor.core.publisher.Flux;

/**
 * One Lua script from this package's resources, read once when the class loads. Runs with
 * {@code EVALSHA}; when the server does not know the script ({@code NOSCRIPT}: a restart, a
 * {@code SCRIPT FLUSH}, a failover) it falls back to {@code EVAL}, which also caches the script
 * on the server for the next {@code EVALSHA}.
 */
final class LuaScript {

    static final LuaScript ACQUIRE = load("acquire.lua");
    static final LuaScript RELEASE = load("release.lua");
    static final LuaScript RENEW = load("renew.lua");
    static final LuaScript INSPECT = load("inspect.lua");
    static final LuaScript RATCHET = load("ratchet.lua");
    static final LuaScript UPDATE = load("update.lua");
    static final LuaScript WINDOW = load("window.lua");
    static final LuaScript FENCED_VALUE = load("fenced-value.lua");
    static final LuaScript FENCED_WRITE = load("fenced-write.lua");
    static final LuaScript TASK_REGISTER = load("task-register.lua");
    static final LuaScript TASK_CAPTURE = load("task-capture.lua");
    static final LuaScript TASK_RENEW = load("task-renew.lua");
    static final LuaScript TASK_FINISH = load("task-finish.lua");
    static final LuaScript TASK_STATUS = load("task-status.lua");
    static final LuaScript TASK_CLAIMS = load("task-claims.lua");
    static final LuaScript TASK_REMOVE = load("task-remove.lua");
    static final LuaScript SEMAPHORE_ACQUIRE = load("semaphore-acquire.lua");
    static final LuaScript SEMAPHORE_RENEW = load("semaphore-renew.lua");
    static final LuaScript SEMAPHORE_RELEASE = load("semaphore-release.lua");
    static final LuaScript SEMAPHORE_HOLDERS = load("semaphore-holders.lua");
    static final LuaScript RWLOCK_ACQUIRE = load("rwlock-acquire.lua");
    static final LuaScript RWLOCK_RELEASE = load("rwlock-release.lua");
    static final LuaScript RWLOCK_HOLDERS = load("rwlock-holders.lua");
    static final LuaScript FAIR_ACQUIRE = load("fair-acquire.lua");
    static final LuaScript FAIR_RELEASE = load("fair-release.lua");
    static final LuaScript FAIR_WAITING = load("fair-waiting.lua");

    /**
     * Makes sure the scripts are read: called where backends are built (an application's setup
     * code), so that the one-time classpath read never happens on an event loop.
     */
    static void loadAll() {
        // class initialisation has read every script by the time this runs
    }

    private final String resource;
    private final String source;
    private final String sha;

    private LuaScript(String resource, String source) {
        this.resource = resource;
        this.source = source;
        this.sha = sha1Hex(source);
    }

    /**
     * Runs the script; nothing is sent before subscribe.
     *
     * @param commands the connection's scripting commands
     * @param type     the reply type
     * @param keys     the keys the script touches
     * @param args     the arguments
     * @param <T>      the reply type
     * @return the reply
     */
    <T> Flux<T> run(RedisScriptingReactiveCommands<String, String> commands, ScriptOutputType type,
                    String[] keys, String... args) {
        // one operator for both: a NOSCRIPT answer runs the source (its errors after the write too), any other error
        // is signalled after the write ({@link RedisErrors#errorsAfterTheWrite})
        return Flux.defer(() -> commands.<T>evalsha(sha, type, keys, args))
                .onErrorResume(e -> isNoScript(e)
                        ? RedisErrors.errorsAfterTheWrite(commands.<T>eval(source, type, keys, args))
                        : RedisErrors.<T>afterTheWrite(e));
    }

    String sha() {
        return sha;
    }

    String source() {
        return source;
    }

    String resource() {
        return resource;
    }

    static boolean isNoScript(Throwable t) {
        return t instanceof RedisNoScriptException
                || (t.getMessage() != null && t.getMessage().startsWith("NOSCRIPT"));
    }

    private static LuaScript load(String resource) {
        try (InputStream in = LuaScript.class.getResourceAsStream(resource)) {
            if (in == null) {
                throw new IllegalStateException("missing script resource io/reactivelocks/redis/" + resource);
            }
            return new LuaScript(resource, new String(in.readAllBytes(), StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new UncheckedIOException("could not read script resource " + resource, e);
        }
    }

    private static String sha1Hex(String source) {
        try {
            byte[] d = MessageDigest.getInstance("SHA-1").digest(source.getBytes(StandardCharsets.UTF_8));
            StringBuilder sb = new StringBuilder(40);
            for (byte b : d) {
                sb.append(Character.forDigit((b >> 4) & 0xF, 16)).append(Character.forDigit(b & 0xF, 16));
            }
            return sb.toString();
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-1 is not available", e);
        }
    }

    @Override
    public String toString() {
        return "LuaScript{" + resource + ", " + sha + "}";
    }
}
