package io.reactivelocks.zookeeper;

import io.reactivelocks.LockNames;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import org.apache.curator.framework.imps.ProtectedUtils;
import org.jspecify.annotations.Nullable;

/**
 * Where locks live in the tree, and how names become znode names. Names are data: every lock
 * name becomes exactly one znode segment, {@code n-} followed by the unpadded base64url of its
 * UTF-8 bytes (a lone surrogate as its own three bytes, so every name gets its own segment) —
 * only {@code [A-Za-z0-9_-]}, so never a {@code /}, never {@code .} or
 * {@code ..}, never {@code zookeeper}, no control character; a 1024-byte name gives 1370
 * characters, far within ZooKeeper's limits (paths are bounded only by {@code jute.maxbuffer}).
 *
 * <p>Beside each lock's node, {@code <root>/r-<base64url(name)>} holds the revocation requests to its
 * holder ({@link #revocationPath}); so does {@code <root>-semaphore/r-…} or {@code <root>-rw/r-…}
 * beside a semaphore's or read-write lock's node ({@link GrantRevocations}, built on a
 * {@code ZNodeNames} of that root); {@code <root>-rw/w-…} holds a read-write lock's writer marks
 * ({@link #writerMarksPath}). Only {@code n-} segments are lock names.
 *
 * <p>A lock node is {@code <root>/<segment>/_c_<uuid>-lock-<owner>-<sequence>}: Curator's
 * protection prefix, then the owner (as is when it is base64url-safe, else {@code ~} and its
 * base64url), then the ten-digit sequence ZooKeeper appends. The owner in the node name lets a
 * release find the owner's node among the children without reading their data.
 */
final class ZNodeNames {

    static final String NAME_PREFIX = "n-";
    /** The prefix of a lock's revocation node, {@code <root>/r-<base64url(name)>}: never a lock name's segment. */
    static final String REVOCATION_PREFIX = "r-";
    /** The prefix of a read-write lock's writer marks' node, {@code <root>/w-<base64url(name)>}: never a lock name's segment. */
    static final String WRITER_MARKS_PREFIX = "w-";
    static final String NODE_PREFIX = "lock-";
    private static final int SEQUENCE_DIGITS = 10;
    private static final Base64.Encoder ENCODER = Base64.getUrlEncoder().withoutPadding();
    private static final Base64.Decoder DECODER = Base64.getUrlDecoder();

    /** Lock paths kept per name (base64url of the name on every request showed in B1's profile); bounded. */
    private static final int MAX_CACHED_PATHS = 4096;

    private final String root;
    private final java.util.concurrent.ConcurrentHashMap<String, String> lockPaths = new java.util.concurrent.ConcurrentHashMap<>();

    /**
     * @param root the root path (validated by {@link ZooKeeperLockOptions})
     */
    ZNodeNames(String root) {
        this.root = Objects.requireNonNull(root, "root");
    }

    String root() {
        return root;
    }

    /** @return {@code <root>/n-<base64url(name)>} */
    String lockPath(String name) {
        String p = lockPaths.get(name);
        if (p == null) {
            p = root + "/" + segment(name);
            if (lockPaths.size() >= MAX_CACHED_PATHS) {
                lockPaths.clear(); // many names: start over rather than grow
            }
            lockPaths.put(name, p);
        }
        return p;
    }

    /**
     * @return {@code <root>/r-<base64url(name)>}: the persistent node whose data is the last revocation
     *         request to the lock's holder, a sibling of the lock's node (not a lock name: {@link #nameOf}
     *         skips it)
     */
    String revocationPath(String name) {
        return root + "/" + REVOCATION_PREFIX + LockNames.base64url(name);
    }

    /**
     * @return {@code <root>/w-<base64url(name)>}: the container of a read-write lock's writer marks, a sibling
     *         of the name's node (not a lock name: {@link #nameOf} skips it; see {@link ZooKeeperReadWriteStore})
     */
    String writerMarksPath(String name) {
        return root + "/" + WRITER_MARKS_PREFIX + LockNames.base64url(name);
    }

    /** @return the node name to create (before protection and sequence) for {@code owner} */
    static String nodeName(String owner) {
        return nodeName(NODE_PREFIX, owner);
    }

    /**
     * @param prefix the recipe's node prefix, e.g. {@code read-}
     * @param owner  the owner id
     * @return the node name to create (before protection and sequence)
     */
    static String nodeName(String prefix, String owner) {
        return prefix + encodeOwner(owner) + "-";
    }

    /** @return the path to pass to a sequential create for {@code owner} under {@code name} */
    String nodePathPrefix(String name, String owner) {
        return lockPath(name) + "/" + nodeName(owner);
    }

    /**
     * @return {@code n-<base64url(utf8(name))>} ({@link LockNames#base64url}), where a lone surrogate
     *         is encoded as its own three bytes, not as {@code '?'}: {@code "\uD800"} and {@code "?"}
     *         are two locks
     */
    static String segment(String name) {
        return NAME_PREFIX + LockNames.base64url(name);
    }

    /** @return the lock name of a segment made by {@link #segment}, or {@code null} if it is not one */
    static @Nullable String nameOf(String segment) {
        if (!segment.startsWith(NAME_PREFIX)) {
            return null;
        }
        try {
            return LockNames.fromBase64url(segment.substring(NAME_PREFIX.length()));
        } catch (IllegalArgumentException e) {
            return null;
        }
    }

    static String encodeOwner(String owner) {
        return isSafeOwner(owner) ? owner : "~" + ENCODER.encodeToString(owner.getBytes(StandardCharsets.UTF_8));
    }

    /** @return whether {@code owner} matches {@code [A-Za-z0-9_-]{1,128}} (a loop: a regex per acquire showed in B1's profile) */
    static boolean isSafeOwner(String owner) {
        int n = owner.length();
        if (n < 1 || n > 128) {
            return false;
        }
        for (int i = 0; i < n; i++) {
            char c = owner.charAt(i);
            if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-')) {
                return false;
            }
        }
        return true;
    }

    static String decodeOwner(String encoded) {
        if (encoded.startsWith("~")) {
            return new String(DECODER.decode(encoded.substring(1)), StandardCharsets.UTF_8);
        }
        return encoded;
    }

    /**
     * One child of a lock node, parsed.
     *
     * @param node     the child's znode name
     * @param owner    the owner id it was created for
     * @param sequence the sequence ZooKeeper appended
     */
    record Child(String node, String owner, long sequence) {
    }

    /** Orders children by their sequence: the first is the holder. */
    static final Comparator<Child> BY_SEQUENCE = Comparator.comparingLong(Child::sequence);

    /**
     * @param node a child's znode name
     * @return the parsed child, or {@code null} when the name is not a lock node of this recipe
     */
    static @Nullable Child parse(String node) {
        return parse(node, NODE_PREFIX);
    }

    /**
     * @param node   a child's znode name
     * @param prefix the recipe's node prefix
     * @return the parsed child, or {@code null} when the name is not a node with that prefix
     */
    static @Nullable Child parse(String node, String prefix) {
        String n = ProtectedUtils.normalize(node);
        if (!n.startsWith(prefix) || n.length() < prefix.length() + 2 + SEQUENCE_DIGITS) {
            return null;
        }
        int seqStart = n.length() - SEQUENCE_DIGITS;
        if (n.charAt(seqStart - 1) != '-') {
            return null;
        }
        long sequence;
        try {
            sequence = Long.parseLong(n.substring(seqStart));
        } catch (NumberFormatException e) {
            return null;
        }
        String encodedOwner = n.substring(prefix.length(), seqStart - 1);
        if (encodedOwner.isEmpty()) {
            return null;
        }
        try {
            return new Child(node, decodeOwner(encodedOwner), sequence);
        } catch (IllegalArgumentException e) {
            return null;
        }
    }

    /**
     * @param children the znode names under a lock node
     * @return the lock nodes among them, lowest sequence first
     */
    static List<Child> sorted(List<String> children) {
        List<Child> out = new ArrayList<>(children.size());
        for (String c : children) {
            Child p = parse(c);
            if (p != null) {
                out.add(p);
            }
        }
        out.sort(BY_SEQUENCE);
        return out;
    }

    /** @return the last segment of a path */
    static String lastSegment(String path) {
        return path.substring(path.lastIndexOf('/') + 1);
    }
}
