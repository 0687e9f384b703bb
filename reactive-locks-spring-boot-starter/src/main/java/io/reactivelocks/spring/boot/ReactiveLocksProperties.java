package io.reactivelocks.spring.boot;

import io.reactivelocks.LockOptions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.validation.Errors;
import org.springframework.validation.Validator;

/**
 * The {@code reactive-locks.*} properties. They are checked when bound, so that a wrong value fails the application's
 * start with Spring Boot's failure analysis naming the property: a zero or negative duration, and values that do not
 * fit together (a renewal interval not shorter than the lease time).
 */
@ConfigurationProperties(ReactiveLocksProperties.PREFIX)
public class ReactiveLocksProperties implements Validator {

    /** The prefix of every property: {@value}. */
    public static final String PREFIX = "reactive-locks";

    /**
     * The default of {@code reactive-locks.wait-timeout}: 30 s, the library's own default
     * ({@code LockOptions.DEFAULT_WAIT_TIMEOUT}); an application started from this starter waits at most this long, so that a store outage or a lock held too
     * long fails requests instead of hanging them.
     */
    public static final Duration DEFAULT_WAIT_TIMEOUT = Duration.ofSeconds(30);

    /** Which store holds the locks: auto (the first of Redis, PostgreSQL, etcd, ZooKeeper that the application has a client for), redis, postgres, etcd or zookeeper. */
    private Backend backend = Backend.AUTO;

    /** TTL of each grant and renewal. */
    private Duration leaseTime = Duration.ofSeconds(30);

    /** How often held leases are renewed; must be shorter than the lease time. Default: a third of the lease time. */
    private @Nullable Duration renewalInterval;

    /**
     * How long acquire (and @Locked) waits for a held lock before failing with LockTimeoutException; -1 waits until
     * the caller cancels.
     */
    private Duration waitTimeout = DEFAULT_WAIT_TIMEOUT;

    /** The longest one store request may take. */
    private Duration requestTimeout = Duration.ofSeconds(5);

    /** How long closing the lock client (releasing its leases) may take when the application context closes. */
    private Duration shutdownTimeout = Duration.ofSeconds(10);

    /** Whether to record Micrometer meters when a MeterRegistry bean and reactive-locks-micrometer are present. */
    private boolean metricsEnabled = true;

    /** Whether to record Micrometer observations (spans) when an ObservationRegistry bean and reactive-locks-micrometer are present. */
    private boolean observationsEnabled = true;

    private final Redis redis = new Redis();

    private final Postgres postgres = new Postgres();

    private final MariaDb mariadb = new MariaDb();

    private final Etcd etcd = new Etcd();

    private final ZooKeeper zookeeper = new ZooKeeper();

    private final Health health = new Health();

    private final Annotations annotations = new Annotations();

    private final Web web = new Web();

    private final Dashboard dashboard = new Dashboard();

    /** The store that holds the locks. */
    public enum Backend {
        /**
         * The first store the application has a client for: the Lettuce {@code RedisClient} bean (or Spring Data's
         * {@code LettuceConnectionFactory}), the R2DBC {@code ConnectionFactory} bean, the jetcd {@code Client} bean
         * (or {@code reactive-locks.etcd.endpoints}), the Curator {@code CuratorFramework} bean (or
         * {@code reactive-locks.zookeeper.connect-string}).
         */
        AUTO,
        /** The Lettuce {@code RedisClient} bean. */
        REDIS,
        /** The R2DBC {@code ConnectionFactory} bean, which must be PostgreSQL. */
        POSTGRES,
        /** The R2DBC {@code ConnectionFactory} bean, which must be MariaDB (or MySQL). */
        MARIADB,
        /** The jetcd {@code Client} bean, or one made from {@code reactive-locks.etcd.*}. */
        ETCD,
        /** The Curator {@code CuratorFramework} bean, or one made from {@code reactive-locks.zookeeper.*}. */
        ZOOKEEPER
    }

    /** @return which store holds the locks */
    public Backend getBackend() {
        return backend;
    }

    /** @param backend which store holds the locks; {@code null} = {@link Backend#AUTO} */
    public void setBackend(@Nullable Backend backend) {
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
    public @Nullable Duration getRenewalInterval() {
        return renewalInterval;
    }

    /**
     * @param renewalInterval positive and shorter than the lease time, or {@code null} for a third of it
     * @throws IllegalArgumentException naming {@code reactive-locks.renewal-interval} when not positive
     */
    public void setRenewalInterval(@Nullable Duration renewalInterval) {
        this.renewalInterval = positive(renewalInterval, "renewal-interval", true);
    }

    /** @return how long acquire waits; negative to wait until cancelled */
    public Duration getWaitTimeout() {
        return waitTimeout;
    }

    /**
     * @param waitTimeout positive, or negative ({@code -1}) to wait until cancelled; {@code null} for the default, 30 s
     * @throws IllegalArgumentException naming {@code reactive-locks.wait-timeout} when zero
     */
    public void setWaitTimeout(@Nullable Duration waitTimeout) {
        if (waitTimeout != null && waitTimeout.isZero()) {
            throw new IllegalArgumentException(PREFIX + ".wait-timeout must be positive, or -1 to wait until cancelled, was "
                    + waitTimeout);
        }
        this.waitTimeout = waitTimeout == null ? DEFAULT_WAIT_TIMEOUT : waitTimeout;
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

    /** @return whether Micrometer observations are recorded when possible */
    public boolean isObservationsEnabled() {
        return observationsEnabled;
    }

    /** @param observationsEnabled whether Micrometer observations are recorded when possible */
    public void setObservationsEnabled(boolean observationsEnabled) {
        this.observationsEnabled = observationsEnabled;
    }

    /** @return the Redis settings, {@code reactive-locks.redis.*} */
    public Redis getRedis() {
        return redis;
    }

    /** @return the PostgreSQL settings, {@code reactive-locks.postgres.*} */
    public Postgres getPostgres() {
        return postgres;
    }

    /** @return the MariaDB settings, {@code reactive-locks.mariadb.*} */
    public MariaDb getMariadb() {
        return mariadb;
    }

    /** @return the etcd settings, {@code reactive-locks.etcd.*} */
    public Etcd getEtcd() {
        return etcd;
    }

    /** @return the ZooKeeper settings, {@code reactive-locks.zookeeper.*} */
    public ZooKeeper getZookeeper() {
        return zookeeper;
    }

    /** @return the health indicator's settings, {@code reactive-locks.health.*} */
    public Health getHealth() {
        return health;
    }

    /** @return the annotations' settings, {@code reactive-locks.annotations.*} */
    public Annotations getAnnotations() {
        return annotations;
    }

    /** @return the WebFlux settings, {@code reactive-locks.web.*} */
    public Web getWeb() {
        return web;
    }

    /** @return the dashboard's settings, {@code reactive-locks.dashboard.*} */
    public Dashboard getDashboard() {
        return dashboard;
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
                    .waitTimeout(waitTimeout.isNegative() ? null : waitTimeout)
                    .requestTimeout(requestTimeout)
                    .build();
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("Invalid " + PREFIX + ".* properties (lease-time " + leaseTime
                    + ", renewal-interval " + renewalInterval + "): " + e.getMessage(), e);
        }
    }

    /** Checks what the binding of each property cannot: values that must fit together. */
    @Override
    public boolean supports(Class<?> type) {
        return ReactiveLocksProperties.class.isAssignableFrom(type);
    }

    /**
     * Rejects a renewal interval not shorter than the lease time, and a lease time the drift allowance leaves no
     * renewal time in, as errors on {@code reactive-locks.renewal-interval} / {@code reactive-locks.lease-time} that
     * name both properties.
     */
    @Override
    public void validate(Object target, Errors errors) {
        ReactiveLocksProperties p = (ReactiveLocksProperties) target;
        if (p.renewalInterval != null && p.renewalInterval.compareTo(p.leaseTime) >= 0) {
            errors.rejectValue("renewalInterval", "renewalIntervalNotShorterThanLeaseTime",
                    PREFIX + ".renewal-interval (" + DurationWords.of(p.renewalInterval) + ") must be shorter than "
                            + PREFIX + ".lease-time (" + DurationWords.of(p.leaseTime) + ")");
            return;
        }
        try {
            p.toLockOptions();
        } catch (IllegalArgumentException e) {
            errors.rejectValue("leaseTime", "leaseTimeTooShort", PREFIX + ".lease-time " + DurationWords.of(p.leaseTime)
                    + " does not fit " + PREFIX + ".renewal-interval "
                    + (p.renewalInterval == null ? "(a third of it)" : DurationWords.of(p.renewalInterval))
                    + ": " + (e.getCause() != null ? e.getCause().getMessage() : e.getMessage()));
        }
    }

    private static @Nullable Duration positive(@Nullable Duration value, String property, boolean nullable) {
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
        private @Nullable String keyPrefix;

        /** @return the key prefix, or {@code null} for the backend's default */
        public @Nullable String getKeyPrefix() {
            return keyPrefix;
        }

        /** @param keyPrefix the key prefix, or {@code null} for the backend's default */
        public void setKeyPrefix(@Nullable String keyPrefix) {
            this.keyPrefix = keyPrefix;
        }
    }

    /** PostgreSQL settings, {@code reactive-locks.postgres.*}. */
    public static class Postgres {

        /** Schema of the lock tables (created on first use unless schema-mode says otherwise). */
        private String schema = "public";

        /** Name of the lock table. */
        private String table = "reactive_locks";

        /**
         * What the store does about its tables, indexes and functions: create the missing ones on first use (create),
         * create nothing and fail the application at startup naming each missing object (validate: for a database
         * role without the CREATE privilege, with the schema made from docs/ddl/postgresql.sql), or nothing (none).
         */
        private SchemaMode schemaMode = SchemaMode.CREATE;

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

        /** @return what the store does about its schema */
        public SchemaMode getSchemaMode() {
            return schemaMode;
        }

        /**
         * @param schemaMode what the store does about its schema: create, validate or none
         * @throws NullPointerException when {@code schemaMode} is null (the message names the property)
         */
        public void setSchemaMode(SchemaMode schemaMode) {
            this.schemaMode = Objects.requireNonNull(schemaMode, "reactive-locks.postgres.schema-mode");
        }

        /** What the PostgreSQL store does about its schema, {@code reactive-locks.postgres.schema-mode}. */
        public enum SchemaMode {
            /** Create the missing tables, indexes and functions on first use (the default; needs CREATE while something is missing). */
            CREATE,
            /** Create nothing; fail the application at startup, naming each missing object. */
            VALIDATE,
            /** Create nothing, check nothing. */
            NONE
        }
    }

    /** MariaDB (and MySQL) settings, {@code reactive-locks.mariadb.*}. */
    public static class MariaDb {

        /** Database of the lock tables; unset: the connection's own. */
        private @Nullable String database;

        /** Name of the lock table. */
        private String table = "reactive_locks";

        /** What the store does about its tables: create the missing ones on first use, validate them, or nothing. */
        private Postgres.SchemaMode schemaMode = Postgres.SchemaMode.CREATE;

        /** @return the database, or {@code null} for the connection's own */
        public @Nullable String getDatabase() {
            return database;
        }

        /** @param database the database, a plain SQL identifier, or {@code null} for the connection's own */
        public void setDatabase(@Nullable String database) {
            this.database = database;
        }

        /** @return the lock table */
        public String getTable() {
            return table;
        }

        /** @param table the lock table, a plain SQL identifier */
        public void setTable(String table) {
            this.table = table;
        }

        /** @return what the store does about its schema */
        public Postgres.SchemaMode getSchemaMode() {
            return schemaMode;
        }

        /**
         * @param schemaMode what the store does about its schema: create, validate or none
         * @throws NullPointerException when {@code schemaMode} is null (the message names the property)
         */
        public void setSchemaMode(Postgres.SchemaMode schemaMode) {
            this.schemaMode = Objects.requireNonNull(schemaMode, "reactive-locks.mariadb.schema-mode");
        }
    }

    /**
     * etcd settings, {@code reactive-locks.etcd.*}. The endpoints (and user, password, connect timeout) are used only
     * when the application has no jetcd {@code Client} bean: the starter then makes one, and closes it with the context.
     */
    public static class Etcd {

        /** Client URLs of the etcd members (http://host:2379), used when the application has no jetcd Client bean. */
        private List<String> endpoints = new ArrayList<>();

        /** Prefix of every key the locks write. Default: reactive-locks */
        private @Nullable String prefix;

        /** TTL of the session lease that keeps this client's locks alive (whole seconds, at least 1 s). Default: the lease time. */
        private @Nullable Duration sessionTtl;

        /** How long opening a connection to etcd may take (the starter's own client only). */
        private Duration connectTimeout = Duration.ofSeconds(5);

        /** User name for etcd authentication (the starter's own client only). */
        private @Nullable String user;

        /** Password for etcd authentication (the starter's own client only). */
        private @Nullable String password;

        /** @return the client URLs; empty when the application's jetcd client is used */
        public List<String> getEndpoints() {
            return endpoints;
        }

        /** @param endpoints the client URLs, {@code http://host:2379} */
        public void setEndpoints(List<String> endpoints) {
            this.endpoints = endpoints == null ? new ArrayList<>() : new ArrayList<>(endpoints);
        }

        /** @return the key prefix, or {@code null} for the backend's default */
        public @Nullable String getPrefix() {
            return prefix;
        }

        /** @param prefix the key prefix, or {@code null} for the backend's default */
        public void setPrefix(@Nullable String prefix) {
            this.prefix = prefix;
        }

        /** @return the session TTL, or {@code null} for the lease time */
        public @Nullable Duration getSessionTtl() {
            return sessionTtl;
        }

        /**
         * @param sessionTtl at least 1 s, or {@code null} for the lease time
         * @throws IllegalArgumentException naming {@code reactive-locks.etcd.session-ttl} when under 1 s
         */
        public void setSessionTtl(@Nullable Duration sessionTtl) {
            if (sessionTtl != null && sessionTtl.compareTo(Duration.ofSeconds(1)) < 0) {
                throw new IllegalArgumentException(PREFIX + ".etcd.session-ttl must be at least 1s, was " + sessionTtl);
            }
            this.sessionTtl = sessionTtl;
        }

        /** @return how long opening a connection may take */
        public Duration getConnectTimeout() {
            return connectTimeout;
        }

        /**
         * @param connectTimeout positive
         * @throws IllegalArgumentException naming {@code reactive-locks.etcd.connect-timeout} when not positive
         */
        public void setConnectTimeout(Duration connectTimeout) {
            this.connectTimeout = positive(connectTimeout, "etcd.connect-timeout", false);
        }

        /** @return the user name, or {@code null} without authentication */
        public @Nullable String getUser() {
            return user;
        }

        /** @param user the user name, or {@code null} without authentication */
        public void setUser(@Nullable String user) {
            this.user = user;
        }

        /** @return the password, or {@code null} */
        public @Nullable String getPassword() {
            return password;
        }

        /** @param password the password, or {@code null} */
        public void setPassword(@Nullable String password) {
            this.password = password;
        }
    }

    /**
     * ZooKeeper settings, {@code reactive-locks.zookeeper.*}. The connect string and timeouts are used only when the
     * application has no Curator {@code CuratorFramework} bean: the starter then makes one, and closes it with the
     * context.
     */
    public static class ZooKeeper {

        /** Servers to connect to (host:port,host:port[/chroot]), used when the application has no CuratorFramework bean. */
        private @Nullable String connectString;

        /** Path under which every lock node lives. Default: /reactive-locks */
        private @Nullable String root;

        /** Session timeout asked of ZooKeeper: a lease lives as long as the session. Default: the lease time. */
        private @Nullable Duration sessionTimeout;

        /** How long connecting to ZooKeeper may take (the starter's own client only). */
        private Duration connectionTimeout = Duration.ofSeconds(5);

        /** @return the connect string; {@code null} when the application's Curator client is used */
        public @Nullable String getConnectString() {
            return connectString;
        }

        /** @param connectString {@code host:port[,host:port][/chroot]} */
        public void setConnectString(String connectString) {
            this.connectString = connectString;
        }

        /** @return the root path, or {@code null} for the backend's default */
        public @Nullable String getRoot() {
            return root;
        }

        /** @param root the root path, or {@code null} for the backend's default */
        public void setRoot(@Nullable String root) {
            this.root = root;
        }

        /** @return the session timeout, or {@code null} for the lease time */
        public @Nullable Duration getSessionTimeout() {
            return sessionTimeout;
        }

        /**
         * @param sessionTimeout positive, or {@code null} for the lease time
         * @throws IllegalArgumentException naming {@code reactive-locks.zookeeper.session-timeout} when not positive
         */
        public void setSessionTimeout(@Nullable Duration sessionTimeout) {
            this.sessionTimeout = positive(sessionTimeout, "zookeeper.session-timeout", true);
        }

        /** @return how long connecting may take */
        public Duration getConnectionTimeout() {
            return connectionTimeout;
        }

        /**
         * @param connectionTimeout positive
         * @throws IllegalArgumentException naming {@code reactive-locks.zookeeper.connection-timeout} when not positive
         */
        public void setConnectionTimeout(Duration connectionTimeout) {
            this.connectionTimeout = positive(connectionTimeout, "zookeeper.connection-timeout", false);
        }
    }

    /** Settings of {@code @Locked} and {@code @ScheduledLock}, {@code reactive-locks.annotations.*}. */
    public static class Annotations {

        /** Whether @Locked and @ScheduledLock methods of the application's beans run under their locks (reactive-locks-spring on the classpath). */
        private boolean enabled = true;

        /** @return whether the annotations are switched on */
        public boolean isEnabled() {
            return enabled;
        }

        /** @param enabled whether the annotations are switched on */
        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }
    }

    /** Settings of WebFlux applications, {@code reactive-locks.web.*}. */
    public static class Web {

        /** Whether a request that failed because of its lock (store unreachable, wait timeout spent, lease lost, client closing) is answered 503 Service Unavailable rather than 500. */
        private boolean serviceUnavailable = true;

        /** @return whether lock failures are answered 503 */
        public boolean isServiceUnavailable() {
            return serviceUnavailable;
        }

        /** @param serviceUnavailable whether lock failures are answered 503 */
        public void setServiceUnavailable(boolean serviceUnavailable) {
            this.serviceUnavailable = serviceUnavailable;
        }
    }

    /** The live lock dashboard of WebFlux applications, {@code reactive-locks.dashboard.*}. */
    public static class Dashboard {

        /** Whether the dashboard is served under the actuator base path ({@code /actuator/reactivelocks/dashboard}): off by default, it shows every lock name of the store. */
        private boolean enabled;

        /** Whether the dashboard offers force-release buttons (and accepts force-release requests). */
        private boolean writeOperations;

        /** @return whether the dashboard is served */
        public boolean isEnabled() {
            return enabled;
        }

        /** @param enabled whether the dashboard is served */
        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }

        /** @return whether force-release is offered */
        public boolean isWriteOperations() {
            return writeOperations;
        }

        /** @param writeOperations whether force-release is offered */
        public void setWriteOperations(boolean writeOperations) {
            this.writeOperations = writeOperations;
        }
    }

    /** Health indicator settings, {@code reactive-locks.health.*}. */
    public static class Health {

        /** Lock name the health check inspects (read only: nothing is written to the store). */
        private String probeName = "reactive-locks-health-probe";

        /** How long the health check's read of the store may take before the store counts as down. */
        private Duration timeout = Duration.ofSeconds(2);

        /** @return the probed lock name */
        public String getProbeName() {
            return probeName;
        }

        /** @param probeName the probed lock name; not empty */
        public void setProbeName(String probeName) {
            if (probeName == null || probeName.isEmpty()) {
                throw new IllegalArgumentException(PREFIX + ".health.probe-name must not be empty");
            }
            this.probeName = probeName;
        }

        /** @return how long the probe may take */
        public Duration getTimeout() {
            return timeout;
        }

        /**
         * @param timeout positive
         * @throws IllegalArgumentException naming {@code reactive-locks.health.timeout} when not positive
         */
        public void setTimeout(Duration timeout) {
            this.timeout = positive(timeout, "health.timeout", false);
        }
    }
}
