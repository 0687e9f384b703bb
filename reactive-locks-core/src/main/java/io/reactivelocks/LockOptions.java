package io.reactivelocks;

import java.time.Duration;
import java.util.Objects;
import org.jspecify.annotations.Nullable;
import reactor.core.scheduler.Scheduler;
import reactor.util.retry.Retry;
import reactor.util.retry.RetryBackoffSpec;

/**
 * Immutable options of lock operations. A client has defaults ({@link LockClient#options()});
 * each operation may take its own. Build with {@link #builder()} or change a copy with
 * {@link #mutate()}; {@link Builder#build()} checks every value and names the one that is wrong.
 *
 * <p>Defaults: lease time 30 s, renewal every lease/3, wait at most 30 s ({@link #DEFAULT_WAIT_TIMEOUT}), backoff exponential
 * with full jitter from 10 ms to 1 s, request timeout 5 s, drift allowance 1% + 2 ms, the
 * client's own scheduler and {@link LockClock#system()}.
 *
 * <p>Every duration is at most {@link #MAX_DURATION} (100 years), so that deadlines computed in
 * nanoseconds never overflow; a longer one is rejected by the builder, naming the option. Nothing
 * waits forever unless asked to: for "wait until cancelled" set {@link Builder#waitTimeout(Duration)}
 * to {@code null}.
 */
public final class LockOptions {

    /**
     * The longest duration any option accepts: 36500 days (100 years). Deadlines are computed in
     * nanoseconds on a monotonic clock; this bound keeps them far from {@code Long.MAX_VALUE}.
     */
    public static final Duration MAX_DURATION = Duration.ofDays(36500);

    /** How long an acquire waits unless told otherwise: 30 s, then {@link LockTimeoutException}. */
    public static final Duration DEFAULT_WAIT_TIMEOUT = Duration.ofSeconds(30);

    /** The default backoff: exponential from 10 ms, capped at 1 s, full jitter. */
    public static final RetryBackoffSpec DEFAULT_BACKOFF =
            Retry.backoff(Long.MAX_VALUE, Duration.ofMillis(10)).maxBackoff(Duration.ofSeconds(1)).jitter(1.0);

    /**
     * The largest lock payload accepted, in UTF-8 bytes (4096): a payload is a small value stored
     * beside the grant (a leader's address, a holder's description), not a data channel.
     */
    public static final int MAX_PAYLOAD_BYTES = 4096;

    private static final LockOptions DEFAULTS = builder().build();

    private final Duration leaseTime;
    private final Duration renewalInterval;
    private final @Nullable Duration waitTimeout;
    private final boolean waitTimeoutSet;
    private final RetryBackoffSpec backoff;
    private final Duration requestTimeout;
    private final double driftFactor;
    private final Duration driftConstant;
    private final @Nullable Scheduler scheduler;
    private final LockClock clock;
    private final boolean renewalIntervalSet;
    private final @Nullable String payload;
    private final LockListener listener;

    private LockOptions(Builder b) {
        this.leaseTime = b.leaseTime;
        this.renewalIntervalSet = b.renewalInterval != null;
        this.renewalInterval = b.renewalInterval != null ? b.renewalInterval : b.leaseTime.dividedBy(3);
        this.waitTimeout = b.waitTimeout;
        this.waitTimeoutSet = b.waitTimeoutSet;
        this.backoff = b.backoff;
        this.requestTimeout = b.requestTimeout;
        this.driftFactor = b.driftFactor;
        this.driftConstant = b.driftConstant;
        this.scheduler = b.scheduler;
        this.clock = b.clock;
        this.payload = b.payload;
        this.listener = b.listener;
    }

    /** @return the defaults described in the class documentation */
    public static LockOptions defaults() {
        return DEFAULTS;
    }

    /** @return a builder holding the defaults */
    public static Builder builder() {
        return new Builder();
    }

    /** @return a builder holding these options, to derive changed options from */
    public Builder mutate() {
        Builder b = new Builder();
        b.leaseTime = leaseTime;
        b.renewalInterval = renewalIntervalSet ? renewalInterval : null;
        b.waitTimeout = waitTimeout;
        b.waitTimeoutSet = waitTimeoutSet;
        b.backoff = backoff;
        b.requestTimeout = requestTimeout;
        b.driftFactor = driftFactor;
        b.driftConstant = driftConstant;
        b.scheduler = scheduler;
        b.clock = clock;
        b.payload = payload;
        b.listener = listener;
        return b;
    }

    /**
     * @return the listener of the client or concept made with these options (see
     *         {@link Builder#listener(LockListener)}); {@link LockListener#NONE} by default
     */
    public LockListener listener() {
        return listener;
    }

    /**
     * @param payload the payload to store with each grant (see {@link Builder#payload(String)});
     *                {@code null} for none
     * @return a copy of these options with that payload
     * @throws IllegalArgumentException naming {@code payload} when it is over {@link #MAX_PAYLOAD_BYTES}
     *         UTF-8 bytes or not well-formed UTF-16
     */
    public LockOptions withPayload(@Nullable String payload) {
        return mutate().payload(payload).build();
    }

    /**
     * @return the TTL asked of the server for each grant and renewal. Stores that renew by session
     *         (etcd, ZooKeeper) give every lease of a client its session's TTL, set when the client
     *         is created: there, a per-call lease time different from the client's default is
     *         refused at call time with {@code IllegalArgumentException} naming {@code leaseTime}
     *         (never silently ignored)
     */
    public Duration leaseTime() {
        return leaseTime;
    }

    /** @return how often a held lease is renewed (lease time / 3 unless set) */
    public Duration renewalInterval() {
        return renewalInterval;
    }

    /**
     * @return how long {@code acquire} waits before {@link LockTimeoutException}
     *         ({@link #DEFAULT_WAIT_TIMEOUT} unless set); {@code null} = until cancelled
     */
    public @Nullable Duration waitTimeout() {
        return waitTimeout;
    }

    /**
     * @return whether {@link #waitTimeout()} was set on the builder (rather than left at
     *         {@link #DEFAULT_WAIT_TIMEOUT}); integrations with a wait timeout of their own apply
     *         theirs when it was not
     */
    public boolean isWaitTimeoutSet() {
        return waitTimeoutSet;
    }

    /**
     * @return the backoff between contended attempts (its min, max, jitter factor and attempt bound are used); after a
     *         request that failed fast (a lost or refused connection) the next attempt waits its step, at most the
     *         {@link #requestTimeout()}
     */
    public RetryBackoffSpec backoff() {
        return backoff;
    }

    /** @return how long one request to the store may take before it fails with a transient {@link LockBackendException} */
    public Duration requestTimeout() {
        return requestTimeout;
    }

    /** @return the fraction of the granted TTL subtracted for clock drift */
    public double driftFactor() {
        return driftFactor;
    }

    /** @return the constant subtracted for clock drift */
    public Duration driftConstant() {
        return driftConstant;
    }

    /** @return the scheduler for timers and renewals, or {@code null} for the client's own */
    public @Nullable Scheduler scheduler() {
        return scheduler;
    }

    /** @return the monotonic clock used for deadlines */
    public LockClock clock() {
        return clock;
    }

    /**
     * @return the payload stored with each grant made with these options (visible to every
     *         client through {@link LockClient#observe} and {@link LockClient#inspect}), or
     *         {@code null} for none
     */
    public @Nullable String payload() {
        return payload;
    }

    /**
     * @param grantedTtl the TTL the server granted
     * @return the validity left after the drift allowance ({@code ttl − ttl·driftFactor − driftConstant})
     */
    public long validityNanos(Duration grantedTtl) {
        long ttl = grantedTtl.toNanos();
        return ttl - (long) (ttl * driftFactor) - driftConstant.toNanos();
    }

    /**
     * The payload rule every store keeps: at most {@link #MAX_PAYLOAD_BYTES} UTF-8 bytes and
     * well-formed UTF-16, so that every store keeps a payload as the same text. The builder, a
     * lease's {@code updatePayload} and a leadership's payload update all check with it.
     *
     * @param payload  a payload, not null
     * @param argument the argument name for messages
     * @return {@code payload}
     * @throws NullPointerException     naming the argument when it is null
     * @throws IllegalArgumentException naming the argument when it is too long or has a lone surrogate
     */
    public static String checkPayload(String payload, String argument) {
        Objects.requireNonNull(payload, argument);
        for (int i = 0, n = payload.length(); i < n; i++) {
            char c = payload.charAt(i);
            if (Character.isHighSurrogate(c) && i + 1 < n && Character.isLowSurrogate(payload.charAt(i + 1))) {
                i++;
            } else if (Character.isSurrogate(c)) {
                throw new IllegalArgumentException(argument + " must be well-formed UTF-16, has a lone surrogate at index " + i);
            }
        }
        int bytes = LockNames.utf8Length(payload);
        if (bytes > LockOptions.MAX_PAYLOAD_BYTES) {
            throw new IllegalArgumentException(argument + " must be at most " + LockOptions.MAX_PAYLOAD_BYTES
                    + " UTF-8 bytes, was " + bytes);
        }
        return payload;
    }

    @Override
    public String toString() {
        return "LockOptions{leaseTime=" + leaseTime + ", renewalInterval=" + renewalInterval
                + ", waitTimeout=" + waitTimeout + ", backoff=[" + backoff.minBackoff + ".." + backoff.maxBackoff
                + ", jitter " + backoff.jitterFactor + "], requestTimeout=" + requestTimeout
                + ", drift=" + driftFactor + "+" + driftConstant
                + (payload == null ? "" : ", payload=" + LockNames.utf8Length(payload) + " bytes")
                + (listener == LockListener.NONE ? "" : ", listener=" + listener) + "}";
    }

    /** Mutable builder of {@link LockOptions}; not thread-safe. */
    public static final class Builder {
        private Duration leaseTime = Duration.ofSeconds(30);
        private @Nullable Duration renewalInterval;
        private @Nullable Duration waitTimeout = DEFAULT_WAIT_TIMEOUT;
        private boolean waitTimeoutSet;
        private RetryBackoffSpec backoff = DEFAULT_BACKOFF;
        private Duration requestTimeout = Duration.ofSeconds(5);
        private double driftFactor = 0.01;
        private Duration driftConstant = Duration.ofMillis(2);
        private @Nullable Scheduler scheduler;
        private LockClock clock = LockClock.system();
        private @Nullable String payload;
        private LockListener listener = LockListener.NONE;

        private Builder() {
        }

        /**
         * The listener of every acquire, lease and release of the client or concept made with these
         * options — the lock client, fair lock, semaphore, read-write lock, multi-lock, window lock,
         * leader election and task queue alike (Micrometer meters, tracing). It is read when the
         * client or concept is made: options given to a single call do not change it. A store
         * session asks it {@link LockListener#forConcept} for each concept it hands out.
         *
         * @param listener the listener; {@link LockListener#NONE} (the default) for none; combine
         *                 several with {@link LockListener#composite}
         * @return this builder
         * @throws NullPointerException naming {@code listener} when it is null
         */
        public Builder listener(LockListener listener) {
            this.listener = Objects.requireNonNull(listener, "listener");
            return this;
        }

        /**
         * A small value stored with each grant, readable by every client while the lock is held
         * ({@link LockState.Held#payload()}) and changeable by the holder
         * ({@link Lease#updatePayload(String)}).
         *
         * @param payload at most {@link #MAX_PAYLOAD_BYTES} UTF-8 bytes, well-formed UTF-16 (no lone
         *                surrogates); {@code null} (the default) for none
         * @return this builder
         * @throws IllegalArgumentException naming {@code payload} when it is too long or malformed
         */
        public Builder payload(@Nullable String payload) {
            this.payload = payload == null ? null : checkPayload(payload, "payload");
            return this;
        }

        /**
         * @param leaseTime the TTL of each grant and renewal; positive, at most {@link #MAX_DURATION}
         * @return this builder
         */
        public Builder leaseTime(Duration leaseTime) {
            this.leaseTime = positive(leaseTime, "leaseTime");
            return this;
        }

        /**
         * @param renewalInterval how often to renew; positive and shorter than the lease time
         *                        (checked by {@link #build()}); {@code null} = lease time / 3
         * @return this builder
         */
        public Builder renewalInterval(@Nullable Duration renewalInterval) {
            this.renewalInterval = renewalInterval == null ? null : positive(renewalInterval, "renewalInterval");
            return this;
        }

        /**
         * @param waitTimeout how long acquire waits; positive and at most {@link #MAX_DURATION}, or
         *                    {@code null} to wait until cancelled ({@link #DEFAULT_WAIT_TIMEOUT} unless set)
         * @return this builder
         */
        public Builder waitTimeout(@Nullable Duration waitTimeout) {
            this.waitTimeout = waitTimeout == null ? null : positive(waitTimeout, "waitTimeout");
            this.waitTimeoutSet = true;
            return this;
        }

        /**
         * The wait between contended attempts: attempt n waits a delay
         * {@code d = min(maxBackoff, minBackoff·2ⁿ)}, drawn uniformly from {@code [d·(1−jitter), d]}
         * (jitter 1.0 = full jitter), cut short by a release notification or the holder's TTL.
         * {@code maxAttempts} bounds the attempts of one acquire. After a request that failed fast (a lost
         * or refused connection, not a busy answer) the next attempt waits the same step, at most the
         * {@linkplain #requestTimeout request timeout}: a long backoff chosen because wake-ups are trusted does
         * not turn a dropped connection into a long wait.
         *
         * @param backoff a spec from {@code Retry.backoff(...)}; not null. A {@code maxBackoff} above
         *                {@link #MAX_DURATION} — such as Reactor's default, which means "no cap" — is
         *                capped to it
         * @return this builder
         */
        public Builder backoff(RetryBackoffSpec backoff) {
            Objects.requireNonNull(backoff, "backoff");
            positive(backoff.minBackoff, "backoff.minBackoff");
            if (backoff.maxBackoff != null && backoff.maxBackoff.compareTo(MAX_DURATION) > 0) {
                backoff = backoff.maxBackoff(MAX_DURATION);
            }
            positive(backoff.maxBackoff, "backoff.maxBackoff");
            if (backoff.maxBackoff.compareTo(backoff.minBackoff) < 0) {
                throw new IllegalArgumentException("backoff.maxBackoff must be >= backoff.minBackoff, was "
                        + backoff.maxBackoff + " < " + backoff.minBackoff);
            }
            if (backoff.maxAttempts < 1) {
                throw new IllegalArgumentException("backoff.maxAttempts must be >= 1, was " + backoff.maxAttempts);
            }
            this.backoff = backoff;
            return this;
        }

        /**
         * @param requestTimeout the longest one store request may take; positive, at most {@link #MAX_DURATION}
         * @return this builder
         */
        public Builder requestTimeout(Duration requestTimeout) {
            this.requestTimeout = positive(requestTimeout, "requestTimeout");
            return this;
        }

        /**
         * @param factor   fraction of the TTL to subtract for clock drift, in [0, 0.5)
         * @param constant constant to subtract, zero or positive, at most {@link #MAX_DURATION}
         * @return this builder
         */
        public Builder drift(double factor, Duration constant) {
            if (!(factor >= 0 && factor < 0.5)) {
                throw new IllegalArgumentException("drift factor must be in [0, 0.5), was " + factor);
            }
            Objects.requireNonNull(constant, "driftConstant");
            if (constant.isNegative()) {
                throw new IllegalArgumentException("driftConstant must not be negative, was " + constant);
            }
            atMostMax(constant, "driftConstant");
            this.driftFactor = factor;
            this.driftConstant = constant;
            return this;
        }

        /**
         * @param scheduler where timers and renewals run, able to schedule with a delay (a plain
         *                  executor is not); {@code null} = the client's own
         * @return this builder
         * @throws IllegalArgumentException naming the scheduler when it cannot schedule with a delay
         */
        public Builder scheduler(@Nullable Scheduler scheduler) {
            if (scheduler != null) {
                try {
                    scheduler.schedule(() -> { }, 1, java.util.concurrent.TimeUnit.NANOSECONDS).dispose();
                } catch (java.util.concurrent.RejectedExecutionException e) {
                    throw new IllegalArgumentException("scheduler must support time-based scheduling (and not be disposed): "
                            + scheduler, e);
                }
            }
            this.scheduler = scheduler;
            return this;
        }

        /**
         * @param clock the monotonic clock for deadlines; not null
         * @return this builder
         */
        public Builder clock(LockClock clock) {
            this.clock = Objects.requireNonNull(clock, "clock");
            return this;
        }

        /**
         * @return the options
         * @throws IllegalArgumentException naming the argument when the renewal interval is not
         *         shorter than the lease time, or the drift allowance eats the whole lease
         */
        public LockOptions build() {
            if (renewalInterval != null && renewalInterval.compareTo(leaseTime) >= 0) {
                throw new IllegalArgumentException("renewalInterval must be shorter than leaseTime, was "
                        + renewalInterval + " >= " + leaseTime);
            }
            LockOptions o = new LockOptions(this);
            if (o.validityNanos(leaseTime) <= o.renewalInterval.toNanos()) {
                throw new IllegalArgumentException("leaseTime " + leaseTime + " minus the drift allowance ("
                        + driftFactor + " x + " + driftConstant + ") leaves no time after the renewal interval "
                        + o.renewalInterval);
            }
            return o;
        }

        private static Duration positive(Duration d, String name) {
            Objects.requireNonNull(d, name);
            if (d.isZero() || d.isNegative()) {
                throw new IllegalArgumentException(name + " must be positive, was " + d);
            }
            return atMostMax(d, name);
        }

        private static Duration atMostMax(Duration d, String name) {
            if (d.compareTo(MAX_DURATION) > 0) {
                throw new IllegalArgumentException(name + " must be at most " + MAX_DURATION.toDays() + " days ("
                        + MAX_DURATION + "), was " + d);
            }
            return d;
        }
    }
}
