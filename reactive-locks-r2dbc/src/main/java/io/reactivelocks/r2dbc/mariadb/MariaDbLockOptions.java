package io.reactivelocks.r2dbc.mariadb;

import io.reactivelocks.r2dbc.SchemaMode;
import io.reactivelocks.r2dbc.internal.OptionChecks;
import java.time.Duration;
import java.util.Objects;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * Settings of the MariaDB store: where its objects live, what it does about them on first use, its
 * pool, and how often it polls the names its waiters wait for. Immutable; {@link #builder()},
 * {@link #mutate()}. Timing of the locks themselves (lease, renewal, waiting) lives in
 * {@link io.reactivelocks.LockOptions}.
 *
 * <p>Defaults: the connection's database, table {@code reactive_locks}, sequence
 * {@code reactive_locks_token_seq}, {@link SchemaMode#CREATE}, a pool of at most 10 connections,
 * a connect timeout of 10 s, a poll interval of 250 ms, {@link Schedulers#parallel()}.
 */
public final class MariaDbLockOptions {

    private static final Pattern IDENTIFIER = Pattern.compile("[A-Za-z_][A-Za-z0-9_]{0,63}");
    private static final MariaDbLockOptions DEFAULTS = builder().build();

    private final @Nullable String database;
    private final String table;
    private final String sequence;
    private final SchemaMode schemaMode;
    private final int poolMaxSize;
    private final Duration connectTimeout;
    private final Duration pollInterval;
    private final Scheduler scheduler;

    private MariaDbLockOptions(Builder b) {
        this.database = b.database;
        this.table = b.table;
        this.sequence = b.sequence;
        this.schemaMode = b.schemaMode;
        this.poolMaxSize = b.poolMaxSize;
        this.connectTimeout = b.connectTimeout;
        this.pollInterval = b.pollInterval;
        this.scheduler = b.scheduler;
    }

    /** @return the default options */
    public static MariaDbLockOptions defaults() {
        return DEFAULTS;
    }

    /** @return a builder with the defaults */
    public static Builder builder() {
        return new Builder();
    }

    /** @return a builder with these options, to change some */
    public Builder mutate() {
        Builder b = new Builder();
        b.database = database;
        b.table = table;
        b.sequence = sequence;
        b.schemaMode = schemaMode;
        b.poolMaxSize = poolMaxSize;
        b.connectTimeout = connectTimeout;
        b.pollInterval = pollInterval;
        b.scheduler = scheduler;
        return b;
    }

    /** @return the database (MariaDB's schema) of the store's objects, or {@code null} for the connection's own */
    public @Nullable String database() {
        return database;
    }

    /** @return the lock table's name */
    public String table() {
        return table;
    }

    /** @return the fencing-token sequence's name */
    public String sequence() {
        return sequence;
    }

    /** @return what the store does about missing objects before a concept's first operation */
    public SchemaMode schemaMode() {
        return schemaMode;
    }

    /** @return the size of the pool the store creates when given a plain connection factory */
    public int poolMaxSize() {
        return poolMaxSize;
    }

    /** @return how long opening one connection of the store's own pool may take */
    public Duration connectTimeout() {
        return connectTimeout;
    }

    /** @return how often a backend reads the state of the names its waiters and observers wait for */
    public Duration pollInterval() {
        return pollInterval;
    }

    /** @return the scheduler of the store's timers (the poller, bounded clean-ups) */
    public Scheduler scheduler() {
        return scheduler;
    }

    @Override
    public String toString() {
        return "MariaDbLockOptions{database=" + database + ", table=" + table + ", sequence=" + sequence
                + ", schemaMode=" + schemaMode + ", poolMaxSize=" + poolMaxSize + ", pollInterval=" + pollInterval + "}";
    }

    /** Builds {@link MariaDbLockOptions}; every setter checks its argument at once. */
    public static final class Builder {
        private @Nullable String database;
        private String table = "reactive_locks";
        private String sequence = "reactive_locks_token_seq";
        private SchemaMode schemaMode = SchemaMode.CREATE;
        private int poolMaxSize = 10;
        private Duration connectTimeout = Duration.ofSeconds(10);
        private Duration pollInterval = Duration.ofMillis(250);
        private Scheduler scheduler = Schedulers.parallel();

        private Builder() {
        }

        /**
         * @param database the database of the store's objects ({@code [A-Za-z_][A-Za-z0-9_]{0,63}}), or
         *                 {@code null} for the connection's own
         * @return this builder
         * @throws IllegalArgumentException when it is not such an identifier
         */
        public Builder database(@Nullable String database) {
            this.database = database == null ? null : identifier(database, "database");
            return this;
        }

        /**
         * @param table the lock table's name ({@code [A-Za-z_][A-Za-z0-9_]{0,63}})
         * @return this builder
         * @throws IllegalArgumentException when it is not such an identifier
         */
        public Builder table(String table) {
            this.table = identifier(table, "table");
            return this;
        }

        /**
         * @param sequence the fencing-token sequence's name ({@code [A-Za-z_][A-Za-z0-9_]{0,63}})
         * @return this builder
         * @throws IllegalArgumentException when it is not such an identifier
         */
        public Builder sequence(String sequence) {
            this.sequence = identifier(sequence, "sequence");
            return this;
        }

        /**
         * @param mode what to do about missing objects before a concept's first operation
         * @return this builder
         */
        public Builder schemaMode(SchemaMode mode) {
            this.schemaMode = Objects.requireNonNull(mode, "schemaMode");
            return this;
        }

        /**
         * @param size the size of the pool the store creates when given a plain factory, at least 1
         * @return this builder
         */
        public Builder poolMaxSize(int size) {
            this.poolMaxSize = OptionChecks.poolMaxSize(size);
            return this;
        }

        /**
         * @param timeout how long opening one pooled connection may take, positive
         * @return this builder
         */
        public Builder connectTimeout(Duration timeout) {
            this.connectTimeout = OptionChecks.positive(timeout, "connectTimeout");
            return this;
        }

        /**
         * @param interval how often a backend reads the state of the names waited for, positive
         * @return this builder
         */
        public Builder pollInterval(Duration interval) {
            this.pollInterval = OptionChecks.positive(interval, "pollInterval");
            return this;
        }

        /**
         * @param scheduler the scheduler of the store's timers
         * @return this builder
         */
        public Builder scheduler(Scheduler scheduler) {
            this.scheduler = Objects.requireNonNull(scheduler, "scheduler");
            return this;
        }

        /** @return the options */
        public MariaDbLockOptions build() {
            return new MariaDbLockOptions(this);
        }

        private static String identifier(String value, String name) {
            Objects.requireNonNull(value, name);
            if (!IDENTIFIER.matcher(value).matches()) {
                throw new IllegalArgumentException(name + " must match [A-Za-z_][A-Za-z0-9_]{0,63}: " + value);
            }
            return value;
        }
    }
}
