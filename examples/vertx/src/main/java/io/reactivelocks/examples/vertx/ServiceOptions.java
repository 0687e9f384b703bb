package io.reactivelocks.examples.vertx;

import java.time.Duration;
import java.util.Objects;

/**
 * Settings of one {@link VertxLockService} instance. Immutable; change a copy with the
 * {@code with...} methods.
 *
 * @param instance     this instance's name, shown by {@code GET /status}
 * @param jobName      the window lock's name: instances sharing it share the windows
 * @param period       the window length: the job runs at most once per window across instances
 * @param tickInterval how often the periodic timer tries to claim the current window; shorter
 *                     than {@code period}, so that every window is tried at least once
 * @param leaderLock   the lock whose holder is the leader
 * @param leaseTime    the leader lock's lease time: how long a crashed leader keeps it at most
 * @param httpPort     the port of the status endpoint; {@code 0} picks a free one
 */
public record ServiceOptions(String instance, String jobName, Duration period, Duration tickInterval,
                             String leaderLock, Duration leaseTime, int httpPort) {

    /** Checks every setting. */
    public ServiceOptions {
        Objects.requireNonNull(instance, "instance");
        Objects.requireNonNull(jobName, "jobName");
        Objects.requireNonNull(leaderLock, "leaderLock");
        positive(period, "period");
        positive(tickInterval, "tickInterval");
        positive(leaseTime, "leaseTime");
        if (tickInterval.compareTo(period) >= 0) {
            throw new IllegalArgumentException("tickInterval must be shorter than period: " + tickInterval + " >= " + period);
        }
        if (httpPort < 0 || httpPort > 65535) {
            throw new IllegalArgumentException("httpPort out of range: " + httpPort);
        }
    }

    /**
     * @param instance this instance's name
     * @return job {@code "job"} once a minute (tried every 15 s), leader lock {@code "leader"} with
     *         a 10 s lease, status on port 8080
     */
    public static ServiceOptions defaults(String instance) {
        return new ServiceOptions(instance, "job", Duration.ofMinutes(1), Duration.ofSeconds(15),
                "leader", Duration.ofSeconds(10), 8080);
    }

    /**
     * @param period the window length; the tick interval becomes a quarter of it
     * @return a copy with this period
     */
    public ServiceOptions withPeriod(Duration period) {
        positive(period, "period");
        return new ServiceOptions(instance, jobName, period, period.dividedBy(4), leaderLock, leaseTime, httpPort);
    }

    /**
     * @param leaseTime the leader lock's lease time
     * @return a copy with this lease time
     */
    public ServiceOptions withLeaseTime(Duration leaseTime) {
        return new ServiceOptions(instance, jobName, period, tickInterval, leaderLock, leaseTime, httpPort);
    }

    /**
     * @param httpPort the status endpoint's port, {@code 0} for any free one
     * @return a copy with this port
     */
    public ServiceOptions withHttpPort(int httpPort) {
        return new ServiceOptions(instance, jobName, period, tickInterval, leaderLock, leaseTime, httpPort);
    }

    /**
     * @param jobName    the window lock's name
     * @param leaderLock the leader lock's name
     * @return a copy with these lock names
     */
    public ServiceOptions withNames(String jobName, String leaderLock) {
        return new ServiceOptions(instance, jobName, period, tickInterval, leaderLock, leaseTime, httpPort);
    }

    private static Duration positive(Duration d, String name) {
        Objects.requireNonNull(d, name);
        if (d.isZero() || d.isNegative() || d.dividedBy(4).isZero()) {
            throw new IllegalArgumentException(name + " must be positive (at least 4 ns): " + d);
        }
        return d;
    }
}
