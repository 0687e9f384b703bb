package io.reactivelocks.spi;

import java.util.Objects;

/**
 * A lock held by this client.
 *
 * @param name  the lock name
 * @param owner the owner id
 * @param token the fencing token of the grant
 */
public record HeldLock(String name, String owner, long token) {
    /** Checks the fields. */
    public HeldLock {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(owner, "owner");
    }
}
