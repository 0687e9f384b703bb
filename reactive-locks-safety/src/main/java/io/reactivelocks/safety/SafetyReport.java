package io.reactivelocks.safety;

import io.reactivelocks.test.server.ServerFixture;
import io.reactivelocks.test.server.Topology;
import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import javax.imageio.ImageIO;

/**
 * The long mode of the safety harness: every backend × fault for a given time each, then
 * {@code docs/SAFETY.md} with the figures and {@code docs/safety-timeline.png}, a timeline of one
 * worker-pause run. Run it with {@code reactive-locks-safety/run-long.sh}.
 *
 * <p>Arguments: {@code --duration=PT5M} per run at least, {@code --min-acquisitions=10000} per run at
 * least (a run goes on up to {@code --max-duration}, default three times the duration, to get them),
 * {@code --merge=true} (keep the rows of an existing SAFETY.md for the backends × faults not run now),
 * {@code --import-log=FILE} (take the rows of the summary lines in the log of a run that stopped early),
 * {@code --import=A,B} (earlier SAFETY.md files or logs, oldest first), {@code --backends=none} (only
 * merge what was imported),
 * {@code --backends=REDIS,ETCD},
 * {@code --faults=PAUSE_WORKER,...} (each backend runs those of them that apply to it), {@code --topologies=ETCD_CLUSTER,...}
 * (replicated deployments, {@link SafetyTopology}; none by default), {@code --out=docs}, {@code --primitives=SEMAPHORE,RWLOCK,FAIR}
 * (default {@code MUTEX}: the other primitives run one primitive per run, and their rows go to a
 * section of SAFETY.md of their own, merged by primitive, backend and fault, which the mutex
 * report keeps), {@code --workers=8}, {@code --names=8} (of the runs of the other primitives), {@code --dump=DIR} (their events and arbiter decisions
 * when a run fails a check).
 */
public final class SafetyReport {

    private SafetyReport() {
    }

    /**
     * Runs the long mode.
     *
     * @param args see the class documentation
     * @throws Exception when a run cannot be carried out
     */
    public static void main(String[] args) throws Exception {
        Map<String, String> a = new LinkedHashMap<>();
        for (String arg : args) {
            int eq = arg.indexOf('=');
            if (!arg.startsWith("--") || eq < 0) {
                throw new IllegalArgumentException("arguments are --name=value, got " + arg);
            }
            a.put(arg.substring(2, eq), arg.substring(eq + 1));
        }
        Duration duration = Duration.parse(a.getOrDefault("duration", "PT5M"));
        Duration maxDuration = Duration.parse(a.getOrDefault("max-duration", duration.multipliedBy(3).toString()));
        long minAcquisitions = Long.parseLong(a.getOrDefault("min-acquisitions", "10000"));
        List<SafetyStore> backends = new ArrayList<>();
        String backendList = a.getOrDefault("backends", "REDIS,POSTGRESQL,MARIADB,ETCD,ZOOKEEPER");
        for (String b : backendList.equals("none") ? new String[0] : backendList.split(",")) {
            backends.add(SafetyBackend.valueOf(b.trim()));
        }
        for (String t : a.getOrDefault("topologies", "").split(",")) {
            if (!t.isBlank()) {
                backends.add(SafetyTopology.valueOf(t.trim()));
            }
        }
        List<Fault> faults = new ArrayList<>();
        for (String f : a.getOrDefault("faults", String.join(",", names(Fault.values()))).split(",")) {
            faults.add(Fault.valueOf(f.trim()));
        }
        Path out = Paths.get(a.getOrDefault("out", "docs"));
        boolean merge = Boolean.parseBoolean(a.getOrDefault("merge", "false"));
        Files.createDirectories(out);

        long started = System.nanoTime();
        Path md = out.resolve("SAFETY.md");
        Path png = out.resolve("safety-timeline.png");
        Previous previous = merge && Files.exists(md) ? Previous.read(md) : new Previous();
        if (a.containsKey("import-log")) {
            previous.importLog(Paths.get(a.get("import-log")));
        }
        if (a.containsKey("import")) {
            // earlier reports or logs, oldest first: a later one replaces the rows of the same backend and fault
            for (String f : a.get("import").split(",")) {
                Path from = Paths.get(f.trim());
                if (f.trim().endsWith(".md")) {
                    previous.importReport(Previous.read(from));
                } else {
                    previous.importLog(from);
                }
            }
        }
        String plotCaption = previous.plotCaption != null && Files.exists(png) ? previous.plotCaption : null;
        String commit = commit();
        List<Primitive> primitives = new ArrayList<>();
        for (String p : a.getOrDefault("primitives", "MUTEX").split(",")) {
            primitives.add(Primitive.valueOf(p.trim()));
        }
        if (!primitives.contains(Primitive.MUTEX)) {
            int workers = Integer.parseInt(a.getOrDefault("workers", "8"));
            int names = Integer.parseInt(a.getOrDefault("names", "8"));
            boolean safe = true;
            List<SafetyCheck.Verdict> done = new ArrayList<>();
            for (Primitive primitive : primitives) {
                for (SafetyStore store : backends) {
                    if (!(store instanceof SafetyBackend backend)) {
                        continue; // the other primitives run on single servers
                    }
                    try (ServerFixture server = backend.start()) {
                        for (Fault fault : faults) {
                            if (!fault.appliesTo(backend)) {
                                continue;
                            }
                            SafetyRun.Settings l = SafetyRun.Settings.longMode(backend, fault, duration, minAcquisitions, maxDuration);
                            SafetyRun.Settings settings = new SafetyRun.Settings(backend, fault, workers, names, l.lease(), l.settle(),
                                    duration, minAcquisitions, maxDuration, l.seed(), List.of(primitive), l.permits());
                            SafetyRun.Outcome outcome = SafetyRun.run(server, settings);
                            SafetyCheck.Verdict v = SafetyCheck.judge(outcome);
                            System.out.println("[safety] " + v.summary());
                            if (!v.safe() && a.containsKey("dump")) { // the whole run, to read what happened
                                Path dump = Paths.get(a.get("dump"), primitive.label() + "-" + key(settings).replace(' ', '-') + ".txt");
                                Files.createDirectories(dump.getParent());
                                List<String> lines = new ArrayList<>();
                                outcome.events().forEach(e -> lines.add(e.toString()));
                                outcome.ops().forEach(op -> lines.add(op.toString()));
                                Files.write(dump, lines);
                            }
                            v.details().forEach(d -> System.out.println("[safety]   " + d));
                            printHistoryVerdicts(outcome);
                            safe &= v.safe();
                            done.add(v);
                            String command = "`reactive-locks-safety/run-long.sh" + (args.length == 0 ? "" : " " + String.join(" ", args))
                                    + "` on " + LocalDate.now() + " at commit " + commit + " (took "
                                    + Duration.ofNanos(System.nanoTime() - started).toMinutes() + " min so far)";
                            String text = Files.exists(md) ? Files.readString(md, StandardCharsets.UTF_8) : "";
                            Files.writeString(md, withPrimitives(text, done, command), StandardCharsets.UTF_8);
                        }
                    }
                }
            }
            System.out.println("wrote " + md);
            System.exit(safe ? 0 : 1);
        }
        SafetyRun.Settings shape = SafetyRun.Settings.longMode(SafetyBackend.REDIS, Fault.PAUSE_WORKER, duration, minAcquisitions, maxDuration);
        List<SafetyCheck.Verdict> verdicts = new ArrayList<>();
        for (SafetyStore backend : backends) {
            try (AutoCloseable server = backend instanceof SafetyBackend b ? b.start() : ((SafetyTopology) backend).start()) {
                for (Fault fault : faults) {
                    if (!fault.appliesTo(backend)) {
                        continue;
                    }
                    SafetyRun.Settings settings = SafetyRun.Settings.longMode(backend, fault, duration, minAcquisitions, maxDuration);
                    SafetyCheck.Verdict v = SafetyCheck.judge(server instanceof ServerFixture f ? SafetyRun.run(f, settings)
                            : SafetyRun.run((Topology) server, settings));
                    System.out.println("[safety] " + v.summary());
                    v.details().forEach(d -> System.out.println("[safety]   " + d));
                    printHistoryVerdicts(v.outcome());
                    verdicts.add(v);
                    if (fault == Fault.PAUSE_WORKER && v.staleWritesRejected() > 0 && !plotted(verdicts, v)) {
                        timeline(v, png);
                        plotCaption = backend.name().toLowerCase(Locale.ROOT);
                    }
                    // written after every run, so that what ran is kept if a later run cannot finish
                    String command = "`reactive-locks-safety/run-long.sh" + (args.length == 0 ? "" : " " + String.join(" ", args))
                            + "` on " + LocalDate.now() + " at commit " + commit + " (took "
                            + Duration.ofNanos(System.nanoTime() - started).toMinutes() + " min)";
                    write(md, markdown(verdicts, previous, command, plotCaption, shape), previous);
                }
            }
        }
        if (backends.isEmpty()) {
            write(md, markdown(verdicts, previous, null, plotCaption, shape), previous);
        }
        System.out.println("wrote " + md + (plotCaption == null ? "" : " and " + png));
        boolean safe = verdicts.stream().allMatch(SafetyCheck.Verdict::safe);
        System.exit(safe ? 0 : 1);
    }

    /** @return whether an earlier pause run of this invocation already drew the timeline */
    private static boolean plotted(List<SafetyCheck.Verdict> verdicts, SafetyCheck.Verdict current) {
        for (SafetyCheck.Verdict v : verdicts) {
            if (v == current) {
                return false;
            }
            if (v.outcome().settings().fault() == Fault.PAUSE_WORKER && v.staleWritesRejected() > 0) {
                return true;
            }
        }
        return false;
    }

    /** @return the checkout's commit, or "unknown" outside a git work tree */
    private static String commit() {
        try {
            Process p = new ProcessBuilder("git", "rev-parse", "--short", "HEAD").redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
            return p.waitFor() == 0 && !out.isEmpty() ? out : "unknown";
        } catch (IOException e) {
            return "unknown";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "unknown";
        }
    }

    /** @return the single-server backends, then the replicated deployments: the order of the report's rows */
    /** Prints what the checkers of the run's history say (they do not change the report's tables). */
    private static void printHistoryVerdicts(SafetyRun.Outcome outcome) {
        if (outcome.history() == null) {
            return;
        }
        System.out.println("[history] " + outcome.history());
        for (io.reactivelocks.safety.check.CheckVerdict c
                : io.reactivelocks.safety.check.HistoryChecker.checkAll(io.reactivelocks.safety.check.History.read(outcome.history()))) {
            System.out.println("[history]   " + c.toString().replace("\n", "\n[history]   "));
        }
    }

    static List<SafetyStore> stores() {
        List<SafetyStore> all = new ArrayList<>(List.of(SafetyBackend.values()));
        all.addAll(List.of(SafetyTopology.values()));
        return all;
    }

    private static List<String> names(Fault[] faults) {
        List<String> n = new ArrayList<>();
        for (Fault f : faults) {
            n.add(f.name());
        }
        return n;
    }

    /** What an earlier SAFETY.md held, for {@code --merge=true}: its runs, rows and notes by backend and fault. */
    static final class Previous {
        final List<String> commands = new ArrayList<>();
        String primitivesBlock = "";
        final Map<String, String> rows = new LinkedHashMap<>();
        final Map<String, List<String>> notes = new LinkedHashMap<>();
        String plotCaption;

        static Previous read(Path md) throws IOException {
            Previous p = new Previous();
            String text = Files.readString(md, StandardCharsets.UTF_8);
            int from = text.indexOf(BEGIN);
            int to = text.indexOf(END);
            if (from >= 0 && to > from) {
                p.primitivesBlock = text.substring(from, to + END.length());
                text = text.substring(0, from) + text.substring(to + END.length());
            }
            for (String line : text.split("\n")) {
                if (line.startsWith("- `reactive-locks-safety/run-long.sh") || line.startsWith("- rows of ")) {
                    p.commands.add(line.substring(2));
                } else if (line.startsWith("| ") && !line.startsWith("| backend") && !line.startsWith("|---")) {
                    String[] cells = line.split("\\|");
                    p.rows.put(cells[1].trim() + " " + cells[2].trim(), line);
                } else if (line.startsWith("- ") && line.contains(": ") && line.indexOf(' ', 2) > 0) {
                    String[] words = line.substring(2).split(" ", 3);
                    if (words.length == 3 && isBackend(words[0])) {
                        p.notes.computeIfAbsent(words[0] + " " + words[1].replace(":", ""), k -> new ArrayList<>()).add(line);
                    }
                } else if (line.startsWith("Timeline of a worker-pause run (")) {
                    p.plotCaption = line.substring("Timeline of a worker-pause run (".length(), line.indexOf(')'));
                }
            }
            return p;
        }

        private static final java.util.regex.Pattern SUMMARY = java.util.regex.Pattern.compile(
                "^\\[safety\\] (\\w+) ([\\w-]+): acquisitions (\\d+), stale writes accepted (\\d+), lost updates (\\d+), "
                        + "token order violations (\\d+), held past validity (\\d+), left on server (\\d+) \\| stale writes rejected (\\d+), "
                        + "overlaps (\\d+) \\((\\d+) ms\\), takeover p50/p99 (\\S+)/(\\S+) ms, loss detected p50/p99 (\\S+)/(\\S+) ms, "
                        + "losses (\\d+) \\(([\\d.]+)%\\), failed acquires (\\d+), faults (\\d+)(.*)$");

        /** Takes another report's runs, rows and notes, replacing rows of the same backend and fault. */
        void importReport(Previous other) {
            commands.addAll(other.commands);
            other.rows.forEach((k, v) -> {
                rows.put(k, v);
                notes.remove(k);
            });
            notes.putAll(other.notes);
            if (other.plotCaption != null) {
                plotCaption = other.plotCaption;
            }
        }

        /**
         * Takes the rows of the summary lines a run printed (for a run that ended before it could
         * write its report), replacing rows of the same backend and fault.
         */
        void importLog(Path log) throws IOException {
            int imported = 0;
            for (String line : Files.readAllLines(log, StandardCharsets.UTF_8)) {
                java.util.regex.Matcher m = SUMMARY.matcher(line);
                if (!m.matches()) {
                    continue;
                }
                String key = m.group(1) + " " + m.group(2);
                rows.put(key, String.format(Locale.ROOT, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s (%s) | %s/%s | %s/%s | %s (%s%%) | %s | %s |",
                        m.group(1), m.group(2), m.group(3), m.group(4), m.group(5), m.group(6), m.group(7), m.group(8), m.group(9),
                        m.group(10), m.group(11), m.group(12), m.group(13), m.group(14), m.group(15), m.group(16), m.group(17),
                        m.group(18), m.group(19)));
                notes.remove(key);
                if (m.group(20).contains("problems: ")) {
                    notes.put(key, List.of("- " + key + ": harness problem: " + m.group(20).substring(m.group(20).indexOf("problems: ") + 10)));
                }
                imported++;
            }
            Path about = log.resolveSibling("command.txt"); // how that run was started, when someone noted it
            String how = Files.exists(about) ? " of " + Files.readString(about, StandardCharsets.UTF_8).trim() : "";
            commands.add("rows of " + imported + " runs imported from the summary lines of `" + log.getFileName()
                    + "` (`--import-log`), the log" + how + ", a long run that stopped before writing its report");
        }

        private static boolean isBackend(String word) {
            for (SafetyStore b : stores()) {
                if (b.name().toLowerCase(Locale.ROOT).equals(word)) {
                    return true;
                }
            }
            return false;
        }
    }

    static String key(SafetyRun.Settings s) {
        return s.backend().name().toLowerCase(Locale.ROOT) + " " + s.fault().label();
    }

    static String markdown(List<SafetyCheck.Verdict> verdicts, Previous previous, String command, String plotCaption,
                           SafetyRun.Settings shape) {
        Map<String, String> rows = new LinkedHashMap<>(previous.rows);
        Map<String, List<String>> notes = new LinkedHashMap<>(previous.notes);
        for (SafetyCheck.Verdict v : verdicts) {
            String key = key(v.outcome().settings());
            notes.remove(key);
            List<String> n = new ArrayList<>();
            v.problems().forEach(p -> n.add("- " + key + ": harness problem: " + p));
            v.details().forEach(d -> n.add("- " + key + ": " + d));
            if (!n.isEmpty()) {
                notes.put(key, n);
            }
            rows.put(key, row(v));
        }
        List<String> order = new ArrayList<>();
        for (SafetyStore b : stores()) {
            for (Fault f : Fault.values()) {
                if (f.appliesTo(b)) {
                    order.add(b.name().toLowerCase(Locale.ROOT) + " " + f.label());
                }
            }
        }
        StringBuilder b = new StringBuilder();
        b.append("# Safety: fault runs against every backend\n\n");
        b.append("Runs that produced the figures below (the table merges them; a later run of a backend × fault replaces "
                + "the earlier row):\n\n");
        previous.commands.forEach(c -> b.append("- ").append(c).append('\n'));
        if (command != null) {
            b.append("- ").append(command).append('\n');
        } else {
            b.append("- this file assembled from them with `SafetyReport --backends=none --import=…` (oldest first) on ")
                    .append(LocalDate.now()).append('\n');
        }
        b.append('\n');
        b.append("Machine: ").append(Runtime.getRuntime().availableProcessors()).append(" cores, ")
                .append(System.getProperty("os.name")).append(' ').append(System.getProperty("os.version")).append(", Java ")
                .append(System.getProperty("java.version")).append(", harness heap max ")
                .append(ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getMax() >> 20).append(" MiB.\n\n");
        SafetyRun.Settings s = verdicts.isEmpty() ? shape : verdicts.get(0).outcome().settings();
        if (s != null) {
            b.append("Each run: ").append(s.workers()).append(" worker JVMs × ").append(s.names()).append(" lock names for at least ")
                    .append(s.duration().toSeconds()).append(" s and, where it could be had within the run's `--max-duration`, ")
                    .append(s.minAcquisitions()).append(" acquisitions; lease ")
                    .append(s.lease().toMillis()).append(" ms; a fault cycle every ").append(s.settle().toSeconds())
                    .append(" s of undisturbed work plus the fault's length (two lease times for pauses and partitions — a "
                            + "paused worker stays frozen, up to eight lease times more, until another worker was granted its "
                            + "name — three under latency); servers are the Debian packages started by the test fixtures "
                            + "(Redis without persistence, PostgreSQL with fsync off, one etcd member, one ZooKeeper server).\n\n");
        }
        b.append("How a run works (see `SafetyRun`, `Worker`, `Arbiter`, `SafetyCheck`): each worker loops — hold a random "
                + "name, read the name's counter from the arbiter with its token, wait 0–10 ms (one section in a hundred: "
                + "one to two renewal intervals), write counter + 1 with its token, release. The arbiter (a fenced register "
                + "in the harness process) refuses any read or write whose token is lower than the highest it has seen for "
                + "the name; its arrival order is the ground truth. The faulted worker is caught between its read and its "
                + "write.\n\n");
        b.append("Hard checks: **I1** stale writes accepted (an accepted write not immediately preceded, among accepted "
                + "requests on the name, by the same lease's read), **I2** lost updates (an accepted write that is not the "
                + "previous value + 1), **I3** token order (grants of a name not strictly increasing, across server restarts), "
                + "**I4** held past validity (a lease emitted after its deadline, or a hold that ended more than "
                + SafetyCheck.LATENESS.toMillis() + " ms after its last reported deadline in a worker that was not frozen), "
                + "**I5** left on the server after shutdown.\n\n");
        b.append("| backend | fault | acquisitions | I1 | I2 | I3 | I4 | I5 | stale writes rejected | overlaps (ms) | "
                + "takeover p50/p99 ms | loss detected p50/p99 ms | losses (rate) | failed acquires | faults |\n");
        b.append("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---|---:|---:|---:|\n");
        for (String k : order) {
            if (rows.containsKey(k)) {
                b.append(rows.get(k)).append('\n');
            }
        }
        b.append('\n');
        List<String> short_ = new ArrayList<>();
        for (String k : order) {
            String row = rows.get(k);
            if (row != null && s != null) {
                String[] cells = row.split("\\|");
                if (Long.parseLong(cells[3].trim()) < s.minAcquisitions()) {
                    short_.add(k + " (" + cells[3].trim() + ")");
                }
            }
        }
        if (!short_.isEmpty()) {
            b.append("Runs that stayed below ").append(s.minAcquisitions()).append(" acquisitions within their cap — the store's "
                    + "throughput under that fault (every restart or pause stalls all workers for seconds, latency slows every "
                    + "request): ").append(String.join(", ", short_)).append(".\n\n");
        }
        b.append("Violations and harness problems (the first few of each run):\n\n");
        boolean any = false;
        for (String k : order) {
            for (String line : notes.getOrDefault(k, List.of())) {
                b.append(line).append('\n');
                any = true;
            }
        }
        b.append(any ? "\n" : "- none: every fault found its target, every worker stopped cleanly, no check failed.\n\n");
        b.append("Reading the diagnostics: *overlaps* are pairs of holds on one name by different workers that both "
                + "believed they held the lock at once — under a worker pause they must be > 0 (the frozen worker cannot "
                + "know), and the fencing is what keeps I1/I2 at zero; after a restart of a Redis without persistence they "
                + "are > 0 too (the restarted server has forgotten the lock while its holder still has time left on its lease: "
                + "Redis without persistence is not a safe lock store across restarts, fencing or not — see the README); "
                + "*takeover* is from the SIGKILL of a holder to the next grant of its lock (bounded by the lease or session "
                + "TTL); *loss detected* is from the start of a server pause, restart or partition to the hold stream completing "
                + "in a holder it caught; *losses* under latency are false losses; *failed acquires* are waits that ended in a "
                + "timeout or store error (expected while the server is down).\n\n");
        if (plotCaption != null) {
            b.append("Timeline of a worker-pause run (").append(plotCaption)
                    .append("), around the first pause: each lane is a worker, bars are the holds of the paused name "
                            + "with their tokens, the shaded band is the SIGSTOP, the red cross the late write the arbiter "
                            + "refused.\n\n![timeline](safety-timeline.png)\n\n");
        }
        b.append("The short mode (one fault cycle per backend × fault) runs in the build: `*SafetyShortModeTest` (one class per backend). "
                + "The bad-input catalogue is in [BAD-INPUT.md](BAD-INPUT.md).\n");
        if (!previous.primitivesBlock.isEmpty()) {
            b.append('\n').append(previous.primitivesBlock).append('\n');
        }
        return b.toString();
    }

    static final String BEGIN = "<!-- primitives:begin (written by SafetyReport --primitives=...; rows merged by primitive, backend and fault) -->";
    static final String END = "<!-- primitives:end -->";
    /** Opens the part of SAFETY.md this report writes in mutex mode; the rest of the page is kept as it is. */
    static final String MUTEX_BEGIN = "<!-- mutex:begin (written by SafetyReport; the rest of this page is kept as it is) -->";
    /** Closes the part of SAFETY.md this report writes in mutex mode. */
    static final String MUTEX_END = "<!-- mutex:end -->";

    /**
     * Writes the mutex report: into the part between {@link #MUTEX_BEGIN} and {@link #MUTEX_END} of
     * an existing page, keeping every hand-written section and the primitives block where they are;
     * a page without those markers is written whole, as before.
     */
    static void write(Path md, String report, Previous previous) throws IOException {
        String existing = Files.exists(md) ? Files.readString(md, StandardCharsets.UTF_8) : "";
        Files.writeString(md, keepingTheRest(existing, report, previous.primitivesBlock), StandardCharsets.UTF_8);
    }

    /**
     * @param existing        the page as it is ("" when there is none)
     * @param report          what {@link #markdown} wrote (ending with the primitives block, if any)
     * @param primitivesBlock the primitives block {@code report} carries, to leave where it is in the page
     * @return the page with the mutex part replaced, or {@code report} when the page has no mutex part
     */
    static String keepingTheRest(String existing, String report, String primitivesBlock) {
        int from = existing.indexOf(MUTEX_BEGIN);
        int to = existing.indexOf(MUTEX_END);
        if (from < 0 || to < from) {
            return report;
        }
        String mutex = primitivesBlock.isEmpty() ? report : report.replace(primitivesBlock, "").stripTrailing() + "\n";
        return existing.substring(0, from) + MUTEX_BEGIN + "\n" + mutex + existing.substring(to);
    }

    /**
     * Puts the section of the other primitives into {@code text} (an existing SAFETY.md, or empty):
     * the runs, the rows (the earlier ones of the section, replaced by the same primitive × backend
     * × fault of {@code verdicts}) and their notes.
     *
     * @param text     the file as it is
     * @param verdicts this invocation's runs so far
     * @param command  how it was started
     * @return the file with the section replaced (or appended)
     */
    static String withPrimitives(String text, List<SafetyCheck.Verdict> verdicts, String command) {
        int from = text.indexOf(BEGIN);
        int to = text.indexOf(END);
        String before = from < 0 ? text : text.substring(0, from);
        String after = from < 0 || to < 0 ? "" : text.substring(to + END.length());
        String block = from < 0 || to < 0 ? "" : text.substring(from, to);
        List<String> commands = new ArrayList<>();
        Map<String, String> rows = new LinkedHashMap<>();
        Map<String, List<String>> notes = new LinkedHashMap<>();
        for (String line : block.split("\n")) {
            if (line.startsWith("- `reactive-locks-safety/run-long.sh")) {
                commands.add(line.substring(2));
            } else if (line.startsWith("| ") && !line.startsWith("| primitive") && !line.startsWith("|---")) {
                String[] c = line.split("\\|");
                rows.put(c[1].trim() + " " + c[2].trim() + " " + c[3].trim(), line);
            } else if (line.startsWith("- ") && line.split(" ").length > 4 && line.split(" ")[3].endsWith(":")) {
                String[] w = line.substring(2).split(" ");
                notes.computeIfAbsent(w[0] + " " + w[1] + " " + w[2].replace(":", ""), k -> new ArrayList<>()).add(line);
            }
        }
        if (commands.isEmpty() || !commands.get(commands.size() - 1).startsWith(command.substring(0, command.indexOf(" on ")))) {
            commands.add(command);
        } else {
            commands.set(commands.size() - 1, command);
        }
        for (SafetyCheck.Verdict v : verdicts) {
            SafetyRun.Settings s = v.outcome().settings();
            String key = v.primitives() + " " + key(s);
            rows.put(key, primitiveRow(v));
            List<String> n = new ArrayList<>();
            v.problems().forEach(p -> n.add("- " + key + ": harness problem: " + oneLine(p)));
            v.details().forEach(d -> n.add("- " + key + ": " + d));
            notes.remove(key);
            if (!n.isEmpty()) {
                notes.put(key, n);
            }
        }
        List<String> order = new ArrayList<>();
        for (Primitive p : Primitive.values()) {
            for (SafetyBackend b : SafetyBackend.values()) {
                for (Fault f : Fault.values()) {
                    order.add(p.label() + " " + b.name().toLowerCase(Locale.ROOT) + " " + f.label());
                }
            }
        }
        SafetyRun.Settings s = verdicts.isEmpty() ? null : verdicts.get(verdicts.size() - 1).outcome().settings();
        StringBuilder b = new StringBuilder();
        b.append(BEGIN).append('\n');
        b.append("## Semaphore, read-write lock and fair lock under faults (I6, I7, FIFO)\n\n");
        b.append("Runs that produced the rows below (a later run of a primitive × backend × fault replaces the earlier row):\n\n");
        commands.forEach(c -> b.append("- ").append(c).append('\n'));
        b.append('\n');
        if (s != null) {
            b.append("Each run: one primitive, ").append(s.workers()).append(" worker JVMs × ").append(s.names())
                    .append(" names for at least ").append(s.duration().toSeconds()).append(" s; lease ").append(s.lease().toMillis())
                    .append(" ms; semaphores with N = ").append(s.permits()).append("; a fault cycle every ")
                    .append(s.settle().toSeconds()).append(" s plus the fault's length. While a worker is frozen or cut off, "
                            + "the others take only its name (so that its permit or lock is taken over while it is away). "
                            + "Fair-lock runs: the time before each fault is a burst on one fair name (every worker takes only it, "
                            + "so that the others queue behind its holder), the first one at least "
                            + SafetyRun.FAIR_BURST_LEASES + " lease times and, on a slow machine, until the line has turned over "
                            + SafetyRun.FAIR_BURST_GRANTS + " times (at most " + SafetyRun.FAIR_BURST_MAX_EXTRA_LEASES + " lease times more).\n\n");
        }
        b.append("| primitive | backend | fault | acquisitions | I1 | I2 | I3 | I4 | I5 | I6 | I7 | FIFO (pairs judged) | "
                + "stale writes rejected | slots evicted | overlaps (ms) | losses (rate) | failed acquires | faults |\n");
        b.append("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
        for (String k : order) {
            if (rows.containsKey(k)) {
                b.append(rows.get(k)).append('\n');
            }
        }
        b.append("\nViolations and harness problems (the first few of each run):\n\n");
        boolean any = false;
        for (String k : order) {
            for (String line : notes.getOrDefault(k, List.of())) {
                b.append(line).append('\n');
                any = true;
            }
        }
        b.append(any ? "\n" : "- none: every fault found its target, every worker stopped cleanly, no check failed.\n\n");
        b.append("The rules of the arbiter and of I6, I7 and FIFO are described in the section above this table.\n");
        return before + b + END + after;
    }

    /** @return {@code s} on one line, at most 300 characters (a worker's stderr tail can be long) */
    static String oneLine(String s) {
        String line = s.replaceAll("\\s+", " ").trim();
        return line.length() <= 300 ? line : line.substring(0, 297) + "...";
    }

    static String primitiveRow(SafetyCheck.Verdict v) {
        SafetyRun.Settings rs = v.outcome().settings();
        return String.format(Locale.ROOT, "| %s | %s | %s | %d | %d | %d | %d | %d | %d | %d | %d | %d (%d) | %d | %d | %d (%d) | %d (%.2f%%) | %d | %d |",
                v.primitives(), rs.backend().name().toLowerCase(Locale.ROOT), rs.fault().label(), v.acquisitions(), v.staleWritesAccepted(),
                v.lostUpdates(), v.tokenOrder(), v.heldPastValidity(), v.leftOnServer(), v.permitOverflow(), v.rwConflicts(),
                v.fifoViolations(), v.fifoPairs(), v.staleWritesRejected(), v.evictions(), v.overlaps(), v.overlapMillis(), v.losses(),
                v.acquisitions() == 0 ? 0.0 : 100.0 * v.losses() / v.acquisitions(), v.errors(), v.outcome().applied().size());
    }

    static String row(SafetyCheck.Verdict v) {
        SafetyRun.Settings rs = v.outcome().settings();
        return String.format(Locale.ROOT, "| %s | %s | %d | %d | %d | %d | %d | %d | %d | %d (%d) | %s/%s | %s/%s | %d (%.2f%%) | %d | %d |",
                rs.backend().name().toLowerCase(Locale.ROOT), rs.fault().label(), v.acquisitions(), v.staleWritesAccepted(),
                v.lostUpdates(), v.tokenOrder(), v.heldPastValidity(), v.leftOnServer(), v.staleWritesRejected(),
                v.overlaps(), v.overlapMillis(), SafetyCheck.pct(v.takeover(), 50), SafetyCheck.pct(v.takeover(), 99),
                SafetyCheck.pct(v.detect(), 50), SafetyCheck.pct(v.detect(), 99), v.losses(),
                v.acquisitions() == 0 ? 0.0 : 100.0 * v.losses() / v.acquisitions(), v.errors(), v.outcome().applied().size());
    }

    /** Draws the holds of the paused name around the first pause of {@code v}'s run. */
    static void timeline(SafetyCheck.Verdict v, Path png) throws IOException {
        SafetyRun.Outcome o = v.outcome();
        SafetyRun.Applied pause = o.applied().stream().filter(a -> a.fault() == Fault.PAUSE_WORKER).findFirst().orElseThrow();
        String name = pause.names().get(0);
        long from = pause.start() - Duration.ofMillis(800).toNanos();
        long to = pause.end() + Duration.ofMillis(1500).toNanos();
        List<SafetyCheck.Interval> holds = SafetyCheck.intervals(o).stream()
                .filter(i -> i.name().equals(name) && i.end() > from && i.start() < to).toList();
        TreeMap<Integer, Integer> lanes = new TreeMap<>();
        for (SafetyCheck.Interval i : holds) {
            lanes.putIfAbsent(i.worker(), 0);
        }
        lanes.putIfAbsent(pause.worker(), 0);
        int lane = 0;
        for (Map.Entry<Integer, Integer> e : lanes.entrySet()) {
            e.setValue(lane++);
        }
        int w = 1400;
        int left = 110;
        int right = 30;
        int top = 50;
        int laneH = 60;
        int h = top + lanes.size() * laneH + 70;
        BufferedImage img = new BufferedImage(w, h, BufferedImage.TYPE_INT_RGB);
        Graphics2D g = img.createGraphics();
        g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
        g.setColor(Color.WHITE);
        g.fillRect(0, 0, w, h);
        double scale = (w - left - right) / (double) (to - from);
        java.util.function.LongToIntFunction x = t -> left + (int) Math.round((Math.max(from, Math.min(to, t)) - from) * scale);
        g.setColor(new Color(255, 225, 225));
        g.fillRect(x.applyAsInt(pause.start()), top - 10, x.applyAsInt(pause.end()) - x.applyAsInt(pause.start()), lanes.size() * laneH + 10);
        g.setColor(Color.BLACK);
        g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 15));
        g.drawString(o.settings().backend().name().toLowerCase(Locale.ROOT) + ": holds of lock '" + name
                + "' around a SIGSTOP of worker " + pause.worker(), left, 25);
        g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 12));
        for (Map.Entry<Integer, Integer> e : lanes.entrySet()) {
            int y = top + e.getValue() * laneH;
            g.setColor(Color.DARK_GRAY);
            g.drawString("worker " + e.getKey(), 10, y + laneH / 2);
            g.setColor(new Color(230, 230, 230));
            g.drawLine(left, y + laneH - 5, w - right, y + laneH - 5);
        }
        Color[] palette = {new Color(70, 130, 180), new Color(60, 160, 90), new Color(200, 140, 40), new Color(140, 90, 170), new Color(90, 90, 90)};
        for (SafetyCheck.Interval i : holds) {
            int y = top + lanes.get(i.worker()) * laneH + 12;
            int x0 = x.applyAsInt(i.start());
            int x1 = Math.max(x0 + 2, x.applyAsInt(i.end()));
            g.setColor(palette[(int) Math.floorMod(i.token(), palette.length)]);
            g.fillRect(x0, y, x1 - x0, 22);
            if (x1 - x0 > 40) {
                g.setColor(Color.WHITE);
                g.drawString(Long.toString(i.token()), x0 + 3, y + 16);
            }
            if (i.lost()) {
                g.setColor(Color.BLACK);
                g.drawString("lost", x1 + 3, y + 16);
            }
        }
        g.setStroke(new BasicStroke(3f));
        for (Arbiter.Op op : o.ops()) {
            if (!op.name().equals(name) || op.nanos() < from || op.nanos() > to || !op.write() || op.accepted()) {
                continue;
            }
            Integer l = lanes.get(op.worker());
            if (l == null) {
                continue;
            }
            int cx = x.applyAsInt(op.nanos());
            int cy = top + l * laneH + 23;
            g.setColor(Color.RED);
            g.drawLine(cx - 8, cy - 8, cx + 8, cy + 8);
            g.drawLine(cx - 8, cy + 8, cx + 8, cy - 8);
            g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 12));
            g.drawString("stale write (token " + op.token() + ") refused", Math.min(cx + 12, w - 230), cy + 28);
        }
        g.setStroke(new BasicStroke(1f));
        g.setColor(Color.DARK_GRAY);
        g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 12));
        int axisY = top + lanes.size() * laneH + 15;
        g.drawLine(left, axisY, w - right, axisY);
        long spanMs = Duration.ofNanos(to - from).toMillis();
        for (long ms = 0; ms <= spanMs; ms += 500) {
            int tx = x.applyAsInt(from + Duration.ofMillis(ms).toNanos());
            g.drawLine(tx, axisY, tx, axisY + 5);
            g.drawString(String.format(Locale.ROOT, "%.1f s", (ms - Duration.ofNanos(pause.start() - from).toMillis()) / 1000.0), tx - 15, axisY + 20);
        }
        g.drawString("time from the SIGSTOP; bars: holds as the worker believed them, labelled with their fencing token", left, axisY + 45);
        g.dispose();
        ImageIO.write(img, "png", png.toFile());
    }
}
