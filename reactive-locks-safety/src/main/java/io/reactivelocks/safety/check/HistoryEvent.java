package io.reactivelocks.safety.check;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * One line of a history: an operation event of one client (docs/SAFETY.md, "History format").
 *
 * @param index      the line's place in the history (0 for the first event)
 * @param type       invoke, ok, fail or info
 * @param client     {@code w<worker id>} or {@code nemesis}
 * @param lane       the client's sequence of operations that never overlap: {@code section} (acquire, register
 *                   operations, release), {@code hold} (the hold stream's end), {@code engine} (the engine's
 *                   listener), {@code jvm} (stalls), {@code nemesis}
 * @param op         acquire, release, loss, read, fenced-write, write, done, enqueue, in-line, loss-reason,
 *                   late-lease, error, stall, or a fault's label for the nemesis
 * @param name       the lock name, when there is one
 * @param token      the fencing token, when there is one
 * @param t          the client's clock ({@link System#nanoTime()}, {@code CLOCK_MONOTONIC}: one clock for the machine)
 * @param value      the value read or written (register), or the target worker (nemesis), or a stall's end
 * @param verdict    for a completed register operation: {@code accepted} or {@code refused}
 * @param order      for a completed register operation: the arbiter's decision order
 * @param mode       for an acquire: m mutex, f fair, s semaphore, r reader, w writer
 * @param validUntil for an acquire, release or loss: the lease's validity deadline (same clock as {@code t})
 * @param detail     free text: an error kind, a loss reason, the names a fault hit
 */
public record HistoryEvent(int index, Type type, String client, String lane, String op, @Nullable String name,
                           @Nullable Long token, long t, @Nullable Long value, @Nullable String verdict, @Nullable Long order,
                           @Nullable String mode, @Nullable Long validUntil, @Nullable String detail) {

    /** The kind of event, as in Jepsen histories. */
    public enum Type {
        /** An operation began. */
        INVOKE,
        /** An operation completed and took effect. */
        OK,
        /** An operation completed and did not take effect. */
        FAIL,
        /** Unknown outcome (it may or may not have taken effect), or a note with no outcome. */
        INFO;

        /** @return the type as written in a history */
        public String label() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }
    }

    /** Checks the required fields. */
    public HistoryEvent {
        Objects.requireNonNull(type, "type");
        Objects.requireNonNull(client, "client");
        Objects.requireNonNull(lane, "lane");
        Objects.requireNonNull(op, "op");
    }

    /** @return whether the event completed an operation with an accepted outcome ({@code ok}) */
    public boolean isOk() {
        return type == Type.OK;
    }

    /** @return the event as one JSON line (absent fields are left out) */
    public String toJson() {
        Map<String, @Nullable Object> m = new LinkedHashMap<>();
        m.put("type", type.label());
        m.put("client", client);
        m.put("lane", lane);
        m.put("op", op);
        m.put("name", name);
        m.put("token", token);
        m.put("t", t);
        m.put("value", value);
        m.put("verdict", verdict);
        m.put("order", order);
        m.put("mode", mode);
        m.put("validUntil", validUntil);
        m.put("detail", detail);
        return Json.write(m);
    }

    /**
     * @param index the line's place
     * @return this event at another place
     */
    public HistoryEvent at(int index) {
        return new HistoryEvent(index, type, client, lane, op, name, token, t, value, verdict, order, mode, validUntil, detail);
    }

    @Override
    public String toString() {
        return "#" + index + " " + toJson();
    }
}
