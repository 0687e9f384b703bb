package io.reactivelocks.blocking;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordingStream;

/**
 * Records {@code jdk.VirtualThreadPinned} (every one: threshold zero, with stack traces) while it
 * is open; {@link #stop()} waits until every event recorded so far was delivered.
 */
final class PinnedEvents implements AutoCloseable {

    private final RecordingStream stream = new RecordingStream();
    private final ConcurrentLinkedQueue<RecordedEvent> events = new ConcurrentLinkedQueue<>();

    PinnedEvents() {
        stream.enable("jdk.VirtualThreadPinned").withThreshold(Duration.ZERO).withStackTrace();
        stream.onEvent("jdk.VirtualThreadPinned", events::add);
        stream.startAsync();
    }

    /** Stops recording and returns every pinned event seen. */
    List<RecordedEvent> stop() {
        stream.stop();
        return List.copyOf(events);
    }

    /**
     * @return {@code true} when the pinned thread was parked in this module's wait (a
     *         {@code CompletableFuture} wait inside {@code Await}): a carrier held for the whole wait
     *         for a lock, the one pinning this module must never cause
     */
    static boolean whileWaitingInTheFacade(RecordedEvent event) {
        List<RecordedFrame> frames = frames(event);
        return frames.stream().anyMatch(f -> f.getMethod().getType().getName().equals(Await.class.getName()))
                && frames.stream().anyMatch(f -> f.getMethod().getType().getName().equals("java.util.concurrent.CompletableFuture")
                        && f.getMethod().getName().equals("waitingGet"));
    }

    /** @return the JDK's reason for the pin (JDK 24+), for the figures */
    static String reason(RecordedEvent event) {
        String reason = String.valueOf(field(event, "pinnedReason"));
        return reason.startsWith("Waited for initialization") ? "Waited for initialization of a class by another thread" : reason;
    }

    static String describe(RecordedEvent event) {
        return event.getDuration() + " reason=" + field(event, "pinnedReason") + " blocking=" + field(event, "blockingOperation")
                + " " + frames(event).stream().limit(14)
                        .map(f -> f.getMethod().getType().getName() + "." + f.getMethod().getName() + ":" + f.getLineNumber())
                        .toList();
    }

    private static Object field(RecordedEvent event, String name) {
        return event.hasField(name) ? event.getValue(name) : "?";
    }

    private static List<RecordedFrame> frames(RecordedEvent event) {
        return event.getStackTrace() == null ? List.of() : event.getStackTrace().getFrames();
    }

    @Override
    public void close() {
        stream.close();
    }
}
