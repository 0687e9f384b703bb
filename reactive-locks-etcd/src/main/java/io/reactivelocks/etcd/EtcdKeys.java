package io.reactivelocks.etcd;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.KeyValue;
import io.reactivelocks.LockNames;
import io.reactivelocks.spi.Holder;
import io.reactivelocks.spi.LockEvent;
import java.nio.charset.StandardCharsets;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * The key layout: {@code <prefix>/<name>/<slot key>}, where {@code <name>} is the lock name's UTF-8
 * bytes (lone surrogates kept apart) in unpadded base64url ({@link LockNames#base64url}). That alphabet ({@code A-Z a-z 0-9 - _}) has no {@code '/'}, and
 * the encoding is injective, so a name is always exactly one path segment: {@code "a/../b"},
 * {@code "*"} or a NUL byte cannot reach another name's keys, and the range
 * {@code <prefix>/<name>/} holds the keys of that one name and no other. The slot key is
 * {@code <session lease id in hex>-<slot>} ({@link #slot}): an owner of a backend takes the lowest
 * slot of the name its backend has free ({@link LockSlots}), so a name's keys are reused from one
 * acquire to the next instead of leaving a deleted key behind each time (etcd keeps every deleted
 * key in its index until a compaction, and a range read visits them all). The owner, the engine's
 * random base64url id, is in the key's value (UTF-8), then a newline and the payload when the grant
 * has one. The key {@code <prefix>/<name>} (no last segment, outside the name's range) carries the
 * name's revocation requests for a moment ({@link #revocation}).
 */
final class EtcdKeys {

    private final String prefix;

    /** @param prefix the key prefix without a trailing {@code '/'} (checked by {@link #checkPrefix}) */
    EtcdKeys(String prefix) {
        this.prefix = checkPrefix(prefix);
    }

    /**
     * @param prefix a key prefix
     * @return it, when non-empty and without a trailing {@code '/'}
     */
    static String checkPrefix(String prefix) {
        Objects.requireNonNull(prefix, "prefix");
        if (prefix.isEmpty()) {
            throw new IllegalArgumentException("prefix must not be empty");
        }
        if (prefix.endsWith("/")) {
            throw new IllegalArgumentException("prefix must not end with '/' (it is added), was '" + prefix + "'");
        }
        return prefix;
    }

    String prefix() {
        return prefix;
    }

    /** @return {@code <prefix>/}: every key of this backend */
    ByteSequence all() {
        return bytes(prefix + "/");
    }

    /** @return {@code <prefix>/<name>/}: the range of one lock's keys (holder and waiters) */
    ByteSequence lock(String name) {
        return bytes(prefix + "/" + encode(name) + "/");
    }

    /** @return {@code <prefix>/<name>/<segment>}: one key in the name's range */
    ByteSequence key(String name, String segment) {
        return bytes(prefix + "/" + encode(name) + "/" + segment);
    }

    /**
     * @return {@code <prefix>/<name>/<leaseId in hex>-<slot>}: the key of slot {@code slot} of the
     *         name for owners of the session lease {@code leaseId} (no other session's owner uses it)
     */
    ByteSequence slot(String name, long leaseId, int slot) {
        return key(name, Long.toHexString(leaseId) + "-" + slot);
    }

    /**
     * @return {@code <prefix>/<name>}: the key of the name's revocation requests
     *         ({@link EtcdLockBackend#revoke}). It is outside the range {@code <prefix>/<name>/} of the
     *         name's owner keys, so no read of the queue (nor the name's lock events watch) ever sees it,
     *         and it has no last segment, so the admin's listing of names skips it.
     */
    ByteSequence revocation(String name) {
        return bytes(prefix + "/" + encode(name));
    }

    /**
     * @param owner  the holder asked
     * @param reason why
     * @return the value of a revocation key: the owner's length, a colon, the owner, then the reason
     *         (so owner and reason may hold any character)
     */
    static ByteSequence revocationValue(String owner, String reason) {
        return bytes(owner.length() + ":" + owner + reason);
    }

    /**
     * @param name  the lock name
     * @param value the value of a revocation key ({@link #revocationValue})
     * @return the request it stands for, or {@code null} when the value is not one
     */
    static LockEvent.@Nullable Revoked revoked(String name, ByteSequence value) {
        String v = string(value);
        int sep = v.indexOf(':');
        try {
            int ownerEnd = sep + 1 + Integer.parseInt(v.substring(0, sep));
            return new LockEvent.Revoked(name, v.substring(sep + 1, ownerEnd), v.substring(ownerEnd));
        } catch (RuntimeException e) { // no separator, not a number, too short: not one of ours
            return null;
        }
    }

    /**
     * @param key a key of this layout
     * @return the lock name it belongs to, or {@code null}
     *         when it is not a key of this layout
     */
    @Nullable String nameOf(ByteSequence key) {
        String k = key.toString(StandardCharsets.UTF_8);
        String head = prefix + "/";
        if (!k.startsWith(head)) {
            return null;
        }
        int slash = k.indexOf('/', head.length());
        if (slash < 0) {
            return null;
        }
        try {
            return LockNames.fromBase64url(k.substring(head.length(), slash));
        } catch (IllegalArgumentException e) {
            return null;
        }
    }

    static String encode(String name) {
        return LockNames.base64url(name);
    }

    static ByteSequence bytes(String s) {
        return ByteSequence.from(s, StandardCharsets.UTF_8);
    }

    static String string(ByteSequence b) {
        return b.toString(StandardCharsets.UTF_8);
    }

    /**
     * The value of an owner's key: the owner id (for people reading etcd), followed by a newline
     * and the payload when the grant has one. Owner ids never contain a newline.
     */
    static ByteSequence value(String owner, String payload) {
        return bytes(payload == null ? owner : owner + '\n' + payload);
    }

    /** @return the owner an owner key's value ({@link #value}) names: its first line */
    static String ownerOf(ByteSequence value) {
        String v = string(value);
        int nl = v.indexOf('\n');
        return nl < 0 ? v : v.substring(0, nl);
    }

    /** @return the holder an owner's key stands for: its owner, its create revision as the token, its payload */
    static Holder holder(KeyValue kv) {
        String value = string(kv.getValue());
        int nl = value.indexOf('\n');
        return new Holder(nl < 0 ? value : value.substring(0, nl), kv.getCreateRevision(), null,
                nl < 0 ? null : value.substring(nl + 1));
    }

    /** @return the in-memory key of one owner's hold on one lock (owner, NUL, name) */
    static String heldKey(String name, String owner) {
        return owner + '\u0000' + name;
    }
}
