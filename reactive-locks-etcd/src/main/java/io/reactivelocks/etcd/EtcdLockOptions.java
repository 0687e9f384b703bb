package io.reactivelocks.etcd;

import io.reactivelocks.LockClock;
import java.time.Duration;
import java.util.Objects;
import org.jspecify.annotations.Nullable;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * Immutable etcd-specific settings of an {@link EtcdLockBackend}: the key prefix and the session
 * (the one etcd lease that keeps every lock of the backend alive). Build with {@link #builder()},
 * derive with {@link #mutate()}; lock timing of single operations (wait timeout, backoff, request
 * timeout, drift) stays in {@link io.reactivelocks.LockOptions}.
 *
 * <p>Defaults: prefix {@code "reactive-locks"}; session TTL 30 s, or — through
 * a {@link EtcdLocks#connect(io.etcd.jetcd.Client, EtcdLockOptions) session} when unset —
 * each lock client's lease time, rounded up to whole seconds (etcd raises a TTL below its minimum,
 * 2 s with the default election timeout, and the backend uses the TTL etcd granted); keep-alive
 * every TTL/3; session requests time out after 5 s; while etcd is unreachable, a new connection
 * attempt every 500 ms ({@link Builder#reconnectInterval(Duration)}); timers on
 * {@link Schedulers#parallel()}; {@link LockClock#system()}.
 */
public final class EtcdLockOptions {

    /** The default key prefix. */
    public static final String DEFAULT_PREFIX = "reactive-locks";

    private static final EtcdLockOptions DEFAULTS = builder().build();

    private final String prefix;
    private final Duration sessionTtl;
    private final boolean sessionTtlSet;
    private final @Nullable Duration keepAliveInterval;
    private final Duration requestTimeout;
    private final Duration reconnectInterval;
    private final Scheduler scheduler;
    private final LockClock clock;

    private EtcdLockOptions(Builder b) {
        this.prefix = b.prefix;
        this.sessionTtlSet = b.sessionTtl != null;
        this.sessionTtl = b.sessionTtl != null ? b.sessionTtl : Duration.ofSeconds(30);
        this.keepAliveInterval = b.keepAliveInterval;
        this.requestTimeout = b.requestTimeout;
        this.reconnectInterval = b.reconnectInterval;
        this.scheduler = b.scheduler;
        this.clock = b.clock;
    }

    /** @return the defaults described in the class documentation */
    public static EtcdLockOptions defaults() {
        return DEFAULTS;
    }

    /** @return a builder holding the defaults */
    public static Builder builder() {
        return new Builder();
    }

    /** @return a builder holding these options */
    public Builder mutate() {
        Builder b = new Builder();
        b.prefix = prefix;
        b.sessionTtl = sessionTtlSet ? sessionTtl : null;
        b.keepAliveInterval = keepAliveInterval;
        b.requestTimeout = requestTimeout;
        b.reconnectInterval = reconnectInterval;
        b.scheduler = scheduler;
        b.clock = clock;
        return b;
    }

    /** @return the prefix of every key: {@code <prefix>/<encoded name>/<session lease hex>-<slot>} (lock keys) */
    public String prefix() {
        return prefix;
    }

    /** @return the TTL asked for the session lease (etcd may grant more: its minimum) */
    public Duration sessionTtl() {
        return sessionTtl;
    }

    /** @return whether {@link #sessionTtl()} was set explicitly (rather than defaulted) */
    public boolean isSessionTtlSet() {
        return sessionTtlSet;
    }

    /**
     * @param grantedTtl the TTL etcd granted
     * @return how often the session lease is kept alive: the configured interval, or TTL/3
     */
    public Duration keepAliveInterval(Duration grantedTtl) {
        Duration d = keepAliveInterval != null ? keepAliveInterval : grantedTtl.dividedBy(3);
        return d.compareTo(grantedTtl) < 0 ? d : grantedTtl.dividedBy(3);
    }

    /** @return the configured keep-alive interval, or {@code null} for TTL/3 */
    public @Nullable Duration keepAliveInterval() {
        return keepAliveInterval;
    }

    /** @return how long a session request (lease grant, keep-alive, revoke) may take */
    public Duration requestTimeout() {
        return requestTimeout;
    }

    /**
     * @return how often, while etcd is unreachable, the jetcd client's gRPC channel is made to try
     *         to connect again (cutting gRPC's own growing backoff short); zero = gRPC's backoff only
     */
    public Duration reconnectInterval() {
        return reconnectInterval;
    }

    /** @return where session timers run */
    public Scheduler scheduler() {
        return scheduler;
    }

    /** @return the monotonic clock of the session's own deadline */
    public LockClock clock() {
        return clock;
    }

    /** @return the session TTL in whole seconds, rounded up, at least 1 */
    long sessionTtlSeconds() {
        long s = sessionTtl.getSeconds() + (sessionTtl.getNano() > 0 ? 1 : 0);
        return Math.max(1, s);
    }

    @Override
    public String toString() {
        return "EtcdLockOptions{prefix='" + prefix + "', sessionTtl=" + sessionTtl
                + ", keepAliveInterval=" + (keepAliveInterval == null ? "ttl/3" : keepAliveInterval)
                + ", requestTimeout=" + requestTimeout + ", reconnectInterval=" + reconnectInterval + "}";
    }

    /** Mutable builder of {@link EtcdLockOptions}; not thread-safe. */
    public static final class Builder {
        private String prefix = DEFAULT_PREFIX;
        private Duration sessionTtl;
        private @Nullable Duration keepAliveInterval;
        private Duration requestTimeout = Duration.ofSeconds(5);
        private Duration reconnectInterval = Duration.ofMillis(500);
        private Scheduler scheduler = Schedulers.parallel();
        private LockClock clock = LockClock.system();

        private Builder() {
        }

        /**
         * @param prefix the key prefix: non-empty, without a trailing {@code '/'} (one is added);
         *               give each application (or test) its own
         * @return this builder
         */
        public Builder prefix(String prefix) {
            this.prefix = EtcdKeys.checkPrefix(prefix);
            return this;
        }

        /**
         * @param sessionTtl the TTL of the session lease, rounded up to whole seconds; at least 1 s.
         *                   A client that stops talking to etcd (crash, partition) keeps its locks
         *                   this long on the server; its hold streams end before that
         * @return this builder
         */
        public Builder sessionTtl(Duration sessionTtl) {
            Objects.requireNonNull(sessionTtl, "sessionTtl");
            if (sessionTtl.compareTo(Duration.ofSeconds(1)) < 0) {
                throw new IllegalArgumentException("sessionTtl must be at least 1 s, was " + sessionTtl);
            }
            this.sessionTtl = sessionTtl;
            return this;
        }

        /**
         * @param keepAliveInterval how often to keep the session lease alive; positive; {@code null}
         *                          (the default) = a third of the granted TTL; an interval not
         *                          shorter than the granted TTL is replaced by TTL/3
         * @return this builder
         */
        public Builder keepAliveInterval(@Nullable Duration keepAliveInterval) {
            if (keepAliveInterval != null && (keepAliveInterval.isZero() || keepAliveInterval.isNegative())) {
                throw new IllegalArgumentException("keepAliveInterval must be positive, was " + keepAliveInterval);
            }
            this.keepAliveInterval = keepAliveInterval;
            return this;
        }

        /**
         * @param requestTimeout how long a session request may take; positive
         * @return this builder
         */
        public Builder requestTimeout(Duration requestTimeout) {
            Objects.requireNonNull(requestTimeout, "requestTimeout");
            if (requestTimeout.isZero() || requestTimeout.isNegative()) {
                throw new IllegalArgumentException("requestTimeout must be positive, was " + requestTimeout);
            }
            this.requestTimeout = requestTimeout;
            return this;
        }

        /**
         * While etcd is unreachable, grpc-java reconnects the jetcd client's channel only after a
         * backoff that grows from 1 s by 1.6&times; per failed attempt up to 2 minutes, so a client
         * connected before an outage would resume up to that long after etcd is back. The backend
         * cuts that backoff short every {@code reconnectInterval} while the channel is disconnected
         * (one connection attempt per interval; nothing while connected), so it resumes within
         * about this long. This applies to the jetcd client given to the backend (shared with
         * whatever else the application does with it); it needs jetcd's own {@code Client}
         * implementation, whose channel is read reflectively (else only gRPC's backoff applies).
         *
         * @param reconnectInterval positive, or zero to leave the reconnect to gRPC's backoff
         * @return this builder
         */
        public Builder reconnectInterval(Duration reconnectInterval) {
            Objects.requireNonNull(reconnectInterval, "reconnectInterval");
            if (reconnectInterval.isNegative()) {
                throw new IllegalArgumentException("reconnectInterval must not be negative, was " + reconnectInterval);
            }
            this.reconnectInterval = reconnectInterval;
            return this;
        }

        /**
         * @param scheduler where the session's keep-alive and deadline timers run; must support
         *                  delays
         * @return this builder
         */
        public Builder scheduler(Scheduler scheduler) {
            this.scheduler = Objects.requireNonNull(scheduler, "scheduler");
            return this;
        }

        /**
         * @param clock the monotonic clock of the session's own deadline
         * @return this builder
         */
        public Builder clock(LockClock clock) {
            this.clock = Objects.requireNonNull(clock, "clock");
            return this;
        }

        /** @return the options */
        public EtcdLockOptions build() {
            return new EtcdLockOptions(this);
        }
    }
}
