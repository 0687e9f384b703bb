package io.reactivelocks.test.server;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * An etcd server for tests. {@link #start()} resolves one through the chain (see {@link FixtureMode}):
 * {@value #URL_VARIABLE} naming a running server; the local {@code etcd} (Debian package
 * {@code etcd-server}) as a single-member cluster on loopback client and peer ports; no embedded etcd;
 * an etcd container when Docker answers; else it fails saying what to install. Ready means
 * {@code GET /health} answers {@code "health":"true"} (a leader is elected).
 */
public final class EtcdServer extends ServerFixture {

    /** Environment variable naming a running server, for example {@code http://localhost:2379}. */
    public static final String URL_VARIABLE = "REACTIVE_LOCKS_ETCD_URL";

    static final String INSTALL_HINT = "Install it with `apt-get install etcd-server` (or run .ci/install-servers.sh),"
            + " or set " + URL_VARIABLE + "=http://host:port to use a running server.";

    private final String url;

    private EtcdServer(ServerHandle server, String url) {
        super(server);
        this.url = url;
    }

    /**
     * Starts (or finds) an etcd server.
     *
     * @return the running server
     * @throws ServerUnavailableException when no etcd can be had; the message says what to install
     * @throws ServerStartException when the server does not start in time
     */
    public static EtcdServer start() {
        return builder().start();
    }

    /** @return a builder to force a mode or change the start timeout */
    public static Builder builder() {
        return new Builder();
    }

    /** @return the client endpoint, {@code http://host:port} (for jetcd's {@code Client.builder().endpoints(..)}) */
    public String url() {
        return url;
    }

    /** Options for the etcd fixture; {@link #start()} resolves and starts the server. */
    public static final class Builder {
        private FixtureMode mode;
        private Duration startTimeout = Duration.ofSeconds(60);

        private Builder() {
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
         * @throws ServerUnavailableException when no etcd can be had; the message says what to install
         * @throws ServerStartException when the server does not start in time
         */
        public EtcdServer start() {
            FixtureMode m = mode != null ? mode : FixtureMode.configuredFor("etcd");
            String external = System.getenv(URL_VARIABLE);
            Optional<Path> binary = Commands.findExecutable("etcd", "/usr/bin/etcd", "/usr/local/bin/etcd");
            List<Resolution.Step<EtcdServer>> steps = List.of(
                    Resolution.Step.of(FixtureMode.EXTERNAL,
                            () -> external == null || external.isBlank() ? Optional.of(URL_VARIABLE + " is not set") : Optional.empty(),
                            () -> external(external)),
                    Resolution.Step.of(FixtureMode.BINARY,
                            () -> binary.isEmpty() ? Optional.of("no etcd on the PATH or in /usr/bin") : Optional.empty(),
                            () -> local(binary.get())),
                    Resolution.Step.unavailable(FixtureMode.EMBEDDED, "there is no embedded etcd for the JVM"),
                    Resolution.Step.of(FixtureMode.CONTAINER, DockerContainer::unavailableReason, this::container));
            return Resolution.resolve("etcd", m, INSTALL_HINT, steps);
        }

        private EtcdServer external(String text) {
            ServerUrl u = ServerUrl.parse(URL_VARIABLE, text, 2379);
            return new EtcdServer(new ExternalServer("etcd", u.host(), u.port(), URL_VARIABLE, "apt-get install etcd-server"),
                    text.trim());
        }

        /** The etcd command line for a single member on the layout's client port and first extra (peer) port. */
        static List<String> command(Path binary, ServerProcess.Layout layout) {
            String client = "http://" + layout.host() + ":" + layout.port();
            String peer = "http://" + layout.host() + ":" + layout.extraPort(0);
            return List.of(binary.toString(),
                    "--name", "default",
                    "--data-dir", layout.path("data").toString(),
                    "--listen-client-urls", client,
                    "--advertise-client-urls", client,
                    "--listen-peer-urls", peer,
                    "--initial-advertise-peer-urls", peer,
                    "--initial-cluster", "default=" + peer,
                    "--initial-cluster-state", "new",
                    "--logger", "zap",
                    "--log-outputs", "stderr");
        }

        private EtcdServer local(Path binary) {
            ServerProcess process = ServerProcess.builder("etcd")
                    .extraPorts(1)
                    .command(layout -> command(binary, layout))
                    .readiness(layout -> Probes.etcdHealthy(layout.host(), layout.port()))
                    .startTimeout(startTimeout)
                    .start();
            return new EtcdServer(process, "http://" + process.host() + ":" + process.port());
        }

        private EtcdServer container() {
            DockerContainer c = DockerContainer.start("etcd", "quay.io/coreos/etcd:v3.5.17", 2379, Map.of(),
                    List.of("etcd", "--listen-client-urls", "http://0.0.0.0:2379",
                            "--advertise-client-urls", "http://127.0.0.1:2379"),
                    port -> Probes.etcdHealthy(Loopback.HOST, port), startTimeout);
            return new EtcdServer(c, "http://" + c.host() + ":" + c.port());
        }
    }
}
