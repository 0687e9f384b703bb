package io.reactivelocks.redis;

import io.reactivelocks.LockNames;
import java.nio.charset.StandardCharsets;
import java.util.Objects;

/**
 * The key layout of one backend. Every key of a lock name shares one Redis Cluster hash tag, the
 * encoded name between braces, so a script may touch all of them:
 *
 * <pre>
 *   {prefix}{&lt;tag&gt;}:lock     the lock: "&lt;token&gt;:&lt;owner&gt;", with the lease as PX TTL
 *   {prefix}{&lt;tag&gt;}:fence    the fencing counter (integer), with a long TTL refreshed on each grant
 *   {prefix}{&lt;tag&gt;}:events   the pub/sub channel of the lock ("released:&lt;owner&gt;", revocations; a fair lock's grants)
 *   {prefix}{&lt;tag&gt;}:grants   the pub/sub channel of the lock's grants ("acquired:&lt;token&gt;:&lt;owner&gt;"), which only
 *                            observers subscribe to (a waiter needs releases only)
 *   {prefix}{&lt;tag&gt;}:window   the window-lock sorted set (member = period in ms, score = last claimed window)
 *   {prefix}{&lt;tag&gt;}:window:fence  the window claims' fencing counter (integer), with the fence TTL
 *   {prefix}{&lt;tag&gt;}:semaphore         a semaphore's holders (sorted set: owner -&gt; expiry in server ms)
 *   {prefix}{&lt;tag&gt;}:semaphore:tokens  a semaphore's tokens (hash: owner -&gt; token)
 *   {prefix}{&lt;tag&gt;}:semaphore:fence   a semaphore's fencing counter (integer), with the fence TTL
 *   {prefix}{&lt;tag&gt;}:semaphore:events  a semaphore's pub/sub channel (as a lock's: releases, revocations)
 *   {prefix}{&lt;tag&gt;}:semaphore:grants  its grants' channel (as a lock's: observers only)
 *   {prefix}{&lt;tag&gt;}:rw          a read-write lock's grants (sorted set: owner -&gt; expiry in server ms)
 *   {prefix}{&lt;tag&gt;}:rw:tokens   its grants' tokens (hash: owner -&gt; token, and "\0w" -&gt; the writer while one holds)
 *   {prefix}{&lt;tag&gt;}:rw:intents  its waiting writers' intents (sorted set: owner -&gt; expiry in server ms)
 *   {prefix}{&lt;tag&gt;}:rw:fence    its fencing counter (integer), with the fence TTL
 *   {prefix}{&lt;tag&gt;}:rw:events   its pub/sub channel (as a lock's: releases, revocations)
 *   {prefix}{&lt;tag&gt;}:rw:grants   its grants' channel (as a lock's: observers only)
 *   {prefix}{&lt;tag&gt;}:fair:queue      a fair lock's waiters (sorted set: owner -&gt; arrival in server µs); the
 *                                   fair lock holds the lock key above, like the mutex
 *   {prefix}{&lt;tag&gt;}:fair:deadlines  its waiters' deadlines (sorted set: owner -&gt; expiry in server ms)
 *   {prefix}{&lt;tag&gt;}:value    a fenced value (hash: "value", "fence"; see {@link RedisFencedValues}), no TTL
 *
 *   for a task queue (see {@link RedisTaskStore}; task ids and payloads inside are encoded like the tag):
 *   {prefix}{&lt;tag&gt;}:queue:tasks    hash: task id -&gt; "&lt;state&gt;|&lt;retries&gt;|&lt;failures&gt;|&lt;captures&gt;|&lt;token&gt;|&lt;owner&gt;"
 *   {prefix}{&lt;tag&gt;}:queue:payloads hash: task id -&gt; payload (tasks registered with one)
 *   {prefix}{&lt;tag&gt;}:queue:pending  sorted set of capturable task ids, score = server µs when it became pending
 *   {prefix}{&lt;tag&gt;}:queue:claimed  sorted set of claimed task ids, score = claim expiry in server ms
 *   {prefix}{&lt;tag&gt;}:queue:fence    the queue's fencing counter
 *   {prefix}{&lt;tag&gt;}:queue:events   the queue's pub/sub channel ("ready" when tasks became capturable)
 * </pre>
 *
 * <p>The tag is the name percent-encoded over its UTF-8 bytes: ASCII letters, digits and
 * {@code - . _ ~ : / @} stay as they are, every other byte becomes {@code %XX}. The encoding is
 * injective, so names never collide; it contains no braces, so a name cannot move its keys to
 * another slot; and it contains no glob characters ({@code * ? [ ]}), so keys can be scanned
 * safely by operators. A lone surrogate (a Java string that is not valid UTF-16) is encoded as its
 * three-byte generalized UTF-8 form, so even those names stay distinct.
 */
final class RedisKeys {

    private static final char[] HEX = "0123456789ABCDEF".toCharArray();

    private final String prefix;

    RedisKeys(String prefix) {
        this.prefix = Objects.requireNonNull(prefix, "keyPrefix");
    }

    String prefix() {
        return prefix;
    }

    String lock(String name) {
        return lockIn(base(name));
    }

    /** @param base the name's {@link #base} @return the lock key of that name */
    static String lockIn(String base) {
        return base + "lock";
    }

    String fence(String name) {
        return fenceIn(base(name));
    }

    /** @param base the name's {@link #base} @return the fencing counter of that name */
    static String fenceIn(String base) {
        return base + "fence";
    }

    String channel(String name) {
        return channelIn(base(name));
    }

    /** @param base the name's {@link #base} @return the lock's channel of that name */
    static String channelIn(String base) {
        return base + "events";
    }

    /**
     * @param name the lock name
     * @return the channel of the lock's grants, which only observers subscribe to
     */
    String grantsChannel(String name) {
        return grantsChannelIn(base(name));
    }

    /** @param base the name's {@link #base} @return the grants channel of that name */
    static String grantsChannelIn(String base) {
        return base + "grants";
    }

    String window(String name) {
        return base(name) + "window";
    }

    String windowFence(String name) {
        return base(name) + "window:fence";
    }

    String semaphore(String name) {
        return base(name) + "semaphore";
    }

    String semaphoreTokens(String name) {
        return base(name) + "semaphore:tokens";
    }

    String semaphoreChannel(String name) {
        return base(name) + "semaphore:events";
    }

    /**
     * @param name a semaphore name
     * @return the channel of its grants, which only observers subscribe to
     */
    String semaphoreGrantsChannel(String name) {
        return base(name) + "semaphore:grants";
    }

    /**
     * @param name a semaphore name
     * @return its holders, tokens, fence, channel and grants channel keys (see the layout above), the name encoded once
     */
    String[] semaphoreKeys(String name) {
        String base = base(name);
        return new String[] {base + "semaphore", base + "semaphore:tokens", base + "semaphore:fence", base + "semaphore:events",
            base + "semaphore:grants"};
    }

    String readWrite(String name) {
        return base(name) + "rw";
    }

    String readWriteTokens(String name) {
        return base(name) + "rw:tokens";
    }

    String readWriteIntents(String name) {
        return base(name) + "rw:intents";
    }

    String readWriteFence(String name) {
        return base(name) + "rw:fence";
    }

    String readWriteChannel(String name) {
        return base(name) + "rw:events";
    }

    /**
     * @param name a read-write lock name
     * @return the channel of its grants, which only observers subscribe to
     */
    String readWriteGrantsChannel(String name) {
        return base(name) + "rw:grants";
    }

    String fairQueue(String name) {
        return base(name) + "fair:queue";
    }

    String fairDeadlines(String name) {
        return base(name) + "fair:deadlines";
    }

    String fencedValue(String key) {
        return base(key) + "value";
    }

    String tasks(String queue) {
        return base(queue) + "queue:tasks";
    }

    String pending(String queue) {
        return base(queue) + "queue:pending";
    }

    String claimed(String queue) {
        return base(queue) + "queue:claimed";
    }

    String payloads(String queue) {
        return base(queue) + "queue:payloads";
    }

    String queueFence(String queue) {
        return base(queue) + "queue:fence";
    }

    String queueChannel(String queue) {
        return base(queue) + "queue:events";
    }

    /**
     * @param name a name
     * @return the prefix of every key of the name ({@code prefix{tag}:}): a hot path that needs
     *         several keys of one name derives them from it ({@link #lockIn} and the like), encoding
     *         the name once
     */
    String base(String name) {
        return prefix + '{' + tag(name) + "}:";
    }

    /**
     * @param name any string
     * @return the injective, brace-free and glob-free encoding of {@code name}
     */
    static String tag(String name) {
        if (safeAscii(name)) {
            return name; // nothing to escape (the usual name): no copy
        }
        StringBuilder out = new StringBuilder(name.length() + 16);
        for (byte b : LockNames.utf8(name)) { // a lone surrogate is its own 3 bytes (generalized UTF-8)
            int c = b & 0xFF;
            if (c < 0x80 && isSafe(c)) {
                out.append((char) c);
            } else {
                escape(out, c);
            }
        }
        return out.toString();
    }

    /**
     * The inverse of {@link #tag(String)}.
     *
     * @param tag a string made by {@link #tag(String)}
     * @return the original string
     * @throws IllegalArgumentException when {@code tag} is not such a string
     */
    static String untag(String tag) {
        byte[] bytes = new byte[tag.length()];
        int n = 0;
        for (int i = 0; i < tag.length(); ) {
            char c = tag.charAt(i);
            if (c == '%') {
                bytes[n++] = (byte) hexByte(tag, i);
                i += 3;
            } else {
                bytes[n++] = (byte) c;
                i++;
            }
        }
        return LockNames.fromUtf8(java.util.Arrays.copyOf(bytes, n)); // a surrogate comes back as the lone char it was
    }

    private static int hexByte(String s, int at) {
        if (at + 3 > s.length()) {
            throw new IllegalArgumentException("truncated escape in '" + s + "'");
        }
        if (s.charAt(at) != '%') {
            throw new IllegalArgumentException("expected '%' at " + at + " in '" + s + "'");
        }
        int hi = Character.digit(s.charAt(at + 1), 16);
        int lo = Character.digit(s.charAt(at + 2), 16);
        if (hi < 0 || lo < 0) {
            throw new IllegalArgumentException("bad escape at " + at + " in '" + s + "'");
        }
        return (hi << 4) | lo;
    }

    /**
     * @param name any string
     * @return whether {@link #tag(String)} leaves {@code name} as it is (every char a safe ASCII one)
     */
    static boolean isPlain(String name) {
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            if (c >= 0x80 || !isSafe(c)) {
                return false;
            }
        }
        return true;
    }

    /** @return whether every char of {@code s} is an ASCII character {@link #tag} keeps as it is */
    private static boolean safeAscii(String s) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c >= 0x80 || !isSafe(c)) {
                return false;
            }
        }
        return true;
    }

    private static boolean isSafe(int c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
                || c == '-' || c == '.' || c == '_' || c == '~' || c == ':' || c == '/' || c == '@';
    }

    private static void escape(StringBuilder out, int b) {
        out.append('%').append(HEX[(b >> 4) & 0xF]).append(HEX[b & 0xF]);
    }

    /**
     * @param key a key of this layout
     * @return the key's bytes as the server sees them (UTF-8), for slot computation
     */
    static byte[] bytes(String key) {
        return key.getBytes(StandardCharsets.UTF_8);
    }

    /**
     * Checks a key prefix: braces would change the hash tag Redis Cluster uses.
     *
     * @param prefix the prefix to check
     * @return the prefix
     */
    static String checkPrefix(String prefix) {
        Objects.requireNonNull(prefix, "keyPrefix");
        if (prefix.indexOf('{') >= 0 || prefix.indexOf('}') >= 0) {
            throw new IllegalArgumentException("keyPrefix must not contain '{' or '}' (they would change the "
                    + "Redis Cluster hash tag), was '" + prefix + "'");
        }
        return prefix;
    }
}
