package io.reactivelocks.zookeeper;

import java.util.Objects;

/**
 * Who leads an election, as {@link ZooKeeperLeaderElection#observe} and
 * {@link ZooKeeperLeaderElection#leader} see it.
 *
 * @param election the election name
 * @param value    the value the leader campaigned with (its address, its id, ...)
 * @param token    the leader's fencing token (the czxid of its node): a later leader has a larger one
 */
public record Leader(String election, String value, long token) {
    /** Checks the fields. */
    public Leader {
        Objects.requireNonNull(election, "election");
        Objects.requireNonNull(value, "value");
    }
}
