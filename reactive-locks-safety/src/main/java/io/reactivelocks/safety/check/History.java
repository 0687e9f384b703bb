package io.reactivelocks.safety.check;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * A recorded history of one safety run (docs/SAFETY.md, "History format"): a {@code run} line, one
 * {@code name} line per lock name with its primitive, then the operation events in the order of their
 * client clocks. Immutable.
 *
 * @param run     the run's settings as written (store, fault, lease in ms, permits, …)
 * @param names   each lock name's primitive: {@code mutex}, {@code semaphore}, {@code rwlock} or {@code fair}
 * @param permits N of the semaphore names
 * @param leaseNanos the lease time
 * @param events  the events, numbered by their place
 */
public record History(Map<String, Object> run, Map<String, String> names, int permits, long leaseNanos, List<HistoryEvent> events) {

    /** Copies the parts and numbers the events by their place. */
    public History {
        run = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(run));
        names = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(names));
        List<HistoryEvent> numbered = new ArrayList<>(events.size());
        for (int i = 0; i < events.size(); i++) {
            numbered.add(events.get(i).at(i));
        }
        events = List.copyOf(numbered);
    }

    /**
     * A history made in code (tests, the harness).
     *
     * @param names      each name's primitive
     * @param permits    N of the semaphore names
     * @param leaseNanos the lease time
     * @param events     the events (numbered here by their place)
     * @return the history
     */
    public static History of(Map<String, String> names, int permits, long leaseNanos, List<HistoryEvent> events) {
        return new History(Map.of("permits", (long) permits, "lease", leaseNanos / 1_000_000), names, permits, leaseNanos, events);
    }

    /**
     * Parses the lines of a history file.
     *
     * @param lines the lines (blank lines are skipped)
     * @return the history
     * @throws IllegalArgumentException on a line that is not a history line
     */
    public static History parse(List<String> lines) {
        Map<String, Object> run = new LinkedHashMap<>();
        Map<String, String> names = new LinkedHashMap<>();
        List<HistoryEvent> events = new ArrayList<>();
        for (String line : lines) {
            if (line.isBlank()) {
                continue;
            }
            Map<String, @Nullable Object> m = Json.parse(line);
            String type = Objects.requireNonNull(str(m, "type"), () -> "no type in " + line);
            switch (type) {
                case "run" -> m.forEach((k, v) -> {
                    if (v != null && !k.equals("type")) {
                        run.put(k, v);
                    }
                });
                case "name" -> names.put(Objects.requireNonNull(str(m, "name"), "name"),
                        Objects.requireNonNull(str(m, "primitive"), "primitive"));
                default -> events.add(new HistoryEvent(events.size(), HistoryEvent.Type.valueOf(type.toUpperCase(java.util.Locale.ROOT)),
                        Objects.requireNonNull(str(m, "client"), "client"), Objects.requireNonNull(str(m, "lane"), "lane"),
                        Objects.requireNonNull(str(m, "op"), "op"), str(m, "name"), num(m, "token"),
                        Objects.requireNonNull(num(m, "t"), () -> "no t in " + line), num(m, "value"), str(m, "verdict"),
                        num(m, "order"), str(m, "mode"), num(m, "validUntil"), str(m, "detail")));
            }
        }
        Long permits = (Long) run.getOrDefault("permits", 1L);
        Long lease = (Long) run.getOrDefault("lease", 0L);
        return new History(run, names, permits.intValue(), lease * 1_000_000, events);
    }

    private static @Nullable String str(Map<String, @Nullable Object> m, String key) {
        Object v = m.get(key);
        return v == null ? null : v.toString();
    }

    private static @Nullable Long num(Map<String, @Nullable Object> m, String key) {
        Object v = m.get(key);
        return v == null ? null : v instanceof Number n ? Long.valueOf(n.longValue()) : Long.valueOf(v.toString());
    }

    /**
     * Reads a history file.
     *
     * @param file the file
     * @return the history
     * @throws UncheckedIOException when it cannot be read
     */
    public static History read(Path file) {
        try {
            return parse(Files.readAllLines(file, StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read history " + file, e);
        }
    }

    /** @return the history's lines: the run line, the name lines, the events */
    public List<String> lines() {
        List<String> lines = new ArrayList<>();
        Map<String, @Nullable Object> r = new LinkedHashMap<>();
        r.put("type", "run");
        r.putAll(run);
        lines.add(Json.write(r));
        for (Map.Entry<String, String> n : names.entrySet()) {
            Map<String, @Nullable Object> m = new LinkedHashMap<>();
            m.put("type", "name");
            m.put("name", n.getKey());
            m.put("primitive", n.getValue());
            lines.add(Json.write(m));
        }
        events.forEach(e -> lines.add(e.toJson()));
        return lines;
    }

    /**
     * Writes the history to a file (its directories made).
     *
     * @param file where
     * @return the file
     * @throws UncheckedIOException when it cannot be written
     */
    public Path write(Path file) {
        try {
            if (file.getParent() != null) {
                Files.createDirectories(file.getParent());
            }
            return Files.write(file, lines(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write history " + file, e);
        }
    }

    /**
     * @param name a lock name
     * @return its primitive ({@code mutex} when the history does not say)
     */
    public String primitiveOf(String name) {
        return names.getOrDefault(name, "mutex");
    }

    /**
     * One operation: its invocation and its completion (ok, fail, or info when the outcome is unknown).
     *
     * @param invoke     the invoke event
     * @param completion the completion
     */
    public record Operation(HistoryEvent invoke, HistoryEvent completion) {
        /** @return whether the operation's outcome is unknown */
        public boolean unknown() {
            return completion.type() == HistoryEvent.Type.INFO;
        }
    }

    /**
     * The operations of kind {@code op}: each invoke paired with the next completion of the same op
     * in its client's lane; an invoke never completed counts as unknown (info at {@code Long.MAX_VALUE}).
     *
     * @param op the operation kind
     * @return the operations in the order of their invocations
     */
    public List<Operation> operations(String op) {
        Map<String, @Nullable HistoryEvent[]> open = new HashMap<>();
        List<@Nullable HistoryEvent[]> pairs = new ArrayList<>();
        for (HistoryEvent e : events) {
            if (!e.op().equals(op)) {
                continue;
            }
            String key = e.client() + "/" + e.lane();
            if (e.type() == HistoryEvent.Type.INVOKE) {
                @Nullable HistoryEvent[] pair = {e, null};
                pairs.add(pair);
                open.put(key, pair);
            } else {
                @Nullable HistoryEvent[] pair = open.remove(key);
                if (pair != null) {
                    pair[1] = e;
                }
            }
        }
        List<Operation> ops = new ArrayList<>();
        for (@Nullable HistoryEvent[] p : pairs) {
            HistoryEvent inv = Objects.requireNonNull(p[0]);
            HistoryEvent done = p[1] != null ? p[1]
                    : new HistoryEvent(-1, HistoryEvent.Type.INFO, inv.client(), inv.lane(), inv.op(), inv.name(), inv.token(),
                            Long.MAX_VALUE, null, null, null, inv.mode(), null, "never completed");
            ops.add(new Operation(inv, done));
        }
        return ops;
    }

    /**
     * One lease as its client saw it.
     *
     * @param client   the client
     * @param name     the lock name
     * @param token    the grant's token
     * @param mode     the grant's mode (m, f, s, r, w)
     * @param asked    when its acquire was invoked
     * @param grant    the acquire's ok event
     * @param end      the release or loss event, or null when the history has none (a killed worker)
     */
    public record Hold(String client, String name, long token, String mode, long asked, HistoryEvent grant, @Nullable HistoryEvent end) {

        /** @return when the lease stopped being valid or used: the end, or its last deadline, whichever came first */
        public long validEnd() {
            long deadline = grant.validUntil() == null ? Long.MAX_VALUE : grant.validUntil();
            if (end == null) {
                return deadline;
            }
            long last = end.validUntil() == null ? deadline : end.validUntil();
            return Math.min(end.t(), last);
        }
    }

    /** @return every granted lease, in the order of the grants */
    public List<Hold> holds() {
        List<Hold> holds = new ArrayList<>();
        Map<String, java.util.ArrayDeque<HistoryEvent>> ends = new HashMap<>(); // client/name/token -> release or loss events
        for (HistoryEvent e : events) {
            if (e.isOk() && (e.op().equals("release") || e.op().equals("loss"))) {
                ends.computeIfAbsent(e.client() + "/" + e.name() + "/" + e.token(), k -> new java.util.ArrayDeque<>()).add(e);
            }
        }
        for (Operation a : operations("acquire")) {
            if (!a.completion().isOk() || a.completion().token() == null || a.completion().name() == null) {
                continue;
            }
            java.util.ArrayDeque<HistoryEvent> candidates = ends.getOrDefault(
                    a.completion().client() + "/" + a.completion().name() + "/" + a.completion().token(), new java.util.ArrayDeque<>());
            while (!candidates.isEmpty() && candidates.peekFirst().index() < a.completion().index()) {
                candidates.pollFirst();
            }
            HistoryEvent end = candidates.pollFirst();
            holds.add(new Hold(a.completion().client(), a.completion().name(), a.completion().token(),
                    a.completion().mode() == null ? "m" : a.completion().mode(), a.invoke().t(), a.completion(), end));
        }
        holds.sort(Comparator.comparingLong(h -> h.grant().t()));
        return holds;
    }
}
