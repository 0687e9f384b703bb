package io.reactivelocks.safety;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * I7 of the read-write names of a run (see {@link SafetyCheck}): (a) an accepted writer's write
 * whose previous accepted request on the name is not the same writer's read; a reader whose two
 * accepted reads have an accepted writer request between them or see different values; (b) a writer
 * and another worker (reader or writer) at once inside the validity their own leases reported.
 */
final class ReadWriteCheck {

    private final List<String> details;
    private final Map<String, Arbiter.Op> firstReads = new HashMap<>();
    private final Map<String, Long> lastWriterOp = new HashMap<>();
    private long conflicts;

    /** @param details where violations are described */
    ReadWriteCheck(List<String> details) {
        this.details = details;
    }

    /**
     * An accepted request of a name (any primitive but the semaphore), in the arbiter's order: a
     * writer's is remembered, a reader's judged.
     *
     * @return whether it was a reader's (nothing more to judge)
     */
    boolean accepted(Arbiter.Op op) {
        if (op.mode() == 'w') {
            lastWriterOp.put(op.name(), op.seq());
        }
        if (op.mode() != 'r') {
            return false;
        }
        String key = op.worker() + "/" + op.name() + "/" + op.token();
        Arbiter.Op first = firstReads.remove(key);
        if (first == null) {
            firstReads.put(key, op);
        } else if (lastWriterOp.getOrDefault(op.name(), -1L) > first.seq() || first.value() != op.value()) {
            conflicts++;
            SafetyCheck.detail(details, "I7: reader worker " + op.worker() + " (token " + op.token() + ") of " + op.name() + " read #"
                    + first.seq() + " = " + first.value() + " and #" + op.seq() + " = " + op.value()
                    + " with a writer's request accepted in between");
        }
        return true;
    }

    /**
     * A writer's accepted write whose previous accepted request was not its own read.
     *
     * @param what the write and what came before it
     */
    void writeInterrupted(String what) {
        conflicts++;
        SafetyCheck.detail(details, "I7: writer's " + what);
    }

    /**
     * Two holds of a read-write name by different workers, at least one a writer's, that overlap
     * from {@code from}: a conflict when both were inside their leases' own validity then.
     */
    void beliefs(SafetyCheck.Interval x, SafetyCheck.Interval y, long from) {
        long to = Math.min(x.validEnd(), y.validEnd());
        if (to > from) {
            conflicts++;
            SafetyCheck.detail(details, "I7: worker " + x.worker() + " (" + x.mode() + ", token " + x.token() + ") and worker " + y.worker()
                    + " (" + y.mode() + ", token " + y.token() + ") both inside their leases' validity on " + x.name() + " for "
                    + Duration.ofNanos(to - from).toMillis() + " ms");
        }
    }

    /** @return I7 */
    long conflicts() {
        return conflicts;
    }
}
