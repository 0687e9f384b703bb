package io.reactivelocks.safety.check;

import io.reactivelocks.safety.check.HistoryEvent.Type;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/** Hand-made histories for the checkers' tests: times in plain units, one line per call. */
final class Histories {

    private final List<HistoryEvent> events = new ArrayList<>();
    private final Map<String, String> names = new LinkedHashMap<>();
    private int permits = 1;
    private long lease = 1_000;

    static Histories of(String name, String primitive) {
        return new Histories().name(name, primitive);
    }

    Histories name(String name, String primitive) {
        names.put(name, primitive);
        return this;
    }

    Histories permits(int n) {
        permits = n;
        return this;
    }

    Histories lease(long nanos) {
        lease = nanos;
        return this;
    }

    private Histories add(Type type, String client, String lane, String op, @Nullable String name, @Nullable Long token, long t,
                          @Nullable Long value, @Nullable String verdict, @Nullable Long order, @Nullable String mode,
                          @Nullable Long validUntil) {
        events.add(new HistoryEvent(0, type, client, lane, op, name, token, t, value, verdict, order, mode, validUntil, null));
        return this;
    }

    /** An acquire invoked at {@code asked}, granted at {@code granted} with a lease valid until {@code validUntil}. */
    Histories acquire(String client, String name, long token, String mode, long asked, long granted, long validUntil) {
        add(Type.INVOKE, client, "section", "acquire", name, null, asked, null, null, null, null, null);
        return add(Type.OK, client, "section", "acquire", name, token, granted, null, null, null, mode, validUntil);
    }

    Histories release(String client, String name, long token, long t, long validUntil) {
        return add(Type.OK, client, "section", "release", name, token, t, null, null, null, null, validUntil);
    }

    /** A fenced read: {@code value} null when the arbiter refused it. */
    Histories read(String client, String name, long token, long from, long to, @Nullable Long value, long order) {
        add(Type.INVOKE, client, "section", "read", name, token, from, null, null, null, null, null);
        return add(value == null ? Type.FAIL : Type.OK, client, "section", "read", name, token, to, value,
                value == null ? "refused" : "accepted", order, null, null);
    }

    Histories write(String client, String name, long token, long value, long from, long to, boolean accepted, long order) {
        add(Type.INVOKE, client, "section", "fenced-write", name, token, from, value, null, null, null, null);
        return add(accepted ? Type.OK : Type.FAIL, client, "section", "fenced-write", name, token, to, value,
                accepted ? "accepted" : "refused", order, null, null);
    }

    /** A fenced write whose answer never came (the worker was killed): outcome unknown. */
    Histories writeUnknown(String client, String name, long token, long value, long from, long infoAt) {
        add(Type.INVOKE, client, "section", "fenced-write", name, token, from, value, null, null, null, null);
        return add(Type.INFO, client, "section", "fenced-write", name, token, infoAt, null, null, null, null, null);
    }

    Histories enqueue(String client, String name, long t) {
        return add(Type.INFO, client, "engine", "enqueue", name, null, t, null, null, null, null, null);
    }

    Histories inLine(String client, String name, long t) {
        return add(Type.INFO, client, "engine", "in-line", name, null, t, null, null, null, null, null);
    }

    Histories fault(String label, long from, long to) {
        add(Type.INVOKE, "nemesis", "nemesis", label, null, null, from, null, null, null, null, null);
        return add(Type.OK, "nemesis", "nemesis", label, null, null, to, null, null, null, null, null);
    }

    History build() {
        List<HistoryEvent> sorted = new ArrayList<>(events);
        sorted.sort(Comparator.comparingLong(HistoryEvent::t));
        return History.of(names, permits, lease, sorted);
    }
}
