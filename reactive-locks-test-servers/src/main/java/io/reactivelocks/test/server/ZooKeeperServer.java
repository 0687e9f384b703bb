package io.reactivelocks.test.server;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * A standalone ZooKeeper server for tests. {@link #start()} resolves one through the chain (see
 * {@link FixtureMode}): {@value #URL_VARIABLE} naming a running server; the jars of the Debian package
 * {@code zookeeper} run as a child JVM ({@code java -cp /usr/share/java/zookeeper.jar
 * org.apache.zookeeper.server.ZooKeeperServerMain zoo.cfg}); Curator's in-JVM {@code TestingServer}
 * when {@code org.apache.curator:curator-test} is on the class path; a {@code zookeeper:3.8} container
 * when Docker answers; else it fails saying what to install. Four-letter words are enabled.
 */
public final class ZooKeeperServer extends ServerFixture {

    /** Environment variable naming a running server, for example {@code localhost:2181}. */
    public static final String URL_VARIABLE = "REACTIVE_LOCKS_ZOOKEEPER_URL";

    static final String INSTALL_COMMAND = "apt-get install zookeeper";
    static final String INSTALL_HINT = "Install it with `" + INSTALL_COMMAND + "` (or run .ci/install-servers.sh),"
            + " add org.apache.curator:curator-test to the test class path for an embedded server,"
            + " or set " + URL_VARIABLE + "=host:port to use a running server.";
    static final Path ZOOKEEPER_JAR = Path.of("/usr/share/java/zookeeper.jar");
    static final Path SLF4J_SIMPLE_JAR = Path.of("/usr/share/java/slf4j-simple.jar");

    private final String connectString;

    private ZooKeeperServer(ServerHandle server, String connectString) {
        super(server);
        this.connectString = connectString;
    }

    /**
     * Starts (or finds) a ZooKeeper server with a tick time of 500 ms (sessions from 1 s to 60 s).
     *
     * @return the running server
     * @throws ServerUnavailableException when no ZooKeeper can be had; the message says what to install
     * @throws ServerStartException when the server does not start in time
     */
    public static ZooKeeperServer start() {
        return builder().start();
    }

    /** @return a builder to set the tick time, force a mode or change the start timeout */
    public static Builder builder() {
        return new Builder();
    }

    /** @return the connect string for ZooKeeper clients and Curator, {@code host:port} */
    public String connectString() {
        return connectString;
    }

    /** Options for the ZooKeeper fixture; {@link #start()} resolves and starts the server. */
    public static final class Builder {
        private FixtureMode mode;
        private Duration tickTime = Duration.ofMillis(500);
        private Duration startTimeout = Duration.ofSeconds(60);

        private Builder() {
        }

        /**
         * Sets the server tick time (default 500 ms); sessions may last from 2 ticks to 60 s.
         *
         * @param tickTime the tick time
         * @return this builder
         */
        public Builder tickTime(Duration tickTime) {
            if (tickTime.toMillis() <= 0) {
                throw new IllegalArgumentException("tickTime must be at least 1 ms: " + tickTime);
            }
            this.tickTime = tickTime;
            return this;
        }

        /**
         * Forces one step of the resolution chain instead of the configured mode.
         *
         * @param mode the mode
         * @return this builder
         */
        public Builder mode(FixtureMode mode) {
            this.mode = Objects.requireNonNull(mode, "mode");
            return this;
        }

        /**
         * Bounds each start and restart (default 60 s).
         *
         * @param timeout the bound
         * @return this builder
         */
        public Builder startTimeout(Duration timeout) {
            this.startTimeout = Objects.requireNonNull(timeout, "timeout");
            return this;
        }

        /**
         * Resolves and starts the server.
         *
         * @return the running server
         * @throws ServerUnavailableException when no ZooKeeper can be had; the message says what to install
         * @throws ServerStartException when the server does not start in time
         */
        public ZooKeeperServer start() {
            FixtureMode m = mode != null ? mode : FixtureMode.configuredFor("zookeeper");
            String external = System.getenv(URL_VARIABLE);
            List<Resolution.Step<ZooKeeperServer>> steps = List.of(
                    Resolution.Step.of(FixtureMode.EXTERNAL,
                            () -> external == null || external.isBlank() ? Optional.of(URL_VARIABLE + " is not set") : Optional.empty(),
                            () -> external(external)),
                    Resolution.Step.of(FixtureMode.BINARY,
                            () -> Files.isRegularFile(ZOOKEEPER_JAR) ? Optional.empty()
                                    : Optional.of("no " + ZOOKEEPER_JAR + " (Debian package zookeeper / libzookeeper-java)"),
                            this::local),
                    Resolution.Step.of(FixtureMode.EMBEDDED,
                            () -> curatorTestOnClassPath() ? Optional.empty()
                                    : Optional.of("org.apache.curator:curator-test is not on the class path"),
                            () -> wrap(EmbeddedZooKeeper.start((int) tickTime.toMillis()))),
                    Resolution.Step.of(FixtureMode.CONTAINER, DockerContainer::unavailableReason, this::container));
            return Resolution.resolve("zookeeper", m, INSTALL_HINT, steps);
        }

        private static boolean curatorTestOnClassPath() {
            try {
                Class.forName(EmbeddedZooKeeper.CLASS_NAME, false, ZooKeeperServer.class.getClassLoader());
                return true;
            } catch (ClassNotFoundException | LinkageError e) {
                return false;
            }
        }

        private ZooKeeperServer external(String text) {
            ServerUrl u = ServerUrl.parse(URL_VARIABLE, text, 2181);
            return wrap(new ExternalServer("zookeeper", u.host(), u.port(), URL_VARIABLE, INSTALL_COMMAND));
        }

        /** The zoo.cfg of a standalone server on the layout's port and data dir. */
        String config(ServerProcess.Layout layout) {
            long tick = tickTime.toMillis();
            return String.join("\n",
                    "tickTime=" + tick,
                    "dataDir=" + layout.path("data"),
                    "clientPort=" + layout.port(),
                    "clientPortAddress=" + layout.host(),
                    "maxClientCnxns=0",
                    "minSessionTimeout=" + (2 * tick),
                    "maxSessionTimeout=" + Math.max(60_000, 2 * tick),
                    "admin.enableServer=false",
                    "4lw.commands.whitelist=*",
                    "");
        }

        /** The command line of the child JVM. */
        static List<String> command(ServerProcess.Layout layout) {
            String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
            String classPath = ZOOKEEPER_JAR + (Files.isRegularFile(SLF4J_SIMPLE_JAR) ? ":" + SLF4J_SIMPLE_JAR : "");
            List<String> cmd = new ArrayList<>(List.of(java,
                    "-Xms32m", "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xss512k",
                    "-Djava.awt.headless=true",
                    "-Dzookeeper.4lw.commands.whitelist=*",
                    "-Dzookeeper.admin.enableServer=false",
                    "-Dzookeeper.jmx.log4j.disable=true",
                    "-cp", classPath,
                    "org.apache.zookeeper.server.ZooKeeperServerMain",
                    layout.path("zoo.cfg").toString()));
            return cmd;
        }

        private ZooKeeperServer local() {
            ServerProcess process = ServerProcess.builder("zookeeper")
                    .prepare(layout -> {
                        try {
                            Files.createDirectories(layout.path("data"));
                            Files.writeString(layout.path("zoo.cfg"), config(layout), StandardCharsets.UTF_8);
                        } catch (IOException e) {
                            throw new ServerStartException("cannot write zoo.cfg in " + layout.directory() + ": " + e, e);
                        }
                    })
                    .command(Builder::command)
                    .readiness(layout -> Probes.zooKeeperServing(layout.host(), layout.port()))
                    .startTimeout(startTimeout)
                    .start();
            return wrap(process);
        }

        private ZooKeeperServer container() {
            return wrap(DockerContainer.start("zookeeper", "zookeeper:3.8", 2181,
                    Map.of("ZOO_4LW_COMMANDS_WHITELIST", "*", "ZOO_TICK_TIME", Long.toString(tickTime.toMillis())),
                    List.of(), port -> Probes.zooKeeperServing(Loopback.HOST, port), startTimeout));
        }

        private ZooKeeperServer wrap(ServerHandle server) {
            return new ZooKeeperServer(server, server.host() + ":" + server.port());
        }
    }
}
