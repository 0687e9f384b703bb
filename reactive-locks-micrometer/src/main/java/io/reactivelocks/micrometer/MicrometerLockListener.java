package io.reactivelocks.micrometer;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.reactivelocks.Concept;
import io.reactivelocks.LockListener;
import io.reactivelocks.spi.LockBackend;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * A {@link LockListener} that records lock activity as Micrometer meters, every one tagged with
 * {@code backend} and {@value #CONCEPT_TAG} (plus any common tags given). The concept is {@code lock}
 * unless a store session hands the listener out for another concept ({@link #forConcept}):
 * {@code fair_lock}, {@code semaphore}, {@code read_write_lock}, {@code multi_lock},
 * {@code window_lock}, {@code leader_election}, {@code task_queue} — the same meters for each:
 *
 * <ul>
 *   <li>{@value #ACQUIRE_WAIT} — timer, from subscribe to grant or failure; tag {@code outcome} =
 *       {@code acquired} | {@code failed} (a cancelled acquire is the subscriber's choice and is not recorded);</li>
 *   <li>{@value #HOLD} — timer, from grant to the end of the lease; tag {@code end} = {@code released} | {@code lost};</li>
 *   <li>{@value #RENEWALS} — counter of renewals; tag {@code outcome} = {@code ok} | {@code failed}
 *       (a failed renewal is retried while the lease lasts, so failures do not mean losses);</li>
 *   <li>{@value #LOSSES} — counter of leases lost (deadline passed without a confirmed renewal, or the store said
 *       the lease is no longer ours);</li>
 *   <li>{@value #CONTENTION} — counter of {@code tryAcquire} calls that found the lock held;</li>
 *   <li>{@value #UNCONFIRMED_RELEASES} — counter of releases after a scoped body that the store did not confirm
 *       (the body's result was kept; the lease expired by itself).</li>
 * </ul>
 *
 * <p>Lock names are <em>not</em> a tag by default: names are usually unbounded (one per order, per account…)
 * and would explode the number of time series. the four-argument constructor opts in, with a function that
 * maps a name to a bounded set of tag values (for example its prefix before {@code ':'}).
 *
 * <p>Meters are created once, when the listener is built (and, with a name tag, once per distinct tag value);
 * each callback is then one lock-free timer or counter update, so it is safe on event loops. Thread-safe.
 */
public final class MicrometerLockListener implements LockListener {

    /** Timer: time from subscribe to grant ({@code outcome=acquired}) or failure ({@code outcome=failed}). */
    public static final String ACQUIRE_WAIT = "reactive.locks.acquire.wait";
    /** Timer: time from grant to release ({@code end=released}) or loss ({@code end=lost}). */
    public static final String HOLD = "reactive.locks.hold";
    /** Counter: renewals, {@code outcome=ok|failed}. */
    public static final String RENEWALS = "reactive.locks.renewals";
    /** Counter: leases lost. */
    public static final String LOSSES = "reactive.locks.losses";
    /** Counter: {@code tryAcquire} calls that found the lock held by someone else. */
    public static final String CONTENTION = "reactive.locks.contention";
    /** Counter: releases after a scoped body ({@code withLock}) that the store did not confirm. */
    public static final String UNCONFIRMED_RELEASES = "reactive.locks.release.unconfirmed";
    /** The tag naming the backend. */
    public static final String BACKEND_TAG = "backend";
    /** The tag naming the concept: {@code lock}, {@code semaphore}, {@code read_write_lock}… */
    public static final String CONCEPT_TAG = "concept";
    /** The tag carrying the opt-in lock-name value, see {@link #MicrometerLockListener(MeterRegistry, String, Iterable, Function)}. */
    public static final String LOCK_TAG = "lock";

    private final MeterRegistry registry;
    private final Tags commonTags;
    private final @Nullable Function<String, String> nameTag;
    private final Meters meters;
    private final ConcurrentMap<String, Meters> metersByName;
    private final Tags tagsWithoutConcept;
    private final Concept concept;
    private final ConcurrentMap<Concept, MicrometerLockListener> byConcept;

    /**
     * Creates a listener tagging every meter with {@code backend=backendName}.
     *
     * @param registry    where meters are registered; not null
     * @param backendName the backend tag value, for example {@code "redis"}; not null
     */
    public MicrometerLockListener(MeterRegistry registry, String backendName) {
        this(registry, backendName, Tags.empty());
    }

    /**
     * Creates a listener tagging every meter with {@code backend=backendName} and the given tags.
     *
     * @param registry    where meters are registered; not null
     * @param backendName the backend tag value, for example {@code "redis"}; not null
     * @param tags        more tags on every meter (for example the application); not null
     */
    public MicrometerLockListener(MeterRegistry registry, String backendName, Iterable<Tag> tags) {
        this(registry, backendName, tags, null);
    }

    /**
     * Creates a listener tagging every meter with {@code backend=backendName}, the given tags and, when
     * {@code lockNameTag} is not null, {@value #LOCK_TAG}{@code =lockNameTag(name)}. That function must map the
     * unbounded set of lock names onto a small, bounded set of values (a prefix, a category): each distinct value
     * gets its own set of meters, which are never removed. It must be cheap and must not block; a {@code null}
     * result is recorded as {@code "none"}.
     *
     * @param registry    where meters are registered; not null
     * @param backendName the backend tag value, for example {@code "redis"}; not null
     * @param tags        more tags on every meter (for example the application); not null
     * @param lockNameTag maps a lock name to its tag value; {@code null} = no lock tag (the default)
     */
    public MicrometerLockListener(MeterRegistry registry, String backendName, Iterable<Tag> tags,
                                  @Nullable Function<String, String> lockNameTag) {
        this(Objects.requireNonNull(registry, "registry"), Tags.of(Objects.requireNonNull(tags, "tags"))
                .and(BACKEND_TAG, Objects.requireNonNull(backendName, "backendName")), lockNameTag, Concept.LOCK,
                new ConcurrentHashMap<>());
    }

    private MicrometerLockListener(MeterRegistry registry, Tags tagsWithoutConcept, @Nullable Function<String, String> lockNameTag,
                                   Concept concept, ConcurrentMap<Concept, MicrometerLockListener> byConcept) {
        this.registry = registry;
        this.tagsWithoutConcept = tagsWithoutConcept;
        this.concept = concept;
        this.byConcept = byConcept;
        this.commonTags = tagsWithoutConcept.and(CONCEPT_TAG, conceptTag(concept));
        this.nameTag = lockNameTag;
        this.meters = lockNameTag == null ? new Meters(registry, commonTags) : null;
        this.metersByName = lockNameTag == null ? null : new ConcurrentHashMap<>();
    }

    /**
     * @param concept a concept
     * @return its {@value #CONCEPT_TAG} tag value: the enum name in lower case ({@code read_write_lock})
     */
    public static String conceptTag(Concept concept) {
        return concept.name().toLowerCase(java.util.Locale.ROOT);
    }

    /**
     * @param concept the concept a store session hands out
     * @return a listener recording the same meters tagged {@value #CONCEPT_TAG}{@code =concept}
     *         (made once per concept and shared)
     */
    @Override
    public LockListener forConcept(Concept concept) {
        if (concept == this.concept) {
            return this;
        }
        return byConcept.computeIfAbsent(concept, c -> new MicrometerLockListener(registry, tagsWithoutConcept, nameTag, c, byConcept));
    }

    /**
     * Creates a listener tagged with the backend's own name ({@link LockBackend#name()}: {@code redis},
     * {@code postgresql}, {@code local}…).
     *
     * @param registry where meters are registered; not null
     * @param backend  the backend the client will use; not null
     * @return the listener
     */
    public static MicrometerLockListener forBackend(MeterRegistry registry, LockBackend backend) {
        return new MicrometerLockListener(registry, Objects.requireNonNull(backend, "backend").name());
    }

    @Override
    public void onAcquired(String name, long token, Duration waited) {
        meters(name).acquired.record(waited);
    }

    @Override
    public void onContended(String name) {
        meters(name).contention.increment();
    }

    @Override
    public void onAcquireFailed(String name, Throwable error, Duration waited) {
        meters(name).acquireFailed.record(waited);
    }

    @Override
    public void onRenewed(String name, long token) {
        meters(name).renewalsOk.increment();
    }

    @Override
    public void onRenewalFailed(String name, long token, Throwable error) {
        meters(name).renewalsFailed.increment();
    }

    @Override
    public void onLost(String name, long token, String reason, Duration held) {
        Meters m = meters(name);
        m.losses.increment();
        m.heldUntilLost.record(held);
    }

    @Override
    public void onReleased(String name, long token, Duration held) {
        meters(name).heldUntilReleased.record(held);
    }

    @Override
    public void onReleaseUnconfirmed(String name, long token, Throwable error) {
        meters(name).unconfirmedReleases.increment();
    }

    @Override
    public String toString() {
        return "MicrometerLockListener" + commonTags + (nameTag == null ? "" : " + lock name tag");
    }

    private Meters meters(String name) {
        if (meters != null) {
            return meters;
        }
        String value = nameTag.apply(name);
        String key = value == null ? "none" : value;
        Meters m = metersByName.get(key);
        return m != null ? m : metersByName.computeIfAbsent(key, k -> new Meters(registry, commonTags.and(LOCK_TAG, k)));
    }

    /** One set of meters for one tag set, registered up front. */
    private static final class Meters {
        final Timer acquired;
        final Timer acquireFailed;
        final Timer heldUntilReleased;
        final Timer heldUntilLost;
        final Counter renewalsOk;
        final Counter renewalsFailed;
        final Counter losses;
        final Counter contention;
        final Counter unconfirmedReleases;

        Meters(MeterRegistry registry, Tags tags) {
            acquired = Timer.builder(ACQUIRE_WAIT).description("Time from subscribe to grant or failure of an acquire")
                    .tags(tags).tag("outcome", "acquired").register(registry);
            acquireFailed = Timer.builder(ACQUIRE_WAIT).description("Time from subscribe to grant or failure of an acquire")
                    .tags(tags).tag("outcome", "failed").register(registry);
            heldUntilReleased = Timer.builder(HOLD).description("Time from grant to the end of a lease")
                    .tags(tags).tag("end", "released").register(registry);
            heldUntilLost = Timer.builder(HOLD).description("Time from grant to the end of a lease")
                    .tags(tags).tag("end", "lost").register(registry);
            renewalsOk = Counter.builder(RENEWALS).description("Lease renewals")
                    .tags(tags).tag("outcome", "ok").register(registry);
            renewalsFailed = Counter.builder(RENEWALS).description("Lease renewals")
                    .tags(tags).tag("outcome", "failed").register(registry);
            losses = Counter.builder(LOSSES).description("Leases lost before release")
                    .tags(tags).register(registry);
            contention = Counter.builder(CONTENTION).description("tryAcquire calls that found the lock held")
                    .tags(tags).register(registry);
            unconfirmedReleases = Counter.builder(UNCONFIRMED_RELEASES)
                    .description("Releases after a scoped body that the store did not confirm (the lease expired by itself)")
                    .tags(tags).register(registry);
        }
    }
}
