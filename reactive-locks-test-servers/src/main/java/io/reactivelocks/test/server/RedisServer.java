package io.reactivelocks.test.server;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * A Redis server for tests. {@link #start()} resolves one through the chain (see {@link FixtureMode}):
 * {@value #URL_VARIABLE} naming a running server; the local {@code redis-server} as a child process
 * ({@code redis-server --port N --bind 127.0.0.1 --save "" --appendonly no --dir <tmp>}); no embedded
 * Redis; a {@code redis:7} container when Docker answers; else it fails saying what to install.
 */
public final class RedisServer extends ServerFixture {

    /** Environment variable naming a running server, for example {@code redis://localhost:6379}. */
    public static final String URL_VARIABLE = "REACTIVE_LOCKS_REDIS_URL";

    static final String INSTALL_HINT = "Install it with `apt-get install redis-server` (or run .ci/install-servers.sh),"
            + " or set " + URL_VARIABLE + "=redis://host:port to use a running server.";

    private final String username;
    private final String password;
    private final String url;

    private RedisServer(ServerHandle server, String username, String password, String url) {
        super(server);
        this.username = username;
        this.password = password;
        this.url = url;
    }

    /**
     * Starts (or finds) a Redis server with default options: no password, no persistence.
     *
     * @return the running server
     * @throws ServerUnavailableException when no Redis can be had; the message says what to install
     * @throws ServerStartException when the server does not start in time
     */
    public static RedisServer start() {
        return builder().start();
    }

    /** @return a builder for a server with a password, an ACL user or persistence */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * The URL for clients such as Lettuce: {@code redis://[[user]:password@]host:port}, with the
     * credentials set on the builder; for an external server, the URL it was given.
     *
     * @return the client URL
     */
    public String url() {
        return url;
    }

    /** @return the ACL user created with {@link Builder#user(String, String)}, if any */
    public Optional<String> username() {
        return Optional.ofNullable(username);
    }

    /** @return the password of the ACL user if one was set up, else the {@code requirepass} password, if any */
    public Optional<String> password() {
        return Optional.ofNullable(password);
    }

    /** Options for the Redis fixture; {@link #start()} resolves and starts the server. */
    public static final class Builder {
        private String requirePass;
        private String aclUser;
        private String aclPassword;
        private boolean appendOnly;
        private FixtureMode mode;
        private Duration startTimeout = Duration.ofSeconds(30);

        private Builder() {
        }

        /**
         * Requires a password for the default user ({@code --requirepass}).
         *
         * @param password the password
         * @return this builder
         */
        public Builder password(String password) {
            this.requirePass = Objects.requireNonNull(password, "password");
            return this;
        }

        /**
         * Adds an ACL user with every permission ({@code --user name on >password ~* &* +@all}).
         *
         * @param name     the user name
         * @param password its password
         * @return this builder
         */
        public Builder user(String name, String password) {
            this.aclUser = Objects.requireNonNull(name, "name");
            this.aclPassword = Objects.requireNonNull(password, "password");
            return this;
        }

        /**
         * Turns on the append-only file so data survives {@link RedisServer#kill()} + {@link RedisServer#restart()}
         * (off by default: a restart loses all data, like a Redis without persistence).
         *
         * @param appendOnly whether to persist with AOF ({@code appendfsync always})
         * @return this builder
         */
        public Builder appendOnly(boolean appendOnly) {
            this.appendOnly = appendOnly;
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
         * Bounds each start and restart (default 30 s).
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
         * @throws ServerUnavailableException when no Redis can be had; the message says what to install
         * @throws ServerStartException when the server does not start in time
         */
        public RedisServer start() {
            FixtureMode m = mode != null ? mode : FixtureMode.configuredFor("redis");
            String external = System.getenv(URL_VARIABLE);
            Optional<Path> binary = Commands.findExecutable("redis-server", "/usr/bin/redis-server", "/usr/local/bin/redis-server");
            List<Resolution.Step<RedisServer>> steps = List.of(
                    Resolution.Step.of(FixtureMode.EXTERNAL,
                            () -> external == null || external.isBlank() ? Optional.of(URL_VARIABLE + " is not set") : Optional.empty(),
                            () -> external(external)),
                    Resolution.Step.of(FixtureMode.BINARY,
                            () -> binary.isEmpty() ? Optional.of("no redis-server on the PATH or in /usr/bin") : Optional.empty(),
                            () -> local(binary.get())),
                    Resolution.Step.unavailable(FixtureMode.EMBEDDED, "there is no embedded Redis"),
                    Resolution.Step.of(FixtureMode.CONTAINER, DockerContainer::unavailableReason, this::container));
            return Resolution.resolve("redis", m, INSTALL_HINT, steps);
        }

        private RedisServer external(String text) {
            ServerUrl u = ServerUrl.parse(URL_VARIABLE, text, 6379);
            String user = u.password() == null ? null : u.user();
            String pass = u.password() == null ? u.user() : u.password();
            return new RedisServer(new ExternalServer("redis", u.host(), u.port(), URL_VARIABLE, "apt-get install redis-server"),
                    user, pass, text.trim());
        }

        List<String> serverArguments() {
            List<String> args = new ArrayList<>(List.of("--save", "", "--appendonly", appendOnly ? "yes" : "no"));
            if (appendOnly) {
                args.addAll(List.of("--appendfsync", "always"));
            }
            if (requirePass != null) {
                args.addAll(List.of("--requirepass", requirePass));
            }
            if (aclUser != null) {
                args.addAll(List.of("--user", aclUser, "on", ">" + aclPassword, "~*", "&*", "+@all"));
            }
            return args;
        }

        private RedisServer local(Path binary) {
            ServerProcess process = ServerProcess.builder("redis")
                    .command(layout -> {
                        List<String> cmd = new ArrayList<>(List.of(binary.toString(),
                                "--port", Integer.toString(layout.port()), "--bind", layout.host(),
                                "--dir", layout.directory().toString(), "--daemonize", "no", "--logfile", ""));
                        cmd.addAll(serverArguments());
                        return cmd;
                    })
                    .readiness(layout -> Probes.redisReady(layout.host(), layout.port()))
                    .startTimeout(startTimeout)
                    .start();
            return wrap(process);
        }

        private RedisServer container() {
            List<String> args = new ArrayList<>(List.of("redis-server"));
            args.addAll(serverArguments());
            Map<String, String> env = new LinkedHashMap<>();
            return wrap(DockerContainer.start("redis", "redis:7", 6379, env, args,
                    port -> Probes.redisReady(Loopback.HOST, port), startTimeout));
        }

        private RedisServer wrap(ServerHandle server) {
            String pass = aclUser != null ? aclPassword : requirePass;
            StringBuilder url = new StringBuilder("redis://");
            if (pass != null) {
                if (aclUser != null) {
                    url.append(Probes.encode(aclUser));
                }
                url.append(':').append(Probes.encode(pass)).append('@');
            }
            url.append(server.host()).append(':').append(server.port());
            return new RedisServer(server, aclUser, pass, url.toString());
        }
    }
}
