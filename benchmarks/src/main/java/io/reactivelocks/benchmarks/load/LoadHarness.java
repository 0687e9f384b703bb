package io.reactivelocks.benchmarks.load;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * The load harness: starts each server like the tests do (reactive-locks-test fixtures: the
 * Debian-packaged binaries as child processes on loopback ports), runs B1, B3, B4 and B7 against
 * it with every contender in the same JVM, and B8 (the new primitives against Redisson and Curator), and writes {@code docs/BENCHMARKS.md} with the plots.
 * B5 (JMH) runs in its own JVM first; its CSV is read here. Run it through {@code benchmarks/run.sh}.
 *
 * <pre>
 * LoadHarness [--quick] [--only b1,b3,b4,b8] [--backends redis,postgres,etcd,zookeeper,mariadb]
 *             [--out docs] [--jmh target/b5.csv] [--command "benchmarks/run.sh"] [--started EPOCH_SECONDS]
 *             [--contenders raw,ours,...]   (ids, for profiling one contender)
 * </pre>
 */
public final class LoadHarness {

    static {
        // drivers log at INFO by default: keep the progress lines readable
        System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", System.getProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn"));
    }

    private LoadHarness() {
    }

    /**
     * @param args see the class documentation
     */
    public static void main(String[] args) {
        boolean quick = false;
        Set<String> only = new LinkedHashSet<>(List.of("b1", "b3", "b4"));
        List<String> backends = new ArrayList<>(List.of("redis", "postgres", "etcd", "zookeeper"));
        Path out = Path.of("docs");
        Path jmh = null;
        String command = "benchmarks/run.sh";
        long started = System.currentTimeMillis() / 1000;
        Set<String> onlyContenders = null;
        String revision = "?";
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--quick" -> quick = true;
                case "--only" -> only = new LinkedHashSet<>(List.of(args[++i].toLowerCase().split(",")));
                case "--backends" -> {
                    String b = args[++i].toLowerCase();
                    backends = b.equals("none") ? new ArrayList<>() : new ArrayList<>(List.of(b.split(",")));
                }
                case "--out" -> out = Path.of(args[++i]);
                case "--jmh" -> jmh = Path.of(args[++i]);
                case "--command" -> command = args[++i];
                case "--started" -> started = Long.parseLong(args[++i]);
                case "--revision" -> revision = args[++i];
                case "--contenders" -> onlyContenders = new LinkedHashSet<>(List.of(args[++i].toLowerCase().split(",")));
                default -> throw new IllegalArgumentException("unknown argument " + args[i]);
            }
        }
        if (only.contains("b7")) {
            only.add("b4");
        }
        Settings s = quick ? Settings.quickSettings() : Settings.full();
        Report report = new Report(s, command, started, revision);
        Log.info("load harness: %s; backends %s; benchmarks %s", s.describe(), backends, only);
        for (String key : backends) {
            BackendBench bench = switch (key) {
                case "redis" -> new RedisBench();
                case "postgres", "postgresql" -> new PostgresBench();
                case "mariadb" -> new MariaDbBench();
                case "etcd" -> new EtcdBench();
                case "zookeeper", "zk" -> new ZooKeeperBench();
                default -> throw new IllegalArgumentException("unknown backend " + key);
            };
            Thread hook = new Thread(bench::close, "stop-" + key);
            Runtime.getRuntime().addShutdownHook(hook);
            try {
                Log.info("%s: starting the server", bench.title);
                bench.start();
                report.server(bench);
                if (only.contains("b1") || only.contains("b3")) {
                    List<Contender> contenders = new ArrayList<>(bench.contenders());
                    if (onlyContenders != null) {
                        Set<String> keep = onlyContenders;
                        contenders.removeIf(c -> {
                            if (keep.contains(c.id)) {
                                return false;
                            }
                            c.close();
                            return true;
                        });
                    }
                    try {
                        if (only.contains("b1")) {
                            report.b1(Uncontended.run(bench, contenders, s));
                        }
                        if (only.contains("b3")) {
                            report.b3(Handoff.run(bench, contenders, s));
                        }
                    } finally {
                        for (Contender c : contenders) {
                            try {
                                c.close();
                            } catch (RuntimeException e) {
                                Log.info("closing %s: %s", c, e);
                            }
                        }
                    }
                }
                if (only.contains("b8")) {
                    report.b8(Primitives.run(bench, s));
                }
                if (only.contains("b4") && bench instanceof RedisBench redis) {
                    report.b4(Renewal.run(redis, s));
                }
            } catch (RuntimeException e) {
                Log.info("%s FAILED: %s", bench.title, e);
                e.printStackTrace();
                report.failure(bench.title, e);
            } finally {
                bench.close();
                Runtime.getRuntime().removeShutdownHook(hook);
            }
        }
        if (jmh != null) {
            report.b5(JmhResults.read(jmh));
        }
        report.write(out);
        Log.info("wrote %s", out.resolve("BENCHMARKS.md"));
        System.exit(0);
    }
}
