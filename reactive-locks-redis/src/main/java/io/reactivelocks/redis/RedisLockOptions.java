package io.reactivelocks.redis;

import io.lettuce.core.RedisURI;
import java.time.Duration;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * Immutable Redis-specific settings of a {@link RedisLockBackend}: the key prefix, the lifetime
 * of fencing counters and, optionally, the server to connect to. Build with {@link #builder()},
 * derive with {@link #mutate()}; lock timing (lease, renewal, backoff) stays in
 * {@link io.reactivelocks.LockOptions}.
 *
 * <p>Defaults: key prefix {@code "rl:"}, fencing counter TTL 30 days, the {@code RedisClient}'s
 * own URI, renewal batches as one script call ({@link #clusterSafeBatches()} off).
 */
public final class RedisLockOptions {

    private static final RedisLockOptions DEFAULTS = builder().build();

    private final String keyPrefix;
    private final Duration fenceTtl;
    private final @Nullable RedisURI uri;
    private final boolean clusterSafeBatches;

    private RedisLockOptions(Builder b) {
        this.keyPrefix = b.keyPrefix;
        this.fenceTtl = b.fenceTtl;
        this.uri = b.uri;
        this.clusterSafeBatches = b.clusterSafeBatches;
    }

    /** @return the defaults described in the class documentation */
    public static RedisLockOptions defaults() {
        return DEFAULTS;
    }

    /** @return a builder holding the defaults */
    public static Builder builder() {
        return new Builder();
    }

    /** @return a builder holding these options */
    public Builder mutate() {
        Builder b = new Builder();
        b.keyPrefix = keyPrefix;
        b.fenceTtl = fenceTtl;
        b.uri = uri;
        b.clusterSafeBatches = clusterSafeBatches;
        return b;
    }

    /** @return the prefix of every key and channel this backend uses */
    public String keyPrefix() {
        return keyPrefix;
    }

    /** @return how long an unused fencing counter lives (refreshed on every grant) */
    public Duration fenceTtl() {
        return fenceTtl;
    }

    /** @return the server to connect to, or {@code null} for the {@code RedisClient}'s own URI */
    public @Nullable RedisURI uri() {
        return uri;
    }

    /**
     * @return whether a renewal batch is split into one script call per Redis Cluster hash slot
     *         ({@code true}), or sent as one script call whatever the slots of its keys
     *         ({@code false}, the default: right for a standalone server or a Sentinel-managed
     *         master, where every key lives on the one server)
     */
    public boolean clusterSafeBatches() {
        return clusterSafeBatches;
    }

    @Override
    public String toString() {
        return "RedisLockOptions{keyPrefix='" + keyPrefix + "', fenceTtl=" + fenceTtl
                + (uri == null ? "" : ", uri=" + uri)
                + (clusterSafeBatches ? ", clusterSafeBatches" : "") + "}";
    }

    /** Mutable builder of {@link RedisLockOptions}; not thread-safe. */
    public static final class Builder {
        private String keyPrefix = "rl:";
        private Duration fenceTtl = Duration.ofDays(30);
        private @Nullable RedisURI uri;
        private boolean clusterSafeBatches;

        private Builder() {
        }

        /**
         * @param keyPrefix prepended to every key and channel; must not contain '{' or '}' (they
         *                  would change the Redis Cluster hash tag); may be empty
         * @return this builder
         */
        public Builder keyPrefix(String keyPrefix) {
            this.keyPrefix = RedisKeys.checkPrefix(keyPrefix);
            return this;
        }

        /**
         * How long a name's fencing counter outlives its last grant. Tokens stay monotonic even
         * after the counter expired (they never fall below the server's clock in microseconds);
         * the counter only guards against the server clock stepping back within this time.
         *
         * @param fenceTtl at least one second
         * @return this builder
         */
        public Builder fenceTtl(Duration fenceTtl) {
            Objects.requireNonNull(fenceTtl, "fenceTtl");
            if (fenceTtl.compareTo(Duration.ofSeconds(1)) < 0) {
                throw new IllegalArgumentException("fenceTtl must be at least 1 s, was " + fenceTtl);
            }
            this.fenceTtl = fenceTtl;
            return this;
        }

        /**
         * @param uri the server to connect to; {@code null} = the {@code RedisClient}'s own URI.
         *            With a URI, connections are opened fully asynchronously
         *            ({@code connectAsync}); without one, Lettuce only offers a blocking connect,
         *            which then runs once, lazily, on Reactor's bounded-elastic scheduler
         * @return this builder
         */
        public Builder uri(@Nullable RedisURI uri) {
            this.uri = uri;
            return this;
        }

        /**
         * How many script calls a renewal batch takes. Off (the default), the engine's whole batch
         * of due leases is renewed by one script call, which is right for a {@code RedisClient}'s
         * connection: one standalone server or a Sentinel-managed master. On, the batch is split
         * into one call per Redis Cluster hash slot (all calls sent at once), so that no script
         * touches keys of two slots: turn it on when the connection goes through a cluster-aware
         * proxy (Envoy, a Redis Enterprise endpoint) that rejects cross-slot scripts. A backend on a
         * {@code RedisClusterClient} always splits, whatever this says.
         *
         * @param clusterSafeBatches whether to group renewals by hash slot
         * @return this builder
         */
        public Builder clusterSafeBatches(boolean clusterSafeBatches) {
            this.clusterSafeBatches = clusterSafeBatches;
            return this;
        }

        /** @return the options */
        public RedisLockOptions build() {
            return new RedisLockOptions(this);
        }
    }
}
