package io.reactivelocks.safety;

import io.reactivelocks.safety.check.History;
import io.reactivelocks.safety.check.HistoryEvent;
import io.reactivelocks.safety.check.HistoryEvent.Type;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * Turns what a run's workers reported (their stdout lines, {@link WorkerProcess.Event}) and the faults
 * applied into the run's history (docs/SAFETY.md, "History format") and writes it as JSON lines.
 * Histories go to {@code target/safety-histories/} of the working directory, or to the directory in the
 * system property {@value #DIR_PROPERTY}.
 */
final class HistoryRecorder {

    /** The system property naming the directory of the histories. */
    static final String DIR_PROPERTY = "safety.histories";

    private HistoryRecorder() {
    }

    /** @return where histories go */
    static Path directory() {
        return Paths.get(System.getProperty(DIR_PROPERTY, "target/safety-histories"));
    }

    /**
     * Writes a run's history under {@code dir}.
     *
     * @param dir       the directory of the histories ({@link #directory()} for a run)
     * @param namespace the run's namespace (unique per run of this JVM)
     * @return the file written
     */
    static Path write(Path dir, SafetyRun.Settings settings, String namespace, List<WorkerProcess.Event> events,
                      List<SafetyRun.Applied> applied, long start, long end) {
        return write(dir, settings, namespace, events, List.of(), applied, start, end);
    }

    /**
     * Writes a run's history under {@code dir}, completed from the arbiter's log (see {@link #record(SafetyRun.Settings,
     * String, List, List, List, long, long)}).
     *
     * @param dir       the directory of the histories ({@link #directory()} for a run)
     * @param namespace the run's namespace (unique per run of this JVM)
     * @param decided   the arbiter's decisions
     * @return the file written
     */
    static Path write(Path dir, SafetyRun.Settings settings, String namespace, List<WorkerProcess.Event> events,
                      List<Arbiter.Op> decided, List<SafetyRun.Applied> applied, long start, long end) {
        History history = record(settings, namespace, events, decided, applied, start, end);
        String primitives = String.join("+", settings.primitives().stream().map(Primitive::label).toList());
        String file = settings.backend().name().toLowerCase(java.util.Locale.ROOT) + "-" + settings.fault().label() + "-" + primitives
                + "-" + namespace + ".jsonl";
        return history.write(dir.resolve(file).toAbsolutePath());
    }

    /** The history of a run (see the class documentation). */
    static History record(SafetyRun.Settings settings, String namespace, List<WorkerProcess.Event> events,
                          List<SafetyRun.Applied> applied, long start, long end) {
        return record(settings, namespace, events, List.of(), applied, start, end);
    }

    /**
     * The history of a run, completed from the arbiter's log: a request the arbiter decided that its worker never
     * reported — a worker killed after it sent the request, whose last lines its parent did not get — is an operation
     * of the history too, its outcome unknown to its client (invoked when the arbiter decided it, answered never).
     */
    static History record(SafetyRun.Settings settings, String namespace, List<WorkerProcess.Event> events,
                          List<Arbiter.Op> decided, List<SafetyRun.Applied> applied, long start, long end) {
        Map<String, Object> run = new LinkedHashMap<>();
        run.put("store", settings.backend().name());
        run.put("fault", settings.fault().label());
        run.put("namespace", namespace);
        run.put("workers", (long) settings.workers());
        run.put("lease", settings.lease().toMillis());
        run.put("permits", (long) settings.permits());
        run.put("seed", settings.seed());
        run.put("start", start);
        run.put("end", end);
        Map<String, String> names = new LinkedHashMap<>();
        for (int i = 0; i < settings.names(); i++) {
            names.put(namespace + "-n" + i, settings.primitiveOf(i).label());
        }
        List<HistoryEvent> out = new ArrayList<>();
        Map<Integer, WorkerProcess.Event> acquiring = new HashMap<>();
        Map<Integer, WorkerProcess.Event> asking = new HashMap<>();
        Map<Integer, Long> killedAt = new HashMap<>();
        for (SafetyRun.Applied a : applied) {
            String label = a.fault().label();
            String hit = (a.worker() >= 0 ? "worker " + a.worker() + " " : "") + String.join(",", a.names());
            out.add(event(Type.INVOKE, "nemesis", "nemesis", label, null, null, a.start(), (long) a.worker(), null, null, null, null, hit));
            out.add(event(Type.OK, "nemesis", "nemesis", label, null, null, a.end(), (long) a.worker(), null, null, null, null, hit));
            if (a.fault() == Fault.KILL_WORKER) {
                killedAt.put(a.worker(), a.end());
            }
        }
        for (WorkerProcess.Event e : events) {
            String c = "w" + e.worker();
            switch (e.type()) {
                case 'Q' -> {
                    acquiring.put(e.worker(), e);
                    out.add(event(Type.INVOKE, c, "section", "acquire", e.name(), null, e.nanos(), null, null, null, null, null, null));
                }
                case 'G' -> {
                    acquiring.remove(e.worker());
                    out.add(event(Type.OK, c, "section", "acquire", e.name(), e.token(), e.nanos(), null, null, null, e.how(),
                            e.validUntil(), null));
                }
                case 'X' -> {
                    WorkerProcess.Event q = acquiring.remove(e.worker());
                    if (q != null) {
                        out.add(event(Type.FAIL, c, "section", "acquire", q.name(), null, e.nanos(), null, null, null, null, null, e.how()));
                    } else {
                        out.add(event(Type.INFO, c, "section", "error", null, null, e.nanos(), null, null, null, null, null, e.how()));
                    }
                }
                case 'O' -> {
                    WorkerProcess.Event unanswered = asking.put(e.worker(), e);
                    if (unanswered != null) { // its answer never came (the arbiter connection timed out): outcome unknown
                        out.add(event(Type.INFO, c, "section", op(unanswered.how().split(" ")[0]), unanswered.name(), unanswered.token(),
                                e.nanos(), null, null, null, null, null, "no answer"));
                    }
                    String[] w = e.how().split(" ");
                    out.add(event(Type.INVOKE, c, "section", op(w[0]), e.name(), e.token(), e.nanos(),
                            w.length > 1 ? Long.valueOf(w[1]) : null, null, null, null, null, null));
                }
                case 'K' -> {
                    WorkerProcess.Event o = asking.remove(e.worker());
                    String[] w = e.how().split(" "); // kind ok|stale value order
                    boolean ok = w[1].equals("ok");
                    Long value = w[0].equals("r") ? (ok ? Long.valueOf(w[2]) : null)
                            : o != null && o.how().contains(" ") ? Long.valueOf(o.how().split(" ")[1]) : null;
                    out.add(event(ok ? Type.OK : Type.FAIL, c, "section", op(w[0]), e.name(), e.token(), e.nanos(), value,
                            ok ? "accepted" : "refused", Long.valueOf(w[3]), null, null, null));
                }
                case 'E' -> {
                    boolean lost = e.how().equals("lost");
                    out.add(event(Type.OK, c, lost ? "hold" : "section", lost ? "loss" : "release", e.name(), e.token(), e.nanos(), null,
                            null, null, null, e.validUntil(), null));
                }
                case 'L' -> out.add(event(Type.INFO, c, "engine", "loss-reason", e.name(), e.token(), e.nanos(), null, null, null, null,
                        null, e.how()));
                case 'V' -> out.add(event(Type.INFO, c, "hold", "late-lease", e.name(), e.token(), e.nanos(), null, null, null, null,
                        e.validUntil(), null));
                case 'I' -> out.add(event(Type.INFO, c, "engine", "enqueue", e.name(), null, e.nanos(), null, null, null, null, null, null));
                case 'A' -> out.add(event(Type.INFO, c, "engine", "in-line", e.name(), null, e.nanos(), null, null, null, null, null, null));
                case 'S' -> out.add(event(Type.INFO, "w" + e.worker(), "jvm", "stall", null, null, e.nanos(), e.validUntil(), null, null, null,
                        null, null));
                default -> {
                    // C (in the section) is the read's ok: not a separate operation
                }
            }
        }
        // operations left open: their worker was killed (or the run ended): outcome unknown
        for (Map<Integer, WorkerProcess.Event> open : List.of(acquiring, asking)) {
            for (WorkerProcess.Event e : open.values()) {
                long t = killedAt.getOrDefault(e.worker(), end);
                String op = e.type() == 'Q' ? "acquire" : op(e.how().split(" ")[0]);
                out.add(event(Type.INFO, "w" + e.worker(), "section", op, e.name(), e.type() == 'Q' ? null : e.token(), Math.max(t, e.nanos()),
                        null, null, null, null, null, killedAt.containsKey(e.worker()) ? "worker killed" : "run ended"));
            }
        }
        // requests only the arbiter saw: not answered to a worker (no K with their order) and not left open (no O)
        java.util.Set<Long> answeredOrders = new java.util.HashSet<>();
        java.util.Set<String> openRequests = new java.util.HashSet<>();
        for (WorkerProcess.Event e : events) {
            if (e.type() == 'K') {
                String[] w = e.how().split(" ");
                answeredOrders.add(Long.valueOf(w[3]));
            }
        }
        for (WorkerProcess.Event e : asking.values()) {
            openRequests.add(e.worker() + " " + e.name() + " " + e.token());
        }
        for (Arbiter.Op op : decided) {
            if (answeredOrders.contains(op.seq()) || openRequests.contains(op.worker() + " " + op.name() + " " + op.token())) {
                continue;
            }
            String kind = op.mode() == 'd' ? "d" : op.write() ? "w" : "r";
            String c = "w" + op.worker();
            out.add(event(Type.INVOKE, c, "section", op(kind), op.name(), op.token(), op.nanos(), op.write() ? op.value() : null,
                    null, null, null, null, null));
            long t = killedAt.getOrDefault(op.worker(), end);
            out.add(event(Type.INFO, c, "section", op(kind), op.name(), op.token(), Math.max(t, op.nanos()), null, null, null, null,
                    null, "decided by the arbiter, never answered to its worker"));
        }
        out.sort(Comparator.comparingLong(HistoryEvent::t)); // stable: a worker's own lines keep their order
        return new History(run, names, settings.permits(), settings.lease().toNanos(), out);
    }

    private static String op(String kind) {
        return switch (kind) {
            case "r" -> "read";
            case "w" -> "fenced-write";
            default -> "done";
        };
    }

    private static HistoryEvent event(Type type, String client, String lane, String op, @Nullable String name, @Nullable Long token,
                                      long t, @Nullable Long value, @Nullable String verdict, @Nullable Long order,
                                      @Nullable String mode, @Nullable Long validUntil, @Nullable String detail) {
        return new HistoryEvent(0, type, client, lane, op, name, token, t, value, verdict, order, mode, validUntil, detail);
    }
}
