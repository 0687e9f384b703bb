package io.reactivelocks.safety.check;

import java.util.List;

/**
 * What a checker concluded about a history.
 *
 * @param checker   the checker's name
 * @param status    valid, invalid, or unknown (the check could not finish within its bound)
 * @param message   what was found, in one or a few sentences
 * @param offending the events that show a violation (empty when valid)
 */
public record CheckVerdict(String checker, Status status, String message, List<HistoryEvent> offending) {

    /** The outcome of a check. */
    public enum Status {
        /** No violation. */
        VALID,
        /** A violation: see the offending events. */
        INVALID,
        /** The check gave up within its bound; neither valid nor invalid. */
        UNKNOWN
    }

    /** Copies the offending events. */
    public CheckVerdict {
        offending = List.copyOf(offending);
    }

    static CheckVerdict valid(String checker, String message) {
        return new CheckVerdict(checker, Status.VALID, message, List.of());
    }

    static CheckVerdict invalid(String checker, String message, List<HistoryEvent> offending) {
        return new CheckVerdict(checker, Status.INVALID, message, offending);
    }

    /** @return whether the history passed */
    public boolean isValid() {
        return status == Status.VALID;
    }

    @Override
    public String toString() {
        StringBuilder b = new StringBuilder(checker + ": " + status + " — " + message);
        offending.stream().limit(12).forEach(e -> b.append("\n    ").append(e));
        if (offending.size() > 12) {
            b.append("\n    … ").append(offending.size() - 12).append(" more");
        }
        return b.toString();
    }
}
