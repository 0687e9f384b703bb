package io.reactivelocks.test;

import io.reactivelocks.Concept;
import io.reactivelocks.LockListener;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * A {@link LockListener} that records each event as one line — {@code "<concept> <event> <name>"}
 * (the concept as {@link #forConcept} was told it, {@code lock} for a listener used directly) — so
 * that a test can assert which events a concept reports. Thread-safe.
 */
public final class RecordingListener implements LockListener {

    private final ConcurrentLinkedQueue<String> events;
    private final Concept concept;

    /** A listener that records the events of every concept handed out with it. */
    public RecordingListener() {
        this(new ConcurrentLinkedQueue<>(), Concept.LOCK);
    }

    private RecordingListener(ConcurrentLinkedQueue<String> events, Concept concept) {
        this.events = events;
        this.concept = concept;
    }

    /** @return a listener recording into the same lines, under {@code concept} */
    @Override
    public LockListener forConcept(Concept concept) {
        return new RecordingListener(events, concept);
    }

    /** @return the lines recorded so far, in order */
    public List<String> events() {
        return new ArrayList<>(events);
    }

    /**
     * @param concept a concept
     * @param event   an event: {@code acquired}, {@code contended}, {@code released}, {@code lost},
     *                {@code renewed}, {@code failed}, {@code cancelled}, {@code unconfirmed}
     * @return how many lines of that concept and event were recorded
     */
    public long count(Concept concept, String event) {
        String prefix = concept.name() + " " + event + " ";
        return events.stream().filter(e -> e.startsWith(prefix)).count();
    }

    private void record(String event, String name) {
        events.add(concept.name() + " " + event + " " + name);
    }

    @Override
    public void onAcquired(String name, long token, Duration waited) {
        record("acquired", name);
    }

    @Override
    public void onContended(String name) {
        record("contended", name);
    }

    @Override
    public void onAcquireFailed(String name, Throwable error, Duration waited) {
        record("failed", name);
    }

    @Override
    public void onAcquireCancelled(String name, Duration waited) {
        record("cancelled", name);
    }

    @Override
    public void onRenewed(String name, long token) {
        record("renewed", name);
    }

    @Override
    public void onLost(String name, long token, String reason, Duration held) {
        record("lost", name);
    }

    @Override
    public void onReleased(String name, long token, Duration held) {
        record("released", name);
    }

    @Override
    public void onReleaseUnconfirmed(String name, long token, Throwable error) {
        record("unconfirmed", name);
    }

    @Override
    public String toString() {
        return "RecordingListener{" + concept + "}";
    }
}
