package io.reactivelocks.r2dbc.postgresql;

import io.r2dbc.spi.ConnectionFactory;
import io.reactivelocks.r2dbc.SchemaMode;
import io.reactivelocks.r2dbc.internal.OptionChecks;
import java.time.Duration;
import java.util.Objects;
import org.jspecify.annotations.Nullable;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * Immutable options of the PostgreSQL backend: where the tables live, the notification channel,
 * the schema mode (create, validate or leave the tables alone), the backend's own pool and its listening connection. Build with
 * {@link #builder()} or change a copy with {@link #mutate()}; every setter checks its value at
 * call time and names the argument in its exception.
 *
 * <p>Schema, table, sequence and channel names must be plain SQL identifiers
 * ({@code [a-zA-Z_][a-zA-Z0-9_]{0,62}}); they are written double-quoted (so case-sensitive) into
 * the SQL, the only text that is not a bind parameter.
 *
 * <p>Defaults: schema {@code public}, table {@code reactive_locks}, sequence
 * {@code reactive_locks_token_seq}, window table {@code reactive_lock_windows}, task table
 * {@code reactive_lock_tasks} (see {@link PostgresTaskQueue}), channel {@code reactive_locks},
 * schema created on first use ({@link SchemaMode#CREATE}), an owned pool of at most 10 connections
 * (only when the factory is not already a pool), connect timeout 10 s, listener reconnect backoff 50 ms to 2 s,
 * listener health check every 10 s with a 5 s timeout, timers on {@link Schedulers#parallel()}.
 */
public final class PostgresLockOptions {

    private static final PostgresLockOptions DEFAULTS = builder().build();

    private final String schema;
    private final String table;
    private final String sequence;
    private final String windowTable;
    private final String taskTable;
    private final String channel;
    private final SchemaMode schemaMode;
    private final int poolMaxSize;
    private final Duration connectTimeout;
    private final @Nullable ConnectionFactory listenerConnectionFactory;
    private final Duration reconnectMinBackoff;
    private final Duration reconnectMaxBackoff;
    private final Duration healthCheckInterval;
    private final Duration healthCheckTimeout;
    private final Scheduler scheduler;

    private PostgresLockOptions(Builder b) {
        this.schema = b.schema;
        this.table = b.table;
        this.sequence = b.sequence;
        this.windowTable = b.windowTable;
        this.taskTable = b.taskTable;
        this.channel = b.channel;
        this.schemaMode = b.schemaMode;
        this.poolMaxSize = b.poolMaxSize;
        this.connectTimeout = b.connectTimeout;
        this.listenerConnectionFactory = b.listenerConnectionFactory;
        this.reconnectMinBackoff = b.reconnectMinBackoff;
        this.reconnectMaxBackoff = b.reconnectMaxBackoff;
        this.healthCheckInterval = b.healthCheckInterval;
        this.healthCheckTimeout = b.healthCheckTimeout;
        this.scheduler = b.scheduler;
    }

    /** @return the defaults described in the class documentation */
    public static PostgresLockOptions defaults() {
        return DEFAULTS;
    }

    /** @return a builder holding the defaults */
    public static Builder builder() {
        return new Builder();
    }

    /** @return a builder holding these options */
    public Builder mutate() {
        Builder b = new Builder();
        b.schema = schema;
        b.table = table;
        b.sequence = sequence;
        b.windowTable = windowTable;
        b.taskTable = taskTable;
        b.channel = channel;
        b.schemaMode = schemaMode;
        b.poolMaxSize = poolMaxSize;
        b.connectTimeout = connectTimeout;
        b.listenerConnectionFactory = listenerConnectionFactory;
        b.reconnectMinBackoff = reconnectMinBackoff;
        b.reconnectMaxBackoff = reconnectMaxBackoff;
        b.healthCheckInterval = healthCheckInterval;
        b.healthCheckTimeout = healthCheckTimeout;
        b.scheduler = scheduler;
        return b;
    }

    /** @return the schema of the tables and the sequence */
    public String schema() {
        return schema;
    }

    /** @return the lock table */
    public String table() {
        return table;
    }

    /** @return the fencing-token sequence */
    public String sequence() {
        return sequence;
    }

    /** @return the window-lock table */
    public String windowTable() {
        return windowTable;
    }

    /** @return the task table of {@link PostgresTaskQueue} */
    public String taskTable() {
        return taskTable;
    }

    /** @return the LISTEN/NOTIFY channel */
    public String channel() {
        return channel;
    }

    /** @return what the first operation of each concept does about its tables and functions: create, validate or nothing */
    public SchemaMode schemaMode() {
        return schemaMode;
    }

    /** @return whether the first operation creates missing tables (as {@code migrate()} would): {@link #schemaMode()} is {@link SchemaMode#CREATE} */
    public boolean createSchemaOnFirstUse() {
        return schemaMode == SchemaMode.CREATE;
    }

    /** @return the size of the pool the backend creates when the factory given is not a pool */
    public int poolMaxSize() {
        return poolMaxSize;
    }

    /**
     * @return how long opening a connection (TCP, TLS, authentication) may take: bounds the
     *         listening connection's attempts and the owned pool's connection creation
     */
    public Duration connectTimeout() {
        return connectTimeout;
    }

    /** @return the factory of the listening connection, or {@code null} to derive it from the main factory */
    public @Nullable ConnectionFactory listenerConnectionFactory() {
        return listenerConnectionFactory;
    }

    /** @return the first delay before reconnecting a lost listening connection */
    public Duration reconnectMinBackoff() {
        return reconnectMinBackoff;
    }

    /** @return the longest delay between reconnection attempts */
    public Duration reconnectMaxBackoff() {
        return reconnectMaxBackoff;
    }

    /** @return how often the listening connection is checked with {@code SELECT 1} */
    public Duration healthCheckInterval() {
        return healthCheckInterval;
    }

    /** @return how long a health check may take before the connection is considered lost */
    public Duration healthCheckTimeout() {
        return healthCheckTimeout;
    }

    /** @return the scheduler of the backend's timers (reconnect backoff, health checks) */
    public Scheduler scheduler() {
        return scheduler;
    }

    @Override
    public String toString() {
        return "PostgresLockOptions{schema=" + schema + ", table=" + table + ", sequence=" + sequence
                + ", windowTable=" + windowTable + ", taskTable=" + taskTable + ", channel=" + channel + ", schemaMode="
                + schemaMode + ", poolMaxSize=" + poolMaxSize + "}";
    }

    /** Mutable builder of {@link PostgresLockOptions}; not thread-safe. */
    public static final class Builder {
        private String schema = "public";
        private String table = "reactive_locks";
        private String sequence = "reactive_locks_token_seq";
        private String windowTable = "reactive_lock_windows";
        private String taskTable = "reactive_lock_tasks";
        private String channel = "reactive_locks";
        private SchemaMode schemaMode = SchemaMode.CREATE;
        private int poolMaxSize = 10;
        private Duration connectTimeout = Duration.ofSeconds(10);
        private @Nullable ConnectionFactory listenerConnectionFactory;
        private Duration reconnectMinBackoff = Duration.ofMillis(50);
        private Duration reconnectMaxBackoff = Duration.ofSeconds(2);
        private Duration healthCheckInterval = Duration.ofSeconds(10);
        private Duration healthCheckTimeout = Duration.ofSeconds(5);
        private Scheduler scheduler = Schedulers.parallel();

        private Builder() {
        }

        /**
         * @param schema the schema of the tables and the sequence; an SQL identifier
         * @return this builder
         */
        public Builder schema(String schema) {
            this.schema = SqlIdentifiers.check(schema, "schema");
            return this;
        }

        /**
         * @param table the lock table; an SQL identifier
         * @return this builder
         */
        public Builder table(String table) {
            this.table = SqlIdentifiers.check(table, "table");
            return this;
        }

        /**
         * @param sequence the fencing-token sequence; an SQL identifier. Several tables may share one.
         * @return this builder
         */
        public Builder sequence(String sequence) {
            this.sequence = SqlIdentifiers.check(sequence, "sequence");
            return this;
        }

        /**
         * @param windowTable the window-lock table; an SQL identifier
         * @return this builder
         */
        public Builder windowTable(String windowTable) {
            this.windowTable = SqlIdentifiers.check(windowTable, "windowTable");
            return this;
        }

        /**
         * @param taskTable the task table of {@link PostgresTaskQueue}; an SQL identifier. It is created
         *                  by {@link PostgresTaskQueue#migrate()} (or on first use), not by the lock backend's
         *                  {@code migrate()}.
         * @return this builder
         */
        public Builder taskTable(String taskTable) {
            this.taskTable = SqlIdentifiers.check(taskTable, "taskTable");
            return this;
        }

        /**
         * @param channel the LISTEN/NOTIFY channel; an SQL identifier. Give each lock table its own.
         * @return this builder
         */
        public Builder channel(String channel) {
            this.channel = SqlIdentifiers.check(channel, "channel");
            return this;
        }

        /**
         * Shorthand for {@link #schemaMode(SchemaMode)}: {@code true} is {@link SchemaMode#CREATE},
         * {@code false} {@link SchemaMode#NONE}.
         *
         * @param create {@code true}: the first operation creates missing tables (checking first, so
         *               a role without DDL rights works once they exist); {@code false}: call
         *               {@code migrate()} yourself (or apply {@code docs/ddl/postgresql.sql})
         * @return this builder
         */
        public Builder createSchemaOnFirstUse(boolean create) {
            this.schemaMode = create ? SchemaMode.CREATE : SchemaMode.NONE;
            return this;
        }

        /**
         * @param mode what the first operation of each concept does about its tables, indexes and
         *             functions: {@link SchemaMode#CREATE} the missing ones (default),
         *             {@link SchemaMode#VALIDATE} that none is missing (creating nothing), or
         *             {@link SchemaMode#NONE}
         * @return this builder
         * @throws NullPointerException when {@code mode} is null (the message names {@code schemaMode})
         */
        public Builder schemaMode(SchemaMode mode) {
            this.schemaMode = Objects.requireNonNull(mode, "schemaMode");
            return this;
        }

        /**
         * @param size the most connections of the pool the backend creates when handed a factory
         *             that is not an r2dbc-pool {@code ConnectionPool}; at least 1
         * @return this builder
         */
        public Builder poolMaxSize(int size) {
            this.poolMaxSize = OptionChecks.poolMaxSize(size);
            return this;
        }

        /**
         * @param timeout how long opening a connection (TCP, TLS, authentication) may take before
         *                it counts as a transient failure; positive. Bounds the listening
         *                connection's attempts and the owned pool's connection creation (a server
         *                that accepts TCP but never answers would otherwise hold them forever).
         * @return this builder
         */
        public Builder connectTimeout(Duration timeout) {
            this.connectTimeout = OptionChecks.positive(timeout, "connectTimeout");
            return this;
        }

        /**
         * @param factory the factory of the one listening connection (LISTEN/NOTIFY), which must
         *                not be pooled; {@code null} (default) unwraps the main factory's pool
         * @return this builder
         */
        public Builder listenerConnectionFactory(@Nullable ConnectionFactory factory) {
            this.listenerConnectionFactory = factory;
            return this;
        }

        /**
         * @param min the first delay before reconnecting the listening connection; positive
         * @param max the longest delay; at least {@code min}
         * @return this builder
         */
        public Builder reconnectBackoff(Duration min, Duration max) {
            OptionChecks.positive(min, "reconnectBackoff.min");
            OptionChecks.positive(max, "reconnectBackoff.max");
            if (max.compareTo(min) < 0) {
                throw new IllegalArgumentException("reconnectBackoff.max must be at least reconnectBackoff.min");
            }
            this.reconnectMinBackoff = min;
            this.reconnectMaxBackoff = max;
            return this;
        }

        /**
         * @param interval how often to check the listening connection; positive
         * @param timeout  how long a check may take; positive
         * @return this builder
         */
        public Builder healthCheck(Duration interval, Duration timeout) {
            this.healthCheckInterval = OptionChecks.positive(interval, "healthCheck.interval");
            this.healthCheckTimeout = OptionChecks.positive(timeout, "healthCheck.timeout");
            return this;
        }

        /**
         * @param scheduler runs the backend's timers; it must support timed tasks
         * @return this builder
         */
        public Builder scheduler(Scheduler scheduler) {
            this.scheduler = Objects.requireNonNull(scheduler, "scheduler");
            return this;
        }

        /**
         * @return the options
         * @throws IllegalArgumentException when two of the lock, window and task tables have the same name
         */
        public PostgresLockOptions build() {
            if (table.equals(windowTable)) {
                throw new IllegalArgumentException("table and windowTable must differ, both were '" + table + "'");
            }
            if (taskTable.equals(table) || taskTable.equals(windowTable)) {
                throw new IllegalArgumentException("taskTable must differ from table and windowTable, was '" + taskTable + "'");
            }
            return new PostgresLockOptions(this);
        }
    }
}
