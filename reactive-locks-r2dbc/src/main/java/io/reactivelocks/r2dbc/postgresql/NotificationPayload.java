package io.reactivelocks.r2dbc.postgresql;

import org.jspecify.annotations.Nullable;

/**
 * The text of the notifications the statements send on the backend's one fixed channel:
 * {@code <kind> <token> <owner length> <owner><name>}, where kind is {@code A} (acquired),
 * {@code R} (released) or {@code E} (released after it had expired) — or a revocation request,
 * {@code V}, see {@link #revocation} — owner and name are in their
 * stored form (see {@link TextEscapes}), and the owner length counts UTF-16 units ({@code -1}: no
 * owner). The length prefix makes any owner and name unambiguous without escaping; the client
 * builds everything after the token, so both ends count the same way. PostgreSQL limits a payload
 * to 8000 bytes: a name (at most 2048 bytes stored) always fits, the owner is dropped if it would
 * not.
 */
final class NotificationPayload {

    /** Bytes kept free below PostgreSQL's 8000-byte payload limit for the kind, the token and spaces. */
    static final int MAX_SUFFIX_BYTES = 7900;

    final char kind;
    final long token;
    final @Nullable String owner;     // stored form, or null
    final String name;      // stored form
    final @Nullable String reason;    // stored form, for kind V only

    private NotificationPayload(char kind, long token, String owner, String name) {
        this(kind, token, owner, name, null);
    }

    private NotificationPayload(char kind, long token, String owner, String name, @Nullable String reason) {
        this.kind = kind;
        this.token = token;
        this.owner = owner;
        this.name = name;
        this.reason = reason;
    }

    /**
     * A revocation request to the holder {@code storedOwner}:
     * {@code V <reason length> <owner length> <owner><reason><name>}, everything in stored form (a
     * reason of at most 500 characters, an owner and a name fit the 8000-byte limit).
     *
     * @param storedOwner  the holder asked, stored form
     * @param storedReason why, stored form
     * @param storedName   the name, stored form
     * @return the whole payload
     */
    static String revocation(String storedOwner, String storedReason, String storedName) {
        return "V " + storedReason.length() + " " + storedOwner.length() + " " + storedOwner + storedReason + storedName;
    }

    /**
     * @param storedOwner the owner, stored form
     * @param storedName  the name, stored form
     * @return what follows {@code "<kind> <token> "} in the payload
     */
    static String suffix(String storedOwner, String storedName) {
        String s = storedOwner.length() + " " + storedOwner + storedName;
        return io.reactivelocks.LockNames.utf8Length(s) <= MAX_SUFFIX_BYTES ? s : "-1 " + storedName;
    }

    /**
     * The watcher key of a lock's observers: {@code \o} and the stored lock name. A lock's grants
     * are announced only while a client registered it (waiters register the plain name, which
     * announces releases). Never a dispatch key: the grant's notification names the lock itself.
     *
     * @param storedName the lock name, stored form
     * @return the key an observer registers besides the name
     */
    static String observerKey(String storedName) {
        return "\\o" + storedName;
    }

    /**
     * The dispatch key of a task queue's wake-ups: {@code \q} and the stored queue name. No lock
     * name has it: in a stored name a backslash is always followed by {@code \}, {@code 0} or
     * {@code u}, so queue wake-ups never reach a lock's subscribers and vice versa.
     *
     * @param storedQueue the queue name, stored form
     * @return the key the listener dispatches the queue's wake-ups under
     */
    static String queueKey(String storedQueue) {
        return "\\q" + storedQueue;
    }

    /**
     * @param storedQueue the queue name, stored form
     * @return the whole payload of a "tasks became capturable" notification: {@code R 0 -1 \q<queue>}
     */
    static String queueWakeUp(String storedQueue) {
        return "R 0 -1 " + queueKey(storedQueue);
    }

    /**
     * @param payload a notification's text
     * @return the parsed payload, or {@code null} when it is not one of ours
     */
    static @Nullable NotificationPayload parse(String payload) {
        if (payload == null || payload.length() < 6 || payload.charAt(1) != ' ') {
            return null;
        }
        char kind = payload.charAt(0);
        if (kind != 'A' && kind != 'R' && kind != 'E' && kind != 'V') {
            return null;
        }
        try {
            int sp1 = payload.indexOf(' ', 2);
            int sp2 = sp1 < 0 ? -1 : payload.indexOf(' ', sp1 + 1);
            if (sp2 < 0) {
                return null;
            }
            long token = Long.parseLong(payload.substring(2, sp1));
            int ownerLength = Integer.parseInt(payload.substring(sp1 + 1, sp2));
            String rest = payload.substring(sp2 + 1);
            if (ownerLength < 0) {
                return rest.isEmpty() ? null : new NotificationPayload(kind, token, null, rest);
            }
            if (ownerLength >= rest.length()) {
                return null;
            }
            if (kind == 'V') { // the token field is the reason's length
                if (token < 0 || ownerLength + token >= rest.length()) {
                    return null;
                }
                int reasonEnd = ownerLength + (int) token;
                return new NotificationPayload(kind, 0, rest.substring(0, ownerLength), rest.substring(reasonEnd),
                        rest.substring(ownerLength, reasonEnd));
            }
            return new NotificationPayload(kind, token, rest.substring(0, ownerLength), rest.substring(ownerLength));
        } catch (NumberFormatException e) {
            return null;
        }
    }
}
