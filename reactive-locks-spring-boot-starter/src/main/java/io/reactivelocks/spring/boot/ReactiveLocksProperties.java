package io.reactivelocks.spring.boot;

import io.reactivelocks.LockOptions;
import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The {@code reactive-locks.*} properties. Durations are checked when bound: a zero or negative value fails the
 * application's start with a message naming the property.
 */
@ConfigurationProperties(ReactiveLocksProperties.PREFIX)
public class ReactiveLocksProperties {

    /** The prefix of every property: {@value}. */
    public static final String PREFIX = "reactive-locks";

    /** Which store holds the locks: auto (the Redis client bean if there is one, else the R2DBC connection factory), redis or postgres. */
    private Backend backend = Backend.AUTO;

    /** TTL of each grant and renewal. */
    private Duration leaseTime = Duration.ofSeconds(30);

    /** How often held leases are renewed; must be shorter than the lease time. Default: a third of the lease time. */
    private Duration renewalInterval;

    /** How long acquire waits for a held lock before failing with LockTimeoutException. Default: until cancelled. */
    private Duration waitTimeout;

    /** The longest one store request may take. */
    private Duration requestTimeout = Duration.ofSeconds(5);

    /** How long closing the lock client (releasing its leases) may take when the application context closes. */
    private Duration shutdownTimeout = Duration.ofSeconds(10);

    /** Whether to record Micrometer meters when a MeterRegistry bean and reactive-locks-micrometer are present. */
    private boolean metricsEnabled = true;

    private final Redis redis = new Redis();

    private final Postgres postgres = new Postgres();

    /** The store that holds the locks. */
    public enum Backend {
        /** The Lettuce {@code RedisClient} bean if there is one, else the R2DBC {@code ConnectionFactory} bean. */
        AUTO,
        /** The Lettuce {@code RedisClient} bean. */
        REDIS,
        /** The R2DBC {@code ConnectionFactory} bean, which must be PostgreSQL. */
        POSTGRES
    }

    /** @return which store holds the locks */
    public Backend getBackend() {
        return backend;
    }

    /** @param backend which store holds the locks; {@code null} = {@link Backend#AUTO} */
    public void setBackend(Backend backend) {
        this.backend = backend == null ? Backend.AUTO : backend;
    }

    /** @return the TTL of each grant and renewal */
    public Duration getLeaseTime() {
        return leaseTime;
    }

    /**
     * @param leaseTime the TTL of each grant and renewal; positive
     * @throws IllegalArgumentException naming {@code reactive-locks.lease-time} when not positive
     */
    public void setLeaseTime(Duration leaseTime) {
        this.leaseTime = positive(leaseTime, "lease-time", false);
    }

    /** @return the renewal interval, or {@code null} for a third of the lease time */
    public Duration getRenewalInterval() {
        return renewalInterval;
    }

    /**
     * @param renewalInterval positive and shorter than the lease time, or {@code null} for a third of it
     * @throws IllegalArgumentException naming {@code reactive-locks.renewal-interval} when not positive
     */
    public void setRenewalInterval(Duration renewalInterval) {
        this.renewalInterval = positive(renewalInterval, "renewal-interval", true);
    }

    /** @return how long acquire waits, or {@code null} to wait until cancelled */
    public Duration getWaitTimeout() {
        return waitTimeout;
    }

    /**
     * @param waitTimeout positive, or {@code null} to wait until cancelled
     * @throws IllegalArgumentException naming {@code reactive-locks.wait-timeout} when not positive
     */
    public void setWaitTimeout(Duration waitTimeout) {
        this.waitTimeout = positive(waitTimeout, "wait-timeout", true);
    }

    /** @return the longest one store request may take */
    public Duration getRequestTimeout() {
        return requestTimeout;
    }

    /**
     * @param requestTimeout positive
     * @throws IllegalArgumentException naming {@code reactive-locks.request-timeout} when not positive
     */
    public void setRequestTimeout(Duration requestTimeout) {
        this.requestTimeout = positive(requestTimeout, "request-timeout", false);
    }

    /** @return how long closing the client may take at shutdown */
    public Duration getShutdownTimeout() {
        return shutdownTimeout;
    }

    /**
     * @param shutdownTimeout positive
     * @throws IllegalArgumentException naming {@code reactive-locks.shutdown-timeout} when not positive
     */
    public void setShutdownTimeout(Duration shutdownTimeout) {
        this.shutdownTimeout = positive(shutdownTimeout, "shutdown-timeout", false);
    }

    /** @return whether Micrometer meters are recorded when possible */
    public boolean isMetricsEnabled() {
        return metricsEnabled;
    }

    /** @param metricsEnabled whether Micrometer meters are recorded when possible */
    public void setMetricsEnabled(boolean metricsEnabled) {
        this.metricsEnabled = metricsEnabled;
    }

    /** @return the Redis settings, {@code reactive-locks.redis.*} */
    public Redis getRedis() {
        return redis;
    }

    /** @return the PostgreSQL settings, {@code reactive-locks.postgres.*} */
    public Postgres getPostgres() {
        return postgres;
    }

    /**
     * @return the lock client's default options from these properties
     * @throws IllegalArgumentException naming the properties when they do not fit together (for example a renewal
     *         interval not shorter than the lease time)
     */
    public LockOptions toLockOptions() {
        try {
            return LockOptions.builder()
                    .leaseTime(leaseTime)
                    .renewalInterval(renewalInterval)
                    .waitTimeout(waitTimeout)
                    .requestTimeout(requestTimeout)
                    .build();
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("Invalid " + PREFIX + ".* properties (lease-time " + leaseTime
                    + ", renewal-interval " + renewalInterval + "): " + e.getMessage(), e);
        }
    }

    private static Duration positive(Duration value, String property, boolean nullable) {
        if (value == null) {
            if (nullable) {
                return null;
            }
            throw new IllegalArgumentException(PREFIX + "." + property + " must be set");
        }
        if (value.isZero() || value.isNegative()) {
            throw new IllegalArgumentException(PREFIX + "." + property + " must be positive, was " + value);
        }
        return value;
    }

    /** Redis settings, {@code reactive-locks.redis.*}. */
    public static class Redis {

        /** Prefix of every key the locks write (lock keys, fencing counters, pub/sub channels). Default: rl: */
        private String keyPrefix;

        /** @return the key prefix, or {@code null} for the backend's default */
        public String getKeyPrefix() {
            return keyPrefix;
        }

        /** @param keyPrefix the key prefix, or {@code null} for the backend's default */
        public void setKeyPrefix(String keyPrefix) {
            this.keyPrefix = keyPrefix;
        }
    }

    /** PostgreSQL settings, {@code reactive-locks.postgres.*}. */
    public static class Postgres {

        /** Schema of the lock tables (created on first use). */
        private String schema = "public";

        /** Name of the lock table. */
        private String table = "reactive_locks";

        /** @return the schema */
        public String getSchema() {
            return schema;
        }

        /** @param schema the schema, a plain SQL identifier */
        public void setSchema(String schema) {
            this.schema = schema;
        }

        /** @return the lock table */
        public String getTable() {
            return table;
        }

        /** @param table the lock table, a plain SQL identifier */
        public void setTable(String table) {
            this.table = table;
        }
    }
}
