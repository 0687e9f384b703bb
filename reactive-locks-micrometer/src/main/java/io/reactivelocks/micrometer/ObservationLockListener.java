package io.reactivelocks.micrometer;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import io.reactivelocks.Concept;
import io.reactivelocks.LockListener;
import io.reactivelocks.spi.LockBackend;
import java.time.Duration;
import java.util.Objects;
import org.jspecify.annotations.Nullable;
import reactor.util.context.ContextView;

/**
 * A {@link LockListener} that records Micrometer {@link Observation}s — spans, with a tracing bridge — of lock
 * activity:
 *
 * <ul>
 *   <li>{@value #WAIT} — from subscribe of an acquire until its grant, contention ({@code tryAcquire} found the
 *       lock held), failure (wait timeout, store failure: the error is recorded) or cancel; key {@code outcome} =
 *       {@code acquired} | {@code contended} | {@code failed} | {@code cancelled};</li>
 *   <li>{@value #HOLD} — from grant until release or loss; {@code outcome} = {@code released} | {@code lost};</li>
 *   <li>{@value #RENEWAL} — one renewal of a held lease, a child of its hold: from the request until its answer on
 *       stores that renew lease by lease (Redis, PostgreSQL); an instant at each confirmation of the session on
 *       session-renewed stores (etcd, ZooKeeper); {@code outcome} = {@code ok} | {@code failed} | {@code cancelled} (the
 *       lease ended while the request was out).</li>
 * </ul>
 *
 * <p>Every observation has the low-cardinality keys {@value #BACKEND_KEY} and {@value #OUTCOME_KEY} and the
 * high-cardinality key {@value #NAME_KEY} (the lock name; hold and renewal also {@value #TOKEN_KEY}). The wait and
 * the hold of an acquire are children of the observation current for the caller: the one in the subscriber's Reactor
 * context under {@value #OBSERVATION_CONTEXT_KEY} (what {@code contextCapture()}, Reactor's automatic context
 * propagation and {@code tap(Micrometer.observation(..))} put there), else the registry's current observation on the
 * subscribing thread. A re-entered {@code withLock} acquires nothing and records nothing.
 *
 * <p>Callbacks start and stop observations, which runs the registry's handlers on the lock's event loop: keep the
 * handlers non-blocking (tracing bridges are). Thread-safe.
 */
public final class ObservationLockListener implements LockListener {

    /** Observation of an acquire's wait, from subscribe to grant, contention, failure or cancel. */
    public static final String WAIT = "reactive.locks.wait";
    /** Observation of a hold, from grant to release or loss. */
    public static final String HOLD = "reactive.locks.hold";
    /** Observation of one renewal of a held lease (a child of its hold). */
    public static final String RENEWAL = "reactive.locks.renewal";
    /** Low-cardinality key: the backend ({@code redis}, {@code postgresql}, {@code etcd}, {@code zookeeper}, ...). */
    public static final String BACKEND_KEY = "backend";
    /**
     * Low-cardinality key: the concept ({@code lock}, {@code semaphore}, {@code read_write_lock}…, as
     * {@link MicrometerLockListener#conceptTag}); {@code lock} unless a store session hands the listener out for
     * another concept ({@link #forConcept}).
     */
    public static final String CONCEPT_KEY = "concept";
    /** Low-cardinality key: how the observed step ended. */
    public static final String OUTCOME_KEY = "outcome";
    /** High-cardinality key: the lock name. */
    public static final String NAME_KEY = "lock.name";
    /** High-cardinality key: the lease's fencing token. */
    public static final String TOKEN_KEY = "lock.token";
    /**
     * The Reactor context key of the current observation: Micrometer's
     * {@code ObservationThreadLocalAccessor.KEY}, spelled out so that context-propagation need not be on the class path.
     */
    public static final String OBSERVATION_CONTEXT_KEY = "micrometer.observation";

    private final ObservationRegistry registry;
    private final String backendName;
    private final String concept;

    /**
     * Creates a listener recording into {@code registry} with {@code backend=backendName}.
     *
     * @param registry    where observations are recorded; not null
     * @param backendName the backend key value, for example {@code "redis"}; not null
     */
    public ObservationLockListener(ObservationRegistry registry, String backendName) {
        this(registry, backendName, Concept.LOCK);
    }

    private ObservationLockListener(ObservationRegistry registry, String backendName, Concept concept) {
        this.registry = Objects.requireNonNull(registry, "registry");
        this.backendName = Objects.requireNonNull(backendName, "backendName");
        this.concept = MicrometerLockListener.conceptTag(concept);
    }

    /**
     * @param concept the concept a store session hands out
     * @return a listener recording the same observations with {@value #CONCEPT_KEY}{@code =concept}
     */
    @Override
    public LockListener forConcept(Concept concept) {
        String tag = MicrometerLockListener.conceptTag(concept);
        return tag.equals(this.concept) ? this : new ObservationLockListener(registry, backendName, concept);
    }

    /**
     * Creates a listener whose backend key is the backend's own name ({@link LockBackend#name()}).
     *
     * @param registry where observations are recorded; not null
     * @param backend  the backend the client will use; not null
     * @return the listener
     */
    public static ObservationLockListener forBackend(ObservationRegistry registry, LockBackend backend) {
        return new ObservationLockListener(registry, Objects.requireNonNull(backend, "backend").name());
    }

    /**
     * Starts the wait observation of this acquire, as a child of the caller's current observation, and returns the
     * listener that ends it and records the hold and renewals of the lease it grants. With a no-op registry, records
     * nothing and returns this listener.
     */
    @Override
    public LockListener forAcquire(String name, ContextView context) {
        if (registry.isNoop()) {
            return this;
        }
        Object fromContext = context.getOrDefault(OBSERVATION_CONTEXT_KEY, null);
        Observation parent = fromContext instanceof Observation o ? o : registry.getCurrentObservation();
        return new AcquireObservations(name, parent);
    }

    @Override
    public String toString() {
        return "ObservationLockListener{backend=" + backendName + ", concept=" + concept + "}";
    }

    private Observation create(String observationName, String lockName, @Nullable Observation parent) {
        return Observation.createNotStarted(observationName, registry)
                .parentObservation(parent)
                .contextualName(observationName)
                .lowCardinalityKeyValue(BACKEND_KEY, backendName)
                .lowCardinalityKeyValue(CONCEPT_KEY, concept)
                .highCardinalityKeyValue(NAME_KEY, lockName);
    }

    /** The observations of one acquire and of the lease it grants; events of one lease may come from several threads. */
    private final class AcquireObservations implements LockListener {

        private final @Nullable Observation parent;
        private final Observation wait;
        private @Nullable Observation hold;
        private @Nullable Observation renewal;

        AcquireObservations(String name, @Nullable Observation parent) {
            this.parent = parent;
            this.wait = create(WAIT, name, parent).start();
        }

        private void endWait(String outcome, @Nullable Throwable error) {
            if (error != null) {
                wait.error(error);
            }
            wait.lowCardinalityKeyValue(OUTCOME_KEY, outcome).stop();
        }

        @Override
        public synchronized void onAcquired(String name, long token, Duration waited) {
            endWait("acquired", null);
            hold = create(HOLD, name, parent).highCardinalityKeyValue(TOKEN_KEY, Long.toString(token)).start();
        }

        @Override
        public synchronized void onContended(String name) {
            endWait("contended", null);
        }

        @Override
        public synchronized void onAcquireFailed(String name, Throwable error, Duration waited) {
            endWait("failed", error);
        }

        @Override
        public synchronized void onAcquireCancelled(String name, Duration waited) {
            endWait("cancelled", null);
        }

        @Override
        public synchronized void onRenewalStarted(String name, long token) {
            if (hold == null) {
                return;
            }
            endRenewal("cancelled", null); // an earlier request left unanswered
            renewal = create(RENEWAL, name, hold).highCardinalityKeyValue(TOKEN_KEY, Long.toString(token)).start();
        }

        @Override
        public synchronized void onRenewed(String name, long token) {
            renewalAnswered(name, token, "ok", null);
        }

        @Override
        public synchronized void onRenewalFailed(String name, long token, Throwable error) {
            renewalAnswered(name, token, "failed", error);
        }

        @Override
        public synchronized void onLost(String name, long token, String reason, Duration held) {
            endRenewal("cancelled", null);
            endHold("lost");
        }

        @Override
        public synchronized void onReleased(String name, long token, Duration held) {
            endRenewal("cancelled", null);
            endHold("released");
        }

        // guarded by this
        private void renewalAnswered(String name, long token, String outcome, @Nullable Throwable error) {
            if (hold == null) {
                return;
            }
            if (renewal == null) {
                // a session-renewed store: a confirmation without a request of its own, recorded as an instant
                renewal = create(RENEWAL, name, hold).highCardinalityKeyValue(TOKEN_KEY, Long.toString(token)).start();
            }
            endRenewal(outcome, error);
        }

        // guarded by this
        private void endRenewal(String outcome, @Nullable Throwable error) {
            Observation r = renewal;
            if (r == null) {
                return;
            }
            renewal = null;
            if (error != null) {
                r.error(error);
            }
            r.lowCardinalityKeyValue(OUTCOME_KEY, outcome).stop();
        }

        // guarded by this
        private void endHold(String outcome) {
            Observation h = hold;
            if (h == null) {
                return;
            }
            hold = null;
            h.lowCardinalityKeyValue(OUTCOME_KEY, outcome).stop();
        }

        @Override
        public String toString() {
            return "ObservationLockListener.Acquire{backend=" + backendName + "}";
        }
    }
}
